//! Echo Desk's domain core: ids, closed vocabularies, messages, configuration, the SQLite
//! store and trace spans. Most crates of ours depend on this one (ARCHITECTURE.md's
//! dependency table says which); it depends on none of them.
#![deny(missing_docs)]

pub mod allocator;
pub mod config;
pub mod crash;
pub mod error;
pub mod ids;
pub mod message;
pub mod store;
pub mod text;
pub mod time;
pub mod trace;
pub mod vocab;

pub use error::StoreError;
pub use ids::{
    ApprovalId, AutomationId, ConflictId, DeviceId, MemoryId, MessageId, ProjectId, RuleId, RunId,
    SessionId, SpanId, TurnId,
};
pub use message::{Message, Role, ToolCall, ToolSpec, Usage};
pub use store::Store;
pub use vocab::{
    AutomationState, ConflictStatus, DecidedBy, EntryPoint, FileEvent, LearnedMemories,
    MemoryAction, MemoryActor, MemorySource, MemoryStatus, MemoryTier, MemoryVerdict,
    MessageStatus, MissedRuns, ProjectMemories, QueuedApprovalStatus, Risk, RuleDecision, RunCause,
    RunStatus, SpanKind, SpanLevel, SpanStatus, TemporaryChat, TurnErrorCode, TurnStatus,
};
