//! The shapes a caller exchanges with [`crate::LlmClient`]: request, streamed events, the
//! assembled answer, and the record of every HTTP attempt.

use crate::error::LlmError;
use echo_core::store::{CapturedRequest, CapturedResponse};
use echo_core::{Message, ToolCall, ToolSpec, Usage};
use std::fmt;
use std::time::Duration;

/// One model call.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    /// The conversation; may start with one or more system messages (each provider puts them
    /// where its protocol wants them).
    pub messages: Vec<Message>,
    /// Tools offered to the model; empty = none (no `tools` field is sent at all).
    pub tools: Vec<ToolSpec>,
    /// Upper bound on answer tokens (0 = the server's default, except for Anthropic, which
    /// requires a value and gets 4096).
    pub max_tokens: u32,
    /// Sampling temperature; the server's default when `None`.
    pub temperature: Option<f32>,
    /// Whether and which tool the model must call.
    pub tool_choice: ToolChoice,
}

impl ChatRequest {
    /// The request as a trace keeps it (everything that is sent except headers).
    pub fn captured(&self) -> CapturedRequest {
        CapturedRequest {
            messages: self.messages.clone(),
            tools: self.tools.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            tool_choice: match &self.tool_choice {
                ToolChoice::Auto => "auto".into(),
                ToolChoice::Required(tool) => tool.clone(),
            },
        }
    }
}

impl ChatResponse {
    /// The answer as a trace keeps it.
    pub fn captured(&self) -> CapturedResponse {
        CapturedResponse {
            text: self.text.clone(),
            reasoning: self.reasoning.clone(),
            tool_calls: self.tool_calls.clone(),
            usage: self.usage,
            finish_reason: self.finish_reason.clone(),
        }
    }
}

/// Whether the model may, must or must not call tools.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (no `tool_choice` is sent).
    #[default]
    Auto,
    /// The model must call this tool: how structured output is requested
    /// (`extract_memories`, `judge_memory_conflict`, ...) on every provider.
    Required(String),
}

/// Something that happened during a call, delivered to the caller as it happens.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatEvent {
    /// A piece of answer text, exactly as the server sent it (`<think>` tags included).
    TextDelta(String),
    /// A piece of reasoning (`reasoning_content` / `reasoning` deltas, Anthropic `thinking`).
    ReasoningDelta(String),
    /// The model started a tool call; sent once per call, before its argument deltas.
    ToolCallStarted {
        /// Position of the call in [`ChatResponse::tool_calls`].
        index: usize,
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallArgsDelta {
        /// Position of the call in [`ChatResponse::tool_calls`].
        index: usize,
        /// Call id.
        id: String,
        /// The fragment, to be appended to what came before.
        delta: String,
    },
    /// An attempt failed before any output and the same model is about to be tried again.
    Retrying {
        /// The model being retried.
        model: String,
        /// 1-based number of the attempt about to be made on this model (2 = first retry).
        attempt: u32,
        /// How long the client waits before that attempt.
        delay: Duration,
        /// Why the previous attempt failed (one line).
        error: String,
    },
    /// The built-in model is answering another request; this one waits its turn.
    ModelBusy {
        /// The model waited for.
        model: String,
    },
    /// A model gave up and the next fallback model is about to be tried.
    FallingBack {
        /// The model that failed.
        from: String,
        /// The model about to be tried.
        to: String,
        /// Why `from` failed (one line).
        error: String,
    },
}

/// The assembled answer of a successful call.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatResponse {
    /// Assistant text exactly as streamed (not stripped of `<think>` blocks).
    pub text: String,
    /// Reasoning text, when the server sent it separately.
    pub reasoning: String,
    /// Tool calls in the order the model started them; `arguments` is the raw concatenated
    /// JSON text, even when malformed.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage of the successful attempt (each attempt's own usage is in `attempts`).
    pub usage: Usage,
    /// Why generation stopped, as the server named it (`stop`, `tool_calls`, `end_turn`, …).
    pub finish_reason: Option<String>,
    /// The configured model name that produced this answer.
    pub model: String,
    /// Every HTTP attempt of this call, in order, failed ones included.
    pub attempts: Vec<Attempt>,
}

/// Why an attempt was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptKind {
    /// The first attempt on the primary model.
    First,
    /// A repeated attempt on the same model.
    Retry,
    /// The first attempt on a fallback model.
    Fallback,
}

/// One HTTP attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    /// The model asked.
    pub model: String,
    /// When the request was sent.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// How long it took until the answer was complete or the attempt failed.
    pub duration: Duration,
    /// Tokens the server reported for this attempt (zero when it reported none).
    pub usage: Usage,
    /// The built-in model had to load its weights for this attempt (its first request, or
    /// the first after its worker ended when quiet), taking this long.
    pub model_load: Option<Duration>,
    /// `None` when this attempt produced the answer; otherwise the one-line error.
    pub error: Option<String>,
    /// Why it was made.
    pub kind: AttemptKind,
}

/// A call that produced no complete answer.
#[derive(Debug)]
pub struct ChatFailure {
    /// The last error.
    pub error: LlmError,
    /// Every HTTP attempt, in order.
    pub attempts: Vec<Attempt>,
    /// Text already passed to the caller by the last attempt before it failed.
    pub partial_text: String,
}

impl fmt::Display for ChatFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for ChatFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
