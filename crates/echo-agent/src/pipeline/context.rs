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
use crate::model_calls::ModelCall;
use crate::prompts::{LOST_RESULT, PromptError, PromptName, Prompts};
use crate::tool_output::cut_tool_output;
use echo_core::store::StoredMessage;
use echo_core::trace::Span;
use echo_core::{Message, Role, ToolSpec};
use echo_llm::LlmClient;
use echo_llm::tokens::Tokenizer;
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

/// The current user message in parts, kept so that [`ContextStage::fit`] can render it again
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

/// Builds requests.
#[derive(Clone, Copy)]
pub(crate) struct ContextStage<'a> {
    pub prompts: &'a Prompts,
    /// The user's skills (names and descriptions only; the model reads one with `skill_view`).
    pub skills: &'a [echo_tools::SkillSummary],
}

impl ContextStage<'_> {
    /// The first request of a turn.
    pub(crate) fn build(
        &self,
        inputs: TurnInputs<'_>,
        tokenizer: &Tokenizer,
    ) -> Result<Prepared, PromptError> {
        let mut blocks = BlockTokens::default();
        let mut system = self.prompts.render(PromptName::System, ())?;
        if !self.skills.is_empty() {
            let skills: Vec<serde_json::Value> = self
                .skills
                .iter()
                .map(|s| serde_json::json!({ "name": s.name, "description": s.description }))
                .collect();
            let block = self.prompts.render(
                PromptName::SkillsIndex,
                serde_json::json!({ "skills": skills }),
            )?;
            system.push_str("\n\n");
            system.push_str(&block);
        }
        blocks.system = tokenizer.count_text(&system);
        let append = |system: &mut String, block: String| {
            let tokens = tokenizer.count_text(&block);
            system.push_str("\n\n");
            system.push_str(&block);
            tokens
        };
        if !inputs.bootstrap.is_empty() {
            let block = self.prompts.render(
                PromptName::Bootstrap,
                serde_json::json!({ "files": inputs.bootstrap }),
            )?;
            blocks.bootstrap = append(&mut system, block);
        }
        if !inputs.snapshot.is_empty() {
            let block = self.prompts.render(
                PromptName::MemorySnapshot,
                serde_json::json!({ "memories": inputs.snapshot }),
            )?;
            blocks.memory_snapshot = append(&mut system, block);
        }
        if let Some(summary) = inputs.summary.filter(|s| !s.trim().is_empty()) {
            let block = self.prompts.render(
                PromptName::HistorySummary,
                serde_json::json!({ "summary": summary }),
            )?;
            blocks.summary = append(&mut system, block);
        }
        let lost = self.prompts.render_text(LOST_RESULT, ())?;
        let history = sanitize_history(inputs.history, &lost);
        blocks.history = history.iter().map(|m| tokenizer.count_message(m)).sum();
        let mut tools = inputs.tools;
        for tool in &mut tools {
            self.prompts.describe(tool)?;
        }
        blocks.tools = tools.iter().map(|t| tokenizer.count_tool(t)).sum();
        let current = inputs.current;
        let runtime = self
            .prompts
            .render(PromptName::RuntimeContext, &current.runtime)?;
        blocks.runtime = tokenizer.count_text(&runtime);
        let recalled = self.recalled_block(&current.recalled)?;
        blocks.recalled = recalled.as_deref().map_or(0, |r| tokenizer.count_text(r));
        let text = self.current_text(current)?;
        blocks.current = tokenizer.count_text(&text);

        let mut messages = Vec::with_capacity(history.len() + 2);
        messages.push(Message::system(system));
        messages.extend(history);
        messages.push(Message::user(join_current(
            &runtime,
            recalled.as_deref(),
            &text,
        )));
        Ok(Prepared {
            messages,
            tools,
            blocks,
        })
    }

    /// The `<memory-context>` block for `recalled`, if there is any.
    fn recalled_block(&self, recalled: &[Memory]) -> Result<Option<String>, PromptError> {
        if recalled.is_empty() {
            return Ok(None);
        }
        self.prompts
            .render(
                PromptName::MemoryContext,
                serde_json::json!({ "memories": recalled }),
            )
            .map(Some)
    }

    /// The user's text, then the plan if there is one.
    fn current_text(&self, current: &CurrentTurn) -> Result<String, PromptError> {
        Ok(match &current.plan {
            Some(plan) => {
                let note = self
                    .prompts
                    .render(PromptName::PlanNote, serde_json::json!({ "plan": plan }))?;
                format!("{}\n\n{note}", current.input)
            }
            None => current.input.clone(),
        })
    }

    /// The current user message with only the first `keep` recalled memories.
    fn current_message(&self, current: &CurrentTurn, keep: usize) -> Result<String, PromptError> {
        let runtime = self
            .prompts
            .render(PromptName::RuntimeContext, &current.runtime)?;
        let keep = keep.min(current.recalled.len());
        let recalled = self.recalled_block(&current.recalled[..keep])?;
        let text = self.current_text(current)?;
        Ok(join_current(&runtime, recalled.as_deref(), &text))
    }

    /// The model call of one step of the loop: the turn's request with what the loop
    /// appended, fitted to `llm`'s window (see [`ContextStage::fit`]), what the fitting did
    /// noted on `node`. The only way the loop gets a request: it never sends one unfitted.
    pub(crate) fn step_call<'l>(
        &self,
        llm: &'l LlmClient,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        current: &CurrentTurn,
        node: &mut Span,
    ) -> Result<ModelCall<'l>, Overflow> {
        let budget = llm.input_budget();
        let (messages, fit) = self.fit(messages, &tools, budget, llm.tokenizer(), Some(current))?;
        node.attr("tokens_estimated", fit.tokens);
        node.attr("token_budget", budget);
        if fit.trimmed() {
            node.attr("history_dropped", fit.dropped_messages);
            node.attr("outputs_trimmed", fit.trimmed_outputs);
            node.attr("memories_dropped", fit.dropped_memories);
            node.degrade("context_trimmed");
        }
        Ok(ModelCall::new(llm, messages, tools))
    }

    /// Makes a request fit `budget` tokens (as `tokenizer` counts them), in the order that
    /// loses least: first old tool outputs are cut to their head and tail (the latest step's
    /// results stay whole), then the oldest turns leave, a whole turn at a time so a tool call
    /// is never separated from its result, then the least relevant recalled memories of
    /// `current` leave. The system block, the tool definitions and the current turn (its user
    /// message verbatim and last) are never cut; if they alone do not fit, that is an error
    /// naming both numbers.
    pub(crate) fn fit(
        &self,
        mut messages: Vec<Message>,
        tools: &[ToolSpec],
        budget: usize,
        tokenizer: &Tokenizer,
        current: Option<&CurrentTurn>,
    ) -> Result<(Vec<Message>, Fit), Overflow> {
        let mut tokens = tokenizer.count_request(&messages, tools);
        let mut fit = Fit::default();
        if tokens > budget {
            let latest_step = messages
                .iter()
                .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty());
            for (i, message) in messages.iter_mut().enumerate() {
                if tokens <= budget {
                    break;
                }
                let keep = latest_step.is_some_and(|step| i > step);
                if message.role != Role::Tool || keep {
                    continue;
                }
                if let Some(cut) = cut_tool_output(self.prompts, message) {
                    let before = tokenizer.count_message(message);
                    message.content = cut;
                    tokens = tokens - before + tokenizer.count_message(message);
                    fit.trimmed_outputs += 1;
                }
            }
        }
        while tokens > budget {
            // History runs from after the system block to the current user message.
            let first = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
            let Some(current) = messages.iter().rposition(|m| m.role == Role::User) else {
                break;
            };
            if first >= current {
                break;
            }
            let end = messages[first + 1..current]
                .iter()
                .position(|m| m.role == Role::User)
                .map_or(current, |p| first + 1 + p);
            let removed: usize = messages[first..end]
                .iter()
                .map(|m| tokenizer.count_message(m))
                .sum();
            messages.drain(first..end);
            tokens -= removed;
            fit.dropped_messages += end - first;
        }
        if tokens > budget
            && let Some(current) = current.filter(|c| !c.recalled.is_empty())
        {
            // The current message as built, with every recalled memory.
            let full = self.current_message(current, current.recalled.len()).ok();
            let at = messages
                .iter()
                .rposition(|m| m.role == Role::User && Some(&m.content) == full.as_ref());
            if let Some(at) = at {
                let mut keep = current.recalled.len();
                while tokens > budget && keep > 0 {
                    keep -= 1;
                    let Ok(text) = self.current_message(current, keep) else {
                        break;
                    };
                    let before = tokenizer.count_message(&messages[at]);
                    messages[at].content = text;
                    tokens = tokens - before + tokenizer.count_message(&messages[at]);
                    fit.dropped_memories += 1;
                }
            }
        }
        fit.tokens = tokens;
        if tokens > budget {
            return Err(Overflow { tokens, budget });
        }
        Ok((messages, fit))
    }

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

