//! The turn service: [`Engine::run_turn`] runs one whole turn, and every way a turn starts
//! goes through it (`Api::send` for the front ends, the automations runner, a replay).
//!
//! A turn: record it (`accepted`), wait for the session (one turn per session at a time,
//! across processes too), commit the user message and mark it `running` before any model
//! call, open the turn's root span and emit `turn_started`, then triage (a `triage` span:
//! the quick path or research, `research/triage.rs`), then ContextStage → InferenceStage
//! ([`crate::pipeline`]) or the research graph (`research.rs`), then ResponseStage, and
//! finish: the turn's status, the span and `turn_finished`. A turn that resumes a research
//! run (`TurnRequest::resuming`) takes the run's question and replaces the turn that left
//! it. Turns of different sessions run concurrently. A turn of this process can be stopped
//! through the running-turns table ([`Engine::cancel_turn`]).
//!
//! # Waiting for the session
//!
//! The turn is recorded as `accepted` with its input first, so nothing is lost even before it
//! runs. Then it waits for its session: an in-process FIFO lock per session, then an atomic
//! check in SQLite (`BEGIN IMMEDIATE`) that no live turn of the session is `running`, which also
//! serialises turns across processes. In the same transaction the turn becomes `running` and
//! the user message is committed, before any model call. Regenerate and edit-and-resend are a
//! turn with `replace_from` (a user message of the session): in that same transaction the
//! message and everything after it get `replaced_by` = this turn, kept in SQLite with their
//! traces, gone from the history the model and the UI see.
//!
//! Failures end the turn `failed` with a code and one line for people; a cancelled turn ends
//! `interrupted` with its partial answer saved as a `partial` message.
//!
//! # Crash safety
//!
//! Each process holds an exclusive lock on `run/<instance>.lock`; turns record their owner
//! instance. A process that opens the data directory marks `accepted`/`running` turns whose
//! owner's lock is free as `interrupted` (and closes their open spans), and closes as cancelled
//! the spans that such an owner's background work (extraction, consolidation, a title) left
//! running in turns that had finished: `echod ask` can leave while an extraction runs. That
//! extraction is not lost: it is recorded as pending under the process running it
//! (`store/extractions.rs` in echo-core, migration 0016) in the transaction that completes the
//! turn (`Store::complete_turn`), until it ends; after each turn a process claims up to four
//! that gone owners left pending (compare-and-set on the owner) and runs them again, behind its
//! own turn's, three attempts in all (`crates/echod/tests/crash.rs`).

pub(crate) mod request;
pub(crate) mod run;

pub use request::{TurnOutcome, TurnRequest};
pub use run::RunContext;

use crate::engine::Engine;
use crate::engine::{PostTurn, SessionLock, start_post_turn_jobs};
use crate::error::ApiError;
use crate::events::{EventHandler, TurnEvents};
use crate::pipeline::TurnFailure;
use crate::pipeline::context::{self, ContextStage};
use crate::pipeline::inference::{self, TurnScope};
use crate::pipeline::response::{self, Commit, FinalPublisher};
use crate::research::{
    self,
    triage::{self, TurnPath},
};
use crate::side;
use crate::wire::TurnEvent;
use echo_core::store::{StartOutcome, TurnStatus};
use echo_core::trace::{Span, SpanKind, SpanLevel, SpanStatus};
use echo_core::{Message, MessageId, SessionId, TurnErrorCode, TurnId, Usage};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a turn re-checks a session held by another process.
const BUSY_POLL: Duration = Duration::from_millis(100);

impl Engine {
    /// Checks a request the way [`Engine::run_turn`] will, so a front end can refuse it
    /// before it starts streaming.
    pub(crate) async fn check_turn(&self, request: &TurnRequest) -> Result<(), ApiError> {
        request.check()?;
        let found = self.store.find_session(&request.session).await?;
        if request.temporary.is_some()
            && let Some(found) = &found
            && found.temporary.is_none()
        {
            return Err(kept_not_temporary(&request.session));
        }
        let asked = self.asked_project(request).await?;
        if let Some(found) = &found {
            same_project(&request.session, found, asked.as_ref())?;
        }
        if let Some(id) = &request.replace_from {
            let Some(found) = &found else {
                return Err(no_such_message(Some(id)));
            };
            self.check_replace_from(&found.id, id).await?;
        }
        Ok(())
    }

