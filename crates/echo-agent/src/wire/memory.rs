//! Memories as front ends see them: rows, pages, history, conflicts and the reports of
//! memory work (from `echo_memory`).

use echo_core::vocab::{
    ImportClashKind, MemoryActor, MemorySource, MemoryStatus, MemoryTier, MemoryVerdict,
};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// One memory's fading, as the memory page draws it: effective importance from its last use
/// (or creation) to a projection beyond now, computed by the engine's own formula
/// (`echo_memory::effective_importance`), so the page never re-implements it.
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct Fading {
    /// The memory.
    pub memory_id: String,
    /// As of when.
    pub now: String,
    /// Pinned memories do not decay.
    pub pinned: bool,
    /// Importance before decay.
    pub importance: f64,
    /// Current half-life in days (it grows with each use).
    pub half_life_days: f64,
    /// Effective importance now.
    pub effective_now: f64,
    /// Below this the sweep archives it.
    pub archive_below: f64,
    /// When it was last used in a prompt (or created, when never).
    pub last_touch: Option<String>,
    /// When it stops being valid.
    pub valid_until: Option<String>,
    /// When the sweep will archive it unless it is used again: when it fades below the
    /// threshold or expires, whichever comes first; `None` when neither will happen (pinned
    /// without expiry, or a tier that does not fade).
    pub archives_at: Option<String>,
    /// `faded` or `expired`, with `archives_at`.
    pub archive_reason: Option<String>,
    /// The curve, oldest first.
    pub points: Vec<FadingPoint>,
    /// When it was used in prompts (from the traces), oldest first.
    pub uses: Vec<String>,
}

/// A point of a [`Fading`] curve.
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct FadingPoint {
    /// When.
    pub at: String,
    /// Effective importance then.
    pub effective: f64,
}

/// A memory with everything needed to judge it: history and open conflicts.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct MemoryDetail {
    /// The memory.
    #[serde(flatten)]
    pub memory: Memory,
    /// The memory that superseded it, if any.
    pub superseded_by_memory: Option<Memory>,
    /// Memories it superseded.
    pub supersedes: Vec<Memory>,
    /// Every recorded change, oldest first.
    pub history: Vec<HistoryEntry>,
    /// Conflicts it is part of.
    pub conflicts: Vec<Conflict>,
    /// How many answers (turns) had it in their request, as far as the read log keeps.
    #[ts(type = "number")]
    pub answers: u64,
    /// The read log kept (the newest reads), newest first.
    pub reads: Vec<MemoryReadEntry>,
}

/// A turn that had a memory in the request a model answered from.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct MemoryReadEntry {
    /// The turn (its trace).
    pub turn_id: String,
    /// Its session.
    pub session_id: Option<String>,
    /// How the memory came to be in the request.
    pub how: echo_core::vocab::MemoryReadKind,
    /// When.
    pub at: String,
}

impl From<echo_memory::MemoryRead> for MemoryReadEntry {
    fn from(r: echo_memory::MemoryRead) -> Self {
        Self {
            turn_id: r.turn_id,
            session_id: r.session_id,
            how: r.how,
            at: r.at,
        }
    }
}

/// An export as text, with the file name to offer for it.
#[derive(Debug, Serialize, TS, ToSchema)]
pub struct MemoryExport {
    /// `echo-desk-memories-YYYY-MM-DD.jsonl`.
    pub file_name: String,
    /// Memories in it.
    pub count: usize,
    /// The JSON Lines text: a header line, then one memory per line.
    pub text: String,
}

/// What an import did.
#[derive(Debug, Default, Serialize, TS, ToSchema)]
pub struct ImportReport {
    /// Memories written (new).
    pub created: usize,
    /// Memories that matched one already there (reinforced instead).
    pub duplicates: usize,
    /// Lines skipped because the memory was not active in the export (superseded, archived, deleted).
    pub skipped_inactive: usize,
    /// Memories of a project the file does not describe (exported before projects were),
    /// imported as global ones.
    pub outside_projects: usize,
    /// Working notes of conversations that are not in this data directory, left out: such a
    /// note belongs to its conversation alone and would be recalled nowhere here.
    pub outside_sessions: usize,
}

