//! ContextStage's turn setup: classify the turn and pick its model, gather memory, bootstrap
//! files and the optional plan, build the first request, and compress the history into the
//! rolling summary when the request grows past `context.compress_at` of the window. Every
//! decision and cut lands on the `context` span (and a `compress` / `planner` span).

use super::compress::{self, Compressor, Decision};
use super::{BlockTokens, ContextStage, CurrentTurn, Prepared, RuntimeInfo};
use super::{TurnInputs, sanitize_history};
use super::{routing, tool_choice};
use crate::bootstrap::Injected;
use crate::engine::{Engine, Models};
use crate::events::TurnEvents;
use crate::history_tools::HISTORY_TOOLS;
use crate::model_calls::ModelCall;
use crate::pipeline::TurnFailure;
use crate::prompts::{LOST_RESULT, PromptError, PromptName};
use crate::tool_output::worth_cutting;
use crate::turn::request::TurnRequest;
use crate::wire::TurnEvent;
use echo_core::config::TaskType;
use echo_core::trace::SpanLevel;
use echo_core::trace::{Span, SpanStatus};
use echo_core::vocab::Degradation;
use echo_core::{Message, Role, TurnErrorCode};
use echo_core::{SessionId, TurnId, Usage};
use echo_llm::LlmClient;
use echo_llm::tokens::Tokenizer;
use echo_memory::Memory;
use std::collections::HashSet;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

mod recall;
use recall::memory_blocks;

/// The turn's first request, the model that will answer it and the current message's parts.
pub(crate) struct TurnSetup {
    pub prepared: Prepared,
    pub llm: Arc<LlmClient>,
    /// The current message in its forms with fewer recalled memories, for fitting each call.
    pub current: Vec<String>,
}

/// Characters of a plan that reach the request.
const PLAN_CHARS: usize = 2_000;

/// Everything before the first model call of a turn. `history` ends with this turn's user
/// message (committed at start).
pub(crate) async fn prepare_turn(
    engine: &Engine,
    request: &TurnRequest,
    session: &SessionId,
    turn: &TurnId,
    context: &ContextStage<'_>,
    events: &TurnEvents,
    root: &Span,
) -> Result<TurnSetup, TurnFailure> {
    let mut node = root.child(SpanLevel::Node, "context").await;
    let turn = TurnRef {
        session,
        id: turn,
        events,
        root,
    };
    let result = prepare_in(engine, request, &turn, context, &mut node).await;
    match &result {
        Ok(_) => node.finish(SpanStatus::Ok).await,
        Err(failure) => {
            node.set_error(&failure.message);
            node.finish(SpanStatus::Error).await;
        }
    }
    result
}

async fn prepare_in(
    engine: &Engine,
    request: &TurnRequest,
    turn: &TurnRef<'_>,
    context: &ContextStage<'_>,
    node: &mut Span,
) -> Result<TurnSetup, TurnFailure> {
    let history = engine
        .store
        .history(turn.session)
        .await
        .map_err(store_err)?;
    let route = route(engine, request, node);
    let cx = gather(engine, request, turn, context, history, route, node).await?;
    let state = engine
        .store
        .compression_state(turn.session)
        .await
        .map_err(store_err)?;
    let summary = state.summary.as_ref().map(|s| s.summary.clone());
    let mut covered = state.summary.as_ref().map_or(0, |s| s.to_seq);
    let (mut prepared, mut tools_left_out) = cx.build(summary.as_deref(), covered)?;

    let tokenizer = &cx.route.tokenizer;
    let tokens = tokenizer.count_request(&prepared.messages, &prepared.tools);
    let turns_since = state.last_attempt_at_seq.map(|at| {
        cx.history
            .iter()
            .filter(|m| m.role == Role::User && m.seq > at)
            .count() as u32
    });
    let config = &engine.config.context;
    match compress::decide(tokens, cx.route.budget, config, turns_since) {
        Decision::Fits => {}
        Decision::Cooldown => node.attr("compression", "cooldown"),
        Decision::Compress => {
            if let Some(done) =
                compress_history(&cx, turn, tokens, summary.clone(), covered, node).await?
            {
                covered = done.covered;
                (prepared, tools_left_out) = (done.prepared, done.left_out);
            }
        }
    }
    node.attr("summary_to_seq", covered);
    node.attr("messages", prepared.messages.len());
    node.attr("tools", prepared.tools.len());
    remember_choice(engine, turn.session, &prepared, &tools_left_out);
    if !tools_left_out.is_empty() {
        node.attr("tools_left_out", tools_left_out.clone());
        node.degrade(Degradation::ToolsTrimmed);
    }
    node.attr("token_budget", cx.route.budget);
    node.attr(
        "tokens_by_block",
        serde_json::to_value(prepared.blocks).unwrap_or_default(),
    );
    Ok(TurnSetup {
        prepared,
        llm: cx.route.llm,
        current: context
            .current_forms(&cx.current)
            .map_err(|e| prompt_err(e.to_string()))?,
    })
}

