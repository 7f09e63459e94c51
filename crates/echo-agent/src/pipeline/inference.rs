//! InferenceStage: the ReAct loop. Stream the model; when it asks for tools, run them (each
//! validated, each with a recorded result even on error or timeout; consecutive read-only
//! calls concurrently, the rest in order) and loop. At `max_iterations`, one last request
//! without tools asks for a summary. Every model attempt and tool call is a span.

use crate::approval::{ApprovalMode, CallScope, Gate};
use crate::events::TurnEvents;
use crate::model_calls::ModelCall;
use crate::pipeline::context::ContextStage;
use crate::think::{Piece, ThinkFilter, strip_think};
use crate::wire::TurnEvent;
use echo_core::TurnErrorCode;
use echo_core::config::Config;
use echo_core::store::Store;
use echo_core::trace::{Span, SpanKind, SpanLevel, SpanStatus};
use echo_core::vocab::Degradation;
use echo_core::{Message, Role, SessionId, ToolCall, ToolSpec, TurnId, Usage};
use echo_llm::{ChatEvent, ChatFailure, ChatResponse, LlmClient, LlmError};
use echo_tools::{Risk, ToolContext, ToolOutcome, ToolRegistry};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Everything a running turn needs.
pub(crate) struct TurnScope<'a> {
    pub config: &'a Config,
    pub store: &'a Store,
    /// The model this turn was routed to.
    pub llm: &'a LlmClient,
    /// The current user message in parts (for trimming recalled memories).
    pub current: &'a [String],
    pub tools: &'a ToolRegistry,
    pub context: ContextStage<'a>,
    pub session: &'a SessionId,
    pub turn: &'a TurnId,
    pub events: &'a TurnEvents,
    pub cancel: &'a CancellationToken,
    pub root: &'a Span,
    pub workdir: &'a std::path::Path,
    /// The project's folders, where writes are allowed (empty: the settings' roots).
    pub roots: &'a [std::path::PathBuf],
    /// The project the session belongs to, if any.
    pub project_id: Option<&'a str>,
    pub gate: &'a Gate,
    pub approvals: ApprovalMode,
    /// The automation's run this turn is, if any.
    pub automation: Option<&'a crate::turn::run::RunContext>,
    /// A temporary chat's turn: its tool calls keep nothing.
    pub temporary: bool,
}

/// What the loop produced.
#[derive(Debug)]
pub(crate) struct InferenceResult {
    /// Raw text of the last model answer (still with any `<think>`).
    pub text: String,
    /// Reasoning the provider sent on its reasoning channel.
    pub reasoning: String,
    pub usage: Usage,
    pub model: String,
}

/// Why the loop stopped without an answer.
#[derive(Debug)]
pub(crate) struct TurnFailure {
    pub code: TurnErrorCode,
    pub message: String,
    /// Visible text streamed before the failure.
    pub partial_text: String,
    pub interrupted: bool,
    pub usage: Usage,
}

impl TurnFailure {
    pub(crate) fn internal(code: TurnErrorCode, message: String, usage: Usage) -> Self {
        Self {
            code,
            message,
            partial_text: String::new(),
            interrupted: false,
            usage,
        }
    }
}

