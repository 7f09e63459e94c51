//! Trace spans: Turn → Node → Call, stored in SQLite.
//!
//! A span is written when it starts and updated when it ends, with its real start time and
//! duration, model, tokens, status, error and degradation. Tracing never fails a turn: a
//! write error is logged and the turn goes on. A span dropped without `finish` (its future
//! was cancelled) is closed as `cancelled`.
//!
//! A span may carry a capture: the redactor through which the model calls recorded under it
//! (and under its children) are stored with their exact request and response. It is set where
//! a trace starts (a turn's root, a background job) from the `[trace] capture` setting.
//!
//! # Spans and captures
//!
//! Each span has a `SpanKind` (stage, model, tool, approval, memory read, memory write,
//! background) for the trace viewer's colours and links. Tool spans keep arguments and the
//! result the model saw; approval spans the question, decision and who decided (rule id, user,
//! timeout); the `memory_recall` span and the extraction/consolidation spans list the memory ids
//! they injected or wrote. Node names: `context`, `compress`, `planner`, `inference#N`,
//! `tools#N`, `iteration_limit`, `response`, `background:*`; calls: `model_request` per HTTP
//! attempt, `tool:<name>`; degradations `retry`, `fallback_model`, `max_iterations`; a call on
//! which the built-in model loaded its weights says how long (`model_load_ms`).
//!
//! What each model call sent and received is stored beside its call span (`store/captures.rs`,
//! migration 0010): the request's messages, tools and parameters and the response's text,
//! reasoning, tool calls, usage and finish reason. Every model call of the engine is built and
//! sent as one `model_calls::ModelCall` (echo-agent) and recorded through one function. Messages
//! are content-addressed (`trace_blobs`, BLAKE3 of the message JSON) and a call lists hashes, so
//! a conversation's history is stored once however many calls resend it; a process remembers the
//! blobs it stored (`store/known_blobs.rs`), so a capture sends only its new messages, checked
//! against a count of blob deletions read in the capturing transaction (migration 0017). Headers
//! are never captured; the API key in force is replaced by `[redacted]` before anything is
//! written (`Redactor`). `[trace] capture` switches capture off and `[trace] retention_days`
//! (default 30) bounds it.

use crate::ids::{SpanId, TurnId};
use crate::message::Usage;
use crate::store::{ModelCall, Redactor, SpanRecord, Store};
use crate::time::to_rfc3339;
use crate::vocab::Degradation;
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::vocab::SpanLevel;
pub use crate::vocab::{SpanKind, SpanStatus};

/// Creates spans for turns.
#[derive(Clone, Debug)]
pub struct Tracer {
    store: Store,
}

impl Tracer {
    /// A tracer writing to `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Starts the root span of a turn's trace (the trace id is the turn id).
    pub async fn start_turn(&self, turn: &TurnId, name: &str) -> Span {
        Span::start(
            self.store.clone(),
            turn.as_str(),
            None,
            (SpanKind::Stage, SpanLevel::Turn),
            name,
            None,
        )
        .await
    }

    /// A span that writes nothing, nor do its children and calls: for model calls made for
    /// the person outside any turn (reading pasted text in a memory import), whose input
    /// must not land on disk before the person keeps anything.
    pub fn unrecorded(&self, kind: SpanKind, name: &str) -> Span {
        let mut span = Span::new(self.store.clone(), "", None, (kind, SpanLevel::Node), name);
        span.recorded = false;
        span
    }

    /// Starts a node span for work that happens after the turn ended (a background job),
    /// attached to the turn's root span.
    pub async fn start_detached(
        &self,
        turn: &TurnId,
        parent: &str,
        kind: SpanKind,
        name: &str,
    ) -> Span {
        Span::start(
            self.store.clone(),
            turn.as_str(),
            Some(parent.to_string()),
            (kind, SpanLevel::Node),
            name,
            None,
        )
        .await
    }
}

