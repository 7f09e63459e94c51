//! Memory snapshots: the memory ids frozen into a session's prompt, and dropping them when
//! memories change.

use super::{MemoryStore, now_text};
use crate::error::{Db, MemoryError};
use sqlx::{Sqlite, Transaction};

impl MemoryStore {
    /// The frozen memory ids of a session's prompt, if any.
    pub async fn snapshot(&self, session_id: &str) -> Result<Option<Vec<String>>, MemoryError> {
        let text: Option<String> =
            sqlx::query_scalar("SELECT memory_ids FROM memory_snapshots WHERE session_id = ?")
                .bind(session_id)
                .fetch_optional(&self.pool)
                .await
                .db("reading a snapshot")?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Freezes a session's memory snapshot.
    pub async fn set_snapshot(&self, session_id: &str, ids: &[String]) -> Result<(), MemoryError> {
        let text = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        sqlx::query(
            "INSERT INTO memory_snapshots (session_id, memory_ids, created_at) VALUES (?, ?, ?)
             ON CONFLICT(session_id) DO UPDATE SET memory_ids = excluded.memory_ids, created_at = excluded.created_at",
        )
        .bind(session_id)
        .bind(text)
        .bind(now_text())
        .execute(&self.pool)
        .await
        .db("saving a snapshot")?;
        Ok(())
    }

    /// Drops a session's snapshot (the next turn builds a fresh one).
    pub async fn invalidate_snapshot(&self, session_id: &str) -> Result<(), MemoryError> {
        sqlx::query("DELETE FROM memory_snapshots WHERE session_id = ?")
            .bind(session_id)
            .execute(&self.pool)
            .await
            .db("dropping a snapshot")?;
        Ok(())
    }

    pub(crate) async fn invalidate_snapshots_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
    ) -> Result<(), MemoryError> {
        sqlx::query("DELETE FROM memory_snapshots")
            .execute(&mut **tx)
            .await
            .db("dropping snapshots")?;
        Ok(())
    }
}
