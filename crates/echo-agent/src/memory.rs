//! The agent's side of memory: what goes into a turn's context (snapshot + recall, which
//! reinforces what is injected), and the model calls memory needs — post-turn extraction
//! (`extract_memories`) and the conflict judge (`judge_memory_conflict`) — both as forced
//! tool calls whose arguments are parsed into fixed Rust types. A malformed answer is
//! rejected whole and traced; nothing is half-applied.
//!
//! # Extraction
//!
//! A background job after each completed turn: a forced `extract_memories` call on
//! `memory.extraction_model`; the batch is parsed into fixed Rust types (the schema sent is
//! generated from them) and rejected whole when malformed; session-only constraints go to
//! working memory. The schema puts `evidence` first and bounds every string and the list, so a
//! small model's constrained output ends within the token limit. A fact whose evidence is not
//! the user's own words (two thirds of its words in one of the user's messages, `grounded`) is
//! dropped: an injection arrives through tool output or the assistant's text, never the user's
//! message. In the quoted style (`memory.extraction_style`, `auto` picks it for the built-in
//! model) the call is `keep_statements` (`memory/quoted.rs`): the user's first-person,
//! non-question sentences are fixed in the schema (`prefixItems` with `const`) and the model
//! writes only `keep: true/false`.
//!
//! # Consolidation
//!
//! After a turn, when `memory.consolidate_after` messages have piled up past the session's
//! boundary, a background job takes the session's lock, ends the stretch on the last final
//! answer (never inside a tool chain), claims it with a compare-and-swap on the boundary (the
//! claim records its owner until the episode is written; a process that opens the data
//! directory gives back the claims of dead owners, migration 0015), makes one forced
//! `consolidate_episode` call, writes the episode and the promoted facts through the write path
//! (grounded like extraction), and drops the session's snapshot. The stretch ends early enough
//! to fit the model's window (`fitting_end`); the rest follows in further chunks (up to 8 per
//! job). A failed job makes the session's next one wait (1 min, doubling, at most 1 h).
//!
//! Every forced call fits the window: `structured_call` cuts the middle of the longest message
//! until the request fits `LlmClient::input_budget`. During a turn the model writes only working
//! memory (`memory_note`); `memory_recall` searches long-term memory.

use crate::model_calls::structured_call;
use crate::pipeline::context::{ContextStage, MemoryBlocks};
use async_trait::async_trait;
use chrono::Utc;
use echo_core::config::ExtractionStyle;
use echo_core::trace::Span;
use echo_core::{Message, ToolSpec};
use echo_llm::LlmClient;
use echo_memory::{
    ConflictJudge, Effect, JudgeError, Judgement, Memory, MemoryActor, MemoryError, MemorySource,
    MemoryStore, MemoryTier, MemoryVerdict, NewMemory, RecallOptions, WriteOptions,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Name of the extraction tool the model must call.
pub(crate) const EXTRACT_TOOL: &str = "extract_memories";
/// Name of the judge tool the model must call.
pub(crate) const JUDGE_TOOL: &str = "judge_memory_conflict";

/// What the extraction call returns.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ExtractedBatch {
    /// Facts worth keeping; often none.
    #[schemars(length(max = 4))]
    pub memories: Vec<Extracted>,
}

/// `user_stated` or `inferred`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExtractedSource {
    /// The user said it.
    UserStated,
    /// Concluded from what the user said.
    Inferred,
}

/// `long_term` (default) or `session`.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExtractedScope {
    /// Holds across conversations.
    #[default]
    LongTerm,
    /// Only for the current conversation.
    Session,
}

/// Who or what a fact is about: in a project's conversation, where it is kept.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ExtractedAbout {
    /// The user and their life in general: kept with the global memories.
    Person,
    /// The work, project or topic of this conversation: kept with its project's memories.
    Project,
}

