//! ContextStage: the only place a model request is assembled.
//!
//! Fixed order, most stable first, so a provider's prefix cache is reused from one request to
//! the next: system block → history (tool-call/result pairs never split) → the current user
//! message. Facts that change every turn (time, entry point) travel in a
//! `<runtime-context>` block at the head of the current user message, after which the user's
//! text follows verbatim; putting them in the system block would invalidate the cached prefix
//! on every turn.

use crate::prompts::{PromptError, PromptName, Prompts};
use echo_core::store::StoredMessage;
use echo_core::{Message, Role, ToolSpec};
use echo_memory::Memory;
use std::collections::HashSet;

/// What the model sees on the first request of a turn.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// Messages, system first, current user message last.
    pub messages: Vec<Message>,
    /// Tools offered.
    pub tools: Vec<ToolSpec>,
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

/// Builds requests.
pub(crate) struct ContextStage<'a> {
    pub prompts: &'a Prompts,
    /// The user's skills (names and descriptions only; the model reads one with `skill_view`).
    pub skills: &'a [echo_tools::SkillSummary],
}

impl ContextStage<'_> {
    /// The first request of a turn: `history` is everything before the current message.
    pub(crate) fn build(
        &self,
        history: &[StoredMessage],
        current: &str,
        runtime: &RuntimeInfo,
        tools: Vec<ToolSpec>,
        memory: &MemoryBlocks,
    ) -> Result<Prepared, PromptError> {
        let mut messages = Vec::with_capacity(history.len() + 2);
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
        if !memory.snapshot.is_empty() {
            let block = self.prompts.render(
                PromptName::MemorySnapshot,
                serde_json::json!({ "memories": memory.snapshot }),
            )?;
            system.push_str("\n\n");
            system.push_str(&block);
        }
        messages.push(Message::system(system));
        messages.extend(sanitize_history(history));
        let mut head = self.prompts.render(PromptName::RuntimeContext, runtime)?;
        if !memory.recalled.is_empty() {
            let block = self.prompts.render(
                PromptName::MemoryContext,
                serde_json::json!({ "memories": memory.recalled }),
            )?;
            head.push_str("\n\n");
            head.push_str(&block);
        }
        messages.push(Message::user(format!("{head}\n\n{current}")));
        Ok(Prepared { messages, tools })
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
        tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
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

    /// The consolidation request for a stretch of conversation.
    pub(crate) fn consolidation(
        &self,
        messages: &[Message],
        slots: &[String],
        tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
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

    /// The conflict judge request for two memories.
    pub(crate) fn judge(
        &self,
        existing: &Memory,
        new: &Memory,
        tool: ToolSpec,
    ) -> Result<(Vec<Message>, ToolSpec), PromptError> {
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
/// (a turn cut short by a crash may have left none), tool results without their call are
/// dropped, and empty partial answers are skipped.
pub(crate) fn sanitize_history(history: &[StoredMessage]) -> Vec<Message> {
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
                    content:
                        "error: no result was recorded for this call (the turn was interrupted)"
                            .into(),
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
mod tests {
    use super::*;
    use echo_core::ToolCall;

    fn stored(role: Role, content: &str, calls: &[&str], answers: Option<&str>) -> StoredMessage {
        StoredMessage {
            id: String::new(),
            session_id: String::new(),
            turn_id: None,
            seq: 0,
            role,
            content: content.into(),
            reasoning: None,
            tool_calls: calls
                .iter()
                .map(|id| ToolCall {
                    id: id.to_string(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            tool_call_id: answers.map(String::from),
            name: answers.map(|_| "read_file".into()),
            status: "complete".into(),
            created_at: String::new(),
        }
    }

    fn shape(msgs: &[Message]) -> Vec<String> {
        msgs.iter()
            .map(|m| match m.role {
                Role::Tool => format!("tool:{}", m.tool_call_id.as_deref().unwrap_or("?")),
                Role::Assistant if !m.tool_calls.is_empty() => {
                    format!(
                        "calls:{}",
                        m.tool_calls
                            .iter()
                            .map(|c| c.id.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                }
                r => r.as_str().to_string(),
            })
            .collect()
    }

    #[test]
    fn history_is_repaired_into_a_valid_sequence() {
        let h = vec![
            stored(Role::User, "q1", &[], None),
            stored(Role::Assistant, "", &["a", "b"], None),
            stored(Role::Tool, "ra", &[], Some("a")),
            // b's result was never written (crash); the next user message arrives
            stored(Role::User, "q2", &[], None),
            stored(Role::Tool, "orphan", &[], Some("zzz")),
            stored(Role::Assistant, "", &[], None),
            stored(Role::Assistant, "answer", &[], None),
            stored(Role::Assistant, "", &["c"], None),
        ];
        assert_eq!(
            shape(&sanitize_history(&h)),
            [
                "user",
                "calls:a,b",
                "tool:a",
                "tool:b",
                "user",
                "assistant",
                "calls:c",
                "tool:c"
            ]
        );
    }
}