/// The turn's session and ids, and where its events and spans go.
pub(crate) struct TurnRef<'a> {
    pub session: &'a SessionId,
    pub id: &'a TurnId,
    pub events: &'a TurnEvents,
    pub root: &'a Span,
}

fn store_err(e: echo_core::StoreError) -> TurnFailure {
    TurnFailure::internal(TurnErrorCode::Store, e.to_string(), Usage::default())
}

fn prompt_err(e: String) -> TurnFailure {
    TurnFailure::internal(TurnErrorCode::Prompt, e, Usage::default())
}

/// The task type (from the input's markers, or the automation's) and the model it routes to.
struct Route {
    task: TaskType,
    models: Arc<Models>,
    llm: Arc<LlmClient>,
    tokenizer: Tokenizer,
    /// Input tokens the model's window leaves for the request.
    budget: usize,
}

fn route(engine: &Engine, request: &TurnRequest, node: &mut Span) -> Route {
    let mut classified = routing::classify(&request.input);
    if let Some(task) = request.task {
        // An automation says what its runs are.
        classified.task = task;
        classified.marker = Some("automation");
    }
    let models = engine.models();
    let (llm, reason) = models.route(classified.task);
    node.attr("task_type", classified.task.as_str());
    node.attr("task_marker", classified.marker);
    node.attr("model", llm.primary_model());
    node.attr("model_reason", reason);
    let tokenizer = *llm.tokenizer();
    node.attr("tokenizer", tokenizer.name());
    let budget = llm.input_budget();
    Route {
        task: classified.task,
        models,
        llm,
        tokenizer,
        budget,
    }
}

/// Everything the turn's first request is assembled from, gathered once: [`TurnContext::build`]
/// assembles it from any point of the history on (again after compression).
struct TurnContext<'a> {
    engine: &'a Engine,
    context: &'a ContextStage<'a>,
    /// The session's history; the last message is this turn's own (committed at start).
    history: Vec<echo_core::store::StoredMessage>,
    route: Route,
    bootstrap: Vec<Injected>,
    /// The session's project, if any.
    project: Option<echo_core::store::Project>,
    snapshot: Vec<echo_memory::Memory>,
    /// The tools the turn may be offered (before the window's choice).
    tools: Vec<echo_core::ToolSpec>,
    current: CurrentTurn,
    /// What the session's last turn was offered when it had to choose.
    last_offered: Option<tool_choice::LastChoice>,
}

