//! Tools that bring back what compression and trimming left out of the request:
//! `history_search` (the archive of compressed history of this conversation) and
//! `read_tool_output` (a tool result whole, after the request carried only its head and
//! tail). Both only read this session's own stored messages.

use async_trait::async_trait;
use echo_core::SessionId;
use echo_core::store::Store;
use echo_tools::{Risk, ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

/// Names of these tools: offered only when the session has a summary or a cut tool output.
pub(crate) const HISTORY_TOOLS: [&str; 2] = ["history_search", "read_tool_output"];

/// Characters of one message a search hit shows.
const HIT_CHARS: usize = 400;

/// `history_search`.
pub(crate) struct HistorySearch {
    pub store: Store,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchArgs {
    /// Words to look for in the earlier, compressed part of this conversation.
    query: String,
    /// How many messages to show (default 6).
    #[schemars(range(min = 1, max = 20))]
    limit: Option<usize>,
}

#[async_trait]
impl TypedTool for HistorySearch {
    type Args = SearchArgs;
    const NAME: &'static str = "history_search";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::prompts::HISTORY_SEARCH.text()
    }
    async fn call(&self, args: SearchArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let session = SessionId::from_string(ctx.session_id.clone());
        let limit = args.limit.unwrap_or(6).clamp(1, 20);
        let hits = self
            .store
            .search_archive(&session, &args.query, 5)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        if hits.is_empty() {
            return Ok("nothing in the archived part of this conversation matches".into());
        }
        let terms: Vec<String> = echo_core::text::fts_terms(&args.query)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| t.chars().count() > 1)
            .map(str::to_lowercase)
            .collect();
        let mut lines = Vec::new();
        'hits: for hit in hits {
            let messages = self
                .store
                .messages_between(&session, hit.from_seq, hit.to_seq)
                .await
                .map_err(|e| ToolError::Failed(e.to_string()))?;
            for m in messages {
                let lower = m.content.to_lowercase();
                if !terms.iter().any(|t| lower.contains(t.as_str())) {
                    continue;
                }
                let text = echo_core::text::one_line(&m.content, HIT_CHARS);
                let who = match (&m.name, m.role) {
                    (Some(name), echo_core::Role::Tool) => format!("tool {name}"),
                    _ => m.role.as_str().to_string(),
                };
                lines.push(format!(
                    "- message {} ({who}, {}): {text}",
                    m.seq, m.created_at
                ));
                if lines.len() >= limit {
                    break 'hits;
                }
            }
        }
        if lines.is_empty() {
            return Ok("the archive matched, but no single message holds those words".into());
        }
        Ok(lines.join("\n"))
    }
}

/// `read_tool_output`.
pub(crate) struct ReadToolOutput {
    pub store: Store,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    /// The call id named in the marker of a cut tool output.
    call_id: String,
    /// Character to start from (default 0), to read a very long output in parts.
    offset: Option<usize>,
}

/// Characters returned at a time (the registry's output cap may cut further).
const READ_CHARS: usize = 12_000;

#[async_trait]
impl TypedTool for ReadToolOutput {
    type Args = ReadArgs;
    const NAME: &'static str = "read_tool_output";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::prompts::READ_TOOL_OUTPUT.text()
    }
    async fn call(&self, args: ReadArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let session = SessionId::from_string(ctx.session_id.clone());
        let Some(found) = self
            .store
            .tool_result(&session, &args.call_id)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?
        else {
            return Err(ToolError::InvalidArguments(format!(
                "no tool output with call_id {:?} in this conversation",
                args.call_id
            )));
        };
        let total = found.content.chars().count();
        let offset = args.offset.unwrap_or(0);
        if offset >= total && total > 0 {
            return Err(ToolError::InvalidArguments(format!(
                "offset {offset} is past the end of the output ({total} characters)"
            )));
        }
        let part: String = found
            .content
            .chars()
            .skip(offset)
            .take(READ_CHARS)
            .collect();
        let end = offset + part.chars().count();
        if end < total {
            let more = crate::prompts::READ_TOOL_OUTPUT_MORE
                .render(serde_json::json!({ "offset": offset, "end": end, "total": total }));
            Ok(format!("{part}\n{more}"))
        } else {
            Ok(part)
        }
    }
}