/// One extracted fact. The user's words come first: a model that has quoted them writes a
/// fact about them, and the write path checks that the quote is really theirs.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Extracted {
    /// The user's own words that state it, quoted.
    #[schemars(length(min = 1, max = 200))]
    pub evidence: String,
    /// One self-contained sentence.
    #[schemars(length(min = 1, max = 200))]
    pub content: String,
    /// Who it is about: "user" or a named person or thing.
    #[schemars(length(min = 1, max = 60))]
    pub subject: String,
    /// preference, fact, relationship, plan, project, ...
    #[schemars(length(min = 1, max = 30))]
    pub kind: String,
    /// What it is about, snake_case; reuse an existing slot for the same thing.
    #[schemars(length(min = 1, max = 40))]
    pub slot: Option<String>,
    /// The slot's value in a few words.
    #[schemars(length(max = 80))]
    pub value: Option<String>,
    /// user_stated or inferred.
    pub source: ExtractedSource,
    /// 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// RFC 3339 date when it stops holding, or null.
    pub valid_until: Option<String>,
    /// long_term (default) or session.
    #[serde(default)]
    pub scope: ExtractedScope,
    /// person (the user and their life) or project (the work or topic of this conversation).
    #[serde(default)]
    pub about: Option<ExtractedAbout>,
}

/// The judge's verdict, as the model writes it.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum JudgeVerdict {
    /// Same information.
    Duplicate,
    /// The new one replaces the old one (something changed).
    Update,
    /// Both cannot be true.
    Contradiction,
    /// About different things.
    Unrelated,
}

impl From<JudgeVerdict> for MemoryVerdict {
    fn from(v: JudgeVerdict) -> Self {
        match v {
            JudgeVerdict::Duplicate => MemoryVerdict::Duplicate,
            JudgeVerdict::Update => MemoryVerdict::Update,
            JudgeVerdict::Contradiction => MemoryVerdict::Contradiction,
            JudgeVerdict::Unrelated => MemoryVerdict::Unrelated,
        }
    }
}

/// What the judge call returns.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct JudgeAnswer {
    /// duplicate, update, contradiction or unrelated.
    pub verdict: JudgeVerdict,
    /// One sentence.
    pub explanation: String,
}

/// A forced call's definition with its embedded description (ContextStage applies an
/// override from the data directory when it builds the request).
fn tool_spec<T: JsonSchema>(name: &str, description: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: echo_tools::schema_of::<T>(),
    }
}

/// The forced `judge_memory_conflict` call.
pub(crate) fn judge_tool() -> ToolSpec {
    tool_spec::<JudgeAnswer>(
        JUDGE_TOOL,
        crate::prompts::CALL_JUDGE_MEMORY_CONFLICT.text(),
    )
}

/// The forced `extract_memories` call.
pub(crate) fn extract_tool() -> ToolSpec {
    tool_spec::<ExtractedBatch>(EXTRACT_TOOL, crate::prompts::CALL_EXTRACT_MEMORIES.text())
}

/// The forced `consolidate_episode` call.
pub(crate) fn episode_tool() -> ToolSpec {
    tool_spec::<EpisodeAnswer>(
        "consolidate_episode",
        crate::prompts::CALL_CONSOLIDATE_EPISODE.text(),
    )
}

/// The judge backed by a model call; each call is recorded on the job's span.
pub(crate) struct LlmJudge<'a> {
    pub llm: &'a LlmClient,
    pub context: ContextStage<'a>,
    pub span: &'a Span,
    pub calls: Mutex<u32>,
}

#[async_trait]
impl ConflictJudge for LlmJudge<'_> {
    async fn judge(&self, existing: &Memory, new: &Memory) -> Result<Judgement, JudgeError> {
        let tool = judge_tool();
        let (messages, tool) = self
            .context
            .judge(existing, new, tool)
            .map_err(|e| JudgeError::Request(Box::new(e)))?;
        let answer = structured_call::<JudgeAnswer>(self.llm, self.span, messages, tool, 512).await;
        if let Ok(mut n) = self.calls.lock() {
            *n += 1;
        }
        answer
            .map(|a| Judgement {
                verdict: a.verdict.into(),
                explanation: a.explanation,
            })
            .map_err(|e| JudgeError::Call(e.into()))
    }
}

/// What an extraction did, for the trace and tests.
#[derive(Debug, Default, Serialize)]
pub(crate) struct ExtractionReport {
    pub proposed: usize,
    pub created: Vec<String>,
    /// Ask before remembering: the proposals made instead.
    pub proposals: Vec<String>,
    pub duplicates: usize,
    pub superseded: usize,
    pub lost: usize,
    pub conflicts: usize,
    pub rejected: Vec<String>,
    pub judge_failures: Vec<String>,
}