/// Runs the loop from the prepared first request.
pub(crate) async fn run(
    scope: &TurnScope<'_>,
    mut messages: Vec<Message>,
    tools: Vec<ToolSpec>,
) -> Result<InferenceResult, TurnFailure> {
    let max = scope.config.agent.max_iterations.max(1);
    let mut usage = Usage::default();
    let mut call_ids = CallIds::new(
        scope
            .store
            .tool_call_ids(scope.session)
            .await
            .map_err(|e| TurnFailure::internal(TurnErrorCode::Store, e.to_string(), usage))?,
    );
    for iteration in 1..=max {
        let node = scope
            .root
            .child(SpanLevel::Node, &format!("inference#{iteration}"))
            .await;
        let response = call_model(
            scope,
            node,
            messages.clone(),
            tools.clone(),
            &mut usage,
            &mut call_ids,
        )
        .await?;
        if response.tool_calls.is_empty() {
            return Ok(InferenceResult {
                text: response.text,
                reasoning: response.reasoning,
                usage,
                model: response.model,
            });
        }
        let (visible, reasoning) = strip_think(&response.text);
        let assistant = Message {
            role: Role::Assistant,
            content: visible,
            tool_calls: response.tool_calls.clone(),
            tool_call_id: None,
            name: None,
        };
        let reasoning = join_reasoning(&response.reasoning, &reasoning);
        scope
            .store
            .append_message(
                scope.session,
                Some(scope.turn),
                &assistant,
                Some(&reasoning),
                false,
            )
            .await
            .map_err(|e| TurnFailure::internal(TurnErrorCode::Store, e.to_string(), usage))?;
        messages.push(assistant);
        messages.extend(
            run_tools(scope, iteration, &response.tool_calls)
                .await
                .map_err(|e| TurnFailure::internal(TurnErrorCode::Store, e.to_string(), usage))?,
        );
        if scope.cancel.is_cancelled() {
            return Err(interrupted(String::new(), usage));
        }
    }

    // The iteration limit: one last request, without tools, for a summary.
    let mut node = scope.root.child(SpanLevel::Node, "iteration_limit").await;
    node.degrade(Degradation::MaxIterations);
    scope.events.emit(TurnEvent::Degraded {
        reason: Degradation::MaxIterations,
        detail: format!("reached the limit of {max} tool steps; asking the model to summarise"),
    });
    let final_messages = scope
        .context
        .iteration_limit(&messages, max)
        .map_err(|e| TurnFailure::internal(TurnErrorCode::Prompt, e.to_string(), usage))?;
    let response = call_model(
        scope,
        node,
        final_messages,
        Vec::new(),
        &mut usage,
        &mut call_ids,
    )
    .await?;
    Ok(InferenceResult {
        text: response.text,
        reasoning: response.reasoning,
        usage,
        model: response.model,
    })
}

/// Tool call ids made unique within the session. A server that sends no id gets `call_<n>`
/// from the stream assembler, and some servers number their own calls per response, so the
/// same id would otherwise name calls of different turns; `read_tool_output`, the pairing
/// check of compression and the UI all find a call by its id. A repeated id is given a
/// random suffix (a 9-character alphanumeric id, Mistral's format, is replaced by a fresh
/// one of the same shape), and the new id is what is streamed, stored and sent back.
pub(crate) struct CallIds {
    /// Ids answered earlier in the session and given out in this turn.
    used: std::collections::HashSet<String>,
    /// The server's id → ours, for the response being read.
    renamed: std::collections::HashMap<String, String>,
}

impl CallIds {
    pub(crate) fn new(used: std::collections::HashSet<String>) -> Self {
        Self {
            used,
            renamed: Default::default(),
        }
    }

    /// A new response starts: its ids may repeat those of the previous one.
    fn next_response(&mut self) {
        self.renamed.clear();
    }

    /// Our id for the server's `id` in the current response (the same answer every time it
    /// is asked, so streamed events, the stored call and its result agree).
    pub(crate) fn unique(&mut self, id: &str) -> String {
        if let Some(ours) = self.renamed.get(id) {
            return ours.clone();
        }
        let mistral = id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric());
        let mut ours = id.to_string();
        while ours.is_empty() || self.used.contains(&ours) {
            let suffix: String = std::iter::repeat_with(fastrand::alphanumeric)
                .take(if mistral { 9 } else { 6 })
                .collect();
            ours = match (mistral, id.is_empty()) {
                (true, _) => suffix,
                (false, true) => format!("call_{suffix}"),
                (false, false) => format!("{id}_{suffix}"),
            };
        }
        self.used.insert(ours.clone());
        self.renamed.insert(id.to_string(), ours.clone());
        ours
    }
}

fn interrupted(partial_text: String, usage: Usage) -> TurnFailure {
    TurnFailure {
        code: TurnErrorCode::Interrupted,
        message: "the turn was stopped before it finished".into(),
        partial_text,
        interrupted: true,
        usage,
    }
}

pub(crate) fn join_reasoning(a: &str, b: &str) -> String {
    match (a.trim().is_empty(), b.trim().is_empty()) {
        (true, _) => b.trim().to_string(),
        (_, true) => a.trim().to_string(),
        _ => format!("{}\n\n{}", a.trim(), b.trim()),
    }
}

