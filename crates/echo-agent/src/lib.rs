//! The agent: the pipeline (ContextStage → InferenceStage → ResponseStage) and [`Api`], the
//! one facade every front end (desktop shell, `echod` CLI, HTTP gateway, automations) calls.
//! Nothing below this crate knows about front ends; no front end reaches below [`Api`].
#![deny(missing_docs)]

mod api;
mod background;
mod context;
mod error;
mod events;
mod inference;
mod instance;
mod prompts;
mod response;
mod think;

pub use api::{Api, Trace, TurnOutcome, TurnRequest};
pub use error::ApiError;
pub use events::EventHandler;
pub use think::strip_think;
