//! Model calls as the trace keeps them: every call of the engine (the main loop, the
//! planner, history summaries, approval explanations, memory extraction, the conflict judge,
//! consolidation) is recorded here, one call span per HTTP attempt, with its exact request
//! and response captured when the span captures (`[trace] capture`).

use echo_core::store::ModelCall;
use echo_core::trace::{CallRecord, Span, SpanKind};
use echo_core::{Message, ToolSpec};
use echo_llm::{Attempt, AttemptKind, ChatRequest, ChatResponse, LlmClient, ToolChoice};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// A forced tool call parsed into `T` (or why it could not be had), its attempts recorded
/// under `span` as calls named after the tool.
pub(crate) async fn structured_call<T: DeserializeOwned>(
    llm: &LlmClient,
    span: &Span,
    messages: Vec<Message>,
    tool: ToolSpec,
    max_tokens: u32,
) -> Result<T, String> {
    let name = tool.name.clone();
    let request = ChatRequest {
        messages,
        tools: vec![tool],
        max_tokens,
        temperature: Some(0.0),
        tool_choice: ToolChoice::Required(name.clone()),
    };
    let mut ignore = |_| {};
    let outcome = llm
        .chat(&request, &CancellationToken::new(), &mut ignore)
        .await;
    match outcome {
        Err(f) => {
            record_attempts(span, &name, &request, &f.attempts, None).await;
            Err(f.error.to_string())
        }
        Ok(r) => {
            record_attempts(span, &name, &request, &r.attempts, Some(&r)).await;
            let args = r
                .tool_calls
                .iter()
                .find(|c| c.name == name)
                .map(|c| c.arguments.clone());
            // Some servers ignore tool_choice and answer in text: accept a JSON object there.
            let text = args.or_else(|| {
                let t = r.text.trim();
                let start = t.find('{')?;
                let end = t.rfind('}')?;
                (end > start).then(|| t[start..=end].to_string())
            });
            match text {
                None => Err(format!("the model did not call {name}")),
                Some(text) => serde_json::from_str::<T>(&text)
                    .map_err(|e| format!("malformed {name} output: {e}")),
            }
        }
    }
}

/// The degradation an attempt of this kind means: a retry, or a fallback to another model.
pub(crate) fn degraded_reason(kind: AttemptKind) -> Option<&'static str> {
    match kind {
        AttemptKind::First => None,
        AttemptKind::Retry => Some("retry"),
        AttemptKind::Fallback => Some("fallback_model"),
    }
}

/// Records a model call's attempts as call spans `name` under `span` and, when the span
/// captures (`[trace] capture`), stores each attempt's exact request beside its span, with the
/// response on the attempt that produced it (`response`, the call's answer when it succeeded).
pub(crate) async fn record_attempts(
    span: &Span,
    name: &str,
    request: &ChatRequest,
    attempts: &[Attempt],
    response: Option<&ChatResponse>,
) {
    let last = attempts.len().saturating_sub(1);
    for (i, a) in attempts.iter().enumerate() {
        let span_id = span
            .record_call(CallRecord {
                name,
                kind: SpanKind::Model,
                model: Some(&a.model),
                started_at: a.started_at,
                duration: a.duration,
                usage: Some(a.usage),
                error: a.error.as_deref(),
                degraded_reason: degraded_reason(a.kind),
                attrs: serde_json::json!({
                    "messages": request.messages.len(),
                    "tools": request.tools.len(),
                    "captured": span.captures(),
                }),
            })
            .await;
        if span.captures() {
            let response = response
                .filter(|_| i == last && a.error.is_none())
                .map(ChatResponse::captured);
            span.capture_call(&ModelCall {
                span_id,
                model: a.model.clone(),
                request: request.captured(),
                response,
                error: a.error.clone(),
            })
            .await;
        }
    }
}
