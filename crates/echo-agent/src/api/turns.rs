//! Turns: check, run and stop, each a call of the turn service ([`crate::turn`]).

use super::Api;
use crate::error::ApiError;
use crate::events::EventHandler;
use crate::turn::request::{TurnOutcome, TurnRequest};
use echo_core::TurnId;
use tokio_util::sync::CancellationToken;

impl Api {
    /// Checks a request the way [`Api::send`] will, so a front end can refuse it before it
    /// starts streaming.
    pub async fn validate(&self, request: &TurnRequest) -> Result<(), ApiError> {
        self.inner.check_turn(request).await
    }

    /// Runs one turn, streaming its events to `events`. Waits while another turn of the same
    /// session runs. Cancelling `cancel` stops the turn (status `interrupted`, partial answer
    /// kept). A model failure is not an `Err`: the outcome says `failed`.
    pub async fn send(
        &self,
        request: TurnRequest,
        events: EventHandler,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ApiError> {
        self.inner.run_turn(request, events, cancel).await
    }

    /// Stops a running turn of this process; its partial answer is kept and the turn ends
    /// `interrupted`.
    pub fn cancel_turn(&self, turn_id: &TurnId) -> Result<(), ApiError> {
        self.inner.cancel_turn(turn_id)
    }

    /// Stops every running turn of this process (quitting); returns how many there were.
    pub fn cancel_all(&self) -> usize {
        self.inner.cancel_all_turns()
    }

    /// How many turns of this process are running.
    pub fn running_turns(&self) -> usize {
        self.inner.running_turns()
    }
}
