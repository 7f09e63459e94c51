//! Turns: recording one, starting it (one running turn per session, edits and resends),
//! finishing it, recovering turns whose process ended, and reading them back.

use super::Store;
use super::messages::insert_message;
use crate::error::{QueryContext, StoreError};
use crate::ids::{MessageId, SessionId, TurnId};
use crate::message::{Message, Usage};
use crate::time::now_rfc3339;
use crate::vocab::{EntryPoint, TurnErrorCode, TurnStatus};
use serde::Serialize;
use sqlx::{FromRow, Row};

/// A completed turn's answer, for [`Store::complete_turn`].
#[derive(Clone, Copy, Debug)]
pub struct CompletedAnswer<'a> {
    /// The session.
    pub session: &'a SessionId,
    /// The turn.
    pub turn: &'a TurnId,
    /// The assistant's message.
    pub message: &'a Message,
    /// The model's reasoning, kept beside the message.
    pub reasoning: Option<&'a str>,
    /// The model that answered.
    pub model: &'a str,
    /// The turn's token usage.
    pub usage: Usage,
}

/// Sets a turn's final status, error and token usage (alone, or inside a transaction).
async fn set_finished<'e>(
    db: impl sqlx::SqliteExecutor<'e>,
    turn: &TurnId,
    status: TurnStatus,
    model: Option<&str>,
    error: Option<(TurnErrorCode, &str)>,
    usage: Usage,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE turns SET status = ?, model = COALESCE(?, model), error_code = ?, error = ?,
                input_tokens = ?, output_tokens = ?, finished_at = ?
         WHERE id = ?",
    )
    .bind(status.as_str())
    .bind(model)
    .bind(error.map(|e| e.0.as_str()))
    .bind(error.map(|e| e.1))
    .bind(usage.input_tokens as i64)
    .bind(usage.output_tokens as i64)
    .bind(now_rfc3339())
    .bind(turn.as_str())
    .execute(db)
    .await
    .during("finishing a turn")?;
    Ok(())
}

/// A turn record.
#[derive(Clone, Debug, Serialize, FromRow)]
pub struct TurnRecord {
    /// Turn id (also the trace id).
    pub id: String,
    /// Session id.
    pub session_id: String,
    /// Session name.
    pub session_name: String,
    /// Where it is in its life.
    pub status: TurnStatus,
    /// The user's input.
    pub input: String,
    /// Which front end started it.
    pub entry_point: EntryPoint,
    /// Model that answered.
    pub model: Option<String>,
    /// Error code when failed or interrupted.
    pub error_code: Option<TurnErrorCode>,
    /// Error message when failed or interrupted.
    pub error: Option<String>,
    /// Prompt tokens of all model calls.
    pub input_tokens: i64,
    /// Completion tokens of all model calls.
    pub output_tokens: i64,
    /// When it was accepted.
    pub created_at: String,
    /// When it started running.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: Option<String>,
    /// Whether any of its spans degraded (a retry, a fallback model, a trimmed context, ...).
    pub degraded: bool,
    /// How many approval questions it asked the person.
    pub approvals: i64,
}

/// Which turns [`Store::list_turns`] returns; every field narrows, `None` does not.
#[derive(Clone, Debug, Default)]
pub struct TurnFilter {
    /// Session name.
    pub session: Option<String>,
    /// Status.
    pub status: Option<TurnStatus>,
    /// Only degraded (`true`) or only clean (`false`) turns.
    pub degraded: Option<bool>,
    /// Model that answered.
    pub model: Option<String>,
    /// Only turns that asked (`true`) or did not ask (`false`) for approval.
    pub has_approvals: Option<bool>,
    /// Accepted at or after (RFC 3339).
    pub since: Option<String>,
    /// Accepted before (RFC 3339).
    pub until: Option<String>,
}