/// The runtime block, the recalled memories and the user's text, as one message.
fn join_current(runtime: &str, recalled: Option<&str>, text: &str) -> String {
    match recalled {
        Some(recalled) => format!("{runtime}\n\n{recalled}\n\n{text}"),
        None => format!("{runtime}\n\n{text}"),
    }
}

/// What fitting a request did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fit {
    /// Estimated tokens of the request sent.
    pub tokens: usize,
    /// Old history messages left out (whole turns).
    pub dropped_messages: usize,
    /// Old tool outputs cut to head and tail.
    pub trimmed_outputs: usize,
    /// Recalled memories left out of the current message.
    pub dropped_memories: usize,
}

impl Fit {
    /// Whether anything was cut.
    pub(crate) fn trimmed(&self) -> bool {
        self.dropped_messages > 0 || self.trimmed_outputs > 0 || self.dropped_memories > 0
    }
}

/// The parts of a request that are never cut do not fit the window.
#[derive(Debug, thiserror::Error)]
#[error(
    "the request needs about {tokens} tokens even with old history and tool output left out, \
     but the model's window leaves {budget} (llm.context_window minus the answer's reserve); \
     shorten the message or raise llm.context_window"
)]
pub(crate) struct Overflow {
    tokens: usize,
    budget: usize,
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
