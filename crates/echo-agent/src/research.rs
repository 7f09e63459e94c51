//! The research path: a question with many constraints answered as a cited report, by a
//! graph of nodes with explicit state instead of the ReAct loop. `turn.rs` sends a turn here
//! when triage (`research/triage.rs`) says so.
//!
//! # The graph
//!
//! **plan** (one forced `research_plan` call: sub-questions, each with what would answer it)
//! → per sub-question, concurrently: **search** (the configured `web_search` service) →
//! **read** each of the first `pages_per_question` results (fetched as `web_fetch` does,
//! then one forced `research_notes` call: quotes copied from the page, each kept only if it
//! is in the page word for word) → **write** (one call: a short answer first, sections, a
//! numbered citation after every claim, what could not be found) → **check** (every citation
//! names a note; one that names none is taken out and counted; the sources list, each note's
//! quote with its URL and retrieval time, is appended by the engine, not the model).
//!
//! Searches and page fetches pass the approval gate like the tools they are (`web_search`,
//! `web_fetch`: rules, asking, the audit log). Every node is a `research:<node>` span of the
//! turn with its model calls inside; progress goes out as `ResearchProgress` events.
//!
//! # Checkpoints, failures, limits
//!
//! The state (`research/state.rs`) is written to SQLite after every node, so a run whose
//! process died is resumed by a later turn (`echod ask --resume <turn>`) from the last node
//! that finished; no finished node runs again. A node that fails is tried again
//! `retries` times with back-off (each try within `node_timeout_secs`), then served from the
//! session's cache of earlier answers, then skipped with the gap stated in the report. The
//! run has `time_limit_secs` and `max_model_calls`; reaching either, or the person's Stop,
//! ends it in a partial report built from the notes gathered so far (no model call), so a
//! run never ends in silence. Each fallback is a degradation on its span and a `Degraded`
//! event: `research_retry`, `research_cache`, `research_node_skipped`, `partial_report`
//! (the call budget's end is a partial report too), `citation_unresolved`.

mod cite;
mod files;
mod nodes;
mod recall;
mod report;
pub(crate) mod state;
mod support;
pub(crate) mod triage;

use crate::approval::ApprovalMode;
use crate::engine::Engine;
use crate::error::ApiError;
use crate::events::TurnEvents;
use crate::pipeline::TurnFailure;
use crate::pipeline::context::ContextStage;
use crate::pipeline::inference::InferenceResult;
use crate::turn::run::RunContext;
use crate::wire::{ResearchProgress, SubQuestionProgress, TurnEvent};
use echo_core::trace::Span;
use echo_core::vocab::{Degradation, ResearchPhase};
use echo_core::{SessionId, StoreError, TurnErrorCode, TurnId, Usage};
use echo_llm::LlmClient;
use state::{ResearchState, RunStore};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// One research run inside its turn: what every node reads and writes.
pub(crate) struct Run<'a> {
    pub engine: &'a Arc<Engine>,
    pub asked: Asked<'a>,
    pub llm: Arc<LlmClient>,
    pub search: echo_tools::WebSearch,
    pub context: ContextStage<'a>,
    pub session: &'a SessionId,
    pub turn: &'a TurnId,
    pub events: &'a TurnEvents,
    pub root: &'a Span,
    /// Cancelled by the person's Stop or the time limit: the run ends in a partial report.
    pub stop: CancellationToken,
    pub store: RunStore,
    pub state: Mutex<ResearchState>,
    /// Serialises checkpoint writes, so the last one written is the newest state.
    saving: tokio::sync::Mutex<()>,
    calls: AtomicU32,
    usage: Mutex<Usage>,
    started: Instant,
    /// Why the run stopped early, if it did.
    stopped: Mutex<Option<String>>,
}

