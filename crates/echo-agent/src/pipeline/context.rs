//! ContextStage: the only place a model request is assembled.
//!
//! Fixed order, most stable first, so a provider's prefix cache is reused from one request to
//! the next: the system block (rules, skills index, the user's bootstrap files, the session's
//! frozen memory snapshot, the rolling summary) → history (tool-call/result pairs never split)
//! → the current user message. Facts that change every turn (time, entry point) and the
//! memories recalled for this message travel in blocks at the head of the current user
//! message, after which the user's text follows verbatim; putting them in the system block
//! would invalidate the cached prefix on every turn.

pub(crate) mod compress;
mod prepare;
pub(crate) mod routing;
pub(crate) mod tool_choice;

pub(crate) use prepare::prepare_turn;

use crate::bootstrap::Injected;
use crate::prompts::{PromptError, PromptName, Prompts};
use echo_core::store::{Project, StoredMessage};
use echo_core::{Message, Role, ToolSpec};
use echo_memory::Memory;
use serde::Serialize;
use std::collections::HashSet;

/// What the model sees on the first request of a turn.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// Messages, system first, current user message last.
    pub messages: Vec<Message>,
    /// Tools offered.
    pub tools: Vec<ToolSpec>,
    /// Tokens of each block, for the trace.
    pub blocks: BlockTokens,
}

/// Memories for one request: the session's frozen snapshot (system block) and what was
/// recalled for this message (head of the user message).
#[derive(Debug, Clone, Default)]
pub(crate) struct MemoryBlocks {
    pub snapshot: Vec<Memory>,
    pub recalled: Vec<Memory>,
}

/// Facts about this moment for the runtime block.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct RuntimeInfo {
    pub now: String,
    pub weekday: String,
    pub timezone: String,
    pub utc_offset: String,
    pub entry_point: String,
}

impl RuntimeInfo {
    pub(crate) fn now(entry_point: &str) -> Self {
        let now = chrono::Local::now();
        Self {
            now: now.format("%Y-%m-%d %H:%M").to_string(),
            weekday: now.format("%A").to_string(),
            timezone: iana_time_zone::get_timezone().unwrap_or_else(|_| "unknown".into()),
            utc_offset: now.format("%:z").to_string(),
            entry_point: entry_point.to_string(),
        }
    }
}

/// The current user message in parts, kept so that [`ContextStage::current_forms`] can render it
/// with fewer recalled memories.
#[derive(Debug, Clone)]
pub(crate) struct CurrentTurn {
    /// The user's text, verbatim.
    pub input: String,
    pub runtime: RuntimeInfo,
    /// Recalled memories, most relevant first.
    pub recalled: Vec<Memory>,
    /// The planner's plan, appended as `[Plan] …`.
    pub plan: Option<String>,
}

/// Everything the first request of a turn is built from.
pub(crate) struct TurnInputs<'a> {
    /// History after the rolling summary, before the current message.
    pub history: &'a [StoredMessage],
    /// The rolling summary of what came before `history`.
    pub summary: Option<&'a str>,
    /// The user's bootstrap files.
    pub bootstrap: &'a [Injected],
    /// The session's project, if it belongs to one.
    pub project: Option<&'a Project>,
    /// The session's frozen memory snapshot.
    pub snapshot: &'a [Memory],
    pub tools: Vec<ToolSpec>,
    pub current: &'a CurrentTurn,
}

/// Tokens of each block of a request, as the model's tokenizer counts them: the budget plan
/// the trace shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct BlockTokens {
    /// Rules and the skills index.
    pub system: usize,
    pub bootstrap: usize,
    pub memory_snapshot: usize,
    pub summary: usize,
    pub history: usize,
    pub tools: usize,
    /// The runtime block at the head of the current message.
    pub runtime: usize,
    /// Recalled memories at the head of the current message.
    pub recalled: usize,
    /// The user's text (and plan).
    pub current: usize,
}

