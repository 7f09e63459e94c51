//! The read log (migration 0019): which turns had a memory in the request a model answered
//! from, and how it got there. A memory's "used in N answers", and the way to find a wrong
//! memory that keeps steering answers. Kept to the newest [`READS_KEPT`] rows per memory and
//! for as long as captured model calls (`[trace] retention_days`, [`MemoryStore::prune_reads`]);
//! deleting a memory or the session of a turn deletes its rows.

use super::MemoryStore;
use crate::error::{Db, MemoryError};
use echo_core::time::to_rfc3339;
use echo_core::vocab::MemoryReadKind;
use sqlx::Row;

/// Rows kept per memory (the newest).
pub const READS_KEPT: i64 = 100;

/// One read of a memory.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRead {
    /// The turn whose request held it.
    pub turn_id: String,
    /// That turn's session (gone with it).
    pub session_id: Option<String>,
    /// How it came to be in the request.
    pub how: MemoryReadKind,
    /// When.
    pub at: String,
}

impl MemoryStore {
    /// Records that turn `turn_id` of `session_id` read these memories, each in its way.
    pub async fn record_reads(
        &self,
        reads: &[(String, MemoryReadKind)],
        turn_id: &str,
        session_id: Option<&str>,
    ) -> Result<(), MemoryError> {
        if reads.is_empty() {
            return Ok(());
        }
        let at = to_rfc3339(chrono::Utc::now());
        let mut tx = self.begin().await?;
        for (memory_id, how) in reads {
            sqlx::query(
                "INSERT INTO memory_reads (memory_id, turn_id, session_id, how, at)
                 SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
            )
            .bind(memory_id)
            .bind(turn_id)
            .bind(session_id)
            .bind(how.as_str())
            .bind(&at)
            .bind(memory_id)
            .execute(&mut *tx)
            .await
            .db("recording a memory read")?;
            sqlx::query(
                "DELETE FROM memory_reads WHERE memory_id = ? AND rowid NOT IN (
                     SELECT rowid FROM memory_reads WHERE memory_id = ?
                     ORDER BY at DESC, rowid DESC LIMIT ?)",
            )
            .bind(memory_id)
            .bind(memory_id)
            .bind(READS_KEPT)
            .execute(&mut *tx)
            .await
            .db("keeping a memory's read log bounded")?;
        }
        tx.commit().await.db("recording memory reads")
    }

    /// Deletes the reads older than `days` before `now` (the engine runs it with the captured
    /// model calls' retention, at start and daily; 0 keeps none). Returns how many went.
    pub async fn prune_reads(
        &self,
        days: u32,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<u64, MemoryError> {
        let before = to_rfc3339(now - chrono::Duration::days(i64::from(days)));
        Ok(sqlx::query("DELETE FROM memory_reads WHERE at < ?")
            .bind(before)
            .execute(&self.pool)
            .await
            .db("pruning the read log")?
            .rows_affected())
    }

    /// The reads of memory `id` kept, newest first, and how many answers (distinct turns)
    /// they are.
    pub async fn reads(&self, id: &str) -> Result<(Vec<MemoryRead>, u64), MemoryError> {
        let rows = sqlx::query(
            "SELECT turn_id, session_id, how, at FROM memory_reads WHERE memory_id = ?
             ORDER BY at DESC, rowid DESC",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .db("reading a memory's read log")?;
        let reads: Vec<MemoryRead> = rows
            .iter()
            .filter_map(|r| {
                Some(MemoryRead {
                    turn_id: r.get("turn_id"),
                    session_id: r.get("session_id"),
                    how: MemoryReadKind::parse(r.get::<&str, _>("how"))?,
                    at: r.get("at"),
                })
            })
            .collect();
        let answers = reads
            .iter()
            .map(|r| r.turn_id.as_str())
            .collect::<std::collections::HashSet<_>>()
            .len() as u64;
        Ok((reads, answers))
    }
}