/// An open span. Set fields, then `finish`.
#[derive(Debug)]
pub struct Span {
    store: Store,
    record: SpanRecord,
    started: Instant,
    finished: bool,
    capture: Option<Arc<Redactor>>,
    /// Whether it is written to the store (see [`Tracer::unrecorded`]).
    recorded: bool,
}

impl Span {
    async fn start(
        store: Store,
        turn: &str,
        parent: Option<String>,
        kinds: (SpanKind, SpanLevel),
        name: &str,
        capture: Option<Arc<Redactor>>,
    ) -> Span {
        let mut span = Span::new(store, turn, parent, kinds, name);
        span.capture = capture;
        if let Err(e) = span.store.insert_span(&span.record).await {
            tracing::warn!(error = %e, span = name, "cannot write trace span");
        }
        span
    }

    fn new(
        store: Store,
        turn: &str,
        parent: Option<String>,
        (kind, level): (SpanKind, SpanLevel),
        name: &str,
    ) -> Span {
        let record = SpanRecord {
            id: SpanId::new().to_string(),
            turn_id: turn.to_string(),
            parent_id: parent,
            level,
            kind,
            name: name.to_string(),
            started_at: to_rfc3339(Utc::now()),
            duration_ms: None,
            status: SpanStatus::Running,
            model: None,
            tokens_in: None,
            tokens_out: None,
            degraded: false,
            degraded_reason: None,
            error: None,
            attrs: serde_json::Value::Object(Default::default()),
        };
        Span {
            store,
            record,
            started: Instant::now(),
            finished: false,
            capture: None,
            recorded: true,
        }
    }

    /// Captures the model calls recorded under this span and its children from now on
    /// (`None`: capture is off).
    pub fn set_capture(&mut self, capture: Option<Arc<Redactor>>) {
        self.capture = capture;
    }

    /// Whether model calls under this span are captured.
    pub fn captures(&self) -> bool {
        self.capture.is_some()
    }

    /// Stores `call` (a call span recorded under this one) with its request and response,
    /// secrets replaced, when capture is on. Like every trace write it never fails the work:
    /// an error is logged.
    pub async fn capture_call(&self, call: &ModelCall) {
        let Some(redactor) = self.capture.as_ref().filter(|_| self.recorded) else {
            return;
        };
        if let Err(e) = self
            .store
            .capture_model_call(&self.record.turn_id, call, redactor)
            .await
        {
            tracing::warn!(error = %e, span = %self.record.name, "cannot capture a model call");
        }
    }

    /// The span's id.
    pub fn id(&self) -> &str {
        &self.record.id
    }

    /// The turn (trace) it belongs to.
    pub fn turn_id(&self) -> &str {
        &self.record.turn_id
    }

    /// The store it writes to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Starts a child span of a stage (context, an iteration, a tool batch, ...).
    pub async fn child(&self, level: SpanLevel, name: &str) -> Span {
        self.child_of(SpanKind::Stage, level, name).await
    }

    /// Starts a child span of the given kind.
    pub async fn child_of(&self, kind: SpanKind, level: SpanLevel, name: &str) -> Span {
        if !self.recorded {
            let parent = Some(self.record.id.clone());
            let mut span = Span::new(self.store.clone(), "", parent, (kind, level), name);
            span.recorded = false;
            return span;
        }
        Span::start(
            self.store.clone(),
            &self.record.turn_id,
            Some(self.record.id.clone()),
            (kind, level),
            name,
            self.capture.clone(),
        )
        .await
    }

