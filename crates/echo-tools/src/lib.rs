//! Tools the agent can call: a registry of named tools with JSON-schema arguments (generated
//! from Rust types), validation before anything runs, timeouts, and the built-in tools.
//!
//! A tool failure is never a turn failure: every outcome, including an unknown tool, bad
//! arguments or a timeout, becomes a [`ToolOutcome`] whose text goes back to the model.
#![deny(missing_docs)]

mod builtin;
mod registry;

pub use builtin::{CurrentTime, ReadFile};
pub use registry::{Risk, Tool, ToolContext, ToolError, ToolOutcome, ToolRegistry, schema_of};
