//! A research run's state, explicit and serialisable, and where it is kept: the
//! `research_runs` row (rewritten after every node) and the `research_cache` of what searches
//! and pages answered (migration 0018 of this crate).
//!
//! A node is done when its result is in the state: the plan when `plan` is set, a search when
//! its sub-question's `found` is, a read when its `Read` is there, the report when `report`
//! is. A resumed run skips what is done and runs the rest.

use echo_core::vocab::SubQuestionState;
use echo_core::{SessionId, StoreError, TurnId};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

/// One sub-question of the plan and what would answer it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct SubQuestion {
    /// The sub-question, answerable from web pages.
    pub question: String,
    /// What would answer it: a figure, a list, a date, a comparison.
    #[serde(default)]
    pub look_for: String,
}

/// A search result kept in the state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Found {
    pub title: String,
    pub url: String,
    pub snippet: String,
    pub date: Option<String>,
}

/// A piece of evidence copied from a page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Note {
    /// Word for word from the page (checked).
    pub quote: String,
    /// What it supports, in the model's words.
    pub supports: String,
    pub url: String,
    pub title: String,
    /// When the page was fetched (RFC 3339).
    pub retrieved_at: String,
}

/// One page read for a sub-question: its notes, or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Read {
    pub url: String,
    pub notes: Vec<Note>,
    /// Set when the page could not be read or noted (the report lists it as a gap).
    pub gap: Option<String>,
    /// Served from the cache after fetching failed.
    #[serde(default)]
    pub from_cache: bool,
}

/// A sub-question's progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SubState {
    /// Notes from the person's memories (the recall node is done when set).
    #[serde(default)]
    pub recalled: Option<Vec<Note>>,
    /// Notes from the files in the project's folders (the files node is done when set).
    #[serde(default)]
    pub files: Option<Vec<Note>>,
    /// The search's results (the search node is done when set).
    pub found: Option<Vec<Found>>,
    /// Pages read, in the order of `found`.
    pub reads: Vec<Read>,
    /// Why the search gave nothing, if it did not.
    pub gap: Option<String>,
}

impl SubState {
    /// Whether the person's memories or files gave evidence for the sub-question.
    fn own_evidence(&self) -> bool {
        [&self.recalled, &self.files]
            .iter()
            .any(|notes| notes.as_ref().is_some_and(|n| !n.is_empty()))
    }
}

/// Everything a run knows; stored as JSON after every node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ResearchState {
    pub question: String,
    /// The plan (the plan node is done when set).
    pub plan: Option<Vec<SubQuestion>>,
    /// One per sub-question of the plan.
    pub subs: Vec<SubState>,
    /// The report as written, before checking (the write node is done when set).
    pub report: Option<String>,
    /// Nodes that finished, by name (`plan`, `search:1`, `read:1:2`, `write`), in order: what
    /// a resumed run does not run again.
    pub finished: Vec<String>,
}

impl ResearchState {
    /// A fresh run of `question`.
    pub(crate) fn new(question: &str) -> Self {
        ResearchState {
            question: question.to_string(),
            ..ResearchState::default()
        }
    }

    /// Every note, numbered from 1 in plan order (a sub-question's memories, then its files,
    /// then its pages), with its sub-question's index.
    pub(crate) fn notes(&self) -> Vec<(usize, &Note)> {
        self.subs
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                let recalled = s.recalled.iter().flatten();
                let files = s.files.iter().flatten();
                let read = s.reads.iter().flat_map(|r| r.notes.iter());
                recalled.chain(files).chain(read).map(move |n| (i, n))
            })
            .collect()
    }

    /// Where sub-question `i` is.
    pub(crate) fn sub_state(&self, i: usize, pages: usize) -> SubQuestionState {
        let Some(sub) = self.subs.get(i) else {
            return SubQuestionState::Pending;
        };
        match &sub.found {
            None if sub.gap.is_some() => SubQuestionState::Gap,
            None => SubQuestionState::Pending,
            Some(found) => {
                let wanted = found.len().min(pages);
                if sub.reads.len() < wanted {
                    SubQuestionState::Reading
                } else if sub.reads.iter().any(|r| !r.notes.is_empty()) || sub.own_evidence() {
                    SubQuestionState::Done
                } else {
                    SubQuestionState::Gap
                }
            }
        }
    }

    /// What could not be found or read, one line each, for the report.
    pub(crate) fn gaps(&self) -> Vec<String> {
        let mut gaps = Vec::new();
        let plan = self.plan.as_deref().unwrap_or_default();
        for (sub, state) in plan.iter().zip(&self.subs) {
            if state.own_evidence() {
                continue;
            }
            if let Some(gap) = &state.gap {
                gaps.push(format!("{}: {gap}", sub.question));
            } else if state.found.is_some() && state.reads.iter().all(|r| r.notes.is_empty()) {
                gaps.push(format!("{}: no source read had evidence", sub.question));
            }
        }
        gaps
    }
}

fn query_error(op: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |source| StoreError::Query { op, source }
}

/// The `research_runs` row of one run, and the session's cache.
#[derive(Clone, Debug)]
pub(crate) struct RunStore {
    pool: SqlitePool,
    pub id: String,
    session: SessionId,
}

