//! The MCP client: connects the configured MCP servers (`[[tools.mcp]]`) and offers each
//! server's tools to the agent as `{server}__{tool}` in the shared [`echo_tools::ToolRegistry`].
//!
//! [`McpManager::start`] connects every enabled server in the background and never blocks or
//! panics. A server that crashes, drops its connection or hangs has its tools withdrawn, its
//! in-flight calls failed with a clear message, and is restarted with exponential backoff;
//! [`McpManager::status`] tells the CLI and UI how each server is doing.
//!
//! Invariants: this crate knows nothing about prompts or approval; it only turns MCP tools into
//! [`echo_tools::Tool`]s (with a [`echo_tools::Risk`] read off the server's hints) and their
//! results into text.
#![deny(missing_docs)]

mod config;
mod connect;
mod manager;
mod tool;

pub use config::{ConfigError, validate_server_name, validate_servers};
pub use manager::{McpManager, McpOptions, ServerState, ServerStatus, TransportKind};