/// Gathers the turn's memory, bootstrap files, tools and the optional plan.
async fn gather<'a>(
    engine: &'a Engine,
    request: &TurnRequest,
    turn: &TurnRef<'_>,
    context: &'a ContextStage<'a>,
    history: Vec<echo_core::store::StoredMessage>,
    route: Route,
    node: &mut Span,
) -> Result<TurnContext<'a>, TurnFailure> {
    let blocks = memory_blocks(engine, turn, request, node).await;
    let bootstrap: Vec<Injected> = engine
        .bootstrap
        .for_prompt()
        .map_err(|e| prompt_err(e.to_string()))?;
    node.attr(
        "bootstrap",
        bootstrap.iter().map(|f| f.name).collect::<Vec<_>>(),
    );
    if bootstrap.iter().any(|f| f.cut > 0) {
        node.degrade(Degradation::BootstrapCut);
    }
    let mut tools = offered_tools(engine, turn.session).await;
    if let Some(run) = &request.automation {
        tools.retain(|t| run.may_use(&t.name));
    }
    let asks = engine.asks_before_remembering();
    tools.retain(|t| crate::memory_tools::offered_in(request.temporary, asks, &t.name));
    let mut current = CurrentTurn {
        input: request.input.clone(),
        runtime: RuntimeInfo::now(request.entry_point.as_str()),
        recalled: blocks.recalled,
        plan: None,
    };
    let planner = &engine.config.planner;
    if planner.enabled && planner.task_types.contains(&route.task) {
        let llm = &route.models.planner;
        current.plan = plan(
            engine,
            llm,
            context,
            &current.input,
            route.task,
            &tools,
            turn.root,
        )
        .await;
    }
    let last_offered = engine
        .tools_offered
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(turn.session.as_str())
        .cloned();
    Ok(TurnContext {
        engine,
        context,
        history,
        route,
        bootstrap,
        project: request.project.clone(),
        snapshot: blocks.snapshot,
        tools,
        current,
        last_offered,
    })
}

impl TurnContext<'_> {
    /// Messages of the history before this turn's own.
    fn before(&self) -> usize {
        self.history.len().saturating_sub(1)
    }

    /// Where the visible history starts when a summary covers messages up to `covered`.
    fn visible_from(&self, covered: i64) -> usize {
        let before = self.before();
        self.history[..before]
            .iter()
            .position(|m| m.seq > covered)
            .unwrap_or(before)
    }

    /// The first request with `summary` covering the history up to `covered`, and the tools
    /// the window made it leave out.
    fn build(
        &self,
        summary: Option<&str>,
        covered: i64,
    ) -> Result<(Prepared, Vec<String>), TurnFailure> {
        let visible = &self.history[self.visible_from(covered)..self.before()];
        // The tools that fetch back what was cut are offered only once something can be.
        let recover = summary.is_some()
            || visible
                .iter()
                .any(|m| m.role == Role::Tool && worth_cutting(&m.content));
        let tools: Vec<echo_core::ToolSpec> = self
            .tools
            .iter()
            .filter(|t| recover || !HISTORY_TOOLS.contains(&t.name.as_str()))
            .cloned()
            .collect();
        // On a small window, only the tools most related to the turn.
        let called: HashSet<String> = visible
            .iter()
            .filter(|m| m.role == Role::Tool)
            .filter_map(|m| m.name.clone())
            .collect();
        let share = self.engine.config.context.tools_share.get();
        let choice = tool_choice::choose(
            tools,
            &self.current.input,
            &called,
            (self.route.budget as f64 * share) as usize,
            &self.route.tokenizer,
            self.last_offered.as_ref(),
        );
        let inputs = TurnInputs {
            history: visible,
            summary,
            bootstrap: &self.bootstrap,
            project: self.project.as_ref(),
            snapshot: &self.snapshot,
            tools: choice.tools,
            current: &self.current,
        };
        let prepared = self
            .context
            .build(inputs, &self.route.tokenizer)
            .map_err(|e| prompt_err(e.to_string()))?;
        Ok((prepared, choice.left_out))
    }
}

/// A request rebuilt after compression, and the last message the summary now covers.
struct Compressed {
    covered: i64,
    prepared: Prepared,
    left_out: Vec<String>,
}

