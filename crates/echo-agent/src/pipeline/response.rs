//! ResponseStage: the commit boundary. Strip `<think>`, save the final assistant message and
//! complete the turn, THEN start background jobs, THEN publish `Final` — exactly once, which
//! the type system enforces by consuming the publisher.

use crate::events::TurnEvents;
use crate::pipeline::inference::{InferenceResult, TurnFailure, join_reasoning};
use crate::think::strip_think;
use crate::wire::TurnEvent;
use echo_core::store::{CompletedAnswer, Store};
use echo_core::{Message, MessageId, SessionId, TurnId};

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

/// Starts the turn's background jobs with the saved answer and its message id.
pub(crate) type StartJobs<'a> = Box<dyn FnOnce(&str, &MessageId) + Send + 'a>;

/// Inputs of the commit.
pub(crate) struct Commit<'a> {
    pub store: &'a Store,
    pub session: &'a SessionId,
    pub turn: &'a TurnId,
    /// The process that will extract memories from the turn, when one will: the extraction
    /// is recorded as pending with the answer.
    pub extract_by: Option<&'a str>,
    pub start_jobs: StartJobs<'a>,
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
    let answer = Message::assistant(visible.clone());
    let save = commit.store.complete_turn(
        CompletedAnswer {
            session: commit.session,
            turn: commit.turn,
            message: &answer,
            reasoning: Some(&reasoning),
            model: &result.model,
            usage: result.usage,
        },
        commit.extract_by,
    );
    let message_id = save.await.map_err(|e| {
        TurnFailure::internal(
            echo_core::TurnErrorCode::Store,
            format!("cannot save the answer: {e}"),
            result.usage,
        )
    })?;
    (commit.start_jobs)(&visible, &message_id);
    publisher.publish(visible.clone());
    Ok(visible)
}
