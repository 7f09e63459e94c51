//! The one error type of the crate, [`VectorError`], and the small types it carries: the
//! operation that failed ([`Op`]), the vector that was rejected ([`Subject`]) and the shape an
//! index was built for ([`IndexSpec`]).

use std::fmt;
use std::path::PathBuf;

/// An operation on the vector index, named in every error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// [`crate::VectorIndex::open`] and friends.
    Open,
    /// [`crate::VectorIndex::recreate`].
    Recreate,
    /// [`crate::VectorIndex::upsert`].
    Upsert,
    /// [`crate::VectorIndex::delete`].
    Delete,
    /// [`crate::VectorIndex::erase_deleted`].
    Erase,
    /// [`crate::VectorIndex::search`].
    Search,
    /// [`crate::VectorIndex::count`].
    Count,
    /// [`crate::VectorIndex::ids`].
    Ids,
    /// [`crate::VectorIndex::clear`].
    Clear,
    /// [`crate::VectorIndex::optimize`].
    Optimize,
    /// [`crate::VectorIndex::ann_status`].
    Status,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Open => "open",
            Op::Recreate => "recreate",
            Op::Upsert => "upsert",
            Op::Delete => "delete",
            Op::Erase => "erase",
            Op::Search => "search",
            Op::Count => "count",
            Op::Ids => "ids",
            Op::Clear => "clear",
            Op::Optimize => "optimize",
            Op::Status => "status",
        })
    }
}

/// Which vector an input error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The vector given for the memory with this id.
    Memory(String),
    /// The query vector of a search.
    Query,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Memory(id) => write!(f, "memory {id:?}"),
            Subject::Query => f.write_str("the query vector"),
        }
    }
}

/// What an index holds: vectors of `dim` floats made by the embedding model `model`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// Number of floats per vector.
    pub dim: usize,
    /// Name of the embedding model that made the vectors.
    pub model: String,
}

impl fmt::Display for IndexSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dim {} model {:?}", self.dim, self.model)
    }
}

/// Everything that can go wrong in the vector index. Each message is one line naming the index
/// directory and the operation.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    /// The table on disk was built for other vectors. The caller rebuilds it from SQLite
    /// (see [`crate::VectorIndex::recreate`]).
    #[error("vector index {}: {op}: the index holds {found}, wanted {wanted}; rebuild it", .dir.display())]
    IndexMismatch {
        /// Index directory.
        dir: PathBuf,
        /// Always [`Op::Open`] today; kept for a uniform message.
        op: Op,
        /// What the table on disk holds.
        found: IndexSpec,
        /// What the caller asked for.
        wanted: IndexSpec,
    },
    /// The table on disk cannot be read: its files are damaged (LanceDB failed or panicked
    /// while opening it). The caller rebuilds it from SQLite.
    #[error("vector index {}: {op}: the index files are damaged ({detail}); rebuild it", .dir.display())]
    Damaged {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// What LanceDB said.
        detail: String,
    },
    /// The table on disk does not have the layout this crate writes (`id` text, `vector` list of
    /// floats). The caller rebuilds it from SQLite.
    #[error("vector index {}: {op}: table layout not recognised ({detail}); rebuild it", .dir.display())]
    Incompatible {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// What is wrong with the layout.
        detail: String,
    },
    /// A vector does not have the index's dimension.
    #[error("vector index {}: {op}: {subject} has {got} values, the index expects {expected}", .dir.display())]
    WrongLength {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// Which vector.
        subject: Subject,
        /// Its length.
        got: usize,
        /// The index's dimension.
        expected: usize,
    },
    /// A vector holds NaN or an infinity.
    #[error("vector index {}: {op}: {subject} has a non-finite value ({value}) at position {position}", .dir.display())]
    NonFinite {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// Which vector.
        subject: Subject,
        /// Index of the first bad value.
        position: usize,
        /// The bad value.
        value: f32,
    },
    /// A vector is all zeros, so its cosine similarity to anything is undefined.
    #[error("vector index {}: {op}: {subject} is all zeros (cosine similarity is undefined)", .dir.display())]
    ZeroVector {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// Which vector.
        subject: Subject,
    },
    /// An argument is unusable (empty id, zero dimension, empty model name, …).
    #[error("vector index {}: {op}: {reason}", .dir.display())]
    InvalidArgument {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// What is wrong, for people.
        reason: String,
    },
    /// Creating the index directory failed.
    #[error("vector index {}: {op}: {}", .dir.display(), one_line(.source))]
    Io {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// LanceDB failed.
    #[error("vector index {}: {op} failed: {}", .dir.display(), one_line(.source))]
    Lance {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// LanceDB's error.
        #[source]
        source: lancedb::Error,
    },
    /// Arrow data read back from the table had an unexpected shape, or a batch could not be
    /// built.
    #[error("vector index {}: {op}: {}", .dir.display(), one_line(.source))]
    Arrow {
        /// Index directory.
        dir: PathBuf,
        /// The operation.
        op: Op,
        /// Arrow's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
}

impl VectorError {
    /// True when the index on disk cannot serve the caller as it is and should be rebuilt from
    /// SQLite: [`VectorError::IndexMismatch`], [`VectorError::Incompatible`] and
    /// [`VectorError::Damaged`].
    pub fn needs_rebuild(&self) -> bool {
        matches!(
            self,
            VectorError::IndexMismatch { .. }
                | VectorError::Incompatible { .. }
                | VectorError::Damaged { .. }
        )
    }

    /// The operation that failed.
    pub fn op(&self) -> Op {
        match self {
            VectorError::IndexMismatch { op, .. }
            | VectorError::Incompatible { op, .. }
            | VectorError::Damaged { op, .. }
            | VectorError::WrongLength { op, .. }
            | VectorError::NonFinite { op, .. }
            | VectorError::ZeroVector { op, .. }
            | VectorError::InvalidArgument { op, .. }
            | VectorError::Io { op, .. }
            | VectorError::Lance { op, .. }
            | VectorError::Arrow { op, .. } => *op,
        }
    }
}

/// Keeps a foreign error message on one line (LanceDB messages can span several).
fn one_line(err: &dyn std::error::Error) -> String {
    err.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