    /// Records a child call span that already happened (e.g. one HTTP attempt of a model call)
    /// and returns its id.
    pub async fn record_call(&self, call: CallRecord<'_>) -> String {
        let mut attrs = call.attrs;
        // Prompt tokens a model reused from an earlier request (the built-in model's prefix
        // cache): the span's attributes say how many, so a trace shows the saving.
        if let (Some(usage), serde_json::Value::Object(map)) = (call.usage, &mut attrs)
            && usage.cached_input_tokens > 0
        {
            map.insert(
                "cached_input_tokens".into(),
                serde_json::json!(usage.cached_input_tokens),
            );
        }
        let record = SpanRecord {
            id: SpanId::new().to_string(),
            turn_id: self.record.turn_id.clone(),
            parent_id: Some(self.record.id.clone()),
            level: SpanLevel::Call,
            kind: call.kind,
            name: call.name.to_string(),
            started_at: to_rfc3339(call.started_at),
            duration_ms: Some(call.duration.as_secs_f64() * 1000.0),
            status: if call.error.is_some() {
                SpanStatus::Error
            } else {
                SpanStatus::Ok
            },
            model: call.model.map(String::from),
            tokens_in: call.usage.map(|u| u.input_tokens as i64),
            tokens_out: call.usage.map(|u| u.output_tokens as i64),
            degraded: call.degraded_reason.is_some(),
            degraded_reason: call.degraded_reason.map(|r| r.as_str().to_string()),
            error: call.error.map(String::from),
            attrs,
        };
        if self.recorded
            && let Err(e) = self.store.insert_span(&record).await
        {
            tracing::warn!(error = %e, span = call.name, "cannot write trace span");
        }
        record.id
    }

    /// Sets the model.
    pub fn set_model(&mut self, model: &str) {
        self.record.model = Some(model.to_string());
    }

    /// Sets token usage.
    pub fn set_usage(&mut self, usage: Usage) {
        self.record.tokens_in = Some(usage.input_tokens as i64);
        self.record.tokens_out = Some(usage.output_tokens as i64);
    }

    /// Flags a degradation; several reasons are joined with `,`.
    pub fn degrade(&mut self, reason: Degradation) {
        let reason = reason.as_str();
        self.record.degraded = true;
        match &mut self.record.degraded_reason {
            Some(r) if r.split(',').any(|x| x == reason) => {}
            Some(r) => {
                r.push(',');
                r.push_str(reason);
            }
            None => self.record.degraded_reason = Some(reason.to_string()),
        }
    }

    /// Whether a degradation was flagged.
    pub fn is_degraded(&self) -> bool {
        self.record.degraded
    }

    /// Records an error message (the status is given at `finish`).
    pub fn set_error(&mut self, error: &str) {
        self.record.error = Some(error.to_string());
    }

    /// Sets a structured attribute.
    pub fn attr(&mut self, key: &str, value: impl Into<serde_json::Value>) {
        if let serde_json::Value::Object(map) = &mut self.record.attrs {
            map.insert(key.to_string(), value.into());
        }
    }

    /// Ends the span.
    pub async fn finish(mut self, status: SpanStatus) {
        self.close(status);
        if !self.recorded {
            return;
        }
        if let Err(e) = self.store.finish_span(&self.record).await {
            tracing::warn!(error = %e, span = %self.record.name, "cannot finish trace span");
        }
    }

    fn close(&mut self, status: SpanStatus) {
        self.finished = true;
        self.record.duration_ms = Some(self.started.elapsed().as_secs_f64() * 1000.0);
        self.record.status = status;
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if self.finished || !self.recorded {
            return;
        }
        self.close(SpanStatus::Cancelled);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let store = self.store.clone();
            let record = self.record.clone();
            handle.spawn(async move {
                if let Err(e) = store.finish_span(&record).await {
                    tracing::warn!(error = %e, "cannot close a cancelled trace span");
                }
            });
        }
    }
}

/// A finished call to record with [`Span::record_call`].
#[derive(Debug)]
pub struct CallRecord<'a> {
    /// Span name, e.g. `model_request`.
    pub name: &'a str,
    /// What it covers (a model request, most often).
    pub kind: SpanKind,
    /// Model, if a model call.
    pub model: Option<&'a str>,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// How long it took.
    pub duration: Duration,
    /// Tokens.
    pub usage: Option<Usage>,
    /// Error, if it failed.
    pub error: Option<&'a str>,
    /// Degradation reason, e.g. `retry` or `fallback_model`.
    pub degraded_reason: Option<Degradation>,
    /// Extra fields.
    pub attrs: serde_json::Value,
}