/// What a memory import shows the model: a stretch of the pasted text and the memory slots
/// there are, or (quoted style) the text's lines to choose from.
#[derive(Clone, Copy)]
pub(crate) enum ImportText<'a> {
    Whole { text: &'a str, slots: &'a [String] },
    Lines(&'a [String]),
}

/// Builds requests.
#[derive(Clone, Copy)]
pub(crate) struct ContextStage<'a> {
    pub prompts: &'a Prompts,
    /// The user's skills (names and descriptions only; the model reads one with `skill_view`).
    pub skills: &'a [echo_tools::SkillSummary],
}

impl ContextStage<'_> {
    /// The request for a short explanation of an action waiting for approval.
    pub(crate) fn approval_explanation(
        &self,
        tool: &str,
        risk: &str,
        reason: &str,
        detail: &str,
    ) -> Result<Vec<Message>, PromptError> {
        let detail: String = detail.chars().take(4000).collect();
        let vars =
            serde_json::json!({ "tool": tool, "risk": risk, "reason": reason, "detail": detail });
        let system = self.prompts.render(PromptName::ApprovalExplain, &vars)?;
        let input = self
            .prompts
            .render(PromptName::ApprovalExplainInput, &vars)?;
        Ok(vec![Message::system(system), Message::user(input)])
    }

    /// The settings page's "test connection" request: one short user message.
    pub(crate) fn connection_test(&self) -> Result<Vec<Message>, PromptError> {
        let input = self.prompts.render(PromptName::ConnectionTest, ())?;
        Ok(vec![Message::user(input)])
    }

    /// The post-turn extraction request: instructions, the exchange, and the one tool the
    /// model must call.
    pub(crate) fn extraction(
        &self,
        user_message: &str,
        assistant_message: &str,
        slots: &[String],
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::ExtractMemories, ())?;
        let input = self.prompts.render(
            PromptName::ExtractMemoriesInput,
            serde_json::json!({
                "now": chrono::Local::now().to_rfc3339(),
                "slots": slots,
                "user_message": user_message,
                "assistant_message": assistant_message,
            }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The extraction request in the quoted style: the user's statements, and the one tool
    /// the model must call to choose among them.
    pub(crate) fn keep_statements(
        &self,
        statements: &[String],
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::KeepStatements, ())?;
        let input = self.prompts.render(
            PromptName::KeepStatementsInput,
            serde_json::json!({ "statements": statements }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The request that reads pasted text from another assistant's memory into cards:
    /// instructions, the text (imported into `project`, when named), and the one tool the
    /// model must call. In the quoted style (`statements` given) the model only chooses
    /// among the text's lines.
    pub(crate) fn memory_import(
        &self,
        text: ImportText<'_>,
        project: Option<&str>,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let (system, input) = match text {
            ImportText::Whole { text, slots } => (
                self.prompts.render(PromptName::ImportMemories, ())?,
                self.prompts.render(
                    PromptName::ImportMemoriesInput,
                    serde_json::json!({
                        "now": chrono::Local::now().to_rfc3339(),
                        "project": project,
                        "slots": slots,
                        "text": text,
                    }),
                )?,
            ),
            ImportText::Lines(statements) => (
                self.prompts.render(PromptName::ImportStatements, ())?,
                self.prompts.render(
                    PromptName::ImportStatementsInput,
                    serde_json::json!({ "project": project, "statements": statements }),
                )?,
            ),
        };
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// A memory's content in the quoted style: the user's statement, marked as theirs.
    pub(crate) fn quoted_memory(&self, statement: &str) -> Result<String, PromptError> {
        self.prompts.render(
            PromptName::QuotedMemory,
            serde_json::json!({ "statement": statement }),
        )
    }

    /// The consolidation request for a stretch of conversation.
    pub(crate) fn consolidation(
        &self,
        messages: &[Message],
        slots: &[String],
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::ConsolidateEpisode, ())?;
        let shown: Vec<serde_json::Value> = messages
            .iter()
            .filter(|m| !m.content.trim().is_empty())
            .map(|m| serde_json::json!({ "role": m.role.as_str(), "content": m.content }))
            .collect();
        let input = self.prompts.render(
            PromptName::ConsolidateEpisodeInput,
            serde_json::json!({ "now": chrono::Local::now().to_rfc3339(), "slots": slots, "messages": shown }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The `summarize_history` request: the previous summary, the segment (already pruned)
    /// and the current request the summary should serve.
    pub(crate) fn summarize_history(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        current: &str,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::SummarizeHistory, ())?;
        let shown: Vec<serde_json::Value> = messages
            .iter()
            .filter(|m| !m.content.trim().is_empty())
            .map(|m| serde_json::json!({ "role": m.role.as_str(), "name": m.name, "content": m.content }))
            .collect();
        let input = self.prompts.render(
            PromptName::SummarizeHistoryInput,
            serde_json::json!({ "previous": previous, "messages": shown, "current": current }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The planner request for the current input.
    pub(crate) fn plan(
        &self,
        input: &str,
        task_type: &str,
        tools: &[ToolSpec],
    ) -> Result<Vec<Message>, PromptError> {
        let system = self.prompts.render(PromptName::Plan, ())?;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let input = self.prompts.render(
            PromptName::PlanInput,
            serde_json::json!({ "request": input, "task_type": task_type, "tools": names }),
        )?;
        Ok(vec![Message::system(system), Message::user(input)])
    }

    /// The planner's triage request for `question` (quick answer or research), and the one
    /// tool the model must call.
    pub(crate) fn triage_verdict(
        &self,
        question: &str,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::Triage, ())?;
        let input = self.prompts.render(
            PromptName::TriageInput,
            serde_json::json!({ "question": question }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// A research run's plan request: the question, the project's instructions if the
    /// conversation has a project, and the one tool the model must call.
    pub(crate) fn research_plan(
        &self,
        question: &str,
        max: u32,
        project: Option<&Project>,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let plan = self
            .prompts
            .render(PromptName::ResearchPlan, serde_json::json!({ "max": max }))?;
        let system = self.with_project(plan, project)?;
        let input = self.prompts.render(
            PromptName::ResearchPlanInput,
            serde_json::json!({ "question": question }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The request that takes at most `max` notes from one page (`page` framed as
    /// `web_fetch` returns it) for a sub-question (`sub` and what would answer it,
    /// `look_for`).
    pub(crate) fn research_notes(
        &self,
        question: &str,
        (sub, look_for): (&str, &str),
        (page, max): (&str, usize),
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self
            .prompts
            .render(PromptName::ResearchNotes, serde_json::json!({ "max": max }))?;
        let input = self.prompts.render(
            PromptName::ResearchNotesInput,
            serde_json::json!({
                "question": question, "sub_question": sub, "look_for": look_for, "page": page,
            }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The request that writes a research report from numbered `notes` (each with
    /// `number`, `sub_question`, `quote`, `supports`, `url`) and the `gaps` found, under the
    /// project's instructions if the conversation has a project.
    pub(crate) fn research_report(
        &self,
        question: &str,
        notes: &impl Serialize,
        gaps: &[String],
        project: Option<&Project>,
    ) -> Result<Vec<Message>, PromptError> {
        let report = self.prompts.render(PromptName::ResearchReport, ())?;
        let system = self.with_project(report, project)?;
        let input = self.prompts.render(
            PromptName::ResearchReportInput,
            serde_json::json!({ "question": question, "notes": notes, "gaps": gaps }),
        )?;
        Ok(vec![Message::system(system), Message::user(input)])
    }

    /// The request that checks a report's `claims` (each `number`, `sentence`, `cites`)
    /// against the numbered `notes` (each `number`, `quote`), and the one tool the model must
    /// call.
    pub(crate) fn research_check(
        &self,
        notes: &impl Serialize,
        claims: &impl Serialize,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::ResearchCheck, ())?;
        let input = self.prompts.render(
            PromptName::ResearchCheckInput,
            serde_json::json!({ "notes": notes, "claims": claims }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The side model's title request for a session's first exchange.
    pub(crate) fn side_title(&self, user: &str, answer: &str) -> Result<Vec<Message>, PromptError> {
        let system = self.prompts.render(PromptName::SideTitle, ())?;
        let input = self.side_exchange(user, answer)?;
        Ok(vec![Message::system(system), Message::user(input)])
    }

    /// The side model's follow-up request for an exchange, and the tool it must call.
    pub(crate) fn side_follow_ups(
        &self,
        user: &str,
        answer: &str,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::SideFollowUps, ())?;
        let input = self.side_exchange(user, answer)?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// An exchange as the side model reads it, each side cut to a few thousand characters.
    fn side_exchange(&self, user: &str, answer: &str) -> Result<String, PromptError> {
        let cut = |s: &str| s.chars().take(4000).collect::<String>();
        self.prompts.render(
            PromptName::SideTitleInput,
            serde_json::json!({ "user": cut(user), "answer": cut(answer) }),
        )
    }

    /// The conflict judge request for two memories.
    pub(crate) fn judge(
        &self,
        existing: &Memory,
        new: &Memory,
        mut tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
        self.prompts.describe(&mut tool)?;
        let system = self.prompts.render(PromptName::JudgeConflict, ())?;
        let input = self.prompts.render(
            PromptName::JudgeConflictInput,
            serde_json::json!({ "existing": existing, "new": new }),
        )?;
        Ok((vec![Message::system(system), Message::user(input)], tool))
    }

    /// The last request of a turn that reached the iteration limit: the conversation so far
    /// plus the instruction to answer now (no tools are offered with it).
    pub(crate) fn iteration_limit(
        &self,
        messages: &[Message],
        max_iterations: u32,
    ) -> Result<Vec<Message>, PromptError> {
        let note = self.prompts.render(
            PromptName::IterationLimit,
            serde_json::json!({ "max_iterations": max_iterations }),
        )?;
        let mut out = messages.to_vec();
        out.push(Message::user(note));
        Ok(out)
    }
}

/// Makes stored history a valid message sequence: every assistant tool call gets a result
/// (a turn cut short by a crash may have left none: it gets `lost`, the text of
/// `prompts/results/lost_result.md`), tool results without their call are dropped, and
/// empty partial answers are skipped.
pub(crate) fn sanitize_history(history: &[StoredMessage], lost: &str) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(history.len());
    let mut open_calls: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let close_open = |out: &mut Vec<Message>,
                      open: &mut Vec<(String, String)>,
                      answered: &mut HashSet<String>| {
        for (id, name) in open.drain(..) {
            if !answered.contains(&id) {
                out.push(Message {
                    role: Role::Tool,
                    content: lost.to_string(),
                    tool_calls: Vec::new(),
                    tool_call_id: Some(id),
                    name: Some(name),
                });
            }
        }
        answered.clear();
    };
    for stored in history {
        match stored.role {
            Role::Tool => {
                let Some(id) = stored.tool_call_id.as_deref() else {
                    continue;
                };
                if open_calls.iter().any(|(open, _)| open == id) && answered.insert(id.to_string())
                {
                    out.push(stored.to_message());
                }
            }
            Role::System => {}
            Role::User | Role::Assistant => {
                close_open(&mut out, &mut open_calls, &mut answered);
                if stored.role == Role::Assistant
                    && stored.content.trim().is_empty()
                    && stored.tool_calls.is_empty()
                {
                    continue;
                }
                out.push(stored.to_message());
                open_calls = stored
                    .tool_calls
                    .iter()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
            }
        }
    }
    close_open(&mut out, &mut open_calls, &mut answered);
    out
}

#[cfg(test)]
mod tests;
