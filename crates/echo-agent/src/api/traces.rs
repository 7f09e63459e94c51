//! Traces: the turns (filtered), one turn's spans, what a model call sent and received, and a
//! turn exported as a replayable regression case.

use super::Api;
use crate::error::ApiError;
use crate::wire::{
    self, CaseMemory, CaseToolCall, DegradationStats, ModelCall, ReplayCase, Trace, TraceSettings,
    TurnRecord,
};
use echo_core::store::{CapturePrune, TurnFilter};
use echo_core::{Role, SessionId, SpanId, SpanKind, TurnId};

/// Longest retention the settings accept (ten years).
const MAX_RETENTION_DAYS: u32 = 3650;

impl Api {
    /// `[trace]` in force.
    pub fn trace_settings(&self) -> TraceSettings {
        let t = self.inner.trace_config();
        TraceSettings {
            capture: t.capture,
            retention_days: t.retention_days,
            notice_rate: t.notice_rate,
        }
    }

    /// Saves `[trace]` to `config.toml`; the next model call and the next sweep use it.
    pub fn update_trace_settings(
        &self,
        capture: bool,
        retention_days: u32,
        notice_rate: Option<f64>,
    ) -> Result<TraceSettings, ApiError> {
        if retention_days > MAX_RETENTION_DAYS {
            return Err(ApiError::InvalidInput {
                what: "retention_days",
                message: format!("at most {MAX_RETENTION_DAYS} days"),
            });
        }
        let notice_rate = notice_rate.unwrap_or_else(|| self.inner.trace_config().notice_rate);
        if !(0.0..=1.0).contains(&notice_rate) {
            return Err(ApiError::InvalidInput {
                what: "notice_rate",
                message: format!("{notice_rate} is not between 0 and 1"),
            });
        }
        echo_core::config::edit::save_trace_settings(
            &self.inner.config.home,
            capture,
            retention_days,
            notice_rate,
        )?;
        let mut t = self
            .inner
            .trace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        t.capture = capture;
        t.retention_days = retention_days;
        t.notice_rate = notice_rate;
        Ok(TraceSettings {
            capture,
            retention_days,
            notice_rate,
        })
    }

    /// The most recent turns that pass `filter`, newest first.
    pub async fn traces(
        &self,
        filter: &TurnFilter,
        limit: u32,
    ) -> Result<Vec<TurnRecord>, ApiError> {
        for (what, value) in [("since", &filter.since), ("until", &filter.until)] {
            if let Some(v) = value
                && chrono::DateTime::parse_from_rfc3339(v).is_err()
            {
                return Err(ApiError::InvalidInput {
                    what,
                    message: format!("{v:?} is not an RFC 3339 time (e.g. 2026-12-03T10:00:00Z)"),
                });
            }
        }
        let turns = self.inner.store.list_turns(filter, limit.clamp(1, 1000));
        Ok(wire::list(turns.await?))
    }

    /// How often turns fell back since `since` (RFC 3339; default a day ago), by fallback.
    pub async fn trace_stats(&self, since: Option<String>) -> Result<DegradationStats, ApiError> {
        let since = match since {
            Some(v) => {
                chrono::DateTime::parse_from_rfc3339(&v).map_err(|_| ApiError::InvalidInput {
                    what: "since",
                    message: format!("{v:?} is not an RFC 3339 time (e.g. 2026-12-03T10:00:00Z)"),
                })?;
                v
            }
            None => echo_core::time::to_rfc3339(chrono::Utc::now() - chrono::Duration::days(1)),
        };
        let counts = self.inner.store.degradations_since(&since).await?;
        Ok(DegradationStats::new(since, counts))
    }

    /// One turn's trace.
    pub async fn trace(&self, turn_id: &TurnId) -> Result<Trace, ApiError> {
        let turn = self.turn_record(turn_id).await?;
        let spans = wire::list(self.inner.store.spans(turn_id.as_str()).await?);
        Ok(Trace { turn, spans })
    }

    /// What one model call of a turn sent and received. Not found when the span is not a
    /// captured model call of that turn (capture was off, or retention removed it).
    pub async fn trace_call(
        &self,
        turn_id: &TurnId,
        span_id: &SpanId,
    ) -> Result<ModelCall, ApiError> {
        let span_id = span_id.as_str();
        let store = &self.inner.store;
        let not_found = || ApiError::NotFound {
            what: "captured model call",
            id: span_id.into(),
        };
        let spans = store.spans(turn_id.as_str()).await?;
        if !spans.iter().any(|s| s.id == span_id) {
            return Err(not_found());
        }
        store
            .model_call(span_id)
            .await?
            .map(ModelCall::from)
            .ok_or_else(not_found)
    }