/// One model call (with the client's retries and fallbacks), streamed into turn events and
/// recorded as one call span per HTTP attempt under `node`, which it finishes.
async fn call_model(
    scope: &TurnScope<'_>,
    mut node: Span,
    messages: Vec<Message>,
    tools: Vec<ToolSpec>,
    usage: &mut Usage,
    call_ids: &mut CallIds,
) -> Result<ChatResponse, TurnFailure> {
    call_ids.next_response();
    let prompts = scope.context.prompts;
    let call = ModelCall::fitted(
        scope.llm,
        prompts,
        messages,
        tools,
        scope.current,
        &mut node,
    )
    .map_err(|e| TurnFailure::internal(TurnErrorCode::ContextOverflow, e.to_string(), *usage))?;
    let mut filter = ThinkFilter::default();
    let events = scope.events;
    let forward = |pieces: Vec<Piece>| {
        for piece in pieces {
            events.emit(match piece {
                Piece::Text(text) => TurnEvent::Token { text },
                Piece::Reasoning(text) => TurnEvent::Reasoning { text },
            });
        }
    };
    let mut on_event = |event: ChatEvent| match event {
        ChatEvent::TextDelta(text) => forward(filter.push(&text)),
        ChatEvent::ReasoningDelta(text) => events.emit(TurnEvent::Reasoning { text }),
        ChatEvent::ToolCallStarted { id, name, .. } => events.emit(TurnEvent::ToolCallStarted {
            call_id: call_ids.unique(&id),
            name,
        }),
        ChatEvent::ToolCallArgsDelta { id, delta, .. } => {
            events.emit(TurnEvent::ToolCallArgsDelta {
                call_id: call_ids.unique(&id),
                delta,
            })
        }
        ChatEvent::Retrying {
            model,
            attempt,
            delay,
            error,
        } => events.emit(TurnEvent::Degraded {
            reason: Degradation::Retry,
            detail: format!(
                "{error}; retry {attempt} of model {model} in {:.1}s",
                delay.as_secs_f64()
            ),
        }),
        ChatEvent::ModelBusy { model } => events.emit(TurnEvent::Degraded {
            reason: Degradation::ModelBusy,
            detail: format!(
                "waiting for the built-in model ({model}): it is answering another request"
            ),
        }),
        ChatEvent::FallingBack { from, to, error } => events.emit(TurnEvent::Degraded {
            reason: Degradation::FallbackModel,
            detail: format!("{error}; falling back from {from} to {to}"),
        }),
    };
    let result = call
        .send(&node, "model_request", scope.cancel, &mut on_event)
        .await;
    forward(filter.finish());

    let attempts = match &result {
        Ok(r) => &r.attempts,
        Err(f) => &f.attempts,
    };
    for attempt in attempts {
        if let Some(reason) = crate::model_calls::degraded_reason(attempt.kind) {
            node.degrade(reason);
        }
        usage.add(attempt.usage);
    }

    match result {
        Ok(mut response) => {
            for call in &mut response.tool_calls {
                call.id = call_ids.unique(&call.id);
            }
            node.set_model(&response.model);
            node.set_usage(response.usage);
            node.attr("tool_calls", response.tool_calls.len());
            node.finish(SpanStatus::Ok).await;
            Ok(response)
        }
        Err(ChatFailure {
            error,
            partial_text,
            ..
        }) => {
            let (visible, _) = strip_think(&partial_text);
            let cancelled = matches!(error, LlmError::Cancelled { .. });
            node.set_error(&error.to_string());
            node.finish(if cancelled {
                SpanStatus::Cancelled
            } else {
                SpanStatus::Error
            })
            .await;
            if cancelled {
                return Err(interrupted(visible, *usage));
            }
            Err(TurnFailure {
                code: error.code(),
                message: error.to_string(),
                partial_text: visible,
                interrupted: false,
                usage: *usage,
            })
        }
    }
}

/// Runs one step's tool calls and stores their results in call order. Consecutive read-only
/// calls run concurrently (when enabled); everything else runs one at a time, in order.
async fn run_tools(
    scope: &TurnScope<'_>,
    iteration: u32,
    calls: &[ToolCall],
) -> Result<Vec<Message>, echo_core::StoreError> {
    let node = scope
        .root
        .child(SpanLevel::Node, &format!("tools#{iteration}"))
        .await;
    let parallel = scope.config.agent.parallel_read_only_tools;
    let read_only = |c: &ToolCall| parallel && scope.tools.risk(&c.name) == Some(Risk::ReadOnly);
    let ctx = ToolContext {
        workdir: scope.workdir.to_path_buf(),
        cancel: scope.cancel.clone(),
        session_id: scope.session.to_string(),
        turn_id: scope.turn.to_string(),
        temporary: scope.temporary,
        project_id: scope.project_id.map(str::to_string),
    };
    let timeout = Duration::from_secs_f64(scope.config.agent.tool_timeout_secs.max(0.001));
    let mut results = Vec::with_capacity(calls.len());
    let mut i = 0;
    while i < calls.len() {
        let mut j = i + 1;
        if read_only(&calls[i]) {
            while j < calls.len() && read_only(&calls[j]) {
                j += 1;
            }
        }
        let batch = futures::future::join_all(
            calls[i..j]
                .iter()
                .map(|call| run_one(scope, &node, &ctx, call, timeout)),
        )
        .await;
        results.extend(calls[i..j].iter().cloned().zip(batch));
        i = j;
    }
    let failed = results.iter().filter(|(_, o)| !o.ok).count();
    let mut node = node;
    node.attr("calls", calls.len());
    node.attr("failed", failed);
    node.finish(if failed == 0 {
        SpanStatus::Ok
    } else {
        SpanStatus::Error
    })
    .await;

    let mut messages = Vec::with_capacity(results.len());
    for (call, outcome) in results {
        let message = Message::tool_result(&call, outcome.content);
        scope
            .store
            .append_message(scope.session, Some(scope.turn), &message, None, false)
            .await?;
        messages.push(message);
    }
    Ok(messages)
}

