//! Prompt templates: embedded from `prompts/` at build time, overridable by a file of the same
//! name in `<data dir>/prompts/`. Only ContextStage renders them.
//!
//! Besides the [`PromptName`] templates, the model-facing text that used to live in Rust is
//! here too: tool descriptions (`prompts/tools/`), the descriptions of forced structured calls
//! (`prompts/calls/`) and instructions placed into tool results (`prompts/results/`). Each is
//! a [`PromptText`] (defined in echo-tools, which cannot depend on this crate; see
//! `echo_tools::texts` for the seam). Tools and call definitions carry the embedded text;
//! ContextStage re-renders descriptions through [`Prompts::describe`], so an override file
//! wins from the next request on.

use echo_core::ToolSpec;
use echo_tools::texts::PromptText;
use std::path::PathBuf;

macro_rules! prompt_text {
    ($file:literal) => {
        PromptText {
            file: $file,
            embedded: include_str!(concat!("../../../prompts/", $file)),
        }
    };
}

/// `history_search`'s description.
pub(crate) const HISTORY_SEARCH: PromptText = prompt_text!("tools/history_search.md");
/// `read_tool_output`'s description.
pub(crate) const READ_TOOL_OUTPUT: PromptText = prompt_text!("tools/read_tool_output.md");
/// `memory_note`'s description.
pub(crate) const MEMORY_NOTE: PromptText = prompt_text!("tools/memory_note.md");
/// `memory_recall`'s description.
pub(crate) const MEMORY_RECALL: PromptText = prompt_text!("tools/memory_recall.md");
/// The forced `extract_memories` call's description.
pub(crate) const CALL_EXTRACT_MEMORIES: PromptText = prompt_text!("calls/extract_memories.md");
/// The forced `keep_statements` call's description (extraction, quoted style).
pub(crate) const CALL_KEEP_STATEMENTS: PromptText = prompt_text!("calls/keep_statements.md");
/// The forced `import_memories` call's description (reading another assistant's memory).
pub(crate) const CALL_IMPORT_MEMORIES: PromptText = prompt_text!("calls/import_memories.md");
/// The forced `keep_imported` call's description (the same, quoted style).
pub(crate) const CALL_KEEP_IMPORTED: PromptText = prompt_text!("calls/keep_imported.md");
/// The forced `judge_memory_conflict` call's description.
pub(crate) const CALL_JUDGE_MEMORY_CONFLICT: PromptText =
    prompt_text!("calls/judge_memory_conflict.md");
/// The forced `consolidate_episode` call's description.
pub(crate) const CALL_CONSOLIDATE_EPISODE: PromptText =
    prompt_text!("calls/consolidate_episode.md");
/// The forced `summarize_history` call's description.
pub(crate) const CALL_SUMMARIZE_HISTORY: PromptText = prompt_text!("calls/summarize_history.md");
/// The forced `research_plan` call's description.
pub(crate) const CALL_RESEARCH_PLAN: PromptText = prompt_text!("calls/research_plan.md");
/// The forced `research_notes` call's description.
pub(crate) const CALL_RESEARCH_NOTES: PromptText = prompt_text!("calls/research_notes.md");
/// The forced `research_check` call's description (citations a note does not support).
pub(crate) const CALL_RESEARCH_CHECK: PromptText = prompt_text!("calls/research_check.md");
/// The forced `triage_verdict` call's description (the planner's verdict on a request the
/// triage rules could not place).
pub(crate) const CALL_TRIAGE_VERDICT: PromptText = prompt_text!("calls/triage_verdict.md");
/// The forced `follow_ups` call's description (the side model's suggestions).
pub(crate) const CALL_FOLLOW_UPS: PromptText = prompt_text!("calls/follow_ups.md");
/// The marker of an old JSON tool output shortened to fit (`chars`, `kept`, `call_id`).
pub(crate) const OUTPUT_SHORTENED: PromptText = prompt_text!("results/output_shortened.md");
/// The marker of an old text tool output cut to head and tail (`cut`, `call_id`).
pub(crate) const OUTPUT_CUT: PromptText = prompt_text!("results/output_cut.md");
/// The result given to a call whose result was never recorded.
pub(crate) const LOST_RESULT: PromptText = prompt_text!("results/lost_result.md");
/// The line after one part of a long output `read_tool_output` returns (`offset`, `end`,
/// `total`). Rendered from the embedded file: the tool knows no data directory.
pub(crate) const READ_TOOL_OUTPUT_MORE: PromptText =
    prompt_text!("results/read_tool_output_more.md");