    /// The turn's session, created if missing (a temporary chat when the request asks);
    /// `request.temporary` becomes what the session is.
    async fn open_session(&self, request: &mut TurnRequest) -> Result<SessionId, ApiError> {
        let temporary = request.temporary.map(|kind| (kind, self.instance.id()));
        let project = self.asked_project(request).await?;
        let opened = self
            .store
            .open_session(&request.session, temporary, project.as_ref().map(|p| &p.id))
            .await?;
        if request.temporary.is_some() && opened.temporary.is_none() {
            return Err(kept_not_temporary(&request.session));
        }
        same_project(&request.session, &opened, project.as_ref())?;
        request.temporary = opened.temporary;
        request.project = match (project, &opened.project) {
            (Some(project), _) => Some(project),
            (None, Some(id)) => self.store.project(id).await?,
            (None, None) => None,
        };
        Ok(opened.id)
    }

    /// The project the request names, which must exist.
    async fn asked_project(
        &self,
        request: &TurnRequest,
    ) -> Result<Option<echo_core::store::Project>, ApiError> {
        let Some(name) = &request.project_name else {
            return Ok(None);
        };
        match self.store.project_by_name(name).await? {
            Some(project) => Ok(Some(project)),
            None => Err(ApiError::NotFound {
                what: "project",
                id: name.clone(),
            }),
        }
    }

    /// `id` must be a user message in the session's history.
    async fn check_replace_from(&self, session: &SessionId, id: &str) -> Result<(), ApiError> {
        let history = self.store.history(session).await?;
        if history
            .iter()
            .any(|m| m.id == id && m.role == echo_core::Role::User)
        {
            Ok(())
        } else {
            Err(no_such_message(Some(id)))
        }
    }

