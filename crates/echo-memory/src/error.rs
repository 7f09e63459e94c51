//! Memory errors: each names what was wrong and where.

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A field had a bad value.
    #[error("invalid {field}: {message}")]
    Invalid {
        /// Field name.
        field: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The text reads like an instruction to the assistant, not a fact about the person.
    #[error("refused: the memory text looks like an instruction to the assistant ({marker:?})")]
    Injection {
        /// The phrase found.
        marker: &'static str,
    },
    /// No such memory or conflict.
    #[error("{what} not found: {id}")]
    NotFound {
        /// Kind.
        what: &'static str,
        /// Id.
        id: String,
    },
    /// The operation does not apply in the memory's current state.
    #[error("{0}")]
    State(String),
    /// The database failed.
    #[error("memory store error while {op}: {source}")]
    Db {
        /// What was being done.
        op: &'static str,
        /// Cause.
        #[source]
        source: sqlx::Error,
    },
    /// A stored row could not be read back.
    #[error("corrupt memory row {id}: {detail}")]
    Corrupt {
        /// Row id.
        id: String,
        /// What was wrong.
        detail: String,
    },
    /// A file could not be read or written (export/import).
    #[error("{path}: {message}")]
    File {
        /// Path.
        path: String,
        /// What went wrong (line numbers for import).
        message: String,
    },
}

pub(crate) trait Db<T> {
    fn db(self, op: &'static str) -> Result<T, MemoryError>;
}

impl<T> Db<T> for Result<T, sqlx::Error> {
    fn db(self, op: &'static str) -> Result<T, MemoryError> {
        self.map_err(|source| MemoryError::Db { op, source })
    }
}