/// A memory card read from another assistant's memory (pasted text), not yet written. The
/// person may edit its text before keeping it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct ImportCard {
    /// The memory as a sentence.
    pub content: String,
    /// What it is about, snake_case (`home_city`), when the model named it.
    #[serde(default)]
    #[ts(optional)]
    pub slot: Option<String>,
    /// The slot's value in a few words.
    #[serde(default)]
    #[ts(optional)]
    pub value: Option<String>,
    /// When it stops holding (RFC 3339 date), when the text says.
    #[serde(default)]
    #[ts(optional)]
    pub valid_until: Option<String>,
    /// The words of the pasted text it was read from (kept as the memory's evidence).
    pub evidence: String,
    /// The project it goes to (its name); absent: a global memory.
    #[serde(default)]
    #[ts(optional)]
    pub project: Option<String>,
}

/// What keeping a card would do to one memory already there.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ImportClash {
    /// What would happen to it.
    pub kind: ImportClashKind,
    /// The memory there.
    pub memory: Memory,
    /// The judge's reason.
    pub explanation: String,
}

/// A card and what keeping it would do.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ImportCandidate {
    /// The card.
    pub card: ImportCard,
    /// Its clashes with the memories there (empty: it adds a new memory and changes none).
    pub clashes: Vec<ImportClash>,
}

/// Pasted text read into memory cards; nothing is written until cards are kept.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ImportPreview {
    /// The cards, in the order of the text.
    pub cards: Vec<ImportCandidate>,
    /// What the model proposed and was left out, with why (not in the text, not a valid
    /// memory).
    pub dropped: Vec<String>,
}

impl From<echo_memory::Fading> for Fading {
    fn from(v: echo_memory::Fading) -> Self {
        Self {
            memory_id: v.memory_id,
            now: v.now,
            pinned: v.pinned,
            importance: v.importance,
            half_life_days: v.half_life_days,
            effective_now: v.effective_now,
            archive_below: v.archive_below,
            last_touch: v.last_touch,
            valid_until: v.valid_until,
            archives_at: v.archives_at,
            archive_reason: v.archive_reason,
            points: v.points.into_iter().map(Into::into).collect(),
            uses: v.uses,
        }
    }
}

impl From<echo_memory::FadingPoint> for FadingPoint {
    fn from(v: echo_memory::FadingPoint) -> Self {
        Self {
            at: v.at,
            effective: v.effective,
        }
    }
}
/// What a sweep did.
#[derive(Clone, Debug, Default, Serialize, TS, ToSchema)]
pub struct SweepReport {
    /// As of when.
    pub now: String,
    /// Memories looked at.
    pub checked: usize,
    /// Archived because `valid_until` passed.
    pub expired: Vec<String>,
    /// Archived because their effective importance fell below the threshold.
    pub faded: Vec<String>,
}

impl From<echo_memory::SweepReport> for SweepReport {
    fn from(v: echo_memory::SweepReport) -> Self {
        Self {
            now: v.now,
            checked: v.checked,
            expired: v.expired,
            faded: v.faded,
        }
    }
}
/// What a write did.
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum MemoryEffect {
    /// A new active memory.
    Created,
    /// Same as an existing memory, which was reinforced instead.
    Duplicate {
        /// The existing memory.
        of: String,
    },
    /// The new memory superseded these.
    Superseded {
        /// Old memory.
        old: String,
        /// Judge verdict.
        verdict: MemoryVerdict,
    },
    /// An existing memory won; the new one is stored as superseded by it.
    Lost {
        /// The winner.
        winner: String,
    },
    /// A full tie: both wait in the review queue.
    Conflict {
        /// Conflict id.
        conflict_id: String,
        /// The other memory.
        with: String,
    },
}

/// What one turn taught memory: the line under its answer in the chat.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct TurnLearned {
    /// Whether the turn's memory extraction has ended: nothing more will come.
    pub settled: bool,
    /// The memories made from the turn, oldest first.
    pub memories: Vec<LearnedInTurn>,
    /// With "ask before remembering": what the turn found, waiting for Keep or Discard.
    pub proposals: Vec<MemoryProposal>,
}

