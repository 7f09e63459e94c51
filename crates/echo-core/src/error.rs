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
