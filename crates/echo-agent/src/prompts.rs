//! Prompt templates: embedded from `prompts/` at build time, overridable by a file of the same
//! name in `<data dir>/prompts/`. Only ContextStage renders them.

use std::path::PathBuf;

/// A prompt template the engine knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptName {
    /// The system block.
    System,
    /// Runtime facts prefixed to the current user message.
    RuntimeContext,
    /// The instruction for the last request of a turn at the iteration limit.
    IterationLimit,
    /// The session's memory snapshot, appended to the system block.
    MemorySnapshot,
    /// Memories recalled for this message, at the head of the user message.
    MemoryContext,
    /// System block of the extraction call.
    ExtractMemories,
    /// The exchange given to the extraction call.
    ExtractMemoriesInput,
    /// System block of the conflict judge call.
    JudgeConflict,
    /// The two memories given to the judge.
    JudgeConflictInput,
    /// System block of the consolidation call.
    ConsolidateEpisode,
    /// The stretch of conversation given to the consolidation call.
    ConsolidateEpisodeInput,
    /// Names and descriptions of the user's skills, appended to the system block.
    SkillsIndex,
    /// System block of the call that explains a pending approval.
    ApprovalExplain,
    /// The action given to that call.
    ApprovalExplainInput,
    /// The one message of the settings page's "test connection" call.
    ConnectionTest,
    /// The user's bootstrap files (AGENTS.md, SOUL.md, USER.md, TOOLS.md), in the system block.
    Bootstrap,
    /// The session's rolling summary, at the end of the system block.
    HistorySummary,
    /// System block of the `summarize_history` call.
    SummarizeHistory,
    /// The previous summary, the segment and the current request given to that call.
    SummarizeHistoryInput,
    /// System block of the planner call.
    Plan,
    /// The request given to the planner.
    PlanInput,
    /// How a plan is appended to the current user message.
    PlanNote,
}

impl PromptName {
    fn file(self) -> &'static str {
        match self {
            Self::System => "system.md",
            Self::RuntimeContext => "runtime_context.md",
            Self::IterationLimit => "iteration_limit.md",
            Self::MemorySnapshot => "memory_snapshot.md",
            Self::MemoryContext => "memory_context.md",
            Self::ExtractMemories => "extract_memories.md",
            Self::ExtractMemoriesInput => "extract_memories_input.md",
            Self::JudgeConflict => "judge_memory_conflict.md",
            Self::JudgeConflictInput => "judge_memory_conflict_input.md",
            Self::ConsolidateEpisode => "consolidate_episode.md",
            Self::ConsolidateEpisodeInput => "consolidate_episode_input.md",
            Self::SkillsIndex => "skills_index.md",
            Self::ApprovalExplain => "approval_explain.md",
            Self::ApprovalExplainInput => "approval_explain_input.md",
            Self::ConnectionTest => "connection_test.md",
            Self::Bootstrap => "bootstrap.md",
            Self::HistorySummary => "history_summary.md",
            Self::SummarizeHistory => "summarize_history.md",
            Self::SummarizeHistoryInput => "summarize_history_input.md",
            Self::Plan => "plan.md",
            Self::PlanInput => "plan_input.md",
            Self::PlanNote => "plan_note.md",
        }
    }

    fn embedded(self) -> &'static str {
        match self {
            Self::System => include_str!("../../../prompts/system.md"),
            Self::RuntimeContext => include_str!("../../../prompts/runtime_context.md"),
            Self::IterationLimit => include_str!("../../../prompts/iteration_limit.md"),
            Self::MemorySnapshot => include_str!("../../../prompts/memory_snapshot.md"),
            Self::MemoryContext => include_str!("../../../prompts/memory_context.md"),
            Self::ExtractMemories => include_str!("../../../prompts/extract_memories.md"),
            Self::ExtractMemoriesInput => {
                include_str!("../../../prompts/extract_memories_input.md")
            }
            Self::JudgeConflict => include_str!("../../../prompts/judge_memory_conflict.md"),
            Self::JudgeConflictInput => {
                include_str!("../../../prompts/judge_memory_conflict_input.md")
            }
            Self::ConsolidateEpisode => include_str!("../../../prompts/consolidate_episode.md"),
            Self::ConsolidateEpisodeInput => {
                include_str!("../../../prompts/consolidate_episode_input.md")
            }
            Self::SkillsIndex => include_str!("../../../prompts/skills_index.md"),
            Self::ApprovalExplain => include_str!("../../../prompts/approval_explain.md"),
            Self::ApprovalExplainInput => {
                include_str!("../../../prompts/approval_explain_input.md")
            }
            Self::ConnectionTest => include_str!("../../../prompts/connection_test.md"),
            Self::Bootstrap => include_str!("../../../prompts/bootstrap.md"),
            Self::HistorySummary => include_str!("../../../prompts/history_summary.md"),
            Self::SummarizeHistory => include_str!("../../../prompts/summarize_history.md"),
            Self::SummarizeHistoryInput => {
                include_str!("../../../prompts/summarize_history_input.md")
            }
            Self::Plan => include_str!("../../../prompts/plan.md"),
            Self::PlanInput => include_str!("../../../prompts/plan_input.md"),
            Self::PlanNote => include_str!("../../../prompts/plan_note.md"),
        }
    }
}

/// A template failed to render (a broken override file, usually).
#[derive(Debug, thiserror::Error)]
#[error("prompt {file}: {message}")]
pub struct PromptError {
    file: String,
    message: String,
}

/// Loads and renders prompt templates.
#[derive(Clone, Debug)]
pub struct Prompts {
    override_dir: PathBuf,
}

impl Prompts {
    /// Templates, with overrides looked up in `override_dir`.
    pub fn new(override_dir: PathBuf) -> Self {
        Self { override_dir }
    }

    /// Renders a template with `vars` (a serialisable map). Missing variables are errors.
    pub fn render(
        &self,
        name: PromptName,
        vars: impl serde::Serialize,
    ) -> Result<String, PromptError> {
        let path = self.override_dir.join(name.file());
        let (source, shown) = match std::fs::read_to_string(&path) {
            Ok(text) => (text, path.display().to_string()),
            Err(_) => (
                name.embedded().to_string(),
                format!("prompts/{} (embedded)", name.file()),
            ),
        };
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(false);
        let err = |e: minijinja::Error| PromptError {
            file: shown.clone(),
            message: e.to_string(),
        };
        env.add_template("t", &source).map_err(err)?;
        let rendered = env
            .get_template("t")
            .map_err(err)?
            .render(vars)
            .map_err(err)?;
        Ok(rendered.trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_file_wins_and_missing_variables_are_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = Prompts::new(dir.path().to_path_buf());
        let embedded = p.render(PromptName::System, ()).expect("render");
        assert!(embedded.starts_with("You are Echo Desk"));
        std::fs::write(dir.path().join("system.md"), "Custom {{ x }}").expect("write");
        let err = p
            .render(PromptName::System, ())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("system.md") && err.contains("undefined"),
            "{err}"
        );
        let ok = p
            .render(PromptName::System, serde_json::json!({"x": "hi"}))
            .expect("render");
        assert_eq!(ok, "Custom hi");
    }
}
