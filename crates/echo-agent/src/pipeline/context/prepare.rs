//! ContextStage's turn setup: classify the turn and pick its model, gather memory, bootstrap
//! files and the optional plan, build the first request, and compress the history into the
//! rolling summary when the request grows past `context.compress_at` of the window. Every
//! decision and cut lands on the `context` span (and a `compress` / `planner` span).

use super::compress::{self, Compressor, Decision};
use super::{ContextStage, CurrentTurn, MemoryBlocks, Prepared, RuntimeInfo, TurnInputs};
use super::{routing, tool_choice};
use crate::bootstrap::Injected;
use crate::engine::Engine;
use crate::events::TurnEvents;
use crate::history_tools::HISTORY_TOOLS;
use crate::memory;
use crate::pipeline::TurnFailure;
use crate::tool_output::worth_cutting;
use crate::turn::request::TurnRequest;
use echo_core::config::TaskType;
use echo_core::event::RecalledMemory;
use echo_core::trace::Level;
use echo_core::trace::{Span, SpanKind, SpanStatus};
use echo_core::{Role, TurnErrorCode};
use echo_core::{SessionId, TurnEvent, TurnId, Usage};
use echo_llm::ChatRequest;
use echo_llm::LlmClient;
use std::collections::HashSet;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The turn's first request, the model that will answer it and the current message's parts.
pub(crate) struct TurnSetup {
    pub prepared: Prepared,
    pub llm: Arc<LlmClient>,
    pub current: CurrentTurn,
}

/// Characters of a plan that reach the request.
const PLAN_CHARS: usize = 2_000;

/// Everything before the first model call of a turn. `history` ends with this turn's user
/// message (committed at start).
pub(crate) async fn prepare_turn(
    engine: &Engine,
    request: &TurnRequest,
    session: &SessionId,
    turn: &TurnId,
    context: &ContextStage<'_>,
    events: &TurnEvents,
    root: &Span,
) -> Result<TurnSetup, TurnFailure> {
    let mut node = root.child(Level::Node, "context").await;
    let result = prepare_in(
        engine, request, session, turn, context, events, root, &mut node,
    )
    .await;
    match &result {
        Ok(_) => node.finish(SpanStatus::Ok).await,
        Err(failure) => {
            node.set_error(&failure.message);
            node.finish(SpanStatus::Error).await;
        }
    }
    result
}

