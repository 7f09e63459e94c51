//! The agent: the pipeline (ContextStage → InferenceStage → ResponseStage) and [`Api`], the
//! one facade every front end (desktop shell, `echod` CLI, HTTP gateway, automations) calls.
//! Nothing below this crate knows about front ends; no front end reaches below [`Api`].
//!
//! # Rooms
//!
//! - `engine.rs`, the composition root: `Engine::build` wires store, model clients
//!   (`engine/models.rs`: one swappable snapshot, a settings change applies to the next turn),
//!   tools, the gate, MCP servers, memory and background tasks (`engine/jobs.rs`);
//!   `Engine::close` stops every task it started.
//! - `turn.rs`, the turn service (`Engine::run_turn`), with `turn/request.rs` (`TurnRequest`,
//!   built by `TurnRequest::new` and setters only) and `turn/run.rs` (an automation run's
//!   context). `pipeline.rs` and `pipeline/`: the stages; `approval.rs` is the loop's gate step;
//!   `model_calls.rs` builds, sends and records every model call. `research.rs` and
//!   `research/`: the research path a turn takes instead of the loop when triage says so;
//!   `side.rs`: the side model's jobs after an answer (title, follow-up questions).
//! - `memory.rs` (recall, extraction, consolidation calls), `history_tools.rs`
//!   (`history_search`, `read_tool_output`), `prompts.rs`, `bootstrap.rs` (the person's
//!   standing-instruction files).
//! - `automations.rs` (the runner) and `replay.rs` (a turn as a regression case) call the turn
//!   service, never [`Api`].
//! - [`Api`] (`api.rs`, one module per domain in `api/`), the operation surface
//!   (`operations.table`, `wire.rs`, `operations.rs`, `openapi.rs`) and `error.rs`
//!   (`ApiError` → `ErrorCode`).
#![deny(missing_docs)]

mod api;
mod approval;
mod automations;
mod background;
mod bootstrap;
mod engine;
mod error;
mod events;
mod history_tools;
mod instance;
mod memory;
mod memory_tools;
mod model_calls;
mod openapi;
mod operations;
mod pipeline;
mod prompt_snapshots;
mod prompts;
pub mod replay;
mod research;
mod semantic;
mod side;
mod test_support;
mod think;
mod tool_output;
mod turn;
pub mod wire;

pub use api::{
    Api, DELETE_ALL_CONFIRMATION, DELETE_ALL_DATA_CONFIRMATION, EXPORT_FORMAT, EXPORT_VERSION,
    PAIRING_MINUTES, PairedDevice,
};
pub use approval::ApprovalMode;
pub use bootstrap::{BOOTSTRAP_FILES, BootstrapError};
pub use echo_core::config::{Config, ConfigError, Overrides, ProcessEnv};
pub use echo_core::store::TurnFilter;
pub use echo_core::{allocator, crash};
pub use echo_local::catalog::DEFAULT_ID as DEFAULT_LOCAL_MODEL;
pub use echo_local::process as local_worker;
pub use echo_local::threads;
pub use echo_memory::{ListFilter, parse_time};
pub use error::ApiError;
pub use events::EventHandler;
pub use openapi::{openapi_document, path_params};
pub use operations::{
    HttpMethod, OPERATIONS, Operation, OperationInfo, OperationVisitor, visit_operations,
};
pub use think::strip_think;
pub use turn::{RunContext, TurnOutcome, TurnRequest};
