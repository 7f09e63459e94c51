//! The SQLite store: sessions, turns, messages and trace spans.
//!
//! SQLite (WAL mode) is the source of truth. Migrations are embedded and run on open; queries
//! are checked at run time, so a fresh clone builds without a database. The database is one
//! file shared by the crates that own its tables, and each keeps the migrations of its own
//! tables beside its manifest (`crates/echo-core/migrations`, `echo-memory`, `echo-gate`,
//! `echo-automations`, `echo-agent`); [`schema`] runs them all, in version order, as one
//! migrator. Writers serialise on SQLite's lock (with a busy timeout), so several processes can share one data directory.
//!
//! This file holds the [`Store`] handle and its opening; each table's operations are further
//! `impl Store` blocks beside it: `sessions.rs`, `turns.rs`, `messages.rs`, `spans.rs` (with the captured model calls in
//! `captures.rs`), the history archive in `archive.rs`, "delete all my data" in `erase.rs` and
//! "check my data" in `check.rs`.

use crate::error::StoreError;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod archive;
mod captures;
mod check;
mod devices;
mod erase;
mod extractions;
mod history_cache;
mod known_blobs;
mod messages;
mod projects;
mod sessions;
mod spans;
mod turns;
pub use archive::{ArchiveHit, CompressionState, HistorySummary, NewCompression};
pub use captures::{
    CapturePrune, CapturedRequest, CapturedResponse, ModelCall, REDACTED, Redactor,
};
pub use check::StoreCheck;
pub use devices::{ACCESS_EVENTS_KEPT, AccessEvent, Device};
pub use erase::Erased;
pub use extractions::{EXTRACTION_TRIES, PendingExtraction};
pub use messages::StoredMessage;
use messages::stored_message;
pub use projects::{Project, ProjectEdit};
pub use sessions::{OpenedSession, SessionSummary};
pub use spans::{DegradationCounts, SpanRecord};
pub use turns::{CompletedAnswer, StartOutcome, TurnFilter, TurnRecord};

/// Name of the database file inside the data directory.
pub const DB_FILE: &str = "echo.db";

/// Handle to the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
    /// Decoded histories of the sessions read last (see `history_cache.rs`).
    histories: std::sync::Arc<history_cache::HistoryCache>,
    /// Captured message blobs known to be stored (see `known_blobs.rs`).
    known_blobs: std::sync::Arc<known_blobs::KnownBlobs>,
}

pub use crate::vocab::{EntryPoint, MessageStatus, TurnErrorCode, TurnStatus};

/// Every crate's migrations, by crate: each folder holds the migrations of the tables that
/// crate owns. Versions are unique across the folders (`tests/migrations.rs` checks it, and
/// that every crate with a `migrations/` folder is here).
static MIGRATIONS: [Migrator; 5] = [
    sqlx::migrate!("./migrations"),
    sqlx::migrate!("../echo-memory/migrations"),
    sqlx::migrate!("../echo-gate/migrations"),
    sqlx::migrate!("../echo-automations/migrations"),
    sqlx::migrate!("../echo-agent/migrations"),
];

/// The database's whole schema: every crate's migrations as one migrator, in version order.
pub fn schema() -> Migrator {
    let all = MIGRATIONS.iter().flat_map(|m| m.iter().cloned()).collect();
    Migrator::with_migrations(all)
}

impl Store {
    /// Opens (creating if needed) the database in `home` and runs migrations.
    pub async fn open_in(home: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(home).map_err(|source| StoreError::Io {
            op: "cannot create the data directory",
            path: home.to_path_buf(),
            source,
        })?;
        Self::open(&home.join(DB_FILE)).await
    }

    /// Opens (creating if needed) the database file and runs migrations.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        Self::open_file(path).await.map_err(|e| e.or_disk_full(dir))
    }

    async fn open_file(path: &Path) -> Result<Store, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            // Deleted rows are overwritten with zeros, not left in free pages: a deleted
            // memory or session must not be readable from the file afterwards.
            .pragma("secure_delete", "ON")
            .busy_timeout(Duration::from_secs(30));
        // SQLite has no migration lock of its own: two processes opening a new data
        // directory at once would both try to create the tables, and switching a new file to
        // WAL can fail with "database is locked" without waiting. A file lock serialises the
        // whole opening (connect, WAL, migrations) across processes.
        let lock_path = path.with_extension("migrate.lock");
        let io_err = |op: &'static str, source: std::io::Error| StoreError::Io {
            op,
            path: lock_path.clone(),
            source,
        };
        let lock = std::fs::File::create(&lock_path)
            .map_err(|e| io_err("cannot create the migration lock", e))?;
        let lock = tokio::task::spawn_blocking(move || lock.lock().map(|()| lock))
            .await
            .map_err(|e| {
                io_err(
                    "cannot wait for the migration lock",
                    std::io::Error::other(e),
                )
            })?
            .map_err(|e| io_err("cannot take the migration lock", e))?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let migrated = schema().run(&pool).await;
        drop(lock);
        migrated.map_err(|source| StoreError::Migrate {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Store {
            pool,
            path: path.to_path_buf(),
            histories: Default::default(),
            known_blobs: Default::default(),
        })
    }

    /// The connection pool, for stores of other crates that share this database (memory).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// [`truncate_log`] on this database.
    pub async fn truncate_log(&self) {
        truncate_log(&self.pool).await;
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Closes the pool, waiting for in-flight queries.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Copies the write-ahead log of `pool`'s database into it and empties the log, so deleted
/// text does not linger in old log frames. Best effort: a connection reading at that moment
/// keeps the log until its next checkpoint; that, like a failure, is logged.
pub async fn truncate_log(pool: &SqlitePool) {
    use sqlx::Row;
    match sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(pool)
        .await
    {
        Ok(row) if row.get::<i64, _>(0) != 0 => {
            tracing::warn!(
                "the write-ahead log is busy; deleted text leaves it at its next checkpoint"
            );
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "truncating the write-ahead log failed"),
    }
}
