//! The write path: the one entry point through which every writer (extraction, consolidation,
//! the memory tools, the UI, import) adds a memory.
//!
//! validate → scan for injected instructions → find conflict candidates (same subject+slot,
//! BM25 neighbours of short facts, vector neighbours) → ask the judge about each → apply the
//! deterministic policy → write the new row, supersede losers, queue ties for review, all with
//! history, FTS and outbox in ONE transaction. The judge is a model call made by the caller's
//! implementation of [`ConflictJudge`]; this crate knows nothing about prompts.
//!
//! Policy for an update or contradiction: higher source wins (user_stated = manual >
//! consolidated > inferred), then newer (memories from the same turn are the same age), then
//! higher confidence. The loser is superseded — kept, with `superseded_by` — never deleted. A
//! full tie opens a conflict in the review queue and neither side is injected until the person
//! decides. A duplicate reinforces the memory already there instead of adding a row.

use crate::error::{Db, JudgeError, MemoryError, NeighboursError};
use crate::forgetting::initial_half_life;
use crate::model::{Memory, MemorySource, MemoryStatus, MemoryTier, NewMemory, parse_time};
use crate::store::{MemoryActor, MemoryStore, new_change_id, now_text};
use crate::text::injection_marker;
use async_trait::async_trait;
use chrono::Utc;
use echo_core::MemoryAction;
use serde::{Deserialize, Serialize};

/// Longest memory text, in characters.
pub const MAX_CONTENT_CHARS: usize = 2000;

pub use echo_core::MemoryVerdict;

/// A verdict with the judge's reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    /// Verdict.
    pub verdict: MemoryVerdict,
    /// One or two sentences.
    pub explanation: String,
}

/// Decides how a new memory relates to an existing one (a model call, made by the agent).
#[async_trait]
pub trait ConflictJudge: Send + Sync {
    /// Judges `new` against `existing`. An error falls back to the deterministic rule.
    async fn judge(&self, existing: &Memory, new: &Memory) -> Result<Judgement, JudgeError>;
}

/// Finds memories whose meaning is close to a text (the vector index).
#[async_trait]
pub trait Neighbours: Send + Sync {
    /// Ids with cosine similarity, best first. The similarities are exact: the write path
    /// compares them with a threshold.
    async fn similar(&self, text: &str, k: usize) -> Result<Vec<(String, f32)>, NeighboursError>;

    /// Ids best first, for ranking only (recall fuses ranks, not similarities), which an
    /// index may answer faster than [`Neighbours::similar`]. By default, `similar`'s ids.
    async fn ranked(&self, text: &str, k: usize) -> Result<Vec<String>, NeighboursError> {
        let hits = self.similar(text, k).await?;
        Ok(hits.into_iter().map(|(id, _)| id).collect())
    }
}

/// How a write is carried out.
#[derive(Clone, Copy)]
pub struct WriteOptions<'a> {
    /// Who writes.
    pub actor: MemoryActor,
    /// Conflict judge; without one, only the deterministic same-slot rule applies.
    pub judge: Option<&'a dyn ConflictJudge>,
    /// Vector neighbours for candidates; without, same slot and BM25 only.
    pub neighbours: Option<&'a dyn Neighbours>,
}

impl<'a> WriteOptions<'a> {
    /// No judge, no vectors.
    pub fn plain(actor: MemoryActor) -> Self {
        Self {
            actor,
            judge: None,
            neighbours: None,
        }
    }
}

/// What a write did.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
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

/// The result of [`MemoryStore::remember`].
#[derive(Clone, Debug, Serialize)]
pub struct WriteOutcome {
    /// The stored memory (for a duplicate: the existing one, reinforced).
    pub memory: Memory,
    /// What happened.
    pub effects: Vec<Effect>,
    /// Judge calls that failed and fell back to the deterministic rule.
    pub judge_failures: Vec<String>,
}

/// Checks memory text: not empty, not too long, not an instruction in disguise.
pub(crate) fn check_content(content: &str) -> Result<(), MemoryError> {
    let trimmed = content.trim();
    if trimmed.is_empty() {
        return Err(MemoryError::Invalid {
            field: "content",
            message: "it is empty".into(),
        });
    }
    let chars = trimmed.chars().count();
    if chars > MAX_CONTENT_CHARS {
        return Err(MemoryError::Invalid {
            field: "content",
            message: format!("it has {chars} characters; the limit is {MAX_CONTENT_CHARS}"),
        });
    }
    if let Some(marker) = injection_marker(trimmed) {
        return Err(MemoryError::Injection { marker });
    }
    Ok(())
}