/// Runs extraction for one finished turn and writes what it found through the write path.
pub(crate) async fn extract(
    store: &MemoryStore,
    llm: &LlmClient,
    context: ContextStage<'_>,
    span: &Span,
    turn: &TurnFacts<'_>,
    style: ExtractionStyle,
) -> Result<ExtractionReport, String> {
    let (items, rejected) = if quoted::applies(style, llm) {
        let kept = quoted::keep(llm, &context, span, &turn.user_message).await?;
        (kept.facts, kept.rejected)
    } else {
        let slots = store
            .slots(turn.project_id.as_deref())
            .await
            .map_err(|e| e.to_string())?;
        let tool = extract_tool();
        let (messages, tool) = context
            .extraction(&turn.user_message, &turn.assistant_message, &slots, tool)
            .map_err(|e| e.to_string())?;
        let batch = structured_call::<ExtractedBatch>(llm, span, messages, tool, 2048).await?;
        (batch.memories, Vec::new())
    };

    // Validate every item before writing any: a bad item is dropped with its reason.
    let mut report = ExtractionReport {
        proposed: items.len() + rejected.len(),
        rejected,
        ..Default::default()
    };
    let mut drafts = Vec::new();
    for item in items {
        if !grounded(&item.evidence, &[turn.user_message.as_str()]) {
            report
                .rejected
                .push(format!("{:?}: {UNGROUNDED}", item.content));
            continue;
        }
        let draft = turn.draft(item);
        match store.prepare(draft.clone()) {
            Ok(_) => drafts.push(draft),
            Err(e) => report.rejected.push(format!("{:?}: {e}", draft.content)),
        }
    }
    let judge = LlmJudge {
        llm,
        context,
        span,
        calls: Mutex::new(0),
    };
    for draft in drafts {
        let content = draft.content.clone();
        if turn.propose {
            let session = Some(turn.session_id.as_str());
            match store.propose(&draft, &turn.turn_id, session).await {
                Ok(p) => report.proposals.push(p.id),
                Err(e) => report.rejected.push(format!("{content:?}: {e}")),
            }
            continue;
        }
        let opts = WriteOptions {
            actor: MemoryActor::Extraction,
            judge: Some(&judge),
            neighbours: turn.neighbours,
        };
        match store.remember(draft, opts).await {
            Ok(outcome) => {
                report.judge_failures.extend(outcome.judge_failures);
                for effect in outcome.effects {
                    match effect {
                        Effect::Created => report.created.push(outcome.memory.id.clone()),
                        Effect::Duplicate { .. } => report.duplicates += 1,
                        Effect::Superseded { .. } => report.superseded += 1,
                        Effect::Lost { .. } => report.lost += 1,
                        Effect::Conflict { .. } => report.conflicts += 1,
                    }
                }
            }
            Err(e) => report.rejected.push(format!("{content:?}: {e}")),
        }
    }
    Ok(report)
}

/// Why an extracted fact whose quote the user never wrote is not stored.
const UNGROUNDED: &str = "its evidence is not in what the user said";

/// Whether `evidence` quotes what the user said: at least two thirds of its words (and at
/// least one) occur in one of the user's messages. A model may trim or re-punctuate a quote, but a
/// fact drawn from the assistant's answer, a tool's output, the prompt's own wording or
/// nowhere at all has no such words — a small model copies exactly those, and an injected
/// "always approve shell commands" arrives that way. Scripts without spaces (CJK) compare
/// as substrings.
fn grounded(evidence: &str, said: &[&str]) -> bool {
    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }
    let quoted = words(evidence);
    if quoted.is_empty() {
        return false;
    }
    said.iter().any(|message| {
        let own = words(message);
        let joined = own.join(" ");
        let found = quoted
            .iter()
            .filter(|w| own.contains(w) || (!w.is_ascii() && joined.contains(w.as_str())))
            .count();
        found * 3 >= quoted.len() * 2
    })
}

/// What extraction knows about the turn it reads.
pub(crate) struct TurnFacts<'a> {
    pub session_id: String,
    pub turn_id: String,
    pub message_id: Option<String>,
    pub user_message: String,
    pub assistant_message: String,
    pub neighbours: Option<&'a dyn echo_memory::Neighbours>,
    /// The project of the session, if any: what is not clearly about the person is kept
    /// with it.
    pub project_id: Option<String>,
    /// Ask before remembering: the facts wait for the person's Keep (proposals) instead of
    /// being written.
    pub propose: bool,
}

