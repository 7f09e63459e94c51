//! The turn pipeline: ContextStage (`context.rs`: the only place a model request is
//! assembled, and the turn's preparation: routing, memory recall, planner, compression) →
//! InferenceStage (`inference.rs`: the ReAct loop, tools through the approval gate) →
//! ResponseStage (`response.rs`: save, publish `Final` once, start post-turn jobs).
//!
//! # ContextStage
//!
//! Set up per turn in `context/prepare.rs` (`route`, then `gather` into one `TurnContext`, whose
//! `build` assembles the request and runs again after `compress_history`), it builds the request
//! most stable first: system block (rules → skills index → the user's bootstrap files
//! `AGENTS.md`/`SOUL.md`/`USER.md`/`TOOLS.md` from the data directory → the session's frozen
//! memory snapshot → the rolling summary) → history after the summary (repaired so every tool
//! call has a result and no result is orphaned) → the current user message, whose head is a
//! `<runtime-context>` block (time, time zone, entry point) and the recalled `<memory-context>`,
//! followed by the user's text verbatim (and `[Plan] …` when the optional planner ran).
//!
//! Runtime context and recalled memories change every turn, so they go at the head of the
//! current message rather than the system block (the target picture of the shared
//! architecture puts runtime context third): that keeps the prefix (system + history) stable
//! from one turn to the next for a provider's prefix cache.
//!
//! The turn is classified chat/code/research/planning from markers (`context/routing.rs`, no
//! model call) and routed to `[routing]`'s model for that type. Tools come from the registry
//! minus those switched off or denied outright; `history_search` and `read_tool_output` are
//! offered only once something was compressed or cut; when the definitions would pass
//! `context.tools_share` of the window, only the tools called in the visible history and those
//! most related to the message are offered (`context/tool_choice.rs`, flagged `tools_trimmed`),
//! and the session's next turn keeps that list while it fits. Tool call ids are made unique
//! within the session as they arrive. Every block is counted with the client's tokenizer
//! (`echo_llm::tokens::Tokenizer`) and the counts go on the `context` span.
//!
//! When the request passes `context.compress_at` of the window (and the cooldown allows),
//! `context/compress.rs` folds the middle of the history into the rolling summary with one
//! `summarize_history` call, archiving that segment in SQLite (`history_summaries` + FTS) for
//! `history_search`. A failed summary is recorded (cooldown), flagged `summary_failed`, and the
//! turn goes on. Stored messages are never changed by any of this.
//!
//! Every request of the loop comes from `ContextStage::step_call`, which fits it to the
//! window minus the answer's reserve (`ContextStage::fit`): old tool outputs are shortened
//! (`tool_output.rs`: JSON keeps its shape and fields such as status, error, path and url;
//! text keeps head and tail; the marker names the call id for `read_tool_output`), then the
//! oldest turns leave whole, then the least relevant recalled
//! memories; the system block, tool definitions and the current message are never cut, and if
//! they alone do not fit the turn fails with `context_overflow` (traced as `context_trimmed`).
//!
//! # InferenceStage and ResponseStage
//!
//! InferenceStage streams the model through a `<think>` filter into `Token`/`Reasoning` events.
//! Tool calls are saved with the assistant message, run (consecutive read-only calls
//! concurrently, others in order), and every result is saved (errors, unknown tools, malformed
//! JSON and timeouts included) before the next request. At `max_iterations`, one request without
//! tools asks for a summary (degradation `max_iterations`). ResponseStage strips `<think>`
//! (complete, lone closing, unclosed), saves the answer, marks the turn `completed`, starts
//! background jobs, then publishes `Final`, exactly once, through a publisher consumed on use.
//! `TurnFinished` is always last.

pub(crate) mod context;
pub(crate) mod inference;
pub(crate) mod response;

pub(crate) use inference::TurnFailure;

use crate::engine::{Engine, PostTurn, start_post_turn_jobs};
use crate::events::TurnEvents;
use crate::turn::request::TurnRequest;
use context::ContextStage;
use echo_core::trace::{Span, SpanStatus};
use echo_core::{MessageId, SessionId, TurnId, Usage};
use inference::TurnScope;
use response::{Commit, FinalPublisher};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a turn waits for MCP servers that are still connecting.
const MCP_START_WAIT: Duration = Duration::from_secs(10);

/// Runs a started turn through the three stages; the answer, the usage and the model that
/// answered, or why it stopped.
pub(crate) async fn run(
    engine: &Arc<Engine>,
    request: &TurnRequest,
    session: &SessionId,
    turn: &TurnId,
    events: &TurnEvents,
    cancel: &CancellationToken,
    root: &Span,
) -> Result<(String, Usage, String), TurnFailure> {
    let inner = engine;
    // A one-shot front end may send its turn while MCP servers are still connecting;
    // give them a moment so their tools are there (returns at once when settled).
    inner.mcp_manager().settled(MCP_START_WAIT).await;
    let skills = inner.skills.list();
    let context = ContextStage {
        prompts: &inner.prompts,
        skills: &skills,
    };

    // ContextStage
    let setup =
        context::prepare_turn(engine, request, session, turn, &context, events, root).await?;

    // InferenceStage
    let scope = TurnScope {
        config: &inner.config,
        store: &inner.store,
        llm: &setup.llm,
        current: &setup.current,
        tools: &inner.tools,
        context,
        session,
        turn,
        events,
        cancel,
        root,
        workdir: &inner.workdir,
        gate: &inner.gate,
        approvals: request.approvals,
        automation: request.automation.as_deref(),
    };
    let result = inference::run(&scope, setup.prepared.messages, setup.prepared.tools).await?;

    // ResponseStage
    let mut node = root
        .child(echo_core::trace::SpanLevel::Node, "response")
        .await;
    let jobs_inner = engine.clone();
    let (jobs_session, jobs_turn, jobs_root) =
        (session.clone(), turn.clone(), root.id().to_string());
    let jobs_input = request.input.clone();
    let commit = Commit {
        store: &inner.store,
        session,
        turn,
        extract_by: inner.extracts_memories().then(|| inner.instance.id()),
        start_jobs: Box::new(move |answer: &str, message: &MessageId| {
            start_post_turn_jobs(
                jobs_inner,
                PostTurn {
                    session: jobs_session,
                    turn: jobs_turn,
                    root_span: jobs_root,
                    input: jobs_input,
                    answer: answer.to_string(),
                    message: message.clone(),
                },
            );
        }),
    };
    match response::finalize(commit, &result, FinalPublisher::new(events.clone())).await {
        Ok(answer) => {
            node.finish(SpanStatus::Ok).await;
            Ok((answer, result.usage, result.model))
        }
        Err(failure) => {
            node.set_error(&failure.message);
            node.finish(SpanStatus::Error).await;
            Err(failure)
        }
    }
}
