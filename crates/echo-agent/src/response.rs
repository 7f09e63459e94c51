//! ResponseStage: the commit boundary. Strip `<think>`, save the final assistant message and
//! complete the turn, THEN start background jobs, THEN publish `Final` — exactly once, which
//! the type system enforces by consuming the publisher.

use crate::background::{Background, JobInput};
use crate::events::TurnEvents;
use crate::inference::{InferenceResult, TurnFailure, join_reasoning};
use crate::think::strip_think;
use echo_core::store::{Store, TurnStatus};
use echo_core::trace::Tracer;
use echo_core::{Message, SessionId, TurnEvent, TurnId};

/// Publishes the final answer; consumed on use, so a turn cannot publish twice.
pub(crate) struct FinalPublisher {
    events: TurnEvents,
}

impl FinalPublisher {
    pub(crate) fn new(events: TurnEvents) -> Self {
        Self { events }
    }

    fn publish(self, text: String) {
        self.events.emit(TurnEvent::Final { text });
    }
}

/// Inputs of the commit.
pub(crate) struct Commit<'a> {
    pub store: &'a Store,
    pub tracer: &'a Tracer,
    pub background: &'a Background,
    pub session: &'a SessionId,
    pub turn: &'a TurnId,
    pub root_span: &'a str,
    pub input: &'a str,
}

/// Saves the answer, completes the turn, starts background jobs and publishes `Final`.
/// Returns the visible answer.
pub(crate) async fn finalize(
    commit: Commit<'_>,
    result: &InferenceResult,
    publisher: FinalPublisher,
) -> Result<String, TurnFailure> {
    let (visible, think) = strip_think(&result.text);
    let reasoning = join_reasoning(&result.reasoning, &think);
    let save = async {
        commit
            .store
            .append_message(
                commit.session,
                Some(commit.turn),
                &Message::assistant(visible.clone()),
                Some(&reasoning),
                false,
            )
            .await?;
        commit
            .store
            .finish_turn(
                commit.turn,
                TurnStatus::Completed,
                Some(&result.model),
                None,
                result.usage,
            )
            .await
    };
    save.await.map_err(|e| {
        TurnFailure::internal(
            "store",
            format!("cannot save the answer: {e}"),
            result.usage,
        )
    })?;
    commit.background.after_turn(JobInput {
        store: commit.store.clone(),
        tracer: commit.tracer.clone(),
        session: commit.session.clone(),
        turn: commit.turn.clone(),
        root_span: commit.root_span.to_string(),
        input: commit.input.to_string(),
    });
    publisher.publish(visible.clone());
    Ok(visible)
}