    /// A turn as a self-contained regression case (`echod replay` runs it): the input, the
    /// memories that were injected, the main loop's recorded model replies in order, and the
    /// tool trajectory with results.
    pub async fn trace_case(&self, turn_id: &TurnId) -> Result<ReplayCase, ApiError> {
        let store = &self.inner.store;
        let turn = self.turn_record(turn_id).await?;
        let spans = store.spans(turn_id.as_str()).await?;
        let calls = store.model_calls(turn_id.as_str()).await?;
        let parent_name = |span_id: &str| {
            let parent = spans
                .iter()
                .find(|s| s.id == span_id)?
                .parent_id
                .as_deref()?;
            spans
                .iter()
                .find(|s| s.id == parent)
                .map(|s| s.name.as_str())
        };
        // The main loop's calls sit under `inference#N` nodes (extraction, approval
        // explanations and summaries are not part of the turn's trajectory).
        let main: Vec<&echo_core::store::ModelCall> = calls
            .iter()
            .filter(|c| parent_name(&c.span_id).is_some_and(|n| n.starts_with("inference#")))
            .collect();
        let Some(first) = main.first() else {
            return Err(ApiError::InvalidInput {
                what: "turn_id",
                message: format!(
                    "turn {turn_id} has no captured model calls (trace capture was off, or \
                     `[trace] retention_days` removed them), so it cannot be exported as a case"
                ),
            });
        };
        let replies = main
            .iter()
            .filter_map(|c| c.response.clone().map(Into::into))
            .collect();
        let tools_offered = first.request.tools.clone();

        let mut memory_ids = Vec::new();
        for span in spans.iter().filter(|s| s.kind == SpanKind::MemoryRead) {
            if let Some(ids) = span.attrs.get("memory_ids").and_then(|v| v.as_array()) {
                memory_ids.extend(ids.iter().filter_map(|v| v.as_str().map(String::from)));
            }
        }
        let memories = self
            .memory()
            .get_many(&memory_ids)
            .await
            .map_err(super::memory::mem_err)?
            .into_iter()
            .map(|m| CaseMemory {
                content: m.content,
                slot: m.slot,
                pinned: m.pinned,
            })
            .collect();

        let tool_calls = spans
            .iter()
            .filter(|s| s.kind == SpanKind::Tool)
            .map(|s| {
                let text = |key: &str| s.attrs.get(key).and_then(|v| v.as_str()).map(String::from);
                CaseToolCall {
                    name: s.name.strip_prefix("tool:").unwrap_or(&s.name).to_string(),
                    arguments: text("arguments").unwrap_or_default(),
                    result: text("result").unwrap_or_default(),
                    error_kind: text("error_kind"),
                }
            })
            .collect();

        let session = SessionId::from_string(turn.session_id.clone());
        let final_text = store
            .history(&session)
            .await?
            .into_iter()
            .rev()
            .find(|m| {
                m.turn_id.as_deref() == Some(turn_id.as_str())
                    && m.role == Role::Assistant
                    && m.tool_calls.is_empty()
            })
            .map(|m| m.content)
            .unwrap_or_default();

        Ok(ReplayCase {
            format: crate::replay::CASE_FORMAT,
            turn_id: turn.id,
            created_at: turn.created_at,
            input: turn.input,
            max_iterations: self.inner.config.agent.max_iterations,
            tools_offered: wire::list(tools_offered),
            memories,
            replies,
            tool_calls,
            final_text,
        })
    }

    /// Applies `[trace] retention_days` now (or as of `now`): removes older captured model
    /// calls, the messages only they referred to, and older memory reads. Spans stay.
    pub async fn trace_prune(
        &self,
        now: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<CapturePrune, ApiError> {
        let days = self.inner.trace_config().retention_days;
        let now = now.unwrap_or_else(chrono::Utc::now);
        crate::engine::prune_by_retention(&self.inner.store, &self.inner.memory, days, now).await
    }

    async fn turn_record(&self, turn_id: &TurnId) -> Result<TurnRecord, ApiError> {
        self.inner
            .store
            .turn(turn_id.as_str())
            .await?
            .map(TurnRecord::from)
            .ok_or_else(|| ApiError::NotFound {
                what: "turn",
                id: turn_id.as_str().into(),
            })
    }
}
