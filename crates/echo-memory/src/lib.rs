//! The four-tier memory (working, episodic, semantic, archival) on SQLite, the source of
//! truth: the write path with provenance and conflict policy, history and undo, forgetting
//! (decay, expiry, archive), an in-process BM25 index with CJK bigrams, hybrid retrieval and
//! snapshots.
//!
//! This crate knows nothing about prompts or chat models: conflict judging comes in through
//! the [`ConflictJudge`] trait (implemented by the agent, which asks a model), vector
//! similarity through [`Neighbours`] (implemented here by [`SemanticIndex`], an `echo-embed`
//! embedder over the `echo-vector` index kept in step with SQLite by an outbox).
//!
//! # Search index
//!
//! The BM25 index lives in each process's memory (`bm25.rs`, whose docs give the scoring):
//! triggers on `memories` append every insert, text or status change and delete to
//! `memory_changes` (migration 0007), and before each search the process applies what it has
//! not seen, or rebuilds from the rows when the pruned log no longer reaches back, so the
//! desktop app, the gateway and the CLI see each other's writes. Vectors follow through the
//! outbox and are rebuilt when the index's count drifts from SQLite's or on
//! `echod memory reindex`.
//!
//! # Recall
//!
//! [`MemoryStore::recall`] runs the BM25 and the vector search concurrently (BM25's rows are
//! read while the vector search still runs; the vector search is ranking-only, without
//! re-scoring on the full vectors, which only the write path's similarity threshold needs),
//! fuses the two rankings by reciprocal rank (vector weight `memory.vector_weight`, 0.3 by
//! default) and weighs each memory by its effective importance (a factor of 0.5–1). When the
//! query names dates ("on 3 June, 2023", "last week": `when.rs`), a third ranking takes part
//! with BM25's weight: the candidates whose `valid_from` falls on those days, in BM25's order
//! read 1,000 deep, then the vector search's. Rows found only by the
//! vector search or the dates are read afterwards, and only those whose fused rank score could
//! still beat the k-th best usable row in hand: the threshold algorithm, the same answer as
//! reading them all, usually with no second read when BM25 found enough.
//!
//! # Rows, history and the write path
//!
//! SQLite holds every memory row (`memories`: tier, slot, source, confidence, importance,
//! stability, validity, status, supersession, provenance ids), its full change history
//! (`memory_history`, grouped by change so `undo` reverts a whole change), the review queue
//! (`memory_conflicts`), per-session snapshots and the embedding outbox. `write.rs` is the only
//! insert: validate → injection scan (`text.rs`: "always approve", "pre-approved", `[system]`
//! and the like are refused, so a memory never grants a permission) → candidates (same
//! subject+slot, BM25 neighbours of short facts, vector neighbours) → judge each (the
//! [`ConflictJudge`]) → policy: source rank, then newer (same turn = same age), then confidence;
//! the loser is superseded, a full tie opens a conflict and both sides stay out of prompts until
//! resolved; a duplicate reinforces. Every change writes history and outbox in the same
//! transaction.
//!
//! # Forgetting
//!
//! Effective importance = importance × 0.5^(days since last use / half-life); half-lives start
//! by source (120 / 60 / 21 days for stated / consolidated / inferred) and grow ×1.6 per
//! injection. A memory below 0.05 or past `valid_until` (pinned ones never fade) is never
//! injected; the sweep moves such memories to the archive (at start unless one ran within
//! `memory.sweep_interval_hours`, every interval in long-running processes, and `memory sweep
//! [--now]`; each sweep is recorded in `memory_sweeps`). No memory that is superseded,
//! archived, deleted or in an open conflict is injected; only injected memories are reinforced.
//!
//! # Deletion
//!
//! `memory_delete` removes the memory, the versions it superseded, their history, conflicts and
//! outbox rows in one transaction; the vector rows follow through the outbox and are then
//! erased (`VectorIndex::erase_deleted`: data files with deleted rows rewritten, every earlier
//! LanceDB version pruned). Forget is the reversible one: a tombstone with history.
#![deny(missing_docs)]

mod bm25;
mod error;
pub mod forgetting;
mod model;
mod query_vectors;
mod retrieve;
mod semantic;
mod store;
pub mod text;
pub mod when;
mod write;

pub use bm25::tokens as index_terms;
pub use echo_embed;
pub use echo_vector;
pub use error::{BoxError, JudgeError, MemoryError, NeighboursError};
pub use forgetting::{Fading, FadingPoint};
pub use model::{Memory, MemorySource, MemoryStatus, MemoryTier, NewMemory, parse_time};
pub use retrieve::{RecallInfo, RecallOptions, Recalled, project_scope};
pub use semantic::{FlushReport, SemanticIndex};
pub use store::{
    Conflict, HistoryEntry, ListFilter, MemoryActor, MemoryPage, MemoryRead, MemorySort,
    MemoryStats, MemoryStore, Proposal, PurgeReport, READS_KEPT, SweepReport, TierStatusCount,
    sql_order,
};
pub use write::{
    ConflictJudge, Effect, Foreseen, Judgement, MAX_CONTENT_CHARS, MemoryVerdict, Neighbours, Plan,
    WriteOptions, WriteOutcome, normalize_slot,
};
