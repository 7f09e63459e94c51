//! Deletion that deletes: a memory, the older versions it superseded, its history, its
//! conflicts and its outbox entries leave SQLite for good (unlike [`MemoryStore::forget`],
//! which keeps a restorable tombstone). The database zeroes freed pages (`secure_delete`, set
//! when the store opens) and the write-ahead log is truncated afterwards, so the text is not
//! left in free pages or old log frames. The vector index (ids and vectors, no text) drops
//! the rows when the queued `delete` operations are flushed.

use super::{MemoryStore, now_text};
use crate::error::{Db, MemoryError};
use serde::Serialize;
use sqlx::Row;
use std::collections::BTreeSet;

/// What a purge removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct PurgeReport {
    /// Every memory removed: the ones asked for and the older versions they superseded.
    pub deleted: Vec<String>,
}

impl MemoryStore {
    /// Removes `ids` and every memory they superseded, directly or through a chain, with their
    /// history, conflicts and outbox entries. Unknown ids are a `NotFound` error (nothing is
    /// removed then).
    pub async fn purge(&self, ids: &[&str]) -> Result<PurgeReport, MemoryError> {
        let mut tx = self.begin().await?;
        let mut doomed = BTreeSet::new();
        for &id in ids {
            let exists = sqlx::query("SELECT 1 FROM memories WHERE id = ?")
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .db("finding a memory to delete")?;
            if exists.is_none() {
                return Err(MemoryError::NotFound {
                    what: "memory",
                    id: id.into(),
                });
            }
            doomed.insert(id.to_string());
        }
        // The older versions: memories superseded by a doomed one, transitively.
        let mut frontier: Vec<String> = doomed.iter().cloned().collect();
        while let Some(id) = frontier.pop() {
            let older = sqlx::query("SELECT id FROM memories WHERE superseded_by = ?")
                .bind(&id)
                .fetch_all(&mut *tx)
                .await
                .db("finding superseded versions")?;
            for row in older {
                let older: String = row.get(0);
                if doomed.insert(older.clone()) {
                    frontier.push(older);
                }
            }
        }
        for id in &doomed {
            for (sql, what) in [
                (
                    "DELETE FROM memory_history WHERE memory_id = ?",
                    "deleting memory history",
                ),
                (
                    "DELETE FROM memory_conflicts WHERE memory_a = ?1 OR memory_b = ?1",
                    "deleting conflicts",
                ),
                ("DELETE FROM memories WHERE id = ?", "deleting a memory"),
            ] {
                sqlx::query(sql).bind(id).execute(&mut *tx).await.db(what)?;
            }
            // The vector index drops the row when the outbox is flushed.
            sqlx::query(
                "INSERT INTO memory_outbox (memory_id, op, enqueued_at) VALUES (?, 'delete', ?)
                 ON CONFLICT(memory_id) DO UPDATE SET op = 'delete', enqueued_at = excluded.enqueued_at",
            )
            .bind(id)
            .bind(now_text())
            .execute(&mut *tx)
            .await
            .db("queueing a vector delete")?;
        }
        // Snapshots hold ids only, but a session's snapshot must not name a memory that is gone.
        sqlx::query("DELETE FROM memory_snapshots")
            .execute(&mut *tx)
            .await
            .db("invalidating memory snapshots")?;
        tx.commit().await.db("deleting memories")?;
        self.truncate_log().await;
        Ok(PurgeReport {
            deleted: doomed.into_iter().collect(),
        })
    }

    /// Removes every memory (see [`MemoryStore::purge`]).
    pub async fn purge_all(&self) -> Result<PurgeReport, MemoryError> {
        let ids: Vec<String> = sqlx::query("SELECT id FROM memories")
            .fetch_all(&self.pool)
            .await
            .db("listing memories to delete")?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.purge(&refs).await
    }

    /// Copies the write-ahead log into the database and empties it, so deleted text does not
    /// linger in old log frames. Best effort: another connection reading at the same moment
    /// keeps the log until its next checkpoint (logged).
    async fn truncate_log(&self) {
        match sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .fetch_one(&self.pool)
            .await
        {
            Ok(row) if row.get::<i64, _>(0) != 0 => {
                tracing::warn!(
                    "the write-ahead log is busy; deleted text leaves it at the next checkpoint"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "truncating the write-ahead log failed"),
        }
    }
}
