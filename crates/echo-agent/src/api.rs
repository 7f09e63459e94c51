//! `Api`: the one way into the engine. Front ends call these operations and nothing deeper.
//!
//! A turn: record it (`accepted`), wait for the session (one turn per session at a time,
//! across processes too), commit the user message and mark it `running` before any model
//! call, then ContextStage → InferenceStage → ResponseStage. Turns of different sessions run
//! concurrently.

use crate::background::Background;
use crate::context::{ContextStage, RuntimeInfo};
use crate::error::ApiError;
use crate::events::{EventHandler, TurnEvents};
use crate::inference::{self, TurnFailure, TurnScope};
use crate::instance::Instance;
use crate::prompts::Prompts;
use crate::response::{self, Commit, FinalPublisher};
use echo_core::config::Config;
use echo_core::store::{
    SessionSummary, SpanRecord, StartOutcome, Store, StoredMessage, TurnRecord, TurnStatus,
};
use echo_core::trace::{Span, SpanStatus, Tracer};
use echo_core::{Message, SessionId, TurnEvent, TurnId, Usage};
use echo_llm::LlmClient;
use echo_tools::ToolRegistry;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Longest accepted user input, in bytes.
const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// How often a turn re-checks a session held by another process.
const BUSY_POLL: Duration = Duration::from_millis(100);

/// A request to run one turn.
#[derive(Clone, Debug)]
pub struct TurnRequest {
    /// Session name; created on first use.
    pub session: String,
    /// The user's message.
    pub input: String,
    /// Which front end sends it (`cli`, `desktop`, `quick_ask`, `gateway`, `automation`).
    pub entry_point: String,
}

/// How a turn ended.
#[derive(Clone, Debug, Serialize)]
pub struct TurnOutcome {
    /// Turn id (also the trace id).
    pub turn_id: String,
    /// `completed`, `failed` or `interrupted`.
    pub status: TurnStatus,
    /// The final answer (`completed` only).
    pub answer: Option<String>,
    /// Error code (`failed`/`interrupted`).
    pub error_code: Option<String>,
    /// One line for people (`failed`/`interrupted`).
    pub error: Option<String>,
    /// Tokens used.
    pub usage: Usage,
}

/// A turn's trace: the turn record and its spans.
#[derive(Clone, Debug, Serialize)]
pub struct Trace {
    /// Turn id.
    pub turn_id: String,
    /// Session name.
    pub session: String,
    /// Turn status.
    pub status: String,
    /// The user's input.
    pub input: String,
    /// Model that answered.
    pub model: Option<String>,
    /// Error, if any.
    pub error: Option<String>,
    /// Spans in start order.
    pub spans: Vec<SpanRecord>,
}

struct Inner {
    config: Config,
    store: Store,
    tracer: Tracer,
    llm: LlmClient,
    tools: ToolRegistry,
    prompts: Prompts,
    instance: Instance,
    background: Background,
    workdir: PathBuf,
    session_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// The engine facade; cheap to clone and share between tasks.
#[derive(Clone)]
pub struct Api {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("home", &self.inner.config.home)
            .finish()
    }
}

