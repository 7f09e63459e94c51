//! Deletion that deletes: a memory, the older versions it superseded, its history, its
//! conflicts and its outbox entries leave SQLite for good (unlike [`MemoryStore::forget`],
//! which keeps a restorable tombstone). The database zeroes freed pages (`secure_delete`, set
//! when the store opens) and the write-ahead log is truncated afterwards, so the text is not
//! left in free pages or old log frames. The vector index (ids and vectors, no text) drops
//! the rows when the queued `delete` operations are flushed.

use super::{MemoryStore, now_text, sql};
use crate::error::{Db, MemoryError};
use serde::Serialize;
use sqlx::Row;
use std::collections::BTreeSet;

/// Ids per statement: well under SQLite's bound-parameter limit, even when a statement
/// names the chunk twice or binds two values per id.
const CHUNK: usize = 400;

/// `?, ?, …` for `n` ids.
fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Binds every id of `ids` to a scalar query, in order.
fn bind_all<'q, T>(
    mut query: sqlx::query::QueryScalar<'q, sqlx::Sqlite, T, sqlx::sqlite::SqliteArguments>,
    ids: &'q [impl AsRef<str> + Sync],
) -> sqlx::query::QueryScalar<'q, sqlx::Sqlite, T, sqlx::sqlite::SqliteArguments> {
    for id in ids {
        query = query.bind(id.as_ref());
    }
    query
}

/// What a purge removed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PurgeReport {
    /// Every memory removed: the ones asked for and the older versions they superseded.
    pub deleted: Vec<String>,
    /// Their texts, so the caller can scrub copies kept elsewhere (captured model requests);
    /// never sent or serialised.
    #[serde(skip)]
    pub contents: Vec<String>,
}

impl MemoryStore {
    /// Removes `ids` and every memory they superseded, directly or through a chain, with their
    /// history, conflicts and outbox entries. Unknown ids are a `NotFound` error (nothing is
    /// removed then).
    pub async fn purge(&self, ids: &[&str]) -> Result<PurgeReport, MemoryError> {
        let mut tx = self.begin().await?;
        let mut doomed = BTreeSet::new();
        // Statements name at most CHUNK ids (SQLite limits bound parameters), so deleting
        // every memory is a few hundred statements, not several per memory.
        for chunk in ids.chunks(CHUNK) {
            let found: Vec<String> = bind_all(
                sqlx::query_scalar(sql(format!(
                    "SELECT id FROM memories WHERE id IN ({})",
                    placeholders(chunk.len())
                ))),
                chunk,
            )
            .fetch_all(&mut *tx)
            .await
            .db("finding memories to delete")?;
            if let Some(missing) = chunk.iter().find(|id| !found.iter().any(|f| f == *id)) {
                return Err(MemoryError::NotFound {
                    what: "memory",
                    id: (*missing).into(),
                });
            }
            doomed.extend(found);
        }
        // The older versions: memories superseded by a doomed one, transitively.
        let mut frontier: Vec<String> = doomed.iter().cloned().collect();
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for chunk in frontier.chunks(CHUNK) {
                let older: Vec<String> = bind_all(
                    sqlx::query_scalar(sql(format!(
                        "SELECT id FROM memories WHERE superseded_by IN ({})",
                        placeholders(chunk.len())
                    ))),
                    chunk,
                )
                .fetch_all(&mut *tx)
                .await
                .db("finding superseded versions")?;
                next.extend(older.into_iter().filter(|id| doomed.insert(id.clone())));
            }
            frontier = next;
        }
        let all: Vec<String> = doomed.into_iter().collect();
        let now = now_text();
        let mut contents = Vec::new();
        for chunk in all.chunks(CHUNK) {
            let p = placeholders(chunk.len());
            let texts: Vec<String> = bind_all(
                sqlx::query_scalar(sql(format!(
                    "SELECT content FROM memories WHERE id IN ({p})"
                ))),
                chunk,
            )
            .fetch_all(&mut *tx)
            .await
            .db("reading memories to delete")?;
            contents.extend(texts);
            for (q, what) in [
                (
                    format!("DELETE FROM memory_history WHERE memory_id IN ({p})"),
                    "deleting memory history",
                ),
                (
                    format!(
                        "DELETE FROM memory_conflicts WHERE memory_a IN ({p}) OR memory_b IN ({p})"
                    ),
                    "deleting conflicts",
                ),
                (
                    format!("DELETE FROM memories WHERE id IN ({p})"),
                    "deleting memories",
                ),
            ] {
                // The conflicts statement names the chunk twice; the others once.
                let times = q.matches(" IN (").count();
                let mut query = sqlx::query(sql(q));
                for _ in 0..times {
                    for id in chunk {
                        query = query.bind(id);
                    }
                }
                query.execute(&mut *tx).await.db(what)?;
            }
            // The vector index drops the rows when the outbox is flushed.
            let rows = vec!["(?, 'delete', ?)"; chunk.len()].join(", ");
            let mut queue = sqlx::query(sql(format!(
                "INSERT INTO memory_outbox (memory_id, op, enqueued_at) VALUES {rows}
                 ON CONFLICT(memory_id) DO UPDATE SET op = 'delete', enqueued_at = excluded.enqueued_at"
            )));
            for id in chunk {
                queue = queue.bind(id).bind(&now);
            }
            queue
                .execute(&mut *tx)
                .await
                .db("queueing vector deletes")?;
        }
        // Snapshots hold ids only, but a session's snapshot must not name a memory that is gone.
        sqlx::query("DELETE FROM memory_snapshots")
            .execute(&mut *tx)
            .await
            .db("invalidating memory snapshots")?;
        tx.commit().await.db("deleting memories")?;
        self.truncate_log().await;
        Ok(PurgeReport {
            deleted: all,
            contents,
        })
    }

    /// Removes every memory (see [`MemoryStore::purge`]) and every proposal waiting for the
    /// person (what was said, not yet a memory).
    pub async fn purge_all(&self) -> Result<PurgeReport, MemoryError> {
        sqlx::query("DELETE FROM memory_proposals")
            .execute(&self.pool)
            .await
            .db("deleting memory proposals")?;
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

    /// Empties the write-ahead log, so deleted text does not linger in old log frames.
    async fn truncate_log(&self) {
        echo_core::store::truncate_log(&self.pool).await;
    }
}
