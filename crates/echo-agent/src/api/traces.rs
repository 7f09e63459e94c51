//! Traces: the recent turns and one turn's spans.

use super::Api;
use crate::error::ApiError;
use echo_core::TurnId;
use echo_core::store::{SpanRecord, TurnRecord, TurnStatus};
use serde::Serialize;

/// A turn's trace: the turn record and its spans.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct Trace {
    /// Turn id.
    pub turn_id: String,
    /// Session name.
    pub session: String,
    /// Turn status.
    pub status: TurnStatus,
    /// The user's input.
    pub input: String,
    /// Model that answered.
    pub model: Option<String>,
    /// Error, if any.
    pub error: Option<String>,
    /// Spans in start order.
    pub spans: Vec<SpanRecord>,
}

impl Api {
    /// The most recent turns, newest first.
    pub async fn traces(&self, limit: u32) -> Result<Vec<TurnRecord>, ApiError> {
        Ok(self.inner.store.list_turns(limit).await?)
    }

    /// One turn's trace.
    pub async fn trace(&self, turn_id: &TurnId) -> Result<Trace, ApiError> {
        let turn_id = turn_id.as_str();
        let store = &self.inner.store;
        let turn = store
            .turn(turn_id)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "turn",
                id: turn_id.into(),
            })?;
        let spans = store.spans(turn_id).await?;
        Ok(Trace {
            turn_id: turn.id,
            session: turn.session_name,
            status: turn.status,
            input: turn.input,
            model: turn.model,
            error: turn.error,
            spans,
        })
    }
}