impl RunStore {
    /// Starts a run of `question` in `turn`, stored at once.
    pub(crate) async fn create(
        pool: &SqlitePool,
        session: &SessionId,
        turn: &TurnId,
        state: &ResearchState,
    ) -> Result<RunStore, StoreError> {
        let id = uuid::Uuid::now_v7().to_string();
        let now = echo_core::time::now_rfc3339();
        sqlx::query(
            "INSERT INTO research_runs (id, session_id, turn_id, question, state, created_at,
             updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(session.as_str())
        .bind(turn.as_str())
        .bind(&state.question)
        .bind(serde_json::to_string(state).unwrap_or_default())
        .bind(&now)
        .bind(&now)
        .execute(pool)
        .await
        .map_err(query_error("starting a research run"))?;
        Ok(RunStore {
            pool: pool.clone(),
            id,
            session: session.clone(),
        })
    }

    /// The unfinished run that turn `from` of `session` left, moved to `turn`; `None` when
    /// there is none (finished, another session's, or never a research turn).
    pub(crate) async fn take_over(
        pool: &SqlitePool,
        session: &SessionId,
        from: &str,
        turn: &TurnId,
    ) -> Result<Option<(RunStore, ResearchState)>, StoreError> {
        let row: Option<(String, String)> = sqlx::query_as(
            "UPDATE research_runs SET turn_id = ?, updated_at = ?
             WHERE turn_id = ? AND session_id = ? AND finished = 0 RETURNING id, state",
        )
        .bind(turn.as_str())
        .bind(echo_core::time::now_rfc3339())
        .bind(from)
        .bind(session.as_str())
        .fetch_optional(pool)
        .await
        .map_err(query_error("resuming a research run"))?;
        Ok(row.and_then(|(id, state)| {
            let state = serde_json::from_str(&state).ok()?;
            let run = RunStore {
                pool: pool.clone(),
                id,
                session: session.clone(),
            };
            Some((run, state))
        }))
    }

    /// The question of the unfinished run turn `from` left in `session`, with the id of
    /// that turn's user message, if there is such a run.
    pub(crate) async fn unfinished(
        pool: &SqlitePool,
        session: &SessionId,
        from: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError> {
        sqlx::query_as(
            "SELECT r.question, (SELECT m.id FROM messages m
                 WHERE m.turn_id = r.turn_id AND m.role = 'user' ORDER BY m.seq LIMIT 1)
             FROM research_runs r WHERE r.turn_id = ? AND r.session_id = ? AND r.finished = 0",
        )
        .bind(from)
        .bind(session.as_str())
        .fetch_optional(pool)
        .await
        .map_err(query_error("looking for a research run"))
    }

    /// The session's finished runs: (turn that answered with the report, run id, state,
    /// milliseconds from start to the last node).
    pub(crate) async fn finished_in(
        pool: &SqlitePool,
        session: &SessionId,
    ) -> Result<Vec<(String, String, ResearchState, u64)>, StoreError> {
        let rows: Vec<(String, String, String, String, String)> = sqlx::query_as(
            "SELECT turn_id, id, state, created_at, updated_at FROM research_runs
             WHERE session_id = ? AND finished = 1",
        )
        .bind(session.as_str())
        .fetch_all(pool)
        .await
        .map_err(query_error("listing research runs"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(turn, id, state, created, updated)| {
                let state = serde_json::from_str(&state).ok()?;
                let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
                let elapsed = (at(&updated)? - at(&created)?).num_milliseconds().max(0) as u64;
                Some((turn, id, state, elapsed))
            })
            .collect())
    }

    /// Writes the state after a node; `finished` when the run has its report.
    pub(crate) async fn save(
        &self,
        state: &ResearchState,
        finished: bool,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE research_runs SET state = ?, finished = ?, updated_at = ? WHERE id = ?",
        )
        .bind(serde_json::to_string(state).unwrap_or_default())
        .bind(finished)
        .bind(echo_core::time::now_rfc3339())
        .bind(&self.id)
        .execute(&self.pool)
        .await
        .map_err(query_error("saving a research run"))?;
        Ok(())
    }

    /// What `key` answered earlier in this session, with when.
    pub(crate) async fn cached(&self, key: &str) -> Option<(String, String)> {
        let row = sqlx::query_as(
            "SELECT body, fetched_at FROM research_cache WHERE session_id = ? AND key = ?",
        )
        .bind(self.session.as_str())
        .bind(key)
        .fetch_optional(&self.pool)
        .await;
        match row {
            Ok(row) => row,
            Err(e) => {
                tracing::warn!(error = %e, "reading the research cache");
                None
            }
        }
    }

    /// Keeps what `key` answered for a later failure.
    pub(crate) async fn cache(&self, key: &str, body: &str, fetched_at: &str) {
        let done = sqlx::query(
            "INSERT INTO research_cache (session_id, key, body, fetched_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (session_id, key) DO UPDATE SET body = excluded.body,
             fetched_at = excluded.fetched_at",
        )
        .bind(self.session.as_str())
        .bind(key)
        .bind(body)
        .bind(fetched_at)
        .execute(&self.pool)
        .await;
        if let Err(e) = done {
            tracing::warn!(error = %e, "writing the research cache");
        }
    }
}