/// Result of trying to start a turn.
#[derive(Debug, PartialEq, Eq)]
pub enum StartOutcome {
    /// The turn is running and its user message is stored.
    Started,
    /// Another live turn of the session is running.
    Busy,
    /// The turn is no longer `accepted` (e.g. it was interrupted while it waited).
    Gone,
    /// The message to replace is not a user message in the session's history (any more).
    NoSuchMessage,
}

impl Store {
    /// Records a new turn as `accepted`. Its input is kept here until it runs.
    pub async fn create_turn(
        &self,
        session: &SessionId,
        input: &str,
        entry_point: EntryPoint,
        owner: &str,
    ) -> Result<TurnId, StoreError> {
        let id = TurnId::new();
        sqlx::query(
            "INSERT INTO turns (id, session_id, status, input, entry_point, owner, created_at)
             VALUES (?, ?, 'accepted', ?, ?, ?, ?)",
        )
        .bind(id.as_str())
        .bind(session.as_str())
        .bind(input)
        .bind(entry_point)
        .bind(owner)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await
        .during("recording a turn")?;
        Ok(id)
    }

    /// Atomically: if no live turn of the session is running, marks `turn` running, sets
    /// aside `replace_from` (a user message of the session) and every later message
    /// (regenerate, edit and resend), and stores the turn's user message. Running turns whose
    /// owner process is gone become `interrupted`.
    pub async fn try_start_turn(
        &self,
        session: &SessionId,
        turn: &TurnId,
        user_message: &Message,
        replace_from: Option<&MessageId>,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<StartOutcome, StoreError> {
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .during("starting a turn")?;
        let running = sqlx::query(
            "SELECT id, owner FROM turns WHERE session_id = ? AND status = 'running' AND id != ?",
        )
        .bind(session.as_str())
        .bind(turn.as_str())
        .fetch_all(&mut *tx)
        .await
        .during("checking running turns")?;
        let now = now_rfc3339();
        let mut busy = false;
        for row in running {
            let (id, owner): (String, String) = (row.get(0), row.get(1));
            if owner_alive(&owner) {
                busy = true;
            } else {
                mark_orphan(&mut tx, &id, &now).await?;
            }
        }
        if busy {
            tx.commit().await.during("starting a turn")?;
            return Ok(StartOutcome::Busy);
        }
        let updated = sqlx::query(
            "UPDATE turns SET status = 'running', started_at = ? WHERE id = ? AND status = 'accepted'",
        )
        .bind(&now)
        .bind(turn.as_str())
        .execute(&mut *tx)
        .await
        .during("starting a turn")?;
        if updated.rows_affected() == 0 {
            tx.commit().await.during("starting a turn")?;
            return Ok(StartOutcome::Gone);
        }
        if let Some(from) = replace_from {
            let seq: Option<i64> = sqlx::query_scalar(
                "SELECT seq FROM messages
                 WHERE id = ? AND session_id = ? AND role = 'user' AND replaced_by IS NULL",
            )
            .bind(from.as_str())
            .bind(session.as_str())
            .fetch_optional(&mut *tx)
            .await
            .during("finding the message to replace")?;
            let Some(seq) = seq else {
                // Roll back: the turn stays `accepted` and the caller reports the bad id.
                drop(tx);
                return Ok(StartOutcome::NoSuchMessage);
            };
            sqlx::query(
                "UPDATE messages SET replaced_by = ?
                 WHERE session_id = ? AND replaced_by IS NULL AND seq >= ?",
            )
            .bind(turn.as_str())
            .bind(session.as_str())
            .bind(seq)
            .execute(&mut *tx)
            .await
            .during("setting aside replaced messages")?;
            // A rolling summary that covers a set-aside message no longer tells the truth.
            sqlx::query(
                "UPDATE history_summaries SET discarded_by = ?
                 WHERE session_id = ? AND discarded_by IS NULL AND to_seq >= ?",
            )
            .bind(turn.as_str())
            .bind(session.as_str())
            .bind(seq)
            .execute(&mut *tx)
            .await
            .during("discarding summaries of replaced messages")?;
        }
        insert_message(
            &mut tx,
            session,
            Some(turn),
            user_message,
            None,
            "complete",
            &now,
        )
        .await?;
        tx.commit().await.during("starting a turn")?;
        Ok(StartOutcome::Started)
    }

    /// Ends a turn with its final status, error and token usage.
    pub async fn finish_turn(
        &self,
        turn: &TurnId,
        status: TurnStatus,
        model: Option<&str>,
        error: Option<(TurnErrorCode, &str)>,
        usage: Usage,
    ) -> Result<(), StoreError> {
        set_finished(&self.pool, turn, status, model, error, usage).await
    }

    /// Saves a turn's answer and completes the turn in one transaction. With `extract_by`
    /// (the process that will run the turn's memory extraction), the extraction is recorded
    /// as pending in the same transaction: no moment exists in which the answer is saved but
    /// a kill would lose its extraction (see `extractions.rs`).
    pub async fn complete_turn(
        &self,
        answer: CompletedAnswer<'_>,
        extract_by: Option<&str>,
    ) -> Result<MessageId, StoreError> {
        let CompletedAnswer {
            session,
            turn,
            message,
            reasoning,
            model,
            usage,
        } = answer;
        let mut tx = self.pool.begin().await.during("saving the answer")?;
        let id = insert_message(
            &mut tx,
            session,
            Some(turn),
            message,
            reasoning,
            "complete",
            &now_rfc3339(),
        )
        .await?;
        set_finished(
            &mut *tx,
            turn,
            TurnStatus::Completed,
            Some(model),
            None,
            usage,
        )
        .await?;
        if let Some(owner) = extract_by {
            super::extractions::mark_pending(&mut tx, turn, &id, owner).await?;
        }
        tx.commit().await.during("saving the answer")?;
        Ok(id)
    }

    /// Marks every `accepted` or `running` turn whose owner is gone as `interrupted` (and its
    /// open spans as cancelled), and closes the spans its background work (extraction,
    /// consolidation, a title) left running in finished turns. Returns the turns it
    /// interrupted.
    pub async fn recover_orphans(
        &self,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<TurnId>, StoreError> {
        let rows =
            sqlx::query("SELECT id, owner FROM turns WHERE status IN ('accepted', 'running')")
                .fetch_all(&self.pool)
                .await
                .during("finding unfinished turns")?;
        let mut recovered = Vec::new();
        let now = now_rfc3339();
        for row in rows {
            let (id, owner): (String, String) = (row.get(0), row.get(1));
            if owner_alive(&owner) {
                continue;
            }
            let mut tx = self.pool.begin().await.during("recovering a turn")?;
            mark_orphan(&mut tx, &id, &now).await?;
            tx.commit().await.during("recovering a turn")?;
            recovered.push(TurnId::from_string(id));
        }
        // Background work outlives its turn, in the turn's process: `echod ask` can leave
        // while an extraction runs. Its span would otherwise show `running` forever.
        let rows = sqlx::query(
            "SELECT DISTINCT t.id, t.owner FROM spans s JOIN turns t ON t.id = s.turn_id
             WHERE s.status = 'running' AND t.status NOT IN ('accepted', 'running')",
        )
        .fetch_all(&self.pool)
        .await
        .during("finding background work left running")?;
        for row in rows {
            let (id, owner): (String, String) = (row.get(0), row.get(1));
            if !owner_alive(&owner) {
                close_orphaned_spans(&self.pool, &id).await?;
            }
        }
        Ok(recovered)
    }

    /// One turn.
    pub async fn turn(&self, turn: &str) -> Result<Option<TurnRecord>, StoreError> {
        sqlx::query_as::<_, TurnRecord>(format_turn_query("WHERE t.id = ?"))
            .bind(turn)
            .fetch_optional(&self.pool)
            .await
            .during("reading a turn")
    }

    /// The most recent turns that pass `filter`, newest first.
    pub async fn list_turns(
        &self,
        filter: &TurnFilter,
        limit: u32,
    ) -> Result<Vec<TurnRecord>, StoreError> {
        let mut clauses = Vec::new();
        let mut texts = Vec::new();
        if let Some(session) = &filter.session {
            clauses.push("s.name = ?");
            texts.push(session.clone());
        }
        if let Some(status) = filter.status {
            clauses.push("t.status = ?");
            texts.push(status.as_str().to_string());
        }
        if let Some(model) = &filter.model {
            clauses.push("t.model = ?");
            texts.push(model.clone());
        }
        if let Some(since) = &filter.since {
            clauses.push("t.created_at >= ?");
            texts.push(since.clone());
        }
        if let Some(until) = &filter.until {
            clauses.push("t.created_at < ?");
            texts.push(until.clone());
        }
        match filter.degraded {
            Some(true) => clauses.push(DEGRADED),
            Some(false) => clauses.push(NOT_DEGRADED),
            None => {}
        }
        match filter.has_approvals {
            Some(true) => clauses.push(APPROVALS_ASKED),
            Some(false) => clauses.push(NO_APPROVALS_ASKED),
            None => {}
        }
        let mut tail = String::new();
        if !clauses.is_empty() {
            tail.push_str("WHERE ");
            tail.push_str(&clauses.join(" AND "));
        }
        tail.push_str(" ORDER BY t.created_at DESC LIMIT ?");
        let sql = format_turn_query(&tail);
        let mut query = sqlx::query_as::<_, TurnRecord>(sql);
        for text in texts {
            query = query.bind(text);
        }
        query
            .bind(limit)
            .fetch_all(&self.pool)
            .await
            .during("listing turns")
    }
}

const DEGRADED: &str =
    "EXISTS (SELECT 1 FROM spans sp WHERE sp.turn_id = t.id AND sp.degraded = 1)";
const NOT_DEGRADED: &str =
    "NOT EXISTS (SELECT 1 FROM spans sp WHERE sp.turn_id = t.id AND sp.degraded = 1)";
const APPROVALS_ASKED: &str =
    "EXISTS (SELECT 1 FROM spans sp WHERE sp.turn_id = t.id AND sp.kind = 'approval')";
const NO_APPROVALS_ASKED: &str =
    "NOT EXISTS (SELECT 1 FROM spans sp WHERE sp.turn_id = t.id AND sp.kind = 'approval')";

fn format_turn_query(tail: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!(
        "SELECT t.id, t.session_id, s.name AS session_name, t.status, t.input, t.entry_point,
                t.model, t.error_code, t.error, t.input_tokens, t.output_tokens, t.created_at,
                t.started_at, t.finished_at,
                {DEGRADED} AS degraded,
                (SELECT COUNT(*) FROM spans sp WHERE sp.turn_id = t.id AND sp.kind = 'approval')
                    AS approvals
         FROM turns t JOIN sessions s ON s.id = t.session_id {tail}"
    ))
}

async fn mark_orphan(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    turn: &str,
    now: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE turns SET status = 'interrupted', error_code = 'process_ended',
                error = 'the process running this turn ended before it finished', finished_at = ?
         WHERE id = ? AND status IN ('accepted', 'running')",
    )
    .bind(now)
    .bind(turn)
    .execute(&mut **tx)
    .await
    .during("interrupting an orphaned turn")?;
    close_orphaned_spans(&mut **tx, turn).await
}

/// Marks the spans of `turn` that are still running as cancelled by the end of their process.
async fn close_orphaned_spans<'e>(
    db: impl sqlx::SqliteExecutor<'e>,
    turn: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE spans SET status = 'cancelled', error = 'process ended' WHERE turn_id = ? AND status = 'running'",
    )
    .bind(turn)
    .execute(db)
    .await
    .during("closing an orphaned turn's spans")?;
    Ok(())
}
