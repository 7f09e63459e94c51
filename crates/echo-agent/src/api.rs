//! `Api`: the one way into the engine. Front ends call these operations and nothing deeper.
//!
//! A turn: record it (`accepted`), wait for the session (one turn per session at a time,
//! across processes too), commit the user message and mark it `running` before any model
//! call, then ContextStage → InferenceStage → ResponseStage. Turns of different sessions run
//! concurrently.

use crate::approval::{ApprovalMode, Gate};
use crate::background::{Background, title_of};
use crate::context::MemoryBlocks;
use crate::context::{ContextStage, RuntimeInfo};
use crate::error::ApiError;
use crate::events::{EventHandler, TurnEvents};
use crate::history_tools::{HistorySearch, ReadToolOutput};
use crate::inference::{self, TurnFailure, TurnScope};
use crate::instance::Instance;
use crate::memory::{self, TurnFacts};
use crate::memory_tools::{MemoryNote, MemoryRecall, SharedSemantic};
use crate::prompts::Prompts;
use crate::response::{self, Commit, FinalPublisher};
use echo_core::config::{Config, TaskType};
use echo_core::event::RecalledMemory;
use echo_core::store::{
    SessionSummary, SpanRecord, StartOutcome, Store, StoredMessage, TurnRecord, TurnStatus,
};
use echo_core::trace::{Span, SpanStatus, Tracer};
use echo_core::{
    EntryPoint, Message, MessageId, SessionId, TurnErrorCode, TurnEvent, TurnId, Usage,
};
use echo_llm::LlmClient;
use echo_memory::echo_embed::{Embedder, MiniLmEmbedder, OpenAiEmbedder};
use echo_memory::{MemoryStore, SemanticIndex};
use echo_secrets::SecretStore;
use echo_tools::ToolRegistry;

mod jobs;
mod turn_context;
use jobs::{PostTurn, start_post_turn_jobs};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Longest accepted user input, in bytes.
const MAX_INPUT_BYTES: usize = 1024 * 1024;
/// How long a turn waits for MCP servers that are still connecting.
const MCP_START_WAIT: Duration = Duration::from_secs(10);
/// How often a turn re-checks a session held by another process.
const BUSY_POLL: Duration = Duration::from_millis(100);

/// A request to run one turn.
#[derive(Clone, Debug)]
pub struct TurnRequest {
    /// Session name; created on first use.
    pub session: String,
    /// The user's message.
    pub input: String,
    /// Which front end sends it.
    pub entry_point: EntryPoint,
    /// Whether someone can answer approval questions during this turn.
    pub approvals: ApprovalMode,
    /// Regenerate / edit and resend: the id of a user message of this session that this
    /// turn replaces, with everything after it (kept in the database, out of the history).
    pub replace_from: Option<String>,
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
    pub error_code: Option<TurnErrorCode>,
    /// One line for people (`failed`/`interrupted`).
    pub error: Option<String>,
    /// Tokens used.
    pub usage: Usage,
}

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

/// The model clients of the provider in force; replaced as a whole when settings change, and
/// snapshotted by each turn so a change never lands mid-turn.
pub(crate) struct Models {
    /// `[llm]` with the settings page's changes and the resolved API key.
    pub config: echo_core::config::LlmConfig,
    /// Where the key came from.
    pub key_source: KeySource,
    /// The main model (and its fallbacks).
    pub main: Arc<LlmClient>,
    /// Extraction and conflict judging.
    pub memory: Arc<LlmClient>,
    /// History summaries (`[context] summary_model`, else the memory model).
    pub summary: Arc<LlmClient>,
    /// The optional planner (`[planner] model`, else the main model).
    pub planner: Arc<LlmClient>,
    /// Models by task type (`[routing]`); a task type not here uses `main`.
    pub routes: HashMap<TaskType, Arc<LlmClient>>,
}

/// Where the API key in force came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// `ECHO_LLM_API_KEY` (wins over the keychain).
    Environment,
    /// The OS keychain.
    Keychain,
    /// No key (fine for local servers such as Ollama).
    None,
}