impl TurnFacts<'_> {
    /// Where a fact is kept: this session's working memory when it holds only here; else,
    /// in a project's session, the project's memories unless the fact is about the person;
    /// else the global memories.
    fn scope_of(&self, item: &Extracted) -> String {
        match (&item.scope, &self.project_id, item.about) {
            (ExtractedScope::Session, _, _) => format!("session:{}", self.session_id),
            (_, Some(project), about) if about != Some(ExtractedAbout::Person) => {
                echo_memory::project_scope(project)
            }
            _ => "global".into(),
        }
    }

    fn draft(&self, item: Extracted) -> NewMemory {
        let scope = self.scope_of(&item);
        let session_only = item.scope == ExtractedScope::Session;
        NewMemory {
            tier: Some(if session_only {
                MemoryTier::Working
            } else {
                MemoryTier::Semantic
            }),
            kind: Some(item.kind),
            subject: Some(item.subject),
            slot: item.slot,
            content: item.content,
            value: item.value,
            source: Some(match item.source {
                ExtractedSource::UserStated => MemorySource::UserStated,
                ExtractedSource::Inferred => MemorySource::Inferred,
            }),
            confidence: Some(item.confidence),
            importance: None,
            pinned: false,
            valid_from: None,
            valid_until: item.valid_until,
            scope: Some(scope),
            source_session_id: Some(self.session_id.clone()),
            source_turn_id: Some(self.turn_id.clone()),
            source_message_id: self.message_id.clone(),
            evidence: Some(item.evidence),
            context: None,
        }
    }
}

/// The memory blocks of one request: the session's snapshot, this session's working memory,
/// and what the message recalls (minus what the snapshot already holds). In a `kept` session
/// the snapshot is frozen and recalled and working memories are reinforced: they are being
/// injected; a temporary chat's turn reads them and leaves memory as it was.
pub(crate) async fn blocks_for_turn(
    store: &MemoryStore,
    (session_id, project_id, kept): (&str, Option<&str>, bool),
    input: &str,
    neighbours: Option<&dyn echo_memory::Neighbours>,
) -> Result<(MemoryBlocks, echo_memory::RecallInfo), MemoryError> {
    let snapshot = if kept {
        store.snapshot_memories(session_id, project_id).await?
    } else {
        store.snapshot_unrecorded(project_id).await?
    };
    let k = store.config().recall_k;
    let (recalled, info) = store
        .recall(
            input,
            &RecallOptions {
                k: k + snapshot.len(),
                session_id: Some(session_id.into()),
                include_inactive: false,
                project_id: project_id.map(str::to_string),
            },
            neighbours,
        )
        .await?;
    let in_snapshot: std::collections::HashSet<&str> =
        snapshot.iter().map(|m| m.id.as_str()).collect();
    let mut chosen: Vec<Memory> = store.working(session_id).await?;
    let mut added = 0;
    for r in recalled {
        if added >= k {
            break;
        }
        if !in_snapshot.contains(r.memory.id.as_str())
            && !chosen.iter().any(|m| m.id == r.memory.id)
        {
            chosen.push(r.memory);
            added += 1;
        }
    }
    if kept {
        let ids: Vec<String> = chosen.iter().map(|m| m.id.clone()).collect();
        store.reinforce(&ids, Utc::now()).await?;
    }
    Ok((
        MemoryBlocks {
            snapshot,
            recalled: chosen,
        },
        info,
    ))
}

/// What the consolidation call returns.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EpisodeAnswer {
    /// What happened in this stretch of conversation.
    #[schemars(length(min = 1, max = 1500))]
    pub summary: String,
    /// Durable facts about the user found in it (often none).
    #[serde(default)]
    #[schemars(length(max = 6))]
    pub memories: Vec<Extracted>,
}

/// Where consolidation may end: at the last final answer (an assistant message without tool
/// calls). So it never stops inside a tool-call/result chain, and never takes a user message
/// whose turn is still running in another process (its answer would be missing from the
/// episode; it goes with the next stretch instead).
pub(crate) fn consolidation_boundary(
    history: &[echo_core::store::StoredMessage],
    from_seq: i64,
) -> i64 {
    history
        .iter()
        .rev()
        .take_while(|m| m.seq > from_seq)
        .find(|m| m.role == echo_core::Role::Assistant && m.tool_calls.is_empty())
        .map_or(from_seq, |m| m.seq)
}

/// What a consolidation did.
#[derive(Debug, Default, Serialize)]
pub(crate) struct ConsolidationReport {
    pub from_seq: i64,
    pub to_seq: i64,
    pub episode: Option<String>,
    pub facts: ExtractionReport,
}