/// The descriptions of this crate's tools and forced calls, by name.
const DESCRIPTIONS: &[(&str, PromptText)] = &[
    ("history_search", HISTORY_SEARCH),
    ("read_tool_output", READ_TOOL_OUTPUT),
    ("memory_note", MEMORY_NOTE),
    ("memory_recall", MEMORY_RECALL),
    ("extract_memories", CALL_EXTRACT_MEMORIES),
    ("keep_statements", CALL_KEEP_STATEMENTS),
    ("import_memories", CALL_IMPORT_MEMORIES),
    ("keep_imported", CALL_KEEP_IMPORTED),
    ("judge_memory_conflict", CALL_JUDGE_MEMORY_CONFLICT),
    ("consolidate_episode", CALL_CONSOLIDATE_EPISODE),
    ("summarize_history", CALL_SUMMARIZE_HISTORY),
    ("research_plan", CALL_RESEARCH_PLAN),
    ("research_notes", CALL_RESEARCH_NOTES),
    ("triage_verdict", CALL_TRIAGE_VERDICT),
    ("research_check", CALL_RESEARCH_CHECK),
    ("follow_ups", CALL_FOLLOW_UPS),
];

/// The description file of a tool or forced call, if the engine has one (MCP tools do not).
fn description_of(name: &str) -> Option<PromptText> {
    DESCRIPTIONS
        .iter()
        .chain(echo_tools::texts::TOOL_DESCRIPTIONS)
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

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
    /// System block of the extraction call in the quoted style.
    KeepStatements,
    /// The user's statements given to that call.
    KeepStatementsInput,
    /// The content of a memory kept in the quoted style.
    QuotedMemory,
    /// System block of the call that reads another assistant's memory into cards.
    ImportMemories,
    /// The pasted text given to that call.
    ImportMemoriesInput,
    /// System block of that call in the quoted style.
    ImportStatements,
    /// The pasted text's lines given to that call.
    ImportStatementsInput,
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
    /// The session's project: its name, folders and standing instructions, after them.
    Project,
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
    /// System block of the planner's triage verdict: quick answer or research.
    Triage,
    /// The request given to that call.
    TriageInput,
    /// System block of a research run's plan call.
    ResearchPlan,
    /// The question given to that call.
    ResearchPlanInput,
    /// System block of the call that takes notes from one page.
    ResearchNotes,
    /// The sub-question and the page given to that call.
    ResearchNotesInput,
    /// System block of the call that writes the report.
    ResearchReport,
    /// The question, the numbered notes and the gaps given to that call.
    ResearchReportInput,
    /// System block of the call that checks a report's citations against their notes.
    ResearchCheck,
    /// The numbered notes and the claims citing them, given to that call.
    ResearchCheckInput,
    /// System block of the side model's title call.
    SideTitle,
    /// The first exchange given to the title and follow-up calls.
    SideTitleInput,
    /// System block of the side model's follow-up call.
    SideFollowUps,
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
            Self::KeepStatements => "keep_statements.md",
            Self::KeepStatementsInput => "keep_statements_input.md",
            Self::QuotedMemory => "quoted_memory.md",
            Self::ImportMemories => "import_memories.md",
            Self::ImportMemoriesInput => "import_memories_input.md",
            Self::ImportStatements => "import_statements.md",
            Self::ImportStatementsInput => "import_statements_input.md",
            Self::JudgeConflict => "judge_memory_conflict.md",
            Self::JudgeConflictInput => "judge_memory_conflict_input.md",
            Self::ConsolidateEpisode => "consolidate_episode.md",
            Self::ConsolidateEpisodeInput => "consolidate_episode_input.md",
            Self::SkillsIndex => "skills_index.md",
            Self::ApprovalExplain => "approval_explain.md",
            Self::ApprovalExplainInput => "approval_explain_input.md",
            Self::ConnectionTest => "connection_test.md",
            Self::Bootstrap => "bootstrap.md",
            Self::Project => "project.md",
            Self::HistorySummary => "history_summary.md",
            Self::SummarizeHistory => "summarize_history.md",
            Self::SummarizeHistoryInput => "summarize_history_input.md",
            Self::Plan => "plan.md",
            Self::PlanInput => "plan_input.md",
            Self::PlanNote => "plan_note.md",
            Self::Triage => "triage.md",
            Self::TriageInput => "triage_input.md",
            Self::ResearchPlan => "research_plan.md",
            Self::ResearchPlanInput => "research_plan_input.md",
            Self::ResearchNotes => "research_notes.md",
            Self::ResearchNotesInput => "research_notes_input.md",
            Self::ResearchReport => "research_report.md",
            Self::ResearchReportInput => "research_report_input.md",
            Self::ResearchCheck => "research_check.md",
            Self::ResearchCheckInput => "research_check_input.md",
            Self::SideTitle => "side_title.md",
            Self::SideTitleInput => "side_title_input.md",
            Self::SideFollowUps => "side_follow_ups.md",
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
            Self::KeepStatements => include_str!("../../../prompts/keep_statements.md"),
            Self::KeepStatementsInput => include_str!("../../../prompts/keep_statements_input.md"),
            Self::QuotedMemory => include_str!("../../../prompts/quoted_memory.md"),
            Self::ImportMemories => include_str!("../../../prompts/import_memories.md"),
            Self::ImportMemoriesInput => include_str!("../../../prompts/import_memories_input.md"),
            Self::ImportStatements => include_str!("../../../prompts/import_statements.md"),
            Self::ImportStatementsInput => {
                include_str!("../../../prompts/import_statements_input.md")
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
            Self::Project => include_str!("../../../prompts/project.md"),
            Self::HistorySummary => include_str!("../../../prompts/history_summary.md"),
            Self::SummarizeHistory => include_str!("../../../prompts/summarize_history.md"),
            Self::SummarizeHistoryInput => {
                include_str!("../../../prompts/summarize_history_input.md")
            }
            Self::Plan => include_str!("../../../prompts/plan.md"),
            Self::PlanInput => include_str!("../../../prompts/plan_input.md"),
            Self::PlanNote => include_str!("../../../prompts/plan_note.md"),
            Self::Triage => include_str!("../../../prompts/triage.md"),
            Self::TriageInput => include_str!("../../../prompts/triage_input.md"),
            Self::ResearchPlan => include_str!("../../../prompts/research_plan.md"),
            Self::ResearchPlanInput => include_str!("../../../prompts/research_plan_input.md"),
            Self::ResearchNotes => include_str!("../../../prompts/research_notes.md"),
            Self::ResearchNotesInput => include_str!("../../../prompts/research_notes_input.md"),
            Self::ResearchReport => include_str!("../../../prompts/research_report.md"),
            Self::ResearchReportInput => {
                include_str!("../../../prompts/research_report_input.md")
            }
            Self::ResearchCheck => include_str!("../../../prompts/research_check.md"),
            Self::ResearchCheckInput => include_str!("../../../prompts/research_check_input.md"),
            Self::SideTitle => include_str!("../../../prompts/side_title.md"),
            Self::SideTitleInput => include_str!("../../../prompts/side_title_input.md"),
            Self::SideFollowUps => include_str!("../../../prompts/side_follow_ups.md"),
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
        self.render_file(name.file(), name.embedded(), vars)
    }

    /// Renders a text of `prompts/tools/`, `calls/` or `results/` like [`Self::render`].
    pub(crate) fn render_text(
        &self,
        text: PromptText,
        vars: impl serde::Serialize,
    ) -> Result<String, PromptError> {
        self.render_file(text.file, text.embedded, vars)
    }

    /// A text placed into a tool result, where a broken override must not fail the turn: it
    /// is logged and the embedded file is used.
    pub(crate) fn result_text(&self, text: PromptText, vars: impl serde::Serialize) -> String {
        match self.render_text(text, &vars) {
            Ok(rendered) => rendered,
            Err(e) => {
                tracing::warn!(error = %e, "prompt override does not render; using the embedded one");
                text.render(&vars)
            }
        }
    }

    /// Sets a tool's or forced call's description from its file (`prompts/tools/<name>.md`,
    /// `prompts/calls/<name>.md`), an override first; tools without one (MCP) keep theirs.
    pub(crate) fn describe(&self, spec: &mut ToolSpec) -> Result<(), PromptError> {
        if let Some(text) = description_of(&spec.name) {
            spec.description = self.render_text(text, ())?;
        }
        Ok(())
    }

    fn render_file(
        &self,
        file: &str,
        embedded: &str,
        vars: impl serde::Serialize,
    ) -> Result<String, PromptError> {
        let path = self.override_dir.join(file);
        let (source, shown) = match std::fs::read_to_string(&path) {
            Ok(text) => (text, path.display().to_string()),
            Err(_) => (embedded.to_string(), format!("prompts/{file} (embedded)")),
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

    #[test]
    fn a_tool_description_is_overridden_from_the_data_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = Prompts::new(dir.path().to_path_buf());
        let spec = |name: &str| ToolSpec {
            name: name.into(),
            description: "as registered".into(),
            parameters: serde_json::json!({}),
        };
        let described = |name: &str| {
            let mut s = spec(name);
            p.describe(&mut s).expect("describe");
            s.description
        };
        assert_eq!(described("read_file"), echo_tools::texts::READ_FILE.text());
        assert_eq!(described("history_search"), HISTORY_SEARCH.text());
        assert_eq!(
            described("server__tool"),
            "as registered",
            "MCP keeps its own"
        );
        std::fs::create_dir_all(dir.path().join("tools")).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("calls")).expect("mkdir");
        std::fs::write(dir.path().join("tools/read_file.md"), "Read it.\n").expect("write");
        std::fs::write(dir.path().join("calls/extract_memories.md"), "Extract.").expect("write");
        assert_eq!(described("read_file"), "Read it.");
        assert_eq!(described("extract_memories"), "Extract.");
        std::fs::create_dir_all(dir.path().join("results")).expect("mkdir");
        std::fs::write(dir.path().join("results/lost_result.md"), "{{ nope }}").expect("write");
        assert_eq!(
            p.result_text(LOST_RESULT, ()),
            LOST_RESULT.text(),
            "a broken override falls back to the embedded text"
        );
    }

    #[test]
    fn the_read_tool_output_continuation_reads_as_before() {
        let (offset, end, total) = (0, 8000, 20000);
        assert_eq!(
            READ_TOOL_OUTPUT_MORE
                .render(serde_json::json!({ "offset": offset, "end": end, "total": total })),
            format!(
                "[characters {offset}–{end} of {total}; call again with offset {end} for more]"
            )
        );
    }
}