    /// Runs one turn, streaming its events to `events`. Waits while another turn of the same
    /// session runs. Cancelling `cancel` stops the turn (status `interrupted`, partial answer
    /// kept). A model failure is not an `Err`: the outcome says `failed`.
    pub(crate) async fn run_turn(
        self: &Arc<Self>,
        request: TurnRequest,
        events: EventHandler,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ApiError> {
        let mut request = self.resumed(request).await?;
        request.check()?;
        self.start_query_embedding(&request.input);
        let session = self.open_session(&mut request).await?;
        if let Some(id) = &request.replace_from {
            self.check_replace_from(&session, id).await?;
        }
        let turn = self
            .store
            .create_turn(
                &session,
                &request.input,
                request.entry_point,
                self.instance.id(),
            )
            .await?;
        if let Some(run) = &request.automation {
            // The run links to its session and trace from the start.
            if let Err(e) = run
                .store
                .run_started(&run.run_id, &request.session, turn.as_str())
                .await
            {
                tracing::warn!(error = %e, "recording a run's turn");
            }
        }
        let events = TurnEvents::new(events, turn.clone());
        let _running = Running::register(&self.running, turn.to_string(), cancel.clone());

        let lock = self.session_lock(&session);
        let _guard = tokio::select! {
            guard = lock.lock_for_turn() => guard,
            _ = cancel.cancelled() => return self.abandon(&turn, &events).await,
        };
        if let Some(outcome) = self
            .wait_for_session(&request, &session, &turn, &events, &cancel)
            .await?
        {
            return Ok(outcome);
        }

        let mut root = self.tracer.start_turn(&turn, "turn").await;
        root.set_capture(self.capture());
        root.attr("session", request.session.clone());
        root.attr("entry_point", request.entry_point.as_str());
        events.emit(TurnEvent::TurnStarted {
            session_id: session.to_string(),
            session_name: request.session.clone(),
        });

        let result = stages(self, &request, &session, &turn, &events, &cancel, &root).await;
        let outcome = match result {
            Ok((answer, usage, model)) => {
                let questions = self.follow_ups(&request, &answer, &root, &lock).await;
                if !questions.is_empty() {
                    events.emit(TurnEvent::FollowUps { questions });
                }
                root.set_model(&model);
                root.set_usage(usage);
                TurnOutcome {
                    turn_id: turn.clone(),
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
        root.finish(status).await;
        events.emit(TurnEvent::TurnFinished {
            status: outcome.status,
            usage: outcome.usage.into(),
            trace_id: turn.to_string(),
        });
        Ok(outcome)
    }

    /// Commits the user message and marks the turn `running` once no other process holds the
    /// session. `Some` is how the turn ended instead (cancelled, or its message is gone).
    async fn wait_for_session(
        &self,
        request: &TurnRequest,
        session: &SessionId,
        turn: &TurnId,
        events: &TurnEvents,
        cancel: &CancellationToken,
    ) -> Result<Option<TurnOutcome>, ApiError> {
        let user = Message::user(request.input.clone());
        let replace_from = request
            .replace_from
            .as_deref()
            .map(echo_core::MessageId::from_string);
        loop {
            let outcome = self
                .store
                .try_start_turn(session, turn, &user, replace_from.as_ref(), &|owner| {
                    self.instance.is_alive(owner)
                })
                .await?;
            match outcome {
                StartOutcome::Started => return Ok(None),
                StartOutcome::Gone => return self.abandon(turn, events).await.map(Some),
                StartOutcome::NoSuchMessage => {
                    self.abandon(turn, events).await?;
                    return Err(no_such_message(request.replace_from.as_deref()));
                }
                StartOutcome::Busy => tokio::select! {
                    _ = tokio::time::sleep(BUSY_POLL) => {}
                    _ = cancel.cancelled() => return self.abandon(turn, events).await.map(Some),
                },
            }
        }
    }

    /// `request` made whole when it resumes a research run: the run's question as its input,
    /// research forced, and the turn replacing the one that left the run (its user message
    /// and what followed).
    async fn resumed(&self, mut request: TurnRequest) -> Result<TurnRequest, ApiError> {
        let Some(from) = request.resume.clone() else {
            return Ok(request);
        };
        let (question, message) = research::unfinished(self, &request.session, &from).await?;
        request.input = question;
        request.research = Some(true);
        if message.is_some() {
            request.replace_from = message;
        }
        Ok(request)
    }

    /// The side model's follow-up questions for a completed turn, within `[side]
    /// follow_ups_wait_secs` (after `Final`: the answer never waits); none for an
    /// automation's run, when switched off or without a side model, and none once the next
    /// turn of the session waits for `lock` (the person's next message goes first).
    async fn follow_ups(
        &self,
        request: &TurnRequest,
        answer: &str,
        root: &Span,
        lock: &SessionLock,
    ) -> Vec<String> {
        let side = &self.config.side;
        if !side.follow_ups || request.automation.is_some() {
            return Vec::new();
        }
        let Some(llm) = self.models().side() else {
            return Vec::new();
        };
        let mut span = root
            .child_of(
                SpanKind::Background,
                SpanLevel::Node,
                "background:follow_ups",
            )
            .await;
        let context = ContextStage {
            prompts: &self.prompts,
            skills: &[],
        };
        let exchange = (request.input.as_str(), answer);
        let wait = Duration::from_secs_f64(side.follow_ups_wait_secs);
        let asked = side::follow_ups(&llm, context, &mut span, exchange);
        let questions = tokio::select! {
            asked = tokio::time::timeout(wait, asked) => Some(asked),
            () = lock.next_turn_waits() => None,
        };
        let questions = match questions {
            Some(Ok(questions)) => questions,
            Some(Err(_)) => {
                side::failed(&mut span, "no answer in time");
                Vec::new()
            }
            None => {
                // Not a failure: the person moved on before the questions were ready.
                span.attr("gave_way", "the next turn of the session");
                Vec::new()
            }
        };
        span.finish(SpanStatus::Ok).await;
        questions
    }

    /// Stops a running turn of this process; its partial answer is kept and the turn ends
    /// `interrupted`.
    pub(crate) fn cancel_turn(&self, turn_id: &TurnId) -> Result<(), ApiError> {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        match running.get(turn_id.as_str()) {
            Some(token) => {
                token.cancel();
                Ok(())
            }
            None => Err(ApiError::NotFound {
                what: "running turn",
                id: turn_id.to_string(),
            }),
        }
    }

    /// Stops every running turn of this process (quitting); returns how many there were.
    pub(crate) fn cancel_all_turns(&self) -> usize {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        for token in running.values() {
            token.cancel();
        }
        running.len()
    }

    /// How many turns of this process are running.
    pub(crate) fn running_turns(&self) -> usize {
        self.running.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    async fn record_failure(
        &self,
        session: &SessionId,
        turn: &TurnId,
        events: &TurnEvents,
        root: &mut Span,
        failure: TurnFailure,
    ) -> Result<TurnOutcome, ApiError> {
        let status = if failure.interrupted {
            TurnStatus::Interrupted
        } else {
            TurnStatus::Failed
        };
        if failure.interrupted && !failure.partial_text.trim().is_empty() {
            self.store
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
        self.store
            .finish_turn(
                turn,
                status,
                None,
                Some((failure.code, &failure.message)),
                failure.usage,
            )
            .await?;
        events.emit(TurnEvent::Error {
            code: failure.code,
            message: failure.message.clone(),
        });
        Ok(TurnOutcome {
            turn_id: turn.clone(),
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
        self.store
            .finish_turn(
                turn,
                TurnStatus::Interrupted,
                None,
                Some((TurnErrorCode::Interrupted, message)),
                Usage::default(),
            )
            .await?;
        events.emit(TurnEvent::Error {
            code: TurnErrorCode::Interrupted,
            message: message.into(),
        });
        events.emit(TurnEvent::TurnFinished {
            status: TurnStatus::Interrupted,
            usage: Default::default(),
            trace_id: turn.to_string(),
        });
        Ok(TurnOutcome {
            turn_id: turn.clone(),
            status: TurnStatus::Interrupted,
            answer: None,
            error_code: Some(TurnErrorCode::Interrupted),
            error: Some(message.into()),
            usage: Usage::default(),
        })
    }
}

/// How long a turn waits for MCP servers that are still connecting.
const MCP_START_WAIT: Duration = Duration::from_secs(10);

/// The turn's path, on its `triage` span: the rules, then the planner's verdict (unless
/// `[research] ask_planner` is off) for a question they cannot place.
async fn choose_path(
    engine: &Engine,
    request: &TurnRequest,
    context: &ContextStage<'_>,
    root: &Span,
) -> TurnPath {
    let mut node = root.child(SpanLevel::Node, "triage").await;
    let mut triage = triage::triage(
        &engine.config,
        &request.input,
        request.research,
        engine.search().service.is_some(),
    );
    if triage.unsure && engine.config.research.ask_planner {
        let planner = engine.models().planner.clone();
        triage = triage::ask_planner(&planner, context, &request.input, triage, &mut node).await;
    }
    node.attr("path", triage.path.as_str());
    node.attr("reason", triage.reason);
    node.finish(SpanStatus::Ok).await;
    triage.path
}

/// Runs a started turn through the three stages; the answer, the usage and the model that
/// answered, or why it stopped.
async fn stages(
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

    let result = if choose_path(inner, request, &context, root).await == TurnPath::Research {
        let asked = research::Asked {
            input: &request.input,
            resume: request.resume.as_deref(),
            approvals: request.approvals,
            automation: request.automation.as_deref(),
            temporary: request.temporary,
            project: request.project.as_ref(),
        };
        let ids = (session, turn);
        research::run(engine, asked, ids, context, events, cancel, root).await?
    } else {
        // A project's folders are its conversations' workspace: the first is where relative
        // paths start, and writes stay inside them.
        let roots: Vec<std::path::PathBuf> = request
            .project
            .as_ref()
            .map(|p| p.folders.iter().map(std::path::PathBuf::from).collect())
            .unwrap_or_default();
        let workdir = roots.first().unwrap_or(&inner.workdir);
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
            workdir,
            roots: &roots,
            project_id: request.project.as_ref().map(|p| p.id.as_str()),
            gate: &inner.gate,
            approvals: request.approvals,
            automation: request.automation.as_deref(),
            temporary: request.temporary.is_some(),
        };
        inference::run(&scope, setup.prepared.messages, setup.prepared.tools).await?
    };

    // ResponseStage
    let mut node = root.child(SpanLevel::Node, "response").await;
    let jobs_inner = engine.clone();
    let (jobs_session, jobs_turn, jobs_root) =
        (session.clone(), turn.clone(), root.id().to_string());
    let jobs_input = request.input.clone();
    // A temporary chat teaches memory nothing and needs no title: no job runs after it.
    let kept = request.temporary.is_none();
    let commit = Commit {
        store: &inner.store,
        session,
        turn,
        extract_by: (kept && inner.extracts_memories()).then(|| inner.instance.id()),
        start_jobs: Box::new(move |answer: &str, message: &MessageId| {
            if !kept {
                return;
            }
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

/// A session named with a project must have been created in it.
fn same_project(
    session: &str,
    found: &echo_core::store::OpenedSession,
    asked: Option<&echo_core::store::Project>,
) -> Result<(), ApiError> {
    match asked {
        Some(project) if found.project.as_ref() != Some(&project.id) => {
            Err(ApiError::InvalidInput {
                what: "project",
                message: format!(
                    "{session:?} is not a conversation of project {:?}; a conversation stays in \
                     the project it was started in",
                    project.name
                ),
            })
        }
        _ => Ok(()),
    }
}

fn kept_not_temporary(session: &str) -> ApiError {
    ApiError::InvalidInput {
        what: "session",
        message: format!("{session:?} is a kept conversation; a temporary chat starts a new one"),
    }
}

fn no_such_message(id: Option<&str>) -> ApiError {
    ApiError::InvalidInput {
        what: "replace_from",
        message: format!(
            "{:?} is not a user message in this session's history",
            id.unwrap_or_default()
        ),
    }
}

/// A turn's entry in the running-turns table, removed however the turn ends.
struct Running<'a> {
    table: &'a Mutex<HashMap<String, CancellationToken>>,
    id: String,
}

impl<'a> Running<'a> {
    fn register(
        table: &'a Mutex<HashMap<String, CancellationToken>>,
        id: String,
        token: CancellationToken,
    ) -> Self {
        table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), token);
        Running { table, id }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}