#[allow(clippy::too_many_arguments)]
async fn prepare_in(
    engine: &Engine,
    request: &TurnRequest,
    session: &SessionId,
    turn: &TurnId,
    context: &ContextStage<'_>,
    events: &TurnEvents,
    root: &Span,
    node: &mut Span,
) -> Result<TurnSetup, TurnFailure> {
    let inner = engine;
    let store_err = |e: echo_core::StoreError| {
        TurnFailure::internal(TurnErrorCode::Store, e.to_string(), Usage::default())
    };
    let prompt_err = |e: String| TurnFailure::internal(TurnErrorCode::Prompt, e, Usage::default());
    let history = inner.store.history(session).await.map_err(store_err)?;
    let before = history.len().saturating_sub(1);
    let at_seq = history.last().map_or(0, |m| m.seq);

    // Task type and model.
    let mut classified = routing::classify(&request.input);
    if let Some(task) = request.task {
        // An automation says what its runs are.
        classified.task = task;
        classified.marker = Some("automation");
    }
    let models = inner.models();
    let (llm, reason) = models.route(classified.task);
    node.attr("task_type", classified.task.as_str());
    node.attr("task_marker", classified.marker);
    node.attr("model", llm.primary_model());
    node.attr("model_reason", reason);
    let tokenizer = *llm.tokenizer();
    node.attr("tokenizer", tokenizer.name());

    let blocks = memory_blocks(engine, session, &request.input, events, node).await;
    let bootstrap: Vec<Injected> = inner
        .bootstrap
        .for_prompt()
        .map_err(|e| prompt_err(e.to_string()))?;
    node.attr(
        "bootstrap",
        bootstrap.iter().map(|f| f.name).collect::<Vec<_>>(),
    );
    if bootstrap.iter().any(|f| f.cut > 0) {
        node.degrade("bootstrap_cut");
    }
    let mut tools = offered_tools(inner, session).await;
    if let Some(run) = &request.automation {
        tools.retain(|t| run.may_use(&t.name));
    }

    let mut current = CurrentTurn {
        input: request.input.clone(),
        runtime: RuntimeInfo::now(request.entry_point.as_str()),
        recalled: blocks.recalled,
        plan: None,
    };
    let planner = &inner.config.planner;
    if planner.enabled && planner.task_types.contains(&classified.task) {
        current.plan = plan(
            engine,
            &models.planner,
            context,
            &current.input,
            classified.task,
            &tools,
            root,
        )
        .await;
    }

    // The history after the rolling summary.
    let state = inner
        .store
        .compression_state(session)
        .await
        .map_err(store_err)?;
    let mut summary = state.summary.as_ref().map(|s| s.summary.clone());
    let mut covered = state.summary.as_ref().map_or(0, |s| s.to_seq);
    let visible_from = |covered: i64| {
        history[..before]
            .iter()
            .position(|m| m.seq > covered)
            .unwrap_or(before)
    };
    let budget = llm.input_budget();
    let last_offered = inner
        .tools_offered
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(session.as_str())
        .cloned();
    let build = |summary: Option<&str>, from: usize| {
        let visible = &history[from..before];
        // The tools that fetch back what was cut are offered only once something can be.
        let recover = summary.is_some()
            || visible
                .iter()
                .any(|m| m.role == Role::Tool && worth_cutting(&m.content));
        let tools: Vec<echo_core::ToolSpec> = tools
            .iter()
            .filter(|t| recover || !HISTORY_TOOLS.contains(&t.name.as_str()))
            .cloned()
            .collect();
        // On a small window, only the tools most related to the turn.
        let called: HashSet<String> = visible
            .iter()
            .filter(|m| m.role == Role::Tool)
            .filter_map(|m| m.name.clone())
            .collect();
        let share = inner.config.context.tools_share.get();
        let choice = tool_choice::choose(
            tools,
            &request.input,
            &called,
            (budget as f64 * share) as usize,
            &tokenizer,
            last_offered.as_ref(),
        );
        let prepared = context
            .build(
                TurnInputs {
                    history: visible,
                    summary,
                    bootstrap: &bootstrap,
                    snapshot: &blocks.snapshot,
                    tools: choice.tools,
                    current: &current,
                },
                &tokenizer,
            )
            .map_err(|e| prompt_err(e.to_string()))?;
        Ok::<_, TurnFailure>((prepared, choice.left_out))
    };
    let mut from = visible_from(covered);
    let (mut prepared, mut tools_left_out) = build(summary.as_deref(), from)?;

    let tokens = tokenizer.count_request(&prepared.messages, &prepared.tools);
    let turns_since = state.last_attempt_at_seq.map(|at| {
        history
            .iter()
            .filter(|m| m.role == Role::User && m.seq > at)
            .count() as u32
    });
    let config = &inner.config.context;
    match compress::decide(tokens, budget, config, turns_since) {
        Decision::Fits => {}
        Decision::Cooldown => node.attr("compression", "cooldown"),
        Decision::Compress => {
            let keep = (budget as f64 * config.keep_recent.get()) as usize;
            let visible = &history[from..before];
            let tail = compress::tail_start(visible, keep, &tokenizer);
            if tail == 0 {
                node.attr("compression", "nothing_to_compress");
            } else {
                let mut span = root.child(Level::Node, "compress").await;
                span.attr("tokens_before", tokens);
                span.attr("token_budget", budget);
                span.attr("from_seq", covered);
                let compressor = Compressor {
                    llm: &models.summary,
                    context,
                    store: &inner.store,
                    config,
                    session,
                    turn,
                    span: &span,
                };
                let done = compressor
                    .run(
                        &visible[..tail],
                        summary.clone(),
                        covered,
                        at_seq,
                        &request.input,
                    )
                    .await;
                span.attr("chunks", done.chunks);
                span.attr("to_seq", done.to_seq);
                if done.chunks > 0 {
                    summary = done.summary;
                    covered = done.to_seq;
                    from = visible_from(covered);
                    (prepared, tools_left_out) = build(summary.as_deref(), from)?;
                    if let Err(e) = compress::validate(&prepared.messages) {
                        // Cannot happen with turn-aligned boundaries; say so loudly if it does.
                        tracing::error!(error = %e, "reassembled request is invalid");
                        span.degrade("invalid_sequence");
                        span.attr("invalid", e);
                    }
                    span.attr(
                        "tokens_after",
                        tokenizer.count_request(&prepared.messages, &prepared.tools),
                    );
                    span.attr(
                        "messages_archived",
                        history[..before]
                            .iter()
                            .filter(|m| m.seq <= covered)
                            .count(),
                    );
                }
                let status = match &done.failure {
                    Some(failure) => {
                        span.degrade("summary_failed");
                        span.set_error(failure);
                        events.emit(TurnEvent::Degraded {
                            reason: "summary_failed".into(),
                            detail: format!(
                                "the history could not be summarised ({failure}); older messages are trimmed instead"
                            ),
                        });
                        SpanStatus::Error
                    }
                    None => SpanStatus::Ok,
                };
                span.finish(status).await;
                node.attr(
                    "compression",
                    if done.chunks > 0 {
                        "compressed"
                    } else {
                        "failed"
                    },
                );
            }
        }
    }
    node.attr("summary_to_seq", covered);
    node.attr("messages", prepared.messages.len());
    node.attr("tools", prepared.tools.len());
    {
        let mut offered = inner
            .tools_offered
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if tools_left_out.is_empty() {
            offered.remove(session.as_str());
        } else {
            let last = tool_choice::LastChoice {
                offered: prepared.tools.iter().map(|t| t.name.clone()).collect(),
                left_out: tools_left_out.clone(),
            };
            offered.insert(session.as_str().to_owned(), last);
        }
    }
    if !tools_left_out.is_empty() {
        node.attr("tools_left_out", tools_left_out.clone());
        node.degrade("tools_trimmed");
    }
    node.attr("token_budget", budget);
    node.attr(
        "tokens_by_block",
        serde_json::to_value(prepared.blocks).unwrap_or_default(),
    );
    Ok(TurnSetup {
        prepared,
        llm,
        current,
    })
}