/// Summarises the oldest part of the visible history into the rolling summary (its own
/// `compress` span) and rebuilds the request; `None` when nothing was compressed.
async fn compress_history(
    cx: &TurnContext<'_>,
    turn: &TurnRef<'_>,
    tokens: usize,
    summary: Option<String>,
    covered: i64,
    node: &mut Span,
) -> Result<Option<Compressed>, TurnFailure> {
    let (engine, tokenizer, budget) = (cx.engine, &cx.route.tokenizer, cx.route.budget);
    let config = &engine.config.context;
    let keep = (budget as f64 * config.keep_recent.get()) as usize;
    let visible = &cx.history[cx.visible_from(covered)..cx.before()];
    let tail = compress::tail_start(visible, keep, tokenizer);
    if tail == 0 {
        node.attr("compression", "nothing_to_compress");
        return Ok(None);
    }
    let mut span = turn.root.child(SpanLevel::Node, "compress").await;
    span.attr("tokens_before", tokens);
    span.attr("token_budget", budget);
    span.attr("from_seq", covered);
    let compressor = Compressor {
        llm: &cx.route.models.summary,
        context: cx.context,
        store: &engine.store,
        config,
        session: turn.session,
        turn: turn.id,
        span: &span,
    };
    let at_seq = cx.history.last().map_or(0, |m| m.seq);
    let done = compressor
        .run(
            &visible[..tail],
            summary,
            covered,
            at_seq,
            &cx.current.input,
        )
        .await;
    span.attr("chunks", done.chunks);
    span.attr("to_seq", done.to_seq);
    let mut rebuilt = None;
    if done.chunks > 0 {
        let (prepared, left_out) = cx.build(done.summary.as_deref(), done.to_seq)?;
        if let Err(e) = compress::validate(&prepared.messages) {
            // Cannot happen with turn-aligned boundaries; say so loudly if it does.
            tracing::error!(error = %e, "reassembled request is invalid");
            span.degrade(Degradation::InvalidSequence);
            span.attr("invalid", e);
        }
        span.attr(
            "tokens_after",
            tokenizer.count_request(&prepared.messages, &prepared.tools),
        );
        span.attr(
            "messages_archived",
            cx.history[..cx.before()]
                .iter()
                .filter(|m| m.seq <= done.to_seq)
                .count(),
        );
        rebuilt = Some(Compressed {
            covered: done.to_seq,
            prepared,
            left_out,
        });
    }
    let status = summary_status(&mut span, done.failure.as_deref(), turn.events);
    span.finish(status).await;
    let outcome = if done.chunks > 0 {
        "compressed"
    } else {
        "failed"
    };
    node.attr("compression", outcome);
    Ok(rebuilt)
}

/// The `compress` span's status; a failed summary is flagged, and said to the person (older
/// messages are trimmed instead).
fn summary_status(span: &mut Span, failure: Option<&str>, events: &TurnEvents) -> SpanStatus {
    let Some(failure) = failure else {
        return SpanStatus::Ok;
    };
    span.degrade(Degradation::SummaryFailed);
    span.set_error(failure);
    events.emit(TurnEvent::Degraded {
        reason: Degradation::SummaryFailed,
        detail: format!(
            "the history could not be summarised ({failure}); older messages are trimmed instead"
        ),
    });
    SpanStatus::Error
}

/// Keeps what this turn was offered when the window made it choose, for the session's next
/// turn (see `tool_choice`).
fn remember_choice(engine: &Engine, session: &SessionId, prepared: &Prepared, left_out: &[String]) {
    let mut offered = engine
        .tools_offered
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if left_out.is_empty() {
        offered.remove(session.as_str());
    } else {
        let last = tool_choice::LastChoice {
            offered: prepared.tools.iter().map(|t| t.name.clone()).collect(),
            left_out: left_out.to_vec(),
        };
        offered.insert(session.as_str().to_owned(), last);
    }
}

