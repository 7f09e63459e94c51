//! The turn pipeline: ContextStage (`context.rs`: the only place a model request is
//! assembled, and the turn's preparation: routing, memory recall, planner, compression) →
//! InferenceStage (`inference.rs`: the ReAct loop, tools through the approval gate) →
//! ResponseStage (`response.rs`: save, publish `Final` once, start post-turn jobs).

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
    let mut node = root.child(echo_core::trace::Level::Node, "response").await;
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