/// The optional planner: one short call whose answer is appended to the current message.
/// Failure is traced and otherwise ignored.
async fn plan(
    engine: &Engine,
    llm: &LlmClient,
    context: &ContextStage<'_>,
    input: &str,
    task: TaskType,
    tools: &[echo_core::ToolSpec],
    root: &Span,
) -> Option<String> {
    let mut span = root.child(Level::Node, "planner").await;
    span.attr("task_type", task.as_str());
    let messages = match context.plan(input, task.as_str(), tools) {
        Ok(m) => m,
        Err(e) => {
            span.degrade("planner_failed");
            span.set_error(&e.to_string());
            span.finish(SpanStatus::Error).await;
            return None;
        }
    };
    let request = ChatRequest {
        messages,
        tools: Vec::new(),
        max_tokens: engine.config.planner.max_tokens,
        temperature: Some(0.0),
        tool_choice: echo_llm::ToolChoice::Auto,
    };
    let mut ignore = |_| {};
    let outcome = llm
        .chat(&request, &CancellationToken::new(), &mut ignore)
        .await;
    let (attempts, response) = match &outcome {
        Ok(r) => (&r.attempts, Some(r)),
        Err(f) => (&f.attempts, None),
    };
    crate::model_calls::record_attempts(&span, "planner", &request, attempts, response).await;
    let plan = match outcome {
        Ok(r) => {
            let (visible, _) = crate::think::strip_think(&r.text);
            let plan: String = visible.trim().chars().take(PLAN_CHARS).collect();
            (!plan.is_empty())
                .then_some(plan)
                .ok_or_else(|| "the planner returned nothing".to_string())
        }
        Err(f) => Err(f.error.to_string()),
    };
    match plan {
        Ok(plan) => {
            span.attr("plan", plan.clone());
            span.finish(SpanStatus::Ok).await;
            Some(plan)
        }
        Err(e) => {
            span.degrade("planner_failed");
            span.set_error(&e);
            span.finish(SpanStatus::Error).await;
            None
        }
    }
}

/// The memory blocks of this turn's request. Memory trouble never fails a turn: it is
/// logged, flagged on the context span, and the turn goes on without memories.
async fn memory_blocks(
    engine: &Engine,
    session: &SessionId,
    input: &str,
    events: &TurnEvents,
    node: &mut Span,
) -> MemoryBlocks {
    let inner = engine;
    if !inner.config.memory.enabled {
        return MemoryBlocks::default();
    }
    let semantic = inner.semantic().await;
    let neighbours = semantic.index().map(|s| s as &dyn echo_memory::Neighbours);
    let mut span = node
        .child_of(SpanKind::MemoryRead, Level::Call, "memory_recall")
        .await;
    let found = memory::blocks_for_turn(&inner.memory, session.as_str(), input, neighbours).await;
    match &found {
        Ok((blocks, info)) => {
            let ids: Vec<String> = blocks
                .snapshot
                .iter()
                .chain(&blocks.recalled)
                .map(|m| m.id.clone())
                .collect();
            span.attr("memory_ids", ids);
            span.attr("semantic", info.used_vectors);
            span.finish(SpanStatus::Ok).await;
        }
        Err(e) => {
            span.set_error(&e.to_string());
            span.finish(SpanStatus::Error).await;
        }
    }
    match found {
        Ok((blocks, info)) => {
            node.attr("memory_snapshot", blocks.snapshot.len());
            node.attr(
                "memory_recalled",
                blocks
                    .recalled
                    .iter()
                    .map(|m| m.id.clone())
                    .collect::<Vec<_>>(),
            );
            node.attr("memory_semantic", info.used_vectors);
            if !blocks.recalled.is_empty() {
                events.emit(TurnEvent::MemoryRecalled {
                    memories: blocks
                        .recalled
                        .iter()
                        .map(|m| RecalledMemory {
                            id: m.id.clone(),
                            content: m.content.clone(),
                            tier: m.tier,
                            source: m.source,
                        })
                        .collect(),
                    semantic: info.used_vectors,
                });
            }
            blocks
        }
        Err(e) => {
            tracing::warn!(error = %e, "memory unavailable for this turn");
            node.degrade("memory_unavailable");
            node.attr("memory_error", e.to_string());
            MemoryBlocks::default()
        }
    }
}

/// Tools offered to the model in this session: the registry minus what settings switch off
/// and what a rule denies outright (the model never sees those).
async fn offered_tools(inner: &Engine, session: &SessionId) -> Vec<echo_core::ToolSpec> {
    let rules = inner.gate.rules_for(session.as_str()).await;
    inner
        .tools
        .specs_where(|name, _| inner.gate.policy.offered(name, &rules, session.as_str()))
}