/// A memory waiting for the person's Keep or Discard ("ask before remembering"): nothing of
/// it is in memory until kept.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct MemoryProposal {
    /// Id (`memory_keep_proposal` / `memory_discard_proposal` take it).
    pub id: String,
    /// The turn whose memory work found it.
    pub turn_id: String,
    /// That turn's conversation (the proposal goes with it).
    pub session_id: Option<String>,
    /// The memory as a sentence.
    pub content: String,
    /// Tier it would have.
    pub tier: MemoryTier,
    /// Slot, if any.
    pub slot: Option<String>,
    /// Provenance it would have.
    pub source: MemorySource,
    /// `global`, `project:<id>` or `session:<id>`.
    pub scope: String,
    /// The words it rests on.
    pub evidence: Option<String>,
    /// When it was found.
    pub created_at: String,
}

impl From<echo_memory::Proposal> for MemoryProposal {
    fn from(p: echo_memory::Proposal) -> Self {
        let d = p.draft;
        Self {
            id: p.id,
            turn_id: p.turn_id,
            session_id: p.session_id,
            content: d.content,
            tier: d.tier.unwrap_or(MemoryTier::Semantic),
            slot: d.slot,
            source: d.source.unwrap_or(MemorySource::UserStated),
            scope: d.scope.unwrap_or_else(|| "global".into()),
            evidence: d.evidence,
            created_at: p.created_at,
        }
    }
}

/// A memory a turn made.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct LearnedInTurn {
    /// The memory as it is now.
    pub memory: Memory,
    /// The change that made it: `memory_undo` with it takes the memory back out (and puts
    /// back what it replaced).
    pub change_id: String,
    /// The text of the memory it replaced, when it updated one.
    pub replaced: Option<String>,
}

/// The result of `echo_memory::MemoryStore::remember`.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct WriteOutcome {
    /// The stored memory (for a duplicate: the existing one, reinforced).
    pub memory: Memory,
    /// What happened.
    pub effects: Vec<MemoryEffect>,
    /// Judge calls that failed and fell back to the deterministic rule.
    pub judge_failures: Vec<String>,
}

impl From<echo_memory::Effect> for MemoryEffect {
    fn from(v: echo_memory::Effect) -> Self {
        use echo_memory::Effect;
        match v {
            Effect::Created => Self::Created,
            Effect::Duplicate { of } => Self::Duplicate { of },
            Effect::Superseded { old, verdict } => Self::Superseded { old, verdict },
            Effect::Lost { winner } => Self::Lost { winner },
            Effect::Conflict { conflict_id, with } => Self::Conflict { conflict_id, with },
        }
    }
}