/// A slot as stored: lower case, words joined by `_`.
pub fn normalize_slot(slot: &str) -> Option<String> {
    let s: String = slot
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    let s = s
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if s.is_empty() {
        None
    } else {
        Some(s.chars().take(64).collect())
    }
}

fn normalized(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect()
}

fn default_importance(kind: &str, source: MemorySource) -> f64 {
    let base: f64 = match kind {
        "preference" | "fact" | "relationship" | "identity" => 0.7,
        "plan" | "goal" | "project" => 0.65,
        "episode" => 0.5,
        _ => 0.6,
    };
    if source == MemorySource::Inferred {
        base - 0.15
    } else {
        base
    }
}

impl MemoryStore {
    /// Turns a writer's draft into a full, validated row (not stored).
    pub fn prepare(&self, draft: NewMemory) -> Result<Memory, MemoryError> {
        check_content(&draft.content)?;
        for (field, text) in [("value", &draft.value), ("evidence", &draft.evidence)] {
            if let Some(t) = text
                && let Some(marker) = injection_marker(t)
            {
                tracing::debug!(field, "injection marker in memory field");
                return Err(MemoryError::Injection { marker });
            }
        }
        let source = draft.source.unwrap_or(MemorySource::UserStated);
        let unit =
            |field: &'static str, v: Option<f64>, default: f64| -> Result<f64, MemoryError> {
                let v = v.unwrap_or(default);
                if v.is_finite() && (0.0..=1.0).contains(&v) {
                    Ok(v)
                } else {
                    Err(MemoryError::Invalid {
                        field,
                        message: format!("{v} is not between 0 and 1"),
                    })
                }
            };
        let kind = draft
            .kind
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .unwrap_or("fact")
            .to_lowercase();
        let confidence = unit("confidence", draft.confidence, 0.8)?;
        let importance = unit(
            "importance",
            draft.importance,
            default_importance(&kind, source),
        )?;
        let now = Utc::now();
        let time =
            |field: &'static str, v: &Option<String>| -> Result<Option<String>, MemoryError> {
                match v
                    .as_deref()
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && *s != "null")
                {
                    None => Ok(None),
                    Some(s) => parse_time(s)
                        .map(|t| Some(echo_core::time::to_rfc3339(t)))
                        .ok_or_else(|| MemoryError::Invalid {
                            field,
                            message: format!("{s:?} is not an RFC 3339 time or a YYYY-MM-DD date"),
                        }),
                }
            };
        let valid_until = time("valid_until", &draft.valid_until)?;
        if let Some(until) = valid_until.as_deref().and_then(parse_time)
            && until < now
        {
            return Err(MemoryError::Invalid {
                field: "valid_until",
                message: format!("{until} is already past"),
            });
        }
        let scope = draft
            .scope
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .unwrap_or("global")
            .to_string();
        if scope != "global" && !scope.starts_with("session:") && !scope.starts_with("project:") {
            return Err(MemoryError::Invalid {
                field: "scope",
                message: format!("{scope:?}: expected global, project:<id> or session:<id>"),
            });
        }
        let tier = draft.tier.unwrap_or(MemoryTier::Semantic);
        if tier == MemoryTier::Archival {
            return Err(MemoryError::Invalid {
                field: "tier",
                message: "new memories cannot start in the archive".into(),
            });
        }
        if tier == MemoryTier::Working && !scope.starts_with("session:") {
            return Err(MemoryError::Invalid {
                field: "scope",
                message: "working memory belongs to one session (scope session:<id>)".into(),
            });
        }
        let created = echo_core::time::to_rfc3339(now);
        Ok(Memory {
            id: uuid::Uuid::now_v7().to_string(),
            tier,
            kind,
            subject: draft
                .subject
                .as_deref()
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "user".into()),
            slot: draft.slot.as_deref().and_then(normalize_slot),
            content: draft.content.trim().to_string(),
            value: draft
                .value
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty()),
            source,
            confidence,
            importance,
            effective_importance: importance,
            pinned: draft.pinned,
            access_count: 0,
            last_accessed: None,
            stability: initial_half_life(source, &self.config),
            created_at: created.clone(),
            updated_at: created.clone(),
            valid_from: time("valid_from", &draft.valid_from)?.or(Some(created)),
            valid_until,
            status: MemoryStatus::Active,
            superseded_by: None,
            invalid_at: None,
            archived_from: None,
            version: 1,
            scope,
            source_session_id: draft.source_session_id,
            source_turn_id: draft.source_turn_id,
            source_message_id: draft.source_message_id,
            evidence: draft
                .evidence
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty()),
            context: draft
                .context
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty()),
        })
    }

    /// Decides what writing `draft` would do, without writing: the prepared memory, its
    /// conflict candidates and the judge's verdict on each. [`Plan::foreseen`] says what the
    /// write would then do; [`MemoryStore::remember`] plans and writes.
    pub async fn plan(
        &self,
        draft: NewMemory,
        opts: WriteOptions<'_>,
    ) -> Result<Plan, MemoryError> {
        let memory = self.prepare(draft)?;
        let candidates = if memory.tier == MemoryTier::Semantic {
            self.candidates(&memory, opts.neighbours).await?
        } else {
            Vec::new()
        };
        let (judged, judge_failures) = judge_each(&memory, candidates, opts.judge).await;
        Ok(Plan {
            memory,
            judged,
            judge_failures,
        })
    }

    /// Adds a memory through the whole write path (see the module docs).
    pub async fn remember(
        &self,
        draft: NewMemory,
        opts: WriteOptions<'_>,
    ) -> Result<WriteOutcome, MemoryError> {
        let plan = self.plan(draft, opts).await?;
        let resolution = plan.resolve();
        let Plan {
            memory: mut new,
            ref judged,
            judge_failures,
        } = plan;

        let mut tx = self.begin().await?;
        let change = new_change_id();
        // A duplicate confirms what is there: reinforce it, add nothing.
        if let Some(existing) = resolution.duplicate {
            let before = self.require_tx(&mut tx, &existing).await?;
            let mut after = before.clone();
            after.confidence = after.confidence.max(new.confidence);
            if new.source.rank() > after.source.rank() {
                after.source = new.source;
            }
            if after.evidence.is_none() {
                after.evidence = new.evidence.clone();
            }
            let reason = format!("confirmed by a new {} memory", new.source);
            self.update_tx(
                &mut tx,
                &change,
                &before,
                &mut after,
                MemoryAction::Confirmed,
                opts.actor,
                Some(&reason),
            )
            .await?;
            tx.commit().await.db("confirming a memory")?;
            return Ok(WriteOutcome {
                memory: after,
                effects: vec![Effect::Duplicate { of: existing }],
                judge_failures,
            });
        }

        let mut effects = Vec::new();
        if let Some(winner) = resolution.winner {
            new.status = MemoryStatus::Superseded;
            new.superseded_by = Some(winner.clone());
            new.invalid_at = Some(now_text());
            effects.push(Effect::Lost { winner });
        }
        let (losers, ties) = (resolution.losers, resolution.ties);
        let reason = judged
            .iter()
            .find(|(_, j)| j.verdict != MemoryVerdict::Unrelated)
            .map(|(e, j)| format!("{:?} against {}: {}", j.verdict, e.id, j.explanation));
        self.insert_tx(&mut tx, &change, &new, opts.actor, reason.as_deref())
            .await?;
        if new.status == MemoryStatus::Active {
            effects.insert(0, Effect::Created);
            for (old, judgement) in losers {
                let before = self.require_tx(&mut tx, &old).await?;
                if before.status != MemoryStatus::Active {
                    continue;
                }
                let mut after = before.clone();
                after.status = MemoryStatus::Superseded;
                after.superseded_by = Some(new.id.clone());
                after.invalid_at = Some(now_text());
                let why = format!("{:?}: {}", judgement.verdict, judgement.explanation);
                self.update_tx(
                    &mut tx,
                    &change,
                    &before,
                    &mut after,
                    MemoryAction::Superseded,
                    opts.actor,
                    Some(&why),
                )
                .await?;
                effects.push(Effect::Superseded {
                    old,
                    verdict: judgement.verdict,
                });
            }
            for (other, judgement) in ties {
                let conflict_id = uuid::Uuid::now_v7().to_string();
                sqlx::query(
                    "INSERT INTO memory_conflicts (id, memory_a, memory_b, verdict, explanation, status, created_at)
                     VALUES (?, ?, ?, ?, ?, 'open', ?)",
                )
                .bind(&conflict_id)
                .bind(&other)
                .bind(&new.id)
                .bind(judgement.verdict)
                .bind(&judgement.explanation)
                .bind(now_text())
                .execute(&mut *tx)
                .await
                .db("opening a conflict")?;
                effects.push(Effect::Conflict {
                    conflict_id,
                    with: other,
                });
            }
        }
        if effects.iter().any(|e| !matches!(e, Effect::Created)) {
            self.invalidate_snapshots_tx(&mut tx).await?;
        }
        tx.commit().await.db("writing a memory")?;
        Ok(WriteOutcome {
            memory: new,
            effects,
            judge_failures,
        })
    }

    /// Active semantic memories that might conflict with `new`.
    async fn candidates(
        &self,
        new: &Memory,
        neighbours: Option<&dyn Neighbours>,
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut ids: Vec<String> = Vec::new();
        if let Some(slot) = &new.slot {
            let mut tx = self.pool.begin().await.db("finding same-slot memories")?;
            let same = self
                .rows_tx(
                    &mut tx,
                    format!(
                        "SELECT {} FROM memories WHERE status = 'active' AND tier = 'semantic' AND subject = ? AND slot = ?",
                        crate::store::COLUMNS
                    ),
                    &[&new.subject, slot],
                )
                .await?;
            tx.commit().await.db("finding same-slot memories")?;
            ids.extend(same.into_iter().map(|m| m.id));
        }
        if new.content.chars().count() <= 200 {
            for (id, _) in self
                .search_bm25(&new.content, &[MemoryStatus::Active], 3)
                .await?
            {
                ids.push(id);
            }
        }
        if let Some(n) = neighbours {
            match n.similar(&new.content, 5).await {
                Ok(found) => ids.extend(
                    found
                        .into_iter()
                        .filter(|(_, sim)| *sim >= self.config.conflict_similarity)
                        .map(|(id, _)| id),
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "vector neighbours unavailable for conflict check")
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        ids.retain(|id| seen.insert(id.clone()));
        Ok(self
            .get_many(&ids)
            .await?
            .into_iter()
            .filter(|m| {
                m.status == MemoryStatus::Active
                    && m.tier == MemoryTier::Semantic
                    && m.scope == new.scope
            })
            .collect())
    }
}

/// What writing a memory would do, decided before anything is written
/// ([`MemoryStore::plan`]).
#[derive(Clone, Debug)]
pub struct Plan {
    /// The new memory as it would be stored.
    pub memory: Memory,
    /// Each conflict candidate with the judge's verdict on it and the new memory.
    pub judged: Vec<(Memory, Judgement)>,
    /// Judge calls that failed and fell back to the deterministic rule.
    pub judge_failures: Vec<String>,
}

/// What a planned write would do to one memory already there.
#[derive(Clone, Debug, PartialEq)]
pub enum Foreseen {
    /// It says the same: the memory there is reinforced and nothing is added.
    Duplicate {
        /// The memory there.
        memory: Memory,
        /// Why.
        judgement: Judgement,
    },
    /// The new memory wins and this one is superseded.
    Replaces {
        /// The memory there.
        memory: Memory,
        /// Why.
        judgement: Judgement,
    },
    /// This one wins: the new memory is stored as superseded by it.
    LosesTo {
        /// The memory there.
        memory: Memory,
        /// Why.
        judgement: Judgement,
    },
    /// A full tie: both would wait in the review queue.
    Review {
        /// The memory there.
        memory: Memory,
        /// Why.
        judgement: Judgement,
    },
}

/// The policy applied to a plan's verdicts (see the module docs), by id.
struct Resolution {
    /// The memory a duplicate reinforces (then nothing else happens).
    duplicate: Option<String>,
    /// The first memory that wins against the new one.
    winner: Option<String>,
    /// The memories the new one supersedes (when it does not lose).
    losers: Vec<(String, Judgement)>,
    /// Full ties (when it does not lose).
    ties: Vec<(String, Judgement)>,
}

impl Plan {
    fn resolve(&self) -> Resolution {
        let mut out = Resolution {
            duplicate: self
                .judged
                .iter()
                .find(|(_, j)| j.verdict == MemoryVerdict::Duplicate)
                .map(|(m, _)| m.id.clone()),
            winner: None,
            losers: Vec::new(),
            ties: Vec::new(),
        };
        if out.duplicate.is_some() {
            return out;
        }
        for (existing, judgement) in &self.judged {
            if !matches!(
                judgement.verdict,
                MemoryVerdict::Update | MemoryVerdict::Contradiction
            ) {
                continue;
            }
            match decide(&self.memory, existing) {
                Outcome::NewWins => out.losers.push((existing.id.clone(), judgement.clone())),
                Outcome::ExistingWins => {
                    out.winner.get_or_insert_with(|| existing.id.clone());
                }
                Outcome::Tie => out.ties.push((existing.id.clone(), judgement.clone())),
            }
        }
        if out.winner.is_some() {
            out.losers.clear();
            out.ties.clear();
        }
        out
    }

    /// What writing it would do to the memories already there (nothing: a new memory
    /// that touches none).
    pub fn foreseen(&self) -> Vec<Foreseen> {
        let resolution = self.resolve();
        let mut out = Vec::new();
        let mut add = |id: &str, make: fn(Memory, Judgement) -> Foreseen| {
            if let Some((memory, judgement)) = self.judged.iter().find(|(m, _)| m.id == id) {
                out.push(make(memory.clone(), judgement.clone()));
            }
        };
        if let Some(id) = &resolution.duplicate {
            add(id, |memory, judgement| Foreseen::Duplicate {
                memory,
                judgement,
            });
        } else if let Some(id) = &resolution.winner {
            add(id, |memory, judgement| Foreseen::LosesTo {
                memory,
                judgement,
            });
        } else {
            for (id, _) in &resolution.losers {
                add(id, |memory, judgement| Foreseen::Replaces {
                    memory,
                    judgement,
                });
            }
            for (id, _) in &resolution.ties {
                add(id, |memory, judgement| Foreseen::Review {
                    memory,
                    judgement,
                });
            }
        }
        out
    }
}

/// Each candidate with the judge's verdict on it and `new` (the rule-based fallback when the
/// texts are the same, no judge is set or the judge fails), and the judge's failures.
async fn judge_each(
    new: &Memory,
    candidates: Vec<Memory>,
    judge: Option<&dyn ConflictJudge>,
) -> (Vec<(Memory, Judgement)>, Vec<String>) {
    let mut judged = Vec::with_capacity(candidates.len());
    let mut failures = Vec::new();
    for existing in candidates {
        let same_slot =
            new.slot.is_some() && existing.slot == new.slot && existing.subject == new.subject;
        let fallback = fallback_verdict(&existing, new, same_slot);
        let judgement = if normalized(&existing.content) == normalized(&new.content) {
            fallback
        } else if let Some(judge) = judge {
            match judge.judge(&existing, new).await {
                Ok(j) => j,
                Err(e) => {
                    failures.push(format!("{}: {e}", existing.id));
                    fallback
                }
            }
        } else {
            fallback
        };
        judged.push((existing, judgement));
    }
    (judged, failures)
}

/// The rule without a judge: the same slot with the same value or text is a duplicate and with
/// another value an update; anything else is unrelated unless the texts are the same.
fn fallback_verdict(existing: &Memory, new: &Memory, same_slot: bool) -> Judgement {
    let same_text = normalized(&existing.content) == normalized(&new.content);
    let same_value = match (&existing.value, &new.value) {
        (Some(a), Some(b)) => normalized(a) == normalized(b),
        _ => false,
    };
    let verdict = if same_text || (same_slot && same_value) {
        MemoryVerdict::Duplicate
    } else if same_slot {
        MemoryVerdict::Update
    } else {
        MemoryVerdict::Unrelated
    };
    Judgement {
        verdict,
        explanation: "deterministic rule (no judge verdict)".into(),
    }
}

enum Outcome {
    NewWins,
    ExistingWins,
    Tie,
}

/// Source, then age, then confidence.
fn decide(new: &Memory, existing: &Memory) -> Outcome {
    use std::cmp::Ordering::*;
    match new.source.rank().cmp(&existing.source.rank()) {
        Greater => return Outcome::NewWins,
        Less => return Outcome::ExistingWins,
        Equal => {}
    }
    let same_turn = new.source_turn_id.is_some() && new.source_turn_id == existing.source_turn_id;
    let newer = match (
        new.valid_from.as_deref().and_then(parse_time),
        existing.valid_from.as_deref().and_then(parse_time),
    ) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => new.created_at.cmp(&existing.created_at),
    };
    if !same_turn {
        match newer {
            Greater => return Outcome::NewWins,
            Less => return Outcome::ExistingWins,
            Equal => {}
        }
    }
    if (new.confidence - existing.confidence).abs() > 1e-9 {
        return if new.confidence > existing.confidence {
            Outcome::NewWins
        } else {
            Outcome::ExistingWins
        };
    }
    Outcome::Tie
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_normalised() {
        assert_eq!(
            normalize_slot(" Diet Preference ").as_deref(),
            Some("diet_preference")
        );
        assert_eq!(normalize_slot("home-city").as_deref(), Some("home_city"));
        assert_eq!(normalize_slot("  -- "), None);
        assert_eq!(normalize_slot("饮食").as_deref(), Some("饮食"));
    }
}