/// The optional planner: one short call whose answer is appended to the current message.
/// Failure is traced and otherwise ignored.
async fn plan(
    engine: &Engine,
    llm: &LlmClient,
    context: &ContextStage<'_>,
    input: &str,
    task: TaskType,
    tools: &[echo_core::ToolSpec],
    root: &Span,
) -> Option<String> {
    let mut span = root.child(SpanLevel::Node, "planner").await;
    span.attr("task_type", task.as_str());
    let messages = match context.plan(input, task.as_str(), tools) {
        Ok(m) => m,
        Err(e) => {
            span.degrade(Degradation::PlannerFailed);
            span.set_error(&e.to_string());
            span.finish(SpanStatus::Error).await;
            return None;
        }
    };
    let call = ModelCall::exact(llm, messages, Vec::new(), engine.config.planner.max_tokens);
    let outcome = call
        .send(&span, "planner", &CancellationToken::new(), &mut |_| {})
        .await;
    let plan = match outcome {
        Ok(r) => {
            let (visible, _) = crate::think::strip_think(&r.text);
            let plan: String = visible.trim().chars().take(PLAN_CHARS).collect();
            (!plan.is_empty())
                .then_some(plan)
                .ok_or_else(|| "the planner returned nothing".to_string())
        }
        Err(f) => Err(f.error.to_string()),
    };
    match plan {
        Ok(plan) => {
            span.attr("plan", plan.clone());
            span.finish(SpanStatus::Ok).await;
            Some(plan)
        }
        Err(e) => {
            span.degrade(Degradation::PlannerFailed);
            span.set_error(&e);
            span.finish(SpanStatus::Error).await;
            None
        }
    }
}

/// Tools offered to the model in this session: the registry minus what settings switch off
/// and what a rule denies outright (the model never sees those).
async fn offered_tools(inner: &Engine, session: &SessionId) -> Vec<echo_core::ToolSpec> {
    let rules = inner.gate.rules_for(session.as_str()).await;
    inner
        .tools
        .specs_where(|name, _| inner.gate.policy.offered(name, &rules, session.as_str()))
}