impl From<echo_memory::WriteOutcome> for WriteOutcome {
    fn from(v: echo_memory::WriteOutcome) -> Self {
        Self {
            memory: v.memory.into(),
            effects: v.effects.into_iter().map(Into::into).collect(),
            judge_failures: v.judge_failures,
        }
    }
}
/// One memory row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct Memory {
    /// Id (UUIDv7).
    pub id: String,
    /// Tier.
    pub tier: MemoryTier,
    /// `fact`, `preference`, `plan`, `relationship`, `episode`, `note`, ...
    pub kind: String,
    /// Who or what it is about (`user` by default).
    pub subject: String,
    /// Normalised slot, e.g. `diet`; two memories with the same subject and slot compete.
    pub slot: Option<String>,
    /// The memory as a sentence.
    pub content: String,
    /// The slot's value, when it has one (e.g. `vegetarian`).
    pub value: Option<String>,
    /// Provenance.
    pub source: MemorySource,
    /// 0..1.
    pub confidence: f64,
    /// 0..1, before decay.
    pub importance: f64,
    /// Importance after decay, as of when this record was read (computed, not stored).
    #[serde(default)]
    pub effective_importance: f64,
    /// Pinned memories never decay.
    pub pinned: bool,
    /// Times injected into a prompt.
    pub access_count: i64,
    /// Last injection.
    pub last_accessed: Option<String>,
    /// Half-life in days.
    pub stability: f64,
    /// Creation time.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// From when it holds.
    pub valid_from: Option<String>,
    /// Until when it holds; archived at once after that.
    pub valid_until: Option<String>,
    /// Lifecycle.
    pub status: MemoryStatus,
    /// The memory that replaced this one.
    pub superseded_by: Option<String>,
    /// When it stopped being valid (superseded or expired).
    pub invalid_at: Option<String>,
    /// Tier before archival.
    pub archived_from: Option<MemoryTier>,
    /// Incremented on every change.
    pub version: i64,
    /// `global` or `session:<id>`.
    pub scope: String,
    /// Session it came from.
    pub source_session_id: Option<String>,
    /// Turn it came from.
    pub source_turn_id: Option<String>,
    /// Message it came from.
    pub source_message_id: Option<String>,
    /// Quote that supports it.
    pub evidence: Option<String>,
    /// Surrounding text indexed for search but never shown or injected (e.g. the neighbouring
    /// turns of a conversation excerpt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl From<echo_memory::Memory> for Memory {
    fn from(v: echo_memory::Memory) -> Self {
        Self {
            id: v.id,
            tier: v.tier,
            kind: v.kind,
            subject: v.subject,
            slot: v.slot,
            content: v.content,
            value: v.value,
            source: v.source,
            confidence: v.confidence,
            importance: v.importance,
            effective_importance: v.effective_importance,
            pinned: v.pinned,
            access_count: v.access_count,
            last_accessed: v.last_accessed,
            stability: v.stability,
            created_at: v.created_at,
            updated_at: v.updated_at,
            valid_from: v.valid_from,
            valid_until: v.valid_until,
            status: v.status,
            superseded_by: v.superseded_by,
            invalid_at: v.invalid_at,
            archived_from: v.archived_from,
            version: v.version,
            scope: v.scope,
            source_session_id: v.source_session_id,
            source_turn_id: v.source_turn_id,
            source_message_id: v.source_message_id,
            evidence: v.evidence,
            context: v.context,
        }
    }
}
/// One recalled memory.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct Recalled {
    /// The memory.
    pub memory: Memory,
    /// Fused score (higher is better).
    pub score: f64,
    /// Rank in the BM25 list, from 1.
    pub bm25_rank: Option<usize>,
    /// Rank in the vector list, from 1.
    pub vector_rank: Option<usize>,
    /// Rank among the memories from the days the query names, from 1.
    pub dated_rank: Option<usize>,
}

impl From<echo_memory::Recalled> for Recalled {
    fn from(v: echo_memory::Recalled) -> Self {
        Self {
            memory: v.memory.into(),
            score: v.score,
            bm25_rank: v.bm25_rank,
            vector_rank: v.vector_rank,
            dated_rank: v.dated_rank,
        }
    }
}
/// What a flush did.
#[derive(Clone, Debug, Default, Serialize, TS, ToSchema)]
pub struct FlushReport {
    /// Vectors written.
    pub embedded: usize,
    /// Vectors removed.
    pub deleted: usize,
}

impl From<echo_memory::FlushReport> for FlushReport {
    fn from(v: echo_memory::FlushReport) -> Self {
        Self {
            embedded: v.embedded,
            deleted: v.deleted,
        }
    }
}
/// An unresolved or resolved conflict between two memories.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct Conflict {
    /// Id.
    pub id: String,
    /// One side.
    pub memory_a: String,
    /// The other side.
    pub memory_b: String,
    /// The judge's verdict.
    pub verdict: MemoryVerdict,
    /// The judge's explanation.
    pub explanation: Option<String>,
    /// Open (waiting for the person) or resolved.
    pub status: echo_core::ConflictStatus,
    /// How it was resolved.
    pub resolution: Option<String>,
    /// When it was found.
    pub created_at: String,
    /// When it was resolved.
    pub resolved_at: Option<String>,
}

