//! Traces as front ends see them: turns, spans and captured model calls (from
//! `echo_core::store`'s rows).

use super::{Message, ToolCall, ToolSpec, Usage, list};
use echo_core::vocab::{
    Degradation, EntryPoint, SpanKind, SpanLevel, SpanStatus, TurnErrorCode, TurnStatus,
};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// A turn record.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct TurnRecord {
    /// Turn id (also the trace id).
    pub id: String,
    /// Session id.
    pub session_id: String,
    /// Session name.
    pub session_name: String,
    /// Where it is in its life.
    pub status: TurnStatus,
    /// The user's input.
    pub input: String,
    /// Which front end started it.
    pub entry_point: EntryPoint,
    /// Model that answered.
    pub model: Option<String>,
    /// Error code when failed or interrupted.
    pub error_code: Option<TurnErrorCode>,
    /// Error message when failed or interrupted.
    pub error: Option<String>,
    /// Prompt tokens of all model calls.
    pub input_tokens: i64,
    /// Completion tokens of all model calls.
    pub output_tokens: i64,
    /// When it was accepted.
    pub created_at: String,
    /// When it started running.
    pub started_at: Option<String>,
    /// When it ended.
    pub finished_at: Option<String>,
    /// Whether any of its spans degraded (a retry, a fallback model, a trimmed context, ...).
    pub degraded: bool,
    /// How many approval questions it asked the person.
    pub approvals: i64,
}

/// A turn's trace: the turn record and its spans.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct Trace {
    /// The turn: session, status, input, entry point, model, tokens, times.
    pub turn: TurnRecord,
    /// Spans in start order (parents before children on ties).
    pub spans: Vec<SpanRecord>,
}

/// One turn, self-contained: everything needed to run it again and to judge the new run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayCase {
    /// [`CASE_FORMAT`].
    pub format: u32,
    /// The turn it was exported from.
    pub turn_id: String,
    /// When that turn was accepted.
    pub created_at: String,
    /// The user's message.
    pub input: String,
    /// `[agent] max_iterations` in force.
    pub max_iterations: u32,
    /// The tools the model was offered (their definitions, as sent).
    pub tools_offered: Vec<ToolSpec>,
    /// The memories injected into the request.
    pub memories: Vec<CaseMemory>,
    /// The main loop's model replies, in order.
    pub replies: Vec<CapturedResponse>,
    /// Every tool call of the turn, in order, with what it returned.
    pub tool_calls: Vec<CaseToolCall>,
    /// The final answer as saved.
    pub final_text: String,
}

/// A memory the turn was given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseMemory {
    /// Its text.
    pub content: String,
    /// Its slot.
    pub slot: Option<String>,
    /// Whether it was pinned.
    pub pinned: bool,
}

/// One tool call of the trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseToolCall {
    /// Tool name.
    pub name: String,
    /// Arguments as the model wrote them (JSON text).
    pub arguments: String,
    /// What the tool returned to the model.
    pub result: String,
    /// How it failed, if it did (`denied`, `timeout`, ...).
    pub error_kind: Option<String>,
}

impl From<echo_core::store::TurnRecord> for TurnRecord {
    fn from(v: echo_core::store::TurnRecord) -> Self {
        Self {
            id: v.id,
            session_id: v.session_id,
            session_name: v.session_name,
            status: v.status,
            input: v.input,
            entry_point: v.entry_point,
            model: v.model,
            error_code: v.error_code,
            error: v.error,
            input_tokens: v.input_tokens,
            output_tokens: v.output_tokens,
            created_at: v.created_at,
            started_at: v.started_at,
            finished_at: v.finished_at,
            degraded: v.degraded,
            approvals: v.approvals,
        }
    }
}
/// One trace span as stored.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct SpanRecord {
    /// Span id.
    pub id: String,
    /// Turn (trace) id.
    pub turn_id: String,
    /// Parent span, `None` for the turn span.
    pub parent_id: Option<String>,
    /// `turn`, `node` or `call`.
    pub level: SpanLevel,
    /// What it covers: a stage, a model request, a tool, an approval wait, memory read/write,
    /// background work.
    pub kind: SpanKind,
    /// What the span covers, e.g. `context`, `inference#1`, `model_request`, `tool:read_file`.
    pub name: String,
    /// Start time.
    pub started_at: String,
    /// Duration; `None` while running.
    pub duration_ms: Option<f64>,
    /// Running, or how it ended.
    pub status: SpanStatus,
    /// Model, for model calls.
    pub model: Option<String>,
    /// Prompt tokens.
    pub tokens_in: Option<i64>,
    /// Completion tokens.
    pub tokens_out: Option<i64>,
    /// Whether something degraded in this span.
    pub degraded: bool,
    /// Why, e.g. `retry`, `fallback_model`, `max_iterations`.
    pub degraded_reason: Option<String>,
    /// Error text.
    pub error: Option<String>,
    /// Extra structured fields.
    #[ts(type = "Record<string, unknown>")]
    pub attrs: serde_json::Value,
}

