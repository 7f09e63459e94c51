//! Echo Desk's derived vector index of memories, on embedded LanceDB.
//!
//! SQLite is the source of truth for every memory; this crate keeps only `(id, vector)` rows in
//! one LanceDB table (`memories`) so memories can be found by cosine similarity. The index can
//! be cleared and rebuilt from SQLite at any time: [`VectorIndex::open`] reports a table built
//! for another dimension or model as [`VectorError::IndexMismatch`], and
//! [`VectorIndex::recreate`] / [`VectorIndex::clear`] start a rebuild.
//!
//! Small tables are searched exhaustively (exact); [`VectorIndex::optimize`] adds an ANN index
//! (IVF_HNSW_SQ, cosine) once the table reaches [`VectorOptions::ann_min_rows`].
#![deny(missing_docs)]

mod batch;
mod error;
mod index;
mod layout;

pub use error::{IndexSpec, Op, Subject, VectorError};
pub use index::{AnnStatus, DEFAULT_ANN_MIN_ROWS, TABLE_NAME, VectorIndex, VectorOptions};
