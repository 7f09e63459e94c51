//! Errors of the store and configuration layers.

use std::path::PathBuf;

/// A storage failure: which operation, and what SQLite or the file system said.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or migrated.
    #[error("cannot open the database {path}: {source}")]
    Open {
        /// Database path.
        path: PathBuf,
        /// Cause.
        #[source]
        source: sqlx::Error,
    },
    /// Migrations failed.
    #[error("cannot migrate the database {path}: {source}")]
    Migrate {
        /// Database path.
        path: PathBuf,
        /// Cause.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// The disk holding the data directory is full: SQLite could not grow its files.
    #[error(
        "the disk holding {path} is full ({free}): free some space and try again; \
         what was stored before is intact"
    )]
    DiskFull {
        /// The data directory.
        path: PathBuf,
        /// Free space, for people ("12 KiB free").
        free: String,
    },
    /// A query failed.
    #[error("database error while {op}: {source}")]
    Query {
        /// What the store was doing.
        op: &'static str,
        /// Cause.
        #[source]
        source: sqlx::Error,
    },
    /// A stored row held data that cannot be read back.
    #[error("corrupt row in {table}: {detail}")]
    Corrupt {
        /// Table name.
        table: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// A named thing does not exist.
    #[error("{what} not found: {id}")]
    NotFound {
        /// Kind of thing.
        what: &'static str,
        /// Its id or name.
        id: String,
    },
    /// File-system error around the data directory.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was attempted.
        op: &'static str,
        /// Path involved.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// Adds the operation name to a sqlx error.
pub(crate) trait QueryContext<T> {
    fn during(self, op: &'static str) -> Result<T, StoreError>;
}

impl<T> QueryContext<T> for Result<T, sqlx::Error> {
    fn during(self, op: &'static str) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Query { op, source })
    }
}

/// Below this much free space, a failing database write is blamed on a full disk.
const FULL_BELOW: u64 = 1 << 20;

impl StoreError {
    /// This error, or [`StoreError::DiskFull`] when the disk holding `dir` has (almost) no
    /// space left: SQLite reports a full disk as anything from "database or disk is full" to
    /// a "disk I/O error" while growing its shared-memory file, which names no cause.
    pub(crate) fn or_disk_full(self, dir: &std::path::Path) -> StoreError {
        match free_space(dir) {
            Some(free) if free < FULL_BELOW => StoreError::DiskFull {
                path: dir.to_path_buf(),
                free: if free < 1024 {
                    format!("{free} bytes free")
                } else {
                    format!("{} KiB free", free / 1024)
                },
            },
            _ => self,
        }
    }
}

/// Bytes an unprivileged process may still write on the disk holding `dir`.
#[cfg(unix)]
fn free_space(dir: &std::path::Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

#[cfg(not(unix))]
fn free_space(_dir: &std::path::Path) -> Option<u64> {
    None
}
