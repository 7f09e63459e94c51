//! Model messages, tool calls and token usage as front ends see them: in a turn's events, a
//! trace's captured requests and a replay case (from `echo_core::message`).

use super::list;
use echo_core::Role;
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// A tool call requested by the model. `arguments` is the raw JSON text the model produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct ToolCall {
    /// Provider-assigned call id; a tool result refers to it.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as raw JSON text.
    pub arguments: String,
}

/// One message in a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// Text content (may be empty for an assistant message that only calls tools).
    pub content: String,
    /// Tool calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<ToolCall>>")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name (Anthropic and some OpenAI servers want it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
}

/// A tool definition as offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    #[ts(type = "unknown")]
    pub parameters: serde_json::Value,
}

/// Token usage reported by a provider for one or more requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
pub struct Usage {
    /// Prompt tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Completion tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Of the prompt tokens, how many the model reused from an earlier request instead of
    /// processing them again (the built-in model's prefix cache).
    #[serde(default)]
    #[ts(type = "number")]
    pub cached_input_tokens: u64,
}

impl From<echo_core::ToolCall> for ToolCall {
    fn from(v: echo_core::ToolCall) -> Self {
        Self {
            id: v.id,
            name: v.name,
            arguments: v.arguments,
        }
    }
}

impl From<ToolCall> for echo_core::ToolCall {
    fn from(v: ToolCall) -> Self {
        Self {
            id: v.id,
            name: v.name,
            arguments: v.arguments,
        }
    }
}

impl From<echo_core::Message> for Message {
    fn from(v: echo_core::Message) -> Self {
        Self {
            role: v.role,
            content: v.content,
            tool_calls: list(v.tool_calls),
            tool_call_id: v.tool_call_id,
            name: v.name,
        }
    }
}

impl From<Message> for echo_core::Message {
    fn from(v: Message) -> Self {
        Self {
            role: v.role,
            content: v.content,
            tool_calls: list(v.tool_calls),
            tool_call_id: v.tool_call_id,
            name: v.name,
        }
    }
}

impl From<echo_core::ToolSpec> for ToolSpec {
    fn from(v: echo_core::ToolSpec) -> Self {
        Self {
            name: v.name,
            description: v.description,
            parameters: v.parameters,
        }
    }
}

impl From<ToolSpec> for echo_core::ToolSpec {
    fn from(v: ToolSpec) -> Self {
        Self {
            name: v.name,
            description: v.description,
            parameters: v.parameters,
        }
    }
}

impl From<echo_core::Usage> for Usage {
    fn from(v: echo_core::Usage) -> Self {
        Self {
            input_tokens: v.input_tokens,
            output_tokens: v.output_tokens,
            cached_input_tokens: v.cached_input_tokens,
        }
    }
}