impl From<echo_memory::Conflict> for Conflict {
    fn from(v: echo_memory::Conflict) -> Self {
        Self {
            id: v.id,
            memory_a: v.memory_a,
            memory_b: v.memory_b,
            verdict: v.verdict,
            explanation: v.explanation,
            status: v.status,
            resolution: v.resolution,
            created_at: v.created_at,
            resolved_at: v.resolved_at,
        }
    }
}
/// One recorded change.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct HistoryEntry {
    /// Row id.
    pub id: i64,
    /// Rows of one change share this id.
    pub change_id: String,
    /// Memory.
    pub memory_id: String,
    /// `created`, `edited`, `superseded`, `reinforced`, `archived`, `restored`, `deleted`, `pinned`, `unpinned`, `undo`, `conflict`, `resolved`.
    pub action: echo_core::MemoryAction,
    /// Who.
    pub actor: MemoryActor,
    /// Why.
    pub reason: Option<String>,
    /// The row before (`None` for a creation).
    #[ts(type = "unknown")]
    pub before: Option<serde_json::Value>,
    /// The row after.
    #[ts(type = "unknown")]
    pub after: Option<serde_json::Value>,
    /// When.
    pub at: String,
}

impl From<echo_memory::HistoryEntry> for HistoryEntry {
    fn from(v: echo_memory::HistoryEntry) -> Self {
        Self {
            id: v.id,
            change_id: v.change_id,
            memory_id: v.memory_id,
            action: v.action,
            actor: v.actor,
            reason: v.reason,
            before: v.before,
            after: v.after,
            at: v.at,
        }
    }
}
/// What a purge removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, TS, ToSchema)]
pub struct PurgeReport {
    /// Every memory removed: the ones asked for and the older versions they superseded.
    pub deleted: Vec<String>,
    /// Their texts, so the caller can scrub copies kept elsewhere (captured model requests);
    /// never sent or serialised.
    #[serde(skip)]
    pub contents: Vec<String>,
}

impl From<echo_memory::PurgeReport> for PurgeReport {
    fn from(v: echo_memory::PurgeReport) -> Self {
        Self {
            deleted: v.deleted,
            contents: v.contents,
        }
    }
}
/// One page of a listing and how many match in all.
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct MemoryPage {
    /// The memories of this page.
    pub items: Vec<Memory>,
    /// How many memories match the filter (every page).
    #[ts(type = "number")]
    pub total: u64,
}

impl From<echo_memory::MemoryPage> for MemoryPage {
    fn from(v: echo_memory::MemoryPage) -> Self {
        Self {
            items: v.items.into_iter().map(Into::into).collect(),
            total: v.total,
        }
    }
}
/// Counts of the store.
#[derive(Clone, Debug, Default, PartialEq, Serialize, TS, ToSchema)]
pub struct MemoryStats {
    /// As of when.
    pub now: String,
    /// Memories by tier and status (deleted ones are gone, not counted).
    pub counts: Vec<TierStatusCount>,
    /// Conflicts waiting for the person.
    pub open_conflicts: usize,
    /// Active memories the next sweep would archive because they expired.
    pub will_expire: usize,
    /// Active memories the next sweep would archive because they faded.
    pub will_fade: usize,
    /// When the last sweep ran.
    pub last_sweep: Option<String>,
}

/// How many memories are in one tier with one status.
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct TierStatusCount {
    /// Tier.
    pub tier: MemoryTier,
    /// Status.
    pub status: MemoryStatus,
    /// How many.
    pub count: usize,
}

impl From<echo_memory::MemoryStats> for MemoryStats {
    fn from(v: echo_memory::MemoryStats) -> Self {
        Self {
            now: v.now,
            counts: v.counts.into_iter().map(Into::into).collect(),
            open_conflicts: v.open_conflicts,
            will_expire: v.will_expire,
            will_fade: v.will_fade,
            last_sweep: v.last_sweep,
        }
    }
}

impl From<echo_memory::TierStatusCount> for TierStatusCount {
    fn from(v: echo_memory::TierStatusCount) -> Self {
        Self {
            tier: v.tier,
            status: v.status,
            count: v.count,
        }
    }
}
