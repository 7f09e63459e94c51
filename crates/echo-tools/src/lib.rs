//! Tools the agent can call: a registry of named tools with JSON-schema arguments (generated
//! from Rust types), validation before anything runs, timeouts, and the built-in tools.
//!
//! A tool failure is never a turn failure: every outcome, including an unknown tool, bad
//! arguments or a timeout, becomes a [`ToolOutcome`] whose text goes back to the model.
#![deny(missing_docs)]

mod builtin;
mod documents;
mod fs;
#[cfg(test)]
mod hostile;
mod registry;
mod search;
mod shell;
mod skills;
#[cfg(test)]
mod test_support;
pub mod texts;
mod typed;
mod web;

pub use builtin::{CurrentTime, ReadFile};
pub use fs::{EditFile, FileHit, ListDir, SearchFiles, WriteFile, files_with_words, resolve_path};
pub use registry::{
    Action, Limits, Prepared, Risk, Tool, ToolContext, ToolError, ToolOutcome, ToolRegistry,
    schema_of,
};
pub use search::{
    SearchProvider, SearchResult, WEB_SEARCH_TOOL, WebSearch, service_url, web_search,
};
pub use shell::Shell;
#[cfg(fuzzing)]
pub use skills::fuzz_skill_md;
pub use skills::{Skill, SkillError, SkillProblem, SkillStore, SkillSummary, skill_tools};
pub use typed::TypedTool;
pub use web::{WebFetch, fetch_page};