impl Run<'_> {
    /// The state, locked briefly (never across an await).
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, ResearchState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the state after a node named `node` finished.
    pub(crate) async fn checkpoint(&self, node: &str) {
        let _one_at_a_time = self.saving.lock().await;
        let state = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if !node.is_empty() {
                state.finished.push(node.to_string());
            }
            state.clone()
        };
        if let Err(e) = self.store.save(&state, false).await {
            tracing::warn!(error = %e, "cannot save a research checkpoint");
        }
        let phase = if state.report.is_some() {
            ResearchPhase::Checking
        } else {
            ResearchPhase::Gathering
        };
        self.progress(phase);
    }

    /// Sends where the run is.
    pub(crate) fn progress(&self, phase: ResearchPhase) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let pages = self.engine.config.research.pages_per_question as usize;
        let elapsed_ms = self.started.elapsed().as_millis() as u64;
        let progress = progress_of(&state, pages, &self.store.id, phase, elapsed_ms);
        self.events.emit(TurnEvent::ResearchProgress { progress });
    }

    /// Takes one model call from the budget; `false` (and the run stops) when it is spent.
    pub(crate) fn take_call(&self) -> bool {
        let max = self.engine.config.research.max_model_calls;
        if self.calls.fetch_add(1, Ordering::SeqCst) < max {
            return true;
        }
        self.stop_early(format!("the budget of {max} model calls was spent"));
        false
    }

    /// Adds a call's tokens to the turn's.
    pub(crate) fn used(&self, usage: Usage) {
        let mut total = self.usage.lock().unwrap_or_else(|p| p.into_inner());
        total.add(usage);
    }

    /// Why the run stops early: the person's Stop, or the reason given to `stop_early`;
    /// `None` while it runs on.
    pub(crate) fn stopped(&self) -> Option<String> {
        if !self.stop.is_cancelled() {
            return None;
        }
        let why = self
            .stopped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        Some(why.unwrap_or_else(|| "stopped by the person".into()))
    }

    /// Ends the gathering: the report is made from what is there.
    pub(crate) fn stop_early(&self, why: String) {
        let mut stopped = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        if stopped.is_none() {
            *stopped = Some(why);
        }
        self.stop.cancel();
    }

    /// Says a fallback happened: on the span's trace and to the front end.
    pub(crate) fn degraded(&self, span: &mut Span, reason: Degradation, detail: String) {
        span.degrade(reason);
        self.events.emit(TurnEvent::Degraded { reason, detail });
    }
}

/// Where a run with `state` is: its plan, each sub-question's state and counts.
fn progress_of(
    state: &ResearchState,
    pages: usize,
    run_id: &str,
    phase: ResearchPhase,
    elapsed_ms: u64,
) -> ResearchProgress {
    let phase = match phase {
        ResearchPhase::Gathering if state.plan.is_none() => ResearchPhase::Planning,
        other => other,
    };
    let plan = state.plan.as_deref().unwrap_or_default();
    let subs: Vec<SubQuestionProgress> = plan
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let sub = state.subs.get(i);
            SubQuestionProgress {
                question: q.question.clone(),
                state: state.sub_state(i, pages),
                found: sub.and_then(|s| s.found.as_ref()).map_or(0, |f| f.len()) as u32,
                read: sub.map_or(0, |s| s.reads.len()) as u32,
            }
        })
        .collect();
    ResearchProgress {
        run_id: run_id.to_string(),
        phase,
        sources_found: subs.iter().map(|s| s.found).sum(),
        sources_read: subs.iter().map(|s| s.read).sum(),
        notes: state.notes().len() as u32,
        sub_questions: subs,
        elapsed_ms,
    }
}

/// The finished research runs of a session, by the turn that answered with each report: what
/// the chat shows on a report loaded from history.
pub(crate) async fn reports(
    engine: &Engine,
    session: &SessionId,
) -> Result<HashMap<String, ResearchProgress>, StoreError> {
    let pages = engine.config.research.pages_per_question as usize;
    let runs = RunStore::finished_in(engine.store.pool(), session).await?;
    Ok(runs
        .into_iter()
        .map(|(turn, id, state, elapsed)| {
            let progress = progress_of(&state, pages, &id, ResearchPhase::Done, elapsed);
            (turn, progress)
        })
        .collect())
}