/// ContextStage's assembly: the request, most stable first (see the module `context`).
impl ContextStage<'_> {
    /// The first request of a turn.
    pub(crate) fn build(
        &self,
        inputs: TurnInputs<'_>,
        tokenizer: &Tokenizer,
    ) -> Result<Prepared, PromptError> {
        let mut blocks = BlockTokens::default();
        let mut system = self.prompts.render(PromptName::System, ())?;
        if let Some(block) = self.skills_block()? {
            system.push_str("\n\n");
            system.push_str(&block);
        }
        blocks.system = tokenizer.count_text(&system);
        let append = |system: &mut String, block: String| {
            let tokens = tokenizer.count_text(&block);
            system.push_str("\n\n");
            system.push_str(&block);
            tokens
        };
        if !inputs.bootstrap.is_empty() {
            let block = self.prompts.render(
                PromptName::Bootstrap,
                serde_json::json!({ "files": inputs.bootstrap }),
            )?;
            blocks.bootstrap = append(&mut system, block);
        }
        if let Some(project) = inputs.project {
            blocks.bootstrap += append(&mut system, self.project_block(project)?);
        }
        if !inputs.snapshot.is_empty() {
            let block = self.prompts.render(
                PromptName::MemorySnapshot,
                serde_json::json!({ "memories": inputs.snapshot }),
            )?;
            blocks.memory_snapshot = append(&mut system, block);
        }
        if let Some(summary) = inputs.summary.filter(|s| !s.trim().is_empty()) {
            let block = self.prompts.render(
                PromptName::HistorySummary,
                serde_json::json!({ "summary": summary }),
            )?;
            blocks.summary = append(&mut system, block);
        }
        let lost = self.prompts.render_text(LOST_RESULT, ())?;
        let history = sanitize_history(inputs.history, &lost);
        blocks.history = history.iter().map(|m| tokenizer.count_message(m)).sum();
        let mut tools = inputs.tools;
        for tool in &mut tools {
            self.prompts.describe(tool)?;
        }
        blocks.tools = tools.iter().map(|t| tokenizer.count_tool(t)).sum();
        let current = inputs.current;
        let runtime = self
            .prompts
            .render(PromptName::RuntimeContext, &current.runtime)?;
        blocks.runtime = tokenizer.count_text(&runtime);
        let recalled = self.recalled_block(&current.recalled)?;
        blocks.recalled = recalled.as_deref().map_or(0, |r| tokenizer.count_text(r));
        let text = self.current_text(current)?;
        blocks.current = tokenizer.count_text(&text);

        let mut messages = Vec::with_capacity(history.len() + 2);
        messages.push(Message::system(system));
        messages.extend(history);
        messages.push(Message::user(join_current(
            &runtime,
            recalled.as_deref(),
            &text,
        )));
        Ok(Prepared {
            messages,
            tools,
            blocks,
        })
    }

    /// The index of the user's skills, if they have any.
    fn skills_block(&self) -> Result<Option<String>, PromptError> {
        if self.skills.is_empty() {
            return Ok(None);
        }
        let skills: Vec<serde_json::Value> = self
            .skills
            .iter()
            .map(|s| serde_json::json!({ "name": s.name, "description": s.description }))
            .collect();
        let block = self.prompts.render(
            PromptName::SkillsIndex,
            serde_json::json!({ "skills": skills }),
        )?;
        Ok(Some(block))
    }

    /// `system` with the project's block after it, if there is a project.
    pub(super) fn with_project(
        &self,
        mut system: String,
        project: Option<&echo_core::store::Project>,
    ) -> Result<String, PromptError> {
        if let Some(project) = project {
            system.push_str("\n\n");
            system.push_str(&self.project_block(project)?);
        }
        Ok(system)
    }

    /// The session's project: its name, folders and standing instructions.
    fn project_block(&self, project: &echo_core::store::Project) -> Result<String, PromptError> {
        self.prompts.render(
            PromptName::Project,
            serde_json::json!({
                "name": project.name,
                "folders": project.folders,
                "instructions": project.instructions,
            }),
        )
    }

    /// The `<memory-context>` block for `recalled`, if there is any.
    fn recalled_block(&self, recalled: &[Memory]) -> Result<Option<String>, PromptError> {
        if recalled.is_empty() {
            return Ok(None);
        }
        self.prompts
            .render(
                PromptName::MemoryContext,
                serde_json::json!({ "memories": recalled }),
            )
            .map(Some)
    }

    /// The user's text, then the plan if there is one.
    fn current_text(&self, current: &CurrentTurn) -> Result<String, PromptError> {
        Ok(match &current.plan {
            Some(plan) => {
                let note = self
                    .prompts
                    .render(PromptName::PlanNote, serde_json::json!({ "plan": plan }))?;
                format!("{}\n\n{note}", current.input)
            }
            None => current.input.clone(),
        })
    }

    /// The current user message as it reads with the first 0, 1, …, all recalled memories
    /// (the last is the one the request carries), so fitting a call to the window can leave
    /// the least relevant out without rendering again.
    pub(crate) fn current_forms(&self, current: &CurrentTurn) -> Result<Vec<String>, PromptError> {
        // The runtime block and the text are the same in every form: rendered once.
        let runtime = self
            .prompts
            .render(PromptName::RuntimeContext, &current.runtime)?;
        let text = self.current_text(current)?;
        (0..=current.recalled.len())
            .map(|keep| {
                let recalled = self.recalled_block(&current.recalled[..keep])?;
                Ok(join_current(&runtime, recalled.as_deref(), &text))
            })
            .collect()
    }
}

/// The runtime block, the recalled memories and the user's text, as one message.
fn join_current(runtime: &str, recalled: Option<&str>, text: &str) -> String {
    match recalled {
        Some(recalled) => format!("{runtime}\n\n{recalled}\n\n{text}"),
        None => format!("{runtime}\n\n{text}"),
    }
}
