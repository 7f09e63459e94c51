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
    /// The request does not apply to the memory as it is now (deleted, already resolved, no
    /// change to undo): the person's mistake, not the store's failure.
    #[error("{0}")]
    NotApplicable(String),
    /// Something the store depends on failed (the vector index, the embedder).
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

/// An error from a collaborator this crate does not know (a model client, a prompt).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a [`crate::ConflictJudge`] gave no judgement. The write path then falls back to the
/// deterministic rule and records `"{memory id}: {this error}"` in
/// [`crate::WriteOutcome::judge_failures`].
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The request to the judge could not be built (e.g. its prompt failed to render).
    #[error(transparent)]
    Request(BoxError),
    /// The judge was asked and failed: the call failed or its answer was not a judgement.
    #[error(transparent)]
    Call(BoxError),
}

/// Why vector neighbours could not be found. Recall then ranks by BM25 alone and reports
/// this in [`crate::RecallInfo::vector_error`]; the write path's conflict check logs it and
/// goes on with the other candidates.
#[derive(Debug, thiserror::Error)]
pub enum NeighboursError {
    /// The text could not be embedded.
    #[error(transparent)]
    Embed(#[from] echo_embed::EmbedError),
    /// The embedder answered without a vector for the text.
    #[error("the embedder returned no vector")]
    NoVector,
    /// The vector index could not be searched.
    #[error(transparent)]
    Search(#[from] echo_vector::VectorError),
}

pub(crate) trait Db<T> {
    fn db(self, op: &'static str) -> Result<T, MemoryError>;
}

impl<T> Db<T> for Result<T, sqlx::Error> {
    fn db(self, op: &'static str) -> Result<T, MemoryError> {
        self.map_err(|source| MemoryError::Db { op, source })
    }
}
