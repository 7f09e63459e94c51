//! Model-facing text of this crate's tools — their descriptions and the instructions their
//! results carry — which lives in the workspace's `prompts/` directory, not in Rust.
//!
//! The seam: echo-tools must not depend on echo-agent, which owns `Prompts` and the user's
//! override directory (`<data dir>/prompts/`). So each text is a [`PromptText`]: its path
//! under `prompts/` and its content, embedded at build time with `include_str!`. A tool uses
//! the embedded text ([`PromptText::text`], [`PromptText::render`]: MiniJinja with the same
//! settings as `Prompts`, so a file renders here exactly as it does there). echo-agent's
//! `Prompts` renders the same [`PromptText`] with an override file first; ContextStage, the
//! only place a request is assembled, does that for every offered tool's description
//! ([`TOOL_DESCRIPTIONS`]). Result texts rendered inside [`crate::ToolRegistry`] and
//! [`crate::WebFetch`] use the embedded text: the registry knows no data directory.

/// One model-facing text: a file under `prompts/` and its embedded content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PromptText {
    /// Path under `prompts/` (and under `<data dir>/prompts/` for an override).
    pub file: &'static str,
    /// The file's content as built into the binary.
    pub embedded: &'static str,
}

impl PromptText {
    /// The embedded text of a file without template syntax (a tool description), trimmed as
    /// `Prompts` trims every rendering.
    pub fn text(&self) -> &'static str {
        self.embedded.trim()
    }

    /// The embedded template rendered with `vars`. The embedded files are fixed and covered
    /// by tests; should one still fail to render, the error names the file.
    pub fn render(&self, vars: impl serde::Serialize) -> String {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(false);
        let rendered = env
            .template_from_str(self.embedded)
            .and_then(|t| t.render(vars));
        match rendered {
            Ok(text) => text.trim().to_string(),
            Err(e) => {
                tracing::error!(file = self.file, error = %e, "embedded prompt does not render");
                format!("[prompt {} does not render: {e}]", self.file)
            }
        }
    }
}

macro_rules! prompt_text {
    ($file:literal) => {
        PromptText {
            file: $file,
            embedded: include_str!(concat!("../../../prompts/", $file)),
        }
    };
}

/// `current_time`'s description.
pub const CURRENT_TIME: PromptText = prompt_text!("tools/current_time.md");
/// `read_file`'s description.
pub const READ_FILE: PromptText = prompt_text!("tools/read_file.md");
/// `list_dir`'s description.
pub const LIST_DIR: PromptText = prompt_text!("tools/list_dir.md");
/// `search_files`'s description.
pub const SEARCH_FILES: PromptText = prompt_text!("tools/search_files.md");
/// `write_file`'s description.
pub const WRITE_FILE: PromptText = prompt_text!("tools/write_file.md");
/// `edit_file`'s description.
pub const EDIT_FILE: PromptText = prompt_text!("tools/edit_file.md");
/// `shell`'s description.
pub const SHELL: PromptText = prompt_text!("tools/shell.md");
/// `web_fetch`'s description.
pub const WEB_FETCH: PromptText = prompt_text!("tools/web_fetch.md");
/// `web_search`'s description.
pub const WEB_SEARCH: PromptText = prompt_text!("tools/web_search.md");

/// The built-in tools' descriptions by tool name, for `Prompts` to apply overrides.
pub const TOOL_DESCRIPTIONS: &[(&str, PromptText)] = &[
    ("current_time", CURRENT_TIME),
    ("read_file", READ_FILE),
    ("list_dir", LIST_DIR),
    ("search_files", SEARCH_FILES),
    ("write_file", WRITE_FILE),
    ("edit_file", EDIT_FILE),
    ("shell", SHELL),
    ("web_fetch", WEB_FETCH),
    ("web_search", WEB_SEARCH),
];

/// A write approved for one content, refused because the files changed since (`tool`).
pub const CHANGED_SINCE_APPROVAL: PromptText = prompt_text!("results/changed_since_approval.md");
/// A call refused while the tool's circuit breaker is open (`tool`, `seconds`, `failures`).
pub const CIRCUIT_OPEN: PromptText = prompt_text!("results/circuit_open.md");
/// The marker where a long result was cut to the output cap (`omitted`, `total`).
pub const OUTPUT_TRUNCATED: PromptText = prompt_text!("results/output_truncated.md");
/// A call of a tool that does not exist (`tool_quoted`, `available`).
pub const UNKNOWN_TOOL: PromptText = prompt_text!("results/unknown_tool.md");
/// Arguments that are not JSON (`tool`, `error`).
pub const INVALID_JSON: PromptText = prompt_text!("results/invalid_json.md");
/// The line before a fetched page, framing it as data (`url`).
pub const WEB_FETCH_START: PromptText = prompt_text!("results/web_fetch_start.md");
/// The line after a fetched page, with notes on what was cut (`notes`).
pub const WEB_FETCH_END: PromptText = prompt_text!("results/web_fetch_end.md");
/// The line before search results, framing them as data (`count`, `service`, `query`).
pub const WEB_SEARCH_START: PromptText = prompt_text!("results/web_search_start.md");
/// The line after search results.
pub const WEB_SEARCH_END: PromptText = prompt_text!("results/web_search_end.md");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_text_renders_and_names_its_own_file() {
        let vars = serde_json::json!({
            "tool": "t", "tool_quoted": "\"t\"", "seconds": "1", "failures": 3,
            "omitted": 1, "total": 2, "available": "a", "error": "e", "url": "u",
            "notes": ["n"],
        });
        for text in TOOL_DESCRIPTIONS.iter().map(|(_, t)| *t).chain([
            CHANGED_SINCE_APPROVAL,
            CIRCUIT_OPEN,
            OUTPUT_TRUNCATED,
            UNKNOWN_TOOL,
            INVALID_JSON,
            WEB_FETCH_START,
            WEB_FETCH_END,
        ]) {
            let out = text.render(&vars);
            assert!(!out.is_empty() && !out.contains("does not render"), "{out}");
        }
        assert_eq!(
            WEB_FETCH_END.render(serde_json::json!({ "notes": ["a", "b"] })),
            "[web_fetch: end of content; a; b]"
        );
        for (name, text) in TOOL_DESCRIPTIONS {
            assert_eq!(text.file, format!("tools/{name}.md"));
        }
    }
}
