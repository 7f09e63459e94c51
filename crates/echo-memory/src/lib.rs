//! The four-tier memory (working, episodic, semantic, archival) on SQLite, the source of
//! truth: the write path with provenance and conflict policy, history and undo, forgetting
//! (decay, expiry, archive), BM25 over FTS5 with CJK bigrams, hybrid retrieval and snapshots.
//!
//! This crate knows nothing about prompts or models: conflict judging and vector similarity
//! come in through the [`ConflictJudge`] and [`Neighbours`] traits, implemented by the agent.
#![deny(missing_docs)]

mod bm25;
mod error;
pub mod forgetting;
mod model;
mod retrieve;
mod semantic;
mod store;
pub mod text;
mod write;

pub use echo_embed;
pub use echo_vector;
pub use error::{BoxError, JudgeError, MemoryError, NeighboursError};
pub use model::{Memory, NewMemory, Source, Status, Tier, parse_time};
pub use retrieve::{RecallInfo, RecallOptions, Recalled};
pub use semantic::{FlushReport, SemanticIndex};
pub use store::{Actor, Conflict, HistoryEntry, ListFilter, MemoryStore, SweepReport};
pub use write::{
    ConflictJudge, Effect, Judgement, MAX_CONTENT_CHARS, Neighbours, Verdict, WriteOptions,
    WriteOutcome, normalize_slot,
};