impl From<echo_core::store::SpanRecord> for SpanRecord {
    fn from(v: echo_core::store::SpanRecord) -> Self {
        Self {
            id: v.id,
            turn_id: v.turn_id,
            parent_id: v.parent_id,
            level: v.level,
            kind: v.kind,
            name: v.name,
            started_at: v.started_at,
            duration_ms: v.duration_ms,
            status: v.status,
            model: v.model,
            tokens_in: v.tokens_in,
            tokens_out: v.tokens_out,
            degraded: v.degraded,
            degraded_reason: v.degraded_reason,
            error: v.error,
            attrs: v.attrs,
        }
    }
}
/// One model call as captured: the request and, when the attempt succeeded, the response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct ModelCall {
    /// The call span it belongs to.
    pub span_id: String,
    /// The model asked.
    pub model: String,
    /// What was sent.
    pub request: CapturedRequest,
    /// What came back; `None` when the attempt failed.
    pub response: Option<CapturedResponse>,
    /// Why the attempt failed.
    pub error: Option<String>,
}

/// A request as sent to the model (without headers: keys never enter storage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct CapturedRequest {
    /// The messages, system messages included, in order.
    pub messages: Vec<Message>,
    /// The tools offered.
    pub tools: Vec<ToolSpec>,
    /// Upper bound on answer tokens (0 = the server's default).
    pub max_tokens: u32,
    /// Sampling temperature; the server's default when `None`.
    pub temperature: Option<f32>,
    /// `auto`, `none` or the name of the tool the model had to call.
    pub tool_choice: String,
}

/// A model's answer as received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct CapturedResponse {
    /// The text as streamed (with any `<think>` block).
    pub text: String,
    /// Reasoning sent on its own channel.
    pub reasoning: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage.
    pub usage: Usage,
    /// Why generation stopped, as the server named it.
    pub finish_reason: Option<String>,
}

impl From<echo_core::store::ModelCall> for ModelCall {
    fn from(v: echo_core::store::ModelCall) -> Self {
        Self {
            span_id: v.span_id,
            model: v.model,
            request: v.request.into(),
            response: v.response.map(Into::into),
            error: v.error,
        }
    }
}

impl From<echo_core::store::CapturedRequest> for CapturedRequest {
    fn from(v: echo_core::store::CapturedRequest) -> Self {
        Self {
            messages: list(v.messages),
            tools: list(v.tools),
            max_tokens: v.max_tokens,
            temperature: v.temperature,
            tool_choice: v.tool_choice,
        }
    }
}

impl From<echo_core::store::CapturedResponse> for CapturedResponse {
    fn from(v: echo_core::store::CapturedResponse) -> Self {
        Self {
            text: v.text,
            reasoning: v.reasoning,
            tool_calls: list(v.tool_calls),
            usage: v.usage.into(),
            finish_reason: v.finish_reason,
        }
    }
}

/// How often turns fell back since a time: each fallback's own count (`echod trace stats`).
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct DegradationStats {
    /// The start of the window (RFC 3339).
    pub since: String,
    /// Turns accepted since then.
    #[ts(type = "number")]
    pub turns: u64,
    /// Those that took at least one fallback.
    #[ts(type = "number")]
    pub degraded_turns: u64,
    /// `degraded_turns / turns` (0 without turns).
    pub rate: f64,
    /// Turns that took each fallback, most first.
    pub by_reason: Vec<DegradationCount>,
}

/// How many turns took one fallback.
#[derive(Clone, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct DegradationCount {
    /// The fallback.
    pub reason: Degradation,
    /// Turns that took it.
    #[ts(type = "number")]
    pub turns: u64,
    /// Its share of all turns in the window.
    pub rate: f64,
}

impl DegradationStats {
    /// The counts of the window that began at `since`.
    pub fn new(since: String, counts: echo_core::store::DegradationCounts) -> Self {
        let share = |n: u64| {
            if counts.turns == 0 {
                0.0
            } else {
                n as f64 / counts.turns as f64
            }
        };
        DegradationStats {
            since,
            turns: counts.turns,
            degraded_turns: counts.degraded_turns,
            rate: share(counts.degraded_turns),
            by_reason: counts
                .by_reason
                .iter()
                .map(|&(reason, turns)| DegradationCount {
                    reason,
                    turns,
                    rate: share(turns),
                })
                .collect(),
        }
    }
}