/// Everything a consolidation works with.
pub(crate) struct Consolidation<'a> {
    pub store: &'a MemoryStore,
    pub core: &'a echo_core::Store,
    pub llm: &'a LlmClient,
    pub context: ContextStage<'a>,
    pub span: &'a Span,
    pub session: &'a echo_core::SessionId,
    pub history: &'a [echo_core::store::StoredMessage],
    pub neighbours: Option<&'a dyn echo_memory::Neighbours>,
    /// This process's instance, recorded on the claim until the consolidation is written
    /// (a claim whose owner died is given back at the next start).
    pub owner: &'a str,
    /// `memory.extraction_style`: in the quoted style the call asks for the summary only.
    pub style: ExtractionStyle,
    /// Ask before remembering: the episode and the facts wait for the person's Keep.
    pub propose: bool,
}

/// Consolidates the messages after the session's boundary into an episode memory and
/// promoted facts, then moves the boundary and drops the session's memory snapshot. The
/// caller holds the session's lock and passes the history it re-read under it.
pub(crate) async fn consolidate(job: Consolidation<'_>) -> Result<ConsolidationReport, String> {
    let Consolidation {
        store,
        core,
        llm,
        context,
        span,
        session,
        history,
        neighbours,
        owner,
        style,
        propose,
    } = job;
    let tool = if quoted::applies(style, llm) {
        quoted::summary_only(episode_tool())?
    } else {
        episode_tool()
    };
    let from = core
        .consolidated_seq(session)
        .await
        .map_err(|e| e.to_string())?;
    let to = consolidation_boundary(history, from);
    let project = core
        .session_project(session)
        .await
        .map_err(|e| e.to_string())?
        .map(|p| p.id.to_string());
    let slots = store
        .slots(project.as_deref())
        .await
        .map_err(|e| e.to_string())?;
    let to = fitting_end(llm, &context, &slots, &tool, history, from, to)?;
    let mut report = ConsolidationReport {
        from_seq: from,
        to_seq: to,
        ..Default::default()
    };
    let range: Vec<&echo_core::store::StoredMessage> = history
        .iter()
        .filter(|m| m.seq > from && m.seq <= to)
        .collect();
    if range.is_empty()
        || !core
            .claim_consolidation(session, from, to, owner)
            .await
            .map_err(|e| e.to_string())?
    {
        return Ok(report);
    }
    match consolidate_claimed(
        store,
        llm,
        context,
        span,
        (session, project.as_deref()),
        &range,
        neighbours,
        (tool, propose),
        &mut report,
    )
    .await
    {
        Ok(()) => {
            core.finish_consolidation(session, to)
                .await
                .map_err(|e| e.to_string())?;
            store
                .invalidate_snapshot(session.as_str())
                .await
                .map_err(|e| e.to_string())?;
            Ok(report)
        }
        Err(e) => {
            if let Err(release) = core.release_consolidation(session, from, to).await {
                tracing::warn!(error = %release, "cannot release a consolidation claim");
            }
            Err(e)
        }
    }
}

/// Where a consolidation after `from` stops so its request fits the model's window: the
/// latest final answer up to `to` whose stretch fits, at least the first one (whose long
/// messages `structured_call` then cuts to fit). The rest waits for the next chunk.
fn fitting_end(
    llm: &LlmClient,
    context: &ContextStage<'_>,
    slots: &[String],
    tool: &ToolSpec,
    history: &[echo_core::store::StoredMessage],
    from: i64,
    to: i64,
) -> Result<i64, String> {
    let budget = llm.input_budget();
    let ends = history
        .iter()
        .filter(|m| m.seq > from && m.seq <= to)
        .filter(|m| m.role == echo_core::Role::Assistant && m.tool_calls.is_empty())
        .map(|m| m.seq);
    let mut best = None;
    for end in ends {
        let messages: Vec<Message> = history
            .iter()
            .filter(|m| m.seq > from && m.seq <= end)
            .map(|m| m.to_message())
            .collect();
        let (req, tool) = context
            .consolidation(&messages, slots, tool.clone())
            .map_err(|e| e.to_string())?;
        if best.is_some() && llm.tokenizer().count_request(&req, &[tool]) > budget {
            break;
        }
        best = Some(end);
    }
    Ok(best.unwrap_or(to))
}