impl Models {
    /// Clients for `llm` (whose `api_key` is already resolved).
    pub(crate) fn build(
        config: &Config,
        llm: echo_core::config::LlmConfig,
        key_source: KeySource,
    ) -> Result<Models, ApiError> {
        let main = Arc::new(LlmClient::from_config(&llm)?);
        let memory = Arc::new(client_for(&llm, config.memory.extraction_model.as_deref())?);
        let summary = match &config.context.summary_model {
            Some(model) => Arc::new(client_for(&llm, Some(model))?),
            None => memory.clone(),
        };
        let planner = match &config.planner.model {
            Some(model) => Arc::new(client_for(&llm, Some(model))?),
            None => main.clone(),
        };
        let mut routes = HashMap::new();
        for task in [
            TaskType::Chat,
            TaskType::Code,
            TaskType::Research,
            TaskType::Planning,
        ] {
            if let Some((first, rest)) = config.routing.models_for(task).split_first() {
                let client = LlmClient::from_config(&echo_core::config::LlmConfig {
                    model: first.clone(),
                    fallback_models: rest.to_vec(),
                    ..llm.clone()
                })?;
                routes.insert(task, Arc::new(client));
            }
        }
        Ok(Models {
            config: llm,
            key_source,
            main,
            memory,
            summary,
            planner,
            routes,
        })
    }

    /// The client for a turn of type `task`, and why it was chosen (for the trace).
    pub(crate) fn route(&self, task: TaskType) -> (Arc<LlmClient>, String) {
        match self.routes.get(&task) {
            Some(client) => (client.clone(), format!("routing.{}", task.as_str())),
            None => (
                self.main.clone(),
                format!("llm.model (no [routing] entry for {})", task.as_str()),
            ),
        }
    }
}

struct Inner {
    config: Config,
    store: Store,
    tracer: Tracer,
    /// The provider in force (see [`Models`]).
    models: std::sync::RwLock<Arc<Models>>,
    /// Where API keys are kept.
    secrets: Arc<dyn SecretStore>,
    tools: Arc<ToolRegistry>,
    /// The approval gate with its rules, audit log and pending questions.
    pub(crate) gate: Gate,
    /// The user's skills (`<home>/skills`).
    skills: Arc<echo_tools::SkillStore>,
    /// Configured MCP servers; their tools are in `tools` while they are up. Replaced as a
    /// whole when the settings page changes the list.
    mcp: std::sync::RwLock<McpSet>,
    /// Serialises MCP list changes.
    mcp_change: tokio::sync::Mutex<()>,
    mcp_options: echo_mcp::McpOptions,
    prompts: Prompts,
    /// The user's bootstrap files (`AGENTS.md`, `SOUL.md`, `USER.md`, `TOOLS.md`).
    bootstrap: crate::bootstrap::Bootstrap,
    instance: Instance,
    background: Background,
    workdir: PathBuf,
    session_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Turns of this process that are running, by id, with the token that stops each.
    running: Mutex<HashMap<String, CancellationToken>>,
    memory: MemoryStore,
    /// Embedder + vector index, set up on first use; `None` when no embedder is available
    /// (retrieval is then BM25 only, which is logged once).
    semantic: SharedSemantic,
    /// `[desktop]` as saved (changed through [`Api::save_quick_ask_shortcut`]).
    pub(crate) desktop: Mutex<echo_core::config::DesktopConfig>,
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
    /// Opens the engine on `config.home` with API keys from the OS keychain (see
    /// [`Api::open_with`]).
    pub async fn open(config: Config) -> Result<Api, ApiError> {
        // The keychain is chosen on first use (a D-Bus round trip on Linux), not here.
        let secrets: Arc<dyn SecretStore> = Arc::new(echo_secrets::Keychain::platform());
        Api::open_with(config, secrets).await
    }