/// The web search service research uses, or why research cannot run.
fn search_service(engine: &Engine) -> Result<echo_tools::WebSearch, TurnFailure> {
    let unavailable = |message: String| TurnFailure {
        code: TurnErrorCode::ResearchUnavailable,
        message,
        partial_text: String::new(),
        interrupted: false,
        usage: Usage::default(),
    };
    let search = engine.search();
    match (&search.service, &search.problem) {
        (Some(service), _) => Ok(service.clone()),
        (None, Some(problem)) => Err(unavailable(format!(
            "research needs a web search service: {problem}"
        ))),
        (None, None) => Err(unavailable(
            "research needs a web search service: add one in Settings → Web search, with \
             `echod search set`, or in config.toml's [search] (or ECHO_SEARCH_KIND and \
             ECHO_SEARCH_URL)"
                .into(),
        )),
    }
}

/// The question of the unfinished run that turn `from` of the session named `session` left,
/// with the id of that turn's user message: what a turn resuming it asks and replaces. An
/// error when there is no such run.
pub(crate) async fn unfinished(
    engine: &Engine,
    session: &str,
    from: &str,
) -> Result<(String, Option<String>), ApiError> {
    let none = || ApiError::InvalidInput {
        what: "resume",
        message: format!("turn {from:?} of this session left no unfinished research"),
    };
    let session = engine
        .store
        .session_by_name(session)
        .await?
        .ok_or_else(none)?;
    RunStore::unfinished(engine.store.pool(), &session, from)
        .await?
        .ok_or_else(none)
}

/// What a research run is asked, from its turn's request.
pub(crate) struct Asked<'a> {
    /// The question.
    pub input: &'a str,
    /// The turn whose unfinished run this one resumes.
    pub resume: Option<&'a str>,
    pub approvals: ApprovalMode,
    pub automation: Option<&'a RunContext>,
    /// A temporary chat's: memories are read only if it allows it, and never touched.
    pub temporary: Option<echo_core::TemporaryChat>,
    /// The session's project: its memories are read beside the global ones, and its
    /// instructions stand in the plan's and the report's requests.
    pub project: Option<&'a echo_core::store::Project>,
}

impl Asked<'_> {
    /// The id of the session's project, if it belongs to one.
    pub fn project_id(&self) -> Option<&str> {
        self.project.map(|p| p.id.as_str())
    }
}

/// Runs (or resumes) the research of `request` in its turn; the report as the turn's
/// answer, the tokens and the model.
pub(crate) async fn run(
    engine: &Arc<Engine>,
    asked: Asked<'_>,
    (session, turn): (&SessionId, &TurnId),
    context: ContextStage<'_>,
    events: &TurnEvents,
    cancel: &CancellationToken,
    root: &Span,
) -> Result<InferenceResult, TurnFailure> {
    let search = search_service(engine)?;
    let store_failed = |e: echo_core::StoreError| {
        TurnFailure::internal(TurnErrorCode::Store, e.to_string(), Usage::default())
    };
    let pool = engine.store.pool();
    let resumed = match asked.resume {
        Some(from) => RunStore::take_over(pool, session, from, turn)
            .await
            .map_err(store_failed)?,
        None => None,
    };
    let (store, state) = match resumed {
        Some(found) => found,
        None => {
            let state = ResearchState::new(asked.input);
            let store = RunStore::create(pool, session, turn, &state)
                .await
                .map_err(store_failed)?;
            (store, state)
        }
    };
    let models = engine.models();
    let (llm, _) = models.route(echo_core::config::TaskType::Research);
    let run = Run {
        engine,
        asked,
        llm,
        search,
        context,
        session,
        turn,
        events,
        root,
        stop: cancel.child_token(),
        store,
        state: Mutex::new(state),
        saving: tokio::sync::Mutex::new(()),
        calls: AtomicU32::new(0),
        usage: Mutex::new(Usage::default()),
        started: Instant::now(),
        stopped: Mutex::new(None),
    };
    let limit = Duration::from_secs_f64(engine.config.research.time_limit_secs);
    let graph = nodes::graph(&run);
    tokio::pin!(graph);
    // The time limit stops the gathering; the graph then ends in a partial report.
    let text = tokio::select! {
        text = &mut graph => text,
        () = tokio::time::sleep(limit) => {
            run.stop_early(format!("the time limit of {}s was reached", limit.as_secs()));
            graph.await
        }
    };
    let usage = *run.usage.lock().unwrap_or_else(|p| p.into_inner());
    Ok(InferenceResult {
        text,
        reasoning: String::new(),
        usage,
        model: run.llm.primary_model().to_string(),
    })
}