impl Api {
    /// Opens the engine on `config.home`: the store (migrated), this process's instance lock,
    /// recovery of turns a crashed process left running, the model client and the tools.
    pub async fn open(config: Config) -> Result<Api, ApiError> {
        let home = config.home.clone();
        std::fs::create_dir_all(&home).map_err(|source| ApiError::DataDir {
            path: home.display().to_string(),
            source,
        })?;
        let store = Store::open_in(&home).await?;
        let instance = Instance::acquire(&home).map_err(|source| ApiError::DataDir {
            path: home.join("run").display().to_string(),
            source,
        })?;
        let recovered = store
            .recover_orphans(&|owner| instance.is_alive(owner))
            .await?;
        if !recovered.is_empty() {
            tracing::info!(
                count = recovered.len(),
                "marked turns of ended processes as interrupted"
            );
        }
        instance.sweep_stale();
        let llm = LlmClient::from_config(&config.llm)?;
        let workdir = std::env::current_dir().unwrap_or_else(|_| home.clone());
        Ok(Api {
            inner: Arc::new(Inner {
                tracer: Tracer::new(store.clone()),
                prompts: Prompts::new(home.join("prompts")),
                tools: ToolRegistry::with_builtins(),
                background: Background::default(),
                session_locks: Mutex::new(HashMap::new()),
                config,
                store,
                llm,
                instance,
                workdir,
            }),
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.inner.config
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
        let inner = &self.inner;
        check_session_name(&request.session)?;
        check_input(&request.input)?;
        let session = inner
            .store
            .session_by_name_or_create(&request.session)
            .await?;
        let turn = inner
            .store
            .create_turn(
                &session,
                &request.input,
                &request.entry_point,
                inner.instance.id(),
            )
            .await?;
        let events = TurnEvents::new(events, turn.clone());

        let lock = self.session_lock(&session);
        let _guard = tokio::select! {
            guard = lock.lock() => guard,
            _ = cancel.cancelled() => return self.abandon(&turn, &events).await,
        };
        let user = Message::user(request.input.clone());
        loop {
            let outcome = inner
                .store
                .try_start_turn(&session, &turn, &user, &|owner| {
                    inner.instance.is_alive(owner)
                })
                .await?;
            match outcome {
                StartOutcome::Started => break,
                StartOutcome::Gone => return self.abandon(&turn, &events).await,
                StartOutcome::Busy => tokio::select! {
                    _ = tokio::time::sleep(BUSY_POLL) => {}
                    _ = cancel.cancelled() => return self.abandon(&turn, &events).await,
                },
            }
        }

        let mut root = inner.tracer.start_turn(&turn, "turn").await;
        root.attr("session", request.session.clone());
        root.attr("entry_point", request.entry_point.clone());
        events.emit(TurnEvent::TurnStarted {
            session_id: session.to_string(),
            session_name: request.session.clone(),
        });

        let result = self
            .run_pipeline(&request, &session, &turn, &events, &cancel, &root)
            .await;
        let outcome = match result {
            Ok((answer, usage, model)) => {
                root.set_model(&model);
                root.set_usage(usage);
                TurnOutcome {
                    turn_id: turn.to_string(),
                    status: TurnStatus::Completed,
                    answer: Some(answer),
                    error_code: None,
                    error: None,
                    usage,
                }
            }
            Err(failure) => {
                self.record_failure(&session, &turn, &events, &mut root, failure)
                    .await?
            }
        };
        let status = match outcome.status {
            TurnStatus::Completed => SpanStatus::Ok,
            TurnStatus::Interrupted => SpanStatus::Cancelled,
            _ => SpanStatus::Error,
        };
        let trace_id = turn.to_string();
        let usage = outcome.usage;
        root.finish(status).await;
        events.emit(TurnEvent::TurnFinished {
            status: outcome.status.as_str().into(),
            usage,
            trace_id,
        });
        Ok(outcome)
    }

    async fn run_pipeline(
        &self,
        request: &TurnRequest,
        session: &SessionId,
        turn: &TurnId,
        events: &TurnEvents,
        cancel: &CancellationToken,
        root: &Span,
    ) -> Result<(String, Usage, String), TurnFailure> {
        let inner = &self.inner;
        let context = ContextStage {
            prompts: &inner.prompts,
        };

        // ContextStage
        let mut node = root.child(echo_core::trace::Level::Node, "context").await;
        let history = inner
            .store
            .history(session)
            .await
            .map_err(|e| TurnFailure::internal("store", e.to_string(), Usage::default()))?;
        // The last stored message is this turn's user message, committed at start.
        let before = history.len().saturating_sub(1);
        let prepared = context.build(
            &history[..before],
            &request.input,
            &RuntimeInfo::now(&request.entry_point),
            inner.tools.specs(),
        );
        let prepared = match prepared {
            Ok(p) => p,
            Err(e) => {
                node.set_error(&e.to_string());
                node.finish(SpanStatus::Error).await;
                return Err(TurnFailure::internal(
                    "prompt",
                    e.to_string(),
                    Usage::default(),
                ));
            }
        };
        node.attr("messages", prepared.messages.len());
        node.attr("tools", prepared.tools.len());
        node.finish(SpanStatus::Ok).await;

        // InferenceStage
        let scope = TurnScope {
            config: &inner.config,
            store: &inner.store,
            llm: &inner.llm,
            tools: &inner.tools,
            context,
            session,
            turn,
            events,
            cancel,
            root,
            workdir: &inner.workdir,
        };
        let result = inference::run(&scope, prepared.messages, prepared.tools).await?;

        // ResponseStage
        let mut node = root.child(echo_core::trace::Level::Node, "response").await;
        let commit = Commit {
            store: &inner.store,
            tracer: &inner.tracer,
            background: &inner.background,
            session,
            turn,
            root_span: root.id(),
            input: &request.input,
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

    async fn record_failure(
        &self,
        session: &SessionId,
        turn: &TurnId,
        events: &TurnEvents,
        root: &mut Span,
        failure: TurnFailure,
    ) -> Result<TurnOutcome, ApiError> {
        let store = &self.inner.store;
        let status = if failure.interrupted {
            TurnStatus::Interrupted
        } else {
            TurnStatus::Failed
        };
        if failure.interrupted && !failure.partial_text.trim().is_empty() {
            store
                .append_message(
                    session,
                    Some(turn),
                    &Message::assistant(failure.partial_text.clone()),
                    None,
                    true,
                )
                .await?;
        }
        root.set_error(&failure.message);
        root.attr("partial_chars", failure.partial_text.chars().count());
        root.set_usage(failure.usage);
        store
            .finish_turn(
                turn,
                status,
                None,
                Some((&failure.code, &failure.message)),
                failure.usage,
            )
            .await?;
        events.emit(TurnEvent::Error {
            code: failure.code.clone(),
            message: failure.message.clone(),
        });
        Ok(TurnOutcome {
            turn_id: turn.to_string(),
            status,
            answer: None,
            error_code: Some(failure.code),
            error: Some(failure.message),
            usage: failure.usage,
        })
    }

    /// A turn cancelled while it waited for its session: it never ran.
    async fn abandon(&self, turn: &TurnId, events: &TurnEvents) -> Result<TurnOutcome, ApiError> {
        let message = "the turn was cancelled before it started";
        self.inner
            .store
            .finish_turn(
                turn,
                TurnStatus::Interrupted,
                None,
                Some(("interrupted", message)),
                Usage::default(),
            )
            .await?;
        events.emit(TurnEvent::Error {
            code: "interrupted".into(),
            message: message.into(),
        });
        events.emit(TurnEvent::TurnFinished {
            status: "interrupted".into(),
            usage: Usage::default(),
            trace_id: turn.to_string(),
        });
        Ok(TurnOutcome {
            turn_id: turn.to_string(),
            status: TurnStatus::Interrupted,
            answer: None,
            error_code: Some("interrupted".into()),
            error: Some(message.into()),
            usage: Usage::default(),
        })
    }

    fn session_lock(&self, session: &SessionId) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self
            .inner
            .session_locks
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        locks.entry(session.to_string()).or_default().clone()
    }

    /// Every session, most recently active first.
    pub async fn sessions(&self) -> Result<Vec<SessionSummary>, ApiError> {
        Ok(self.inner.store.list_sessions().await?)
    }

    /// A session's messages in order.
    pub async fn history(&self, session: &str) -> Result<Vec<StoredMessage>, ApiError> {
        let id = self
            .inner
            .store
            .session_by_name(session)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: session.into(),
            })?;
        Ok(self.inner.store.history(&id).await?)
    }

    /// The most recent turns, newest first.
    pub async fn traces(&self, limit: u32) -> Result<Vec<TurnRecord>, ApiError> {
        Ok(self.inner.store.list_turns(limit).await?)
    }

    /// One turn's trace.
    pub async fn trace(&self, turn_id: &str) -> Result<Trace, ApiError> {
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

    /// Waits for background jobs started so far, at most `limit`. Returns whether all ended.
    pub async fn wait_background(&self, limit: Duration) -> bool {
        self.inner.background.wait(limit).await
    }

    /// Closes the store after waiting (bounded) for background jobs.
    pub async fn close(&self) {
        let limit = Duration::from_secs_f64(self.inner.config.agent.background_wait_secs.max(0.0));
        self.wait_background(limit).await;
        self.inner.store.close().await;
    }
}

fn check_session_name(name: &str) -> Result<(), ApiError> {
    let bad = |message: &str| {
        Err(ApiError::InvalidInput {
            what: "session name",
            message: message.into(),
        })
    };
    if name.trim().is_empty() {
        return bad("it is empty");
    }
    if name.chars().count() > 128 {
        return bad("it is longer than 128 characters");
    }
    if name.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    Ok(())
}

fn check_input(input: &str) -> Result<(), ApiError> {
    if input.trim().is_empty() {
        return Err(ApiError::InvalidInput {
            what: "message",
            message: "it is empty".into(),
        });
    }
    if input.len() > MAX_INPUT_BYTES {
        return Err(ApiError::InvalidInput {
            what: "message",
            message: format!(
                "it is {} bytes; the limit is {MAX_INPUT_BYTES}",
                input.len()
            ),
        });
    }
    Ok(())
}
