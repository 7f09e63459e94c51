//! The memory store: reading rows, the low-level row changes every writer goes through
//! (history and outbox kept in step in the same transaction; triggers log each change for
//! the search index, see `bm25.rs`), and the maintenance
//! operations (edit, pin, forget, restore, undo, sweep, reinforce, snapshots).
//!
//! Only the write path (`write.rs`) inserts new memories; everything here changes existing rows.
//!
//! This file holds [`MemoryStore`] itself and what every part shares; the operations are
//! further `impl MemoryStore` blocks beside it, one file per concern: `read.rs` (reading and
//! searching rows), `rows.rs` (the row changes with history and outbox), `changes.rs` (edit,
//! pin, forget, restore), `history.rs` (history and undo), `conflicts.rs` (the review queue),
//! `sweep.rs` (sweeps and reinforcement), `reads.rs` (the read log), `snapshots.rs` and
//! `outbox.rs`.

use crate::bm25::TextIndex;
use crate::error::{Db, MemoryError};
use chrono::Utc;
use echo_core::config::MemoryConfig;
use echo_core::time::to_rfc3339;
use sqlx::sqlite::SqlitePool;
use sqlx::{Sqlite, Transaction};
use std::sync::Arc;

mod changes;
mod conflicts;
mod history;
mod outbox;
mod proposals;
mod purge;
mod read;
mod reads;
mod rows;
mod snapshots;
mod stats;
mod sweep;
pub use conflicts::Conflict;
pub use history::HistoryEntry;
pub use proposals::Proposal;
pub use purge::PurgeReport;
pub use read::{ListFilter, MemoryPage, MemorySort, sql_order};
pub use reads::{MemoryRead, READS_KEPT};
pub use stats::{MemoryStats, TierStatusCount};
pub use sweep::SweepReport;

pub use echo_core::MemoryActor;

/// Memory storage over the shared SQLite database.
#[derive(Clone, Debug)]
pub struct MemoryStore {
    pub(crate) pool: SqlitePool,
    pub(crate) config: Arc<MemoryConfig>,
    /// The BM25 index, derived from the rows and shared by every clone.
    text: Arc<TextIndex>,
}

pub(crate) const COLUMNS: &str = "id, tier, kind, subject, slot, content, value, source, confidence, importance, \
    pinned, access_count, last_accessed, stability, created_at, updated_at, valid_from, valid_until, \
    status, superseded_by, invalid_at, archived_from, version, scope, source_session_id, \
    source_turn_id, source_message_id, evidence, context";

impl MemoryStore {
    /// A store on the engine's database (its migrations created the tables).
    pub fn new(pool: SqlitePool, config: MemoryConfig) -> Self {
        Self {
            pool,
            config: Arc::new(config),
            text: Arc::default(),
        }
    }

    /// The database pool (shared with the engine's store).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The configuration in force.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// Starts a write transaction (`BEGIN IMMEDIATE`); the write path uses it too.
    pub(crate) async fn begin(&self) -> Result<Transaction<'static, Sqlite>, MemoryError> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .db("starting a memory transaction")
    }
}

pub(crate) fn new_change_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub(crate) fn now_text() -> String {
    to_rfc3339(Utc::now())
}

fn sql(q: String) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(q)
}
