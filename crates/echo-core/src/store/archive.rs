//! The rolling summary of a long session and the searchable archive of what it replaced
//! (migration 0005). Messages are never changed or deleted here: a summary only says which
//! of them a request may leave out.

use super::{Store, StoredMessage, stored_message};
use crate::error::{QueryContext, StoreError};
use crate::ids::{SessionId, TurnId};
use crate::text::{fts_query, fts_terms};
use crate::time::now_rfc3339;
use serde::Serialize;
use sqlx::Row;

/// A session's rolling summary: everything up to `to_seq`, in a few paragraphs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistorySummary {
    /// Row id.
    pub id: String,
    /// The summary text.
    pub summary: String,
    /// The last message it covers.
    pub to_seq: i64,
    /// When it was written.
    pub created_at: String,
}

/// What compression needs to know about a session before it plans a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompressionState {
    /// The rolling summary in force, if any.
    pub summary: Option<HistorySummary>,
    /// The session's last message when the latest attempt (successful or not) ran.
    pub last_attempt_at_seq: Option<i64>,
}

/// A compression to record: the archived segment `(from_seq, to_seq]` and its outcome.
#[derive(Clone, Debug)]
pub struct NewCompression<'a> {
    /// The session.
    pub session: &'a SessionId,
    /// The turn that compressed.
    pub turn: &'a TurnId,
    /// The segment starts after this message.
    pub from_seq: i64,
    /// And ends with this one.
    pub to_seq: i64,
    /// The session's last message at the time.
    pub at_seq: i64,
    /// The rolling summary as of `to_seq`, or why there is none.
    pub outcome: Result<String, String>,
    /// The segment as text, for the archive's full-text index.
    pub segment_text: &'a str,
}

/// An archived segment that matches a search.
#[derive(Clone, Debug, Serialize)]
pub struct ArchiveHit {
    /// The segment starts after this message.
    pub from_seq: i64,
    /// And ends with this one.
    pub to_seq: i64,
    /// When it was archived.
    pub archived_at: String,
}

impl Store {
    /// The rolling summary in force and the latest attempt, for `session`.
    pub async fn compression_state(
        &self,
        session: &SessionId,
    ) -> Result<CompressionState, StoreError> {
        let summary = sqlx::query(
            "SELECT id, summary, to_seq, created_at FROM history_summaries
             WHERE session_id = ? AND status = 'ok' AND discarded_by IS NULL
             ORDER BY to_seq DESC, created_at DESC LIMIT 1",
        )
        .bind(session.as_str())
        .fetch_optional(&self.pool)
        .await
        .during("reading the rolling summary")?
        .map(|r| HistorySummary {
            id: r.get("id"),
            summary: r.get("summary"),
            to_seq: r.get("to_seq"),
            created_at: r.get("created_at"),
        });
        let last_attempt_at_seq = sqlx::query_scalar(
            "SELECT MAX(at_seq) FROM history_summaries
             WHERE session_id = ? AND discarded_by IS NULL",
        )
        .bind(session.as_str())
        .fetch_one(&self.pool)
        .await
        .during("reading the last compression")?;
        Ok(CompressionState {
            summary,
            last_attempt_at_seq,
        })
    }

    /// Records a compression: on success the new rolling summary and the segment in the
    /// archive's index, in one transaction; on failure only the attempt (for the cooldown).
    pub async fn record_compression(&self, c: NewCompression<'_>) -> Result<String, StoreError> {
        let id = uuid::Uuid::now_v7().to_string();
        let mut tx = self.pool.begin().await.during("archiving history")?;
        let (status, summary, error) = match &c.outcome {
            Ok(summary) => ("ok", summary.as_str(), None),
            Err(e) => ("failed", "", Some(e.as_str())),
        };
        sqlx::query(
            "INSERT INTO history_summaries
                 (id, session_id, turn_id, status, from_seq, to_seq, at_seq, summary, error, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(c.session.as_str())
        .bind(c.turn.as_str())
        .bind(status)
        .bind(c.from_seq)
        .bind(c.to_seq)
        .bind(c.at_seq)
        .bind(summary)
        .bind(error)
        .bind(now_rfc3339())
        .execute(&mut *tx)
        .await
        .during("recording a compression")?;
        if c.outcome.is_ok() {
            sqlx::query(
                "INSERT INTO history_archive_fts (summary_id, session_id, terms) VALUES (?, ?, ?)",
            )
            .bind(&id)
            .bind(c.session.as_str())
            .bind(fts_terms(c.segment_text))
            .execute(&mut *tx)
            .await
            .during("indexing archived history")?;
        }
        tx.commit().await.during("archiving history")?;
        Ok(id)
    }

    /// Archived segments of `session` that match `query` (BM25, best first).
    pub async fn search_archive(
        &self,
        session: &SessionId,
        query: &str,
        limit: u32,
    ) -> Result<Vec<ArchiveHit>, StoreError> {
        let Some(expr) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(
            "SELECT h.from_seq, h.to_seq, h.created_at
             FROM history_archive_fts f JOIN history_summaries h ON h.id = f.summary_id
             WHERE history_archive_fts MATCH ? AND f.session_id = ? AND h.discarded_by IS NULL
             ORDER BY bm25(history_archive_fts) LIMIT ?",
        )
        .bind(expr)
        .bind(session.as_str())
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .during("searching archived history")?;
        Ok(rows
            .iter()
            .map(|r| ArchiveHit {
                from_seq: r.get("from_seq"),
                to_seq: r.get("to_seq"),
                archived_at: r.get("created_at"),
            })
            .collect())
    }

    /// The messages `(from_seq, to_seq]` of the session's history, in order.
    pub async fn messages_between(
        &self,
        session: &SessionId,
        from_seq: i64,
        to_seq: i64,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, session_id, turn_id, seq, role, content, reasoning, tool_calls,
                    tool_call_id, name, status, created_at
             FROM messages
             WHERE session_id = ? AND replaced_by IS NULL AND seq > ? AND seq <= ?
             ORDER BY seq",
        )
        .bind(session.as_str())
        .bind(from_seq)
        .bind(to_seq)
        .fetch_all(&self.pool)
        .await
        .during("reading archived history")?;
        rows.iter().map(stored_message).collect()
    }

    /// Every tool call id answered so far in `session` (messages set aside by an edit
    /// included: they stay readable through the archive tools).
    pub async fn tool_call_ids(
        &self,
        session: &SessionId,
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT tool_call_id FROM messages
             WHERE session_id = ? AND role = 'tool' AND tool_call_id IS NOT NULL",
        )
        .bind(session.as_str())
        .fetch_all(&self.pool)
        .await
        .during("reading tool call ids")?;
        Ok(ids.into_iter().collect())
    }

    /// The stored result of tool call `call_id` in `session`, whole.
    pub async fn tool_result(
        &self,
        session: &SessionId,
        call_id: &str,
    ) -> Result<Option<StoredMessage>, StoreError> {
        let row = sqlx::query(
            "SELECT id, session_id, turn_id, seq, role, content, reasoning, tool_calls,
                    tool_call_id, name, status, created_at
             FROM messages
             WHERE session_id = ? AND role = 'tool' AND tool_call_id = ?
             ORDER BY seq DESC LIMIT 1",
        )
        .bind(session.as_str())
        .bind(call_id)
        .fetch_optional(&self.pool)
        .await
        .during("reading a tool result")?;
        row.as_ref().map(stored_message).transpose()
    }
}