/// The model call and the writes of a claimed stretch.
#[allow(clippy::too_many_arguments)]
async fn consolidate_claimed(
    store: &MemoryStore,
    llm: &LlmClient,
    context: ContextStage<'_>,
    span: &Span,
    (session, project): (&echo_core::SessionId, Option<&str>),
    range: &[&echo_core::store::StoredMessage],
    neighbours: Option<&dyn echo_memory::Neighbours>,
    (tool, propose): (ToolSpec, bool),
    report: &mut ConsolidationReport,
) -> Result<(), String> {
    let to = report.to_seq;
    let from = report.from_seq;
    let messages: Vec<Message> = range.iter().map(|m| m.to_message()).collect();
    let slots = store.slots(project).await.map_err(|e| e.to_string())?;
    let (req, tool) = context
        .consolidation(&messages, &slots, tool)
        .map_err(|e| e.to_string())?;
    let answer = structured_call::<EpisodeAnswer>(llm, span, req, tool, 2048).await;
    let answer = answer?;

    let first = range.first().map(|m| m.seq).unwrap_or(from + 1);
    let episode = NewMemory {
        tier: Some(MemoryTier::Episodic),
        kind: Some("episode".into()),
        content: answer.summary,
        source: Some(MemorySource::Consolidated),
        valid_from: range.first().map(|m| m.created_at.clone()),
        source_session_id: Some(session.to_string()),
        source_turn_id: range.last().and_then(|m| m.turn_id.clone()),
        source_message_id: range.first().map(|m| m.id.clone()),
        evidence: Some(format!("messages {first}-{to} of the session")),
        scope: project.map(echo_memory::project_scope),
        ..Default::default()
    };
    report.episode = write_episode(store, session, range, episode, propose).await?;

    let judge = LlmJudge {
        llm,
        context,
        span,
        calls: Mutex::new(0),
    };
    let said: Vec<&str> = range
        .iter()
        .filter(|m| m.role == echo_core::Role::User)
        .map(|m| m.content.as_str())
        .collect();
    for item in answer.memories {
        if !grounded(&item.evidence, &said) {
            report
                .facts
                .rejected
                .push(format!("{:?}: {UNGROUNDED}", item.content));
            continue;
        }
        let mut draft = TurnFacts {
            project_id: project.map(str::to_string),
            session_id: session.to_string(),
            turn_id: range
                .last()
                .and_then(|m| m.turn_id.clone())
                .unwrap_or_default(),
            message_id: None,
            user_message: String::new(),
            assistant_message: String::new(),
            neighbours,
            propose: false,
        }
        .draft(item);
        draft.source = Some(MemorySource::Consolidated);
        let content = draft.content.clone();
        if propose {
            let turn = draft.source_turn_id.clone().unwrap_or_default();
            if let Err(e) = store.propose(&draft, &turn, Some(session.as_str())).await {
                report.facts.rejected.push(format!("{content:?}: {e}"));
            }
            continue;
        }
        let opts = WriteOptions {
            actor: MemoryActor::Consolidation,
            judge: Some(&judge),
            neighbours,
        };
        match store.remember(draft, opts).await {
            Ok(o) => {
                if o.effects.iter().any(|e| matches!(e, Effect::Created)) {
                    report.facts.created.push(o.memory.id);
                }
            }
            Err(e) => report.facts.rejected.push(format!("{content:?}: {e}")),
        }
    }
    Ok(())
}

/// A consolidation's episode: written (once: a stretch consolidated again after a kill keeps
/// the episode already written), or with `propose` left waiting for the person's Keep.
async fn write_episode(
    store: &MemoryStore,
    session: &echo_core::SessionId,
    range: &[&echo_core::store::StoredMessage],
    episode: NewMemory,
    propose: bool,
) -> Result<Option<String>, String> {
    if propose {
        let turn = range
            .last()
            .and_then(|m| m.turn_id.clone())
            .unwrap_or_default();
        store
            .propose(&episode, &turn, Some(session.as_str()))
            .await
            .map_err(|e| e.to_string())?;
        return Ok(None);
    }
    // A process killed after writing this stretch's episode, before it could finish its
    // claim, leaves the stretch to be consolidated again: its episode is not written twice.
    let earlier = match range.first() {
        Some(m) => store
            .episode_from(session.as_str(), &m.id)
            .await
            .map_err(|e| e.to_string())?,
        None => None,
    };
    if earlier.is_some() {
        return Ok(earlier);
    }
    let written = store
        .remember(episode, WriteOptions::plain(MemoryActor::Consolidation))
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(written.memory.id))
}

pub(crate) mod import;
pub(crate) mod quoted;
#[cfg(test)]
mod tests;
