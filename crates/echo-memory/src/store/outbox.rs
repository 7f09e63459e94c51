//! The outbox that drives the derived vector index: pending embedding work, clearing it, and
//! queueing every live memory for a reindex.

use super::{MemoryStore, now_text};
use crate::error::{Db, MemoryError};
use sqlx::Row;

impl MemoryStore {
    /// Pending embedding work: `(memory_id, op)`, oldest first.
    pub async fn outbox(&self, limit: u32) -> Result<Vec<(String, String)>, MemoryError> {
        let rows =
            sqlx::query("SELECT memory_id, op FROM memory_outbox ORDER BY enqueued_at LIMIT ?")
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await
                .db("reading the outbox")?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Removes finished outbox entries.
    pub async fn outbox_done(&self, ids: &[String]) -> Result<(), MemoryError> {
        let mut tx = self.begin().await?;
        for id in ids {
            sqlx::query("DELETE FROM memory_outbox WHERE memory_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await
                .db("clearing the outbox")?;
        }
        tx.commit().await.db("clearing the outbox")?;
        Ok(())
    }

    /// Queues every live memory for (re)embedding: the vector index is rebuilt from SQLite.
    pub async fn enqueue_all(&self) -> Result<u64, MemoryError> {
        let done = sqlx::query(
            "INSERT INTO memory_outbox (memory_id, op, enqueued_at)
             SELECT id, 'upsert', ? FROM memories WHERE status != 'deleted'
             ON CONFLICT(memory_id) DO UPDATE SET op = 'upsert', enqueued_at = excluded.enqueued_at",
        )
        .bind(now_text())
        .execute(&self.pool)
        .await
        .db("queueing a reindex")?;
        Ok(done.rows_affected())
    }
}
