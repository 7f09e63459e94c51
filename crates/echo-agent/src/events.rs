//! Delivering a turn's events to its front end.

use crate::wire::{EVENT_PROTOCOL_VERSION, EventEnvelope, TurnEvent};
use echo_core::TurnId;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Receives a turn's events in order. The desktop shell forwards them to a channel, the
/// gateway to SSE, the CLI prints them. It must not block for long.
pub type EventHandler = Arc<dyn Fn(EventEnvelope) + Send + Sync>;

/// The event stream of one turn: numbers events and wraps them in envelopes.
#[derive(Clone)]
pub(crate) struct TurnEvents {
    handler: EventHandler,
    turn: TurnId,
    seq: Arc<AtomicU64>,
}

impl TurnEvents {
    pub(crate) fn new(handler: EventHandler, turn: TurnId) -> Self {
        Self {
            handler,
            turn,
            seq: Arc::new(AtomicU64::new(0)),
        }
    }

    pub(crate) fn emit(&self, event: TurnEvent) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        (self.handler)(EventEnvelope {
            v: EVENT_PROTOCOL_VERSION,
            turn_id: self.turn.to_string(),
            seq,
            event,
        });
    }
}