    /// Opens the engine on `config.home`: the store (migrated), this process's instance lock,
    /// recovery of turns a crashed process left running, the model clients (the API key from
    /// `ECHO_LLM_API_KEY`, else from `secrets`) and the tools.
    pub async fn open_with(
        mut config: Config,
        secrets: Arc<dyn SecretStore>,
    ) -> Result<Api, ApiError> {
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
        let key_source = if config.llm.api_key.is_some() {
            KeySource::Environment
        } else {
            let (key, source) = stored_key(&secrets, &config.llm.effective_base_url()).await;
            config.llm.api_key = key;
            source
        };
        let models = Models::build(&config, config.llm.clone(), key_source)?;
        let memory = MemoryStore::new(store.pool().clone(), config.memory.clone());
        if config.memory.enabled && sweep_due(&memory, config.memory.sweep_interval_hours).await {
            // Expired and faded memories move to the archive (they are kept out of prompts
            // either way); skipped when a sweep ran within the interval, so short-lived
            // processes such as `echod ask` do not each pay for one over a large store.
            match memory.sweep(chrono::Utc::now()).await {
                Ok(r) if !r.expired.is_empty() || !r.faded.is_empty() => tracing::info!(
                    expired = r.expired.len(),
                    faded = r.faded.len(),
                    "memory sweep archived memories"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "memory sweep failed"),
            }
        }
        if config.memory.enabled && config.memory.sweep_interval_hours > 0.0 {
            // Long-running front ends (desktop, gateway) keep forgetting on schedule.
            let every = Duration::from_secs_f64(config.memory.sweep_interval_hours * 3600.0);
            let sweeper = memory.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    if let Err(e) = sweeper.sweep(chrono::Utc::now()).await {
                        tracing::warn!(error = %e, "scheduled memory sweep failed");
                    }
                }
            });
        }
        let workdir = std::env::current_dir().unwrap_or_else(|_| home.clone());
        let semantic: SharedSemantic = Arc::new(tokio::sync::OnceCell::new());
        let tools = Arc::new(ToolRegistry::with_limits(echo_tools::Limits {
            output_cap_chars: config.tools.output_cap_chars,
            breaker_failures: config.tools.breaker_failures,
            breaker_cooldown: Duration::from_secs_f64(config.tools.breaker_cooldown_secs.max(0.0)),
        }));
        tools.add_builtins();
        let skills = Arc::new(echo_tools::SkillStore::new(home.join("skills")));
        for tool in echo_tools::skill_tools(skills.clone()) {
            if let Err(e) = tools.register(tool) {
                tracing::error!(error = %e, "skill tool rejected");
            }
        }
        let mcp_options = echo_mcp::McpOptions {
            call_timeout: Duration::from_secs_f64(config.agent.tool_timeout_secs.max(0.001)),
            ..echo_mcp::McpOptions::default()
        };
        let mcp = McpSet {
            configs: config.tools.mcp.clone(),
            manager: echo_mcp::McpManager::start_with(
                config.tools.mcp.clone(),
                tools.clone(),
                mcp_options,
            ),
        };
        let user_home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let policy =
            echo_gate::Policy::new(&config.tools, &home, &workdir, user_home).map_err(|e| {
                ApiError::InvalidInput {
                    what: "tools settings",
                    message: e.to_string(),
                }
            })?;
        let explain_llm = client_for(&config.llm, config.tools.explain_model.as_deref())?;
        let gate = Gate::new(
            policy,
            echo_gate::RuleBook::new(store.pool().clone()),
            echo_gate::AuditLog::new(store.pool().clone()),
            config.tools.clone(),
            explain_llm,
        );
        if config.memory.enabled {
            let note = Arc::new(MemoryNote {
                store: memory.clone(),
            });
            let recall = Arc::new(MemoryRecall {
                store: memory.clone(),
                semantic: semantic.clone(),
            });
            for tool in [note as Arc<dyn echo_tools::Tool>, recall] {
                if let Err(e) = tools.register(tool) {
                    tracing::error!(error = %e, "memory tool rejected");
                }
            }
        }
        let history_tools: [Arc<dyn echo_tools::Tool>; 2] = [
            Arc::new(HistorySearch {
                store: store.clone(),
            }),
            Arc::new(ReadToolOutput {
                store: store.clone(),
            }),
        ];
        for tool in history_tools {
            if let Err(e) = tools.register(tool) {
                tracing::error!(error = %e, "history tool rejected");
            }
        }
        Ok(Api {
            inner: Arc::new(Inner {
                tracer: Tracer::new(store.clone()),
                prompts: Prompts::new(home.join("prompts")),
                bootstrap: crate::bootstrap::Bootstrap::new(&home),
                tools,
                gate,
                skills,
                mcp: std::sync::RwLock::new(mcp),
                mcp_change: tokio::sync::Mutex::new(()),
                mcp_options,
                desktop: Mutex::new(config.desktop.clone()),
                background: Background::default(),
                session_locks: Mutex::new(HashMap::new()),
                running: Mutex::new(HashMap::new()),
                config,
                store,
                models: std::sync::RwLock::new(Arc::new(models)),
                secrets,
                instance,
                workdir,
                memory,
                semantic,
            }),
        })
    }

    /// `[desktop]` as saved.
    pub(crate) fn inner_desktop(&self) -> echo_core::config::DesktopConfig {
        self.inner
            .desktop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Records a saved quick-ask shortcut.
    pub(crate) fn set_inner_desktop_shortcut(&self, shortcut: &str) {
        self.inner
            .desktop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .quick_ask_shortcut = shortcut.to_string();
    }

    /// The provider in force, as one consistent snapshot.
    pub(crate) fn models(&self) -> Arc<Models> {
        self.inner.models()
    }

    /// Replaces the provider in force (turns already running keep theirs).
    pub(crate) fn set_models(&self, models: Models) {
        let explain = client_for(
            &models.config,
            self.inner.config.tools.explain_model.as_deref(),
        );
        match explain {
            Ok(explain) => self.inner.gate.set_explain_llm(explain),
            Err(e) => tracing::warn!(error = %e, "approval explanations keep the old model"),
        }
        let mut slot = self
            .inner
            .models
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *slot = Arc::new(models);
    }

    /// The user's bootstrap files.
    pub(crate) fn inner_bootstrap(&self) -> &crate::bootstrap::Bootstrap {
        &self.inner.bootstrap
    }

    /// The prompt templates.
    pub(crate) fn prompts(&self) -> &Prompts {
        &self.inner.prompts
    }

    /// Where API keys are kept.
    pub(crate) fn secrets(&self) -> Arc<dyn SecretStore> {
        self.inner.secrets.clone()
    }

    /// The approval gate.
    pub(crate) fn gate(&self) -> &Gate {
        &self.inner.gate
    }

    /// The MCP servers in force.
    pub(crate) fn mcp(&self) -> Arc<echo_mcp::McpManager> {
        self.inner.mcp_manager()
    }

    /// The configured MCP server list.
    pub(crate) fn mcp_configs(&self) -> Vec<echo_core::config::McpServerConfig> {
        self.inner
            .mcp
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .configs
            .clone()
    }

    /// Replaces the MCP servers: the old ones stop (their tools leave the registry) before
    /// the new list starts. `configs` must already be validated.
    pub(crate) async fn replace_mcp(&self, configs: Vec<echo_core::config::McpServerConfig>) {
        let _one_at_a_time = self.inner.mcp_change.lock().await;
        let old = self.inner.mcp_manager();
        old.shutdown().await;
        let manager = echo_mcp::McpManager::start_with(
            configs.clone(),
            self.inner.tools.clone(),
            self.inner.mcp_options,
        );
        *self
            .inner
            .mcp
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = McpSet { configs, manager };
    }

    /// The engine's database.
    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The memory store.
    pub(crate) fn memory(&self) -> &MemoryStore {
        &self.inner.memory
    }

    /// Starts building this process's memory search index in the background. Long-running
    /// front ends (desktop, gateway, interactive chat) call it after opening so that the
    /// first turn does not wait for the build; one-shot commands skip it (the first search
    /// builds the index, and a command that never searches never pays for it).
    pub fn warm_memory_search(&self) {
        if !self.config().memory.enabled {
            return;
        }
        let memory = self.memory().clone();
        tokio::spawn(async move {
            if let Err(e) = memory.warm_search_index().await {
                tracing::warn!(error = %e, "building the memory search index failed");
            }
        });
    }

    /// The semantic index, set up on first use.
    pub(crate) async fn semantic(&self) -> Option<&SemanticIndex> {
        self.inner.semantic().await
    }

    /// Embeds memories changed since the last flush.
    pub(crate) async fn flush_vectors(&self) {
        self.inner.flush_vectors().await;
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Checks a request the way [`Api::send`] will, so a front end can refuse it before it
    /// starts streaming.
    pub async fn validate(&self, request: &TurnRequest) -> Result<(), ApiError> {
        check_session_name(&request.session)?;
        check_input(&request.input)?;
        if let Some(id) = &request.replace_from {
            let session = self.inner.store.session_by_name(&request.session).await?;
            let Some(session) = session else {
                return Err(no_such_message(Some(id)));
            };
            self.check_replace_from(&session, id).await?;
        }
        Ok(())
    }

    /// `id` must be a user message in the session's history.
    async fn check_replace_from(&self, session: &SessionId, id: &str) -> Result<(), ApiError> {
        let history = self.inner.store.history(session).await?;
        if history
            .iter()
            .any(|m| m.id == id && m.role == echo_core::Role::User)
        {
            Ok(())
        } else {
            Err(no_such_message(Some(id)))
        }
    }

    /// Renames a session; returns it as listed.
    pub async fn rename_session(
        &self,
        name: &str,
        new_name: &str,
    ) -> Result<SessionSummary, ApiError> {
        check_session_name(new_name)?;
        let store = &self.inner.store;
        let id = self.session_id(name).await?;
        if !store.rename_session(&id, new_name).await? {
            return Err(ApiError::InvalidInput {
                what: "session name",
                message: format!("a session named {new_name:?} already exists"),
            });
        }
        let sessions = store.list_sessions().await?;
        sessions
            .into_iter()
            .find(|s| s.id == id.as_str())
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: new_name.to_string(),
            })
    }

    /// Deletes a session with its history and traces (long-term memories stay). Refused while
    /// one of its turns runs.
    pub async fn delete_session(&self, name: &str) -> Result<(), ApiError> {
        let id = self.session_id(name).await?;
        if self.inner.store.delete_session(&id).await? {
            Ok(())
        } else {
            Err(ApiError::Busy {
                message: format!("{name:?} has a turn running; stop it first"),
            })
        }
    }

    async fn session_id(&self, name: &str) -> Result<SessionId, ApiError> {
        self.inner
            .store
            .session_by_name(name)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: name.to_string(),
            })
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
        if let Some(id) = &request.replace_from {
            self.check_replace_from(&session, id).await?;
        }
        let turn = inner
            .store
            .create_turn(
                &session,
                &request.input,
                request.entry_point,
                inner.instance.id(),
            )
            .await?;
        let events = TurnEvents::new(events, turn.clone());
        let _running = Running::register(&inner.running, turn.to_string(), cancel.clone());

        let lock = self.session_lock(&session);
        let _guard = tokio::select! {
            guard = lock.lock() => guard,
            _ = cancel.cancelled() => return self.abandon(&turn, &events).await,
        };
        let user = Message::user(request.input.clone());
        let replace_from = request
            .replace_from
            .as_deref()
            .map(echo_core::MessageId::from_string);
        loop {
            let outcome = inner
                .store
                .try_start_turn(&session, &turn, &user, replace_from.as_ref(), &|owner| {
                    inner.instance.is_alive(owner)
                })
                .await?;
            match outcome {
                StartOutcome::Started => break,
                StartOutcome::Gone => return self.abandon(&turn, &events).await,
                StartOutcome::NoSuchMessage => {
                    self.abandon(&turn, &events).await?;
                    return Err(no_such_message(request.replace_from.as_deref()));
                }
                StartOutcome::Busy => tokio::select! {
                    _ = tokio::time::sleep(BUSY_POLL) => {}
                    _ = cancel.cancelled() => return self.abandon(&turn, &events).await,
                },
            }
        }

        let mut root = inner.tracer.start_turn(&turn, "turn").await;
        root.attr("session", request.session.clone());
        root.attr("entry_point", request.entry_point.as_str());
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
            status: outcome.status,
            usage,
            trace_id,
        });
        Ok(outcome)
    }

    /// Stops a running turn of this process; its partial answer is kept and the turn ends
    /// `interrupted`.
    pub fn cancel_turn(&self, turn_id: &str) -> Result<(), ApiError> {
        let running = self.inner.running.lock().unwrap_or_else(|p| p.into_inner());
        match running.get(turn_id) {
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
    pub fn cancel_all(&self) -> usize {
        let running = self.inner.running.lock().unwrap_or_else(|p| p.into_inner());
        for token in running.values() {
            token.cancel();
        }
        running.len()
    }

    /// How many turns of this process are running.
    pub fn running_turns(&self) -> usize {
        self.inner
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
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
        // A one-shot front end may send its turn while MCP servers are still connecting;
        // give them a moment so their tools are there (returns at once when settled).
        inner.mcp_manager().settled(MCP_START_WAIT).await;
        let skills = inner.skills.list();
        let context = ContextStage {
            prompts: &inner.prompts,
            skills: &skills,
        };

        // ContextStage
        let setup = self
            .prepare_turn(request, session, turn, &context, events, root)
            .await?;

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
            workdir: &inner.workdir,
            gate: &inner.gate,
            approvals: request.approvals,
        };
        let result = inference::run(&scope, setup.prepared.messages, setup.prepared.tools).await?;

        // ResponseStage
        let mut node = root.child(echo_core::trace::Level::Node, "response").await;
        let jobs_inner = self.inner.clone();
        let (jobs_session, jobs_turn, jobs_root) =
            (session.clone(), turn.clone(), root.id().to_string());
        let jobs_input = request.input.clone();
        let commit = Commit {
            store: &inner.store,
            session,
            turn,
            start_jobs: Box::new(move |answer: &str, message: &MessageId| {
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

    /// The memory blocks of this turn's request. Memory trouble never fails a turn: it is
    /// logged, flagged on the context span, and the turn goes on without memories.
    async fn memory_blocks(
        &self,
        session: &SessionId,
        input: &str,
        events: &TurnEvents,
        node: &mut Span,
    ) -> MemoryBlocks {
        let inner = &self.inner;
        if !inner.config.memory.enabled {
            return MemoryBlocks::default();
        }
        let neighbours = inner
            .semantic()
            .await
            .map(|s| s as &dyn echo_memory::Neighbours);
        match memory::blocks_for_turn(&inner.memory, session.as_str(), input, neighbours).await {
            Ok((blocks, info)) => {
                node.attr("memory_snapshot", blocks.snapshot.len());
                node.attr(
                    "memory_recalled",
                    blocks
                        .recalled
                        .iter()
                        .map(|m| m.id.clone())
                        .collect::<Vec<_>>(),
                );
                node.attr("memory_semantic", info.used_vectors);
                if !blocks.recalled.is_empty() {
                    events.emit(TurnEvent::MemoryRecalled {
                        memories: blocks
                            .recalled
                            .iter()
                            .map(|m| RecalledMemory {
                                id: m.id.clone(),
                                content: m.content.clone(),
                                tier: m.tier,
                                source: m.source,
                            })
                            .collect(),
                        semantic: info.used_vectors,
                    });
                }
                blocks
            }
            Err(e) => {
                tracing::warn!(error = %e, "memory unavailable for this turn");
                node.degrade("memory_unavailable");
                node.attr("memory_error", e.to_string());
                MemoryBlocks::default()
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
                Some((failure.code, &failure.message)),
                failure.usage,
            )
            .await?;
        events.emit(TurnEvent::Error {
            code: failure.code,
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
            usage: Usage::default(),
            trace_id: turn.to_string(),
        });
        Ok(TurnOutcome {
            turn_id: turn.to_string(),
            status: TurnStatus::Interrupted,
            answer: None,
            error_code: Some(TurnErrorCode::Interrupted),
            error: Some(message.into()),
            usage: Usage::default(),
        })
    }

    fn session_lock(&self, session: &SessionId) -> Arc<tokio::sync::Mutex<()>> {
        self.inner.session_lock(session)
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
        self.inner.mcp_manager().shutdown().await;
        self.inner.store.close().await;
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

/// The MCP server list and the manager running it.
struct McpSet {
    configs: Vec<echo_core::config::McpServerConfig>,
    manager: Arc<echo_mcp::McpManager>,
}

impl Inner {
    fn mcp_manager(&self) -> Arc<echo_mcp::McpManager> {
        self.mcp
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .manager
            .clone()
    }

    fn models(&self) -> Arc<Models> {
        self.models
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn session_lock(&self, session: &SessionId) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.session_locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(session.to_string()).or_default().clone()
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

/// Tools offered to the model in this session: the registry minus what settings switch off
/// and what a rule denies outright (the model never sees those).
async fn offered_tools(inner: &Inner, session: &SessionId) -> Vec<echo_core::ToolSpec> {
    let rules = inner.gate.rules_for(session.as_str()).await;
    inner
        .tools
        .specs_where(|name, _| inner.gate.policy.offered(name, &rules, session.as_str()))
}

/// Whether a start-up sweep is due: none ran within `interval_hours` (always, when the
/// interval is 0: then there is no periodic sweep either).
async fn sweep_due(memory: &MemoryStore, interval_hours: f64) -> bool {
    if interval_hours <= 0.0 {
        return true;
    }
    match memory.last_sweep().await {
        Ok(Some(at)) => {
            let age = chrono::Utc::now() - at;
            age.num_milliseconds() as f64 >= interval_hours * 3_600_000.0 || age.num_seconds() < 0
        }
        Ok(None) => true,
        Err(e) => {
            tracing::warn!(error = %e, "reading the last memory sweep failed");
            true
        }
    }
}

/// A client for a secondary model on the same server (extraction, explanations); the main
/// model when none is named.
fn client_for(
    llm: &echo_core::config::LlmConfig,
    model: Option<&str>,
) -> Result<LlmClient, ApiError> {
    Ok(match model {
        Some(model) => LlmClient::from_config(&echo_core::config::LlmConfig {
            model: model.to_string(),
            ..llm.clone()
        })?,
        None => LlmClient::from_config(llm)?,
    })
}

/// The keychain's key for the server at `base_url`, and where it came from.
pub(crate) async fn stored_key(
    secrets: &Arc<dyn SecretStore>,
    base_url: &str,
) -> (Option<String>, KeySource) {
    match read_secret(secrets, echo_secrets::llm_account(base_url)).await {
        Some(key) => (Some(key), KeySource::Keychain),
        None => (None, KeySource::None),
    }
}

/// The secret under `account`, read off the async threads; a keychain failure is logged and
/// counts as "no key" (the model server then says what it needs).
pub(crate) async fn read_secret(secrets: &Arc<dyn SecretStore>, account: String) -> Option<String> {
    let store = secrets.clone();
    let read = tokio::task::spawn_blocking(move || store.get(&account)).await;
    match read {
        Ok(Ok(key)) => key.filter(|k| !k.trim().is_empty()),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "API key not read from the keychain");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "keychain read did not finish");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_start_up_sweep_is_skipped_within_the_interval_after_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open_in(dir.path()).await.expect("store");
        let memory = MemoryStore::new(store.pool().clone(), Default::default());
        assert!(sweep_due(&memory, 6.0).await, "never swept");
        memory.sweep(chrono::Utc::now()).await.expect("sweep");
        assert!(memory.last_sweep().await.expect("last").is_some());
        assert!(!sweep_due(&memory, 6.0).await, "swept just now");
        assert!(sweep_due(&memory, 0.0).await, "no interval: every start");
        // A sweep "as of" another time still counts by when it ran.
        memory
            .sweep(chrono::Utc::now() + chrono::Duration::days(30))
            .await
            .expect("sweep as of later");
        assert!(!sweep_due(&memory, 6.0).await);
    }
}