async fn run_one(
    scope: &TurnScope<'_>,
    node: &Span,
    ctx: &ToolContext,
    call: &ToolCall,
    timeout: Duration,
) -> ToolOutcome {
    let mut span = node
        .child_of(
            SpanKind::Tool,
            SpanLevel::Call,
            &format!("tool:{}", call.name),
        )
        .await;
    span.attr("call_id", call.id.clone());
    span.attr("arguments", call.arguments.clone());
    let outcome = match scope.tools.prepare(call, ctx).await {
        Err(outcome) => outcome,
        Ok(prepared) => {
            span.attr("risk", prepared.risk.as_str());
            let approval = CallScope {
                session_id: scope.session.as_str(),
                turn_id: scope.turn.as_str(),
                workdir: scope.workdir,
                roots: scope.roots,
                mode: scope.approvals,
                events: scope.events,
                cancel: scope.cancel,
                span: &span,
                context: &scope.context,
                automation: scope.automation,
            };
            match scope.gate.decide(&approval, &prepared).await {
                Err(text) => ToolOutcome::failure("denied", text, Duration::ZERO),
                Ok(()) => {
                    scope.events.emit(TurnEvent::ToolCallExecuting {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                    });
                    let writes = prepared.action.writes.clone();
                    let outcome = scope.tools.run(prepared, ctx, timeout).await;
                    if let Some(run) = scope.automation
                        && outcome.ok
                        && !writes.is_empty()
                    {
                        run.record_writes(&writes).await;
                    }
                    outcome
                }
            }
        }
    };
    if let Some(kind) = outcome.error_kind {
        span.attr("error_kind", kind);
        span.set_error(&outcome.content);
    }
    if let Some(full) = &outcome.full_content {
        // The model saw a cut version; the trace keeps all of it.
        span.attr("full_output", full.clone());
    }
    if outcome.breaker_opened {
        span.degrade(Degradation::CircuitOpen);
        scope.events.emit(TurnEvent::Degraded {
            reason: Degradation::CircuitOpen,
            detail: format!(
                "{} failed {} times in a row and is paused for a while",
                call.name, scope.config.tools.breaker_failures
            ),
        });
    }
    span.attr("result_chars", outcome.content.chars().count());
    span.attr("result", outcome.content.clone());
    span.finish(match outcome.error_kind {
        None => SpanStatus::Ok,
        Some("cancelled") => SpanStatus::Cancelled,
        Some(_) => SpanStatus::Error,
    })
    .await;
    scope.events.emit(TurnEvent::ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        ok: outcome.ok,
        content: outcome.content.clone(),
        duration_ms: outcome.duration.as_millis() as u64,
    });
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_call_ids_get_fresh_ones_consistently_within_a_response() {
        let mut ids = CallIds::new(["call_0".to_string()].into());
        let first = ids.unique("call_0");
        assert_ne!(first, "call_0");
        assert!(first.starts_with("call_0_"), "{first}");
        assert_eq!(ids.unique("call_0"), first, "same answer within a response");
        assert_eq!(ids.unique("call_1"), "call_1", "unused ids are kept");
        ids.next_response();
        let second = ids.unique("call_0");
        assert!(second != first && second != "call_0", "{second}");
        // Mistral's 9-character ids are replaced by ids of the same shape.
        let mut ids = CallIds::new(["abcDEF123".to_string()].into());
        let fresh = ids.unique("abcDEF123");
        assert_eq!(fresh.len(), 9);
        assert!(fresh.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert!(ids.unique("").starts_with("call_"));
    }
}
