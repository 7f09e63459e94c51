//! The composition root: [`Engine`] wires the store, the model clients, tools, the gate, MCP
//! servers, memory and the background tasks, once, in [`Engine::build`]; [`Engine::close`]
//! stops every task it started. `Api` is a thin list of operations over it, and the pipeline
//! stages borrow what they need from it.

mod downloads;
mod jobs;
mod models;
mod recovery;
mod search;
mod session_lock;

pub(crate) use downloads::Downloads;
pub(crate) use jobs::{PostTurn, start_post_turn_jobs};
pub(crate) use models::{Models, client_for, stored_key};
pub(crate) use recovery::delete_conversation;
pub(crate) use search::{Search, account as search_account, needs_key as search_needs_key};
pub(crate) use session_lock::SessionLock;

use crate::approval::Gate;
use crate::background::Background;
use crate::error::ApiError;
use crate::history_tools::{HistorySearch, ReadToolOutput};
use crate::instance::Instance;
use crate::memory_tools::{MemoryNote, MemoryRecall};
use crate::prompts::Prompts;
use crate::semantic::SemanticSlot;
use crate::wire::KeySource;
use echo_core::SessionId;
use echo_core::config::Config;
use echo_core::store::Store;
use echo_core::trace::Tracer;
use echo_memory::MemoryStore;
use echo_secrets::SecretStore;
use echo_tools::ToolRegistry;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub(crate) struct Engine {
    pub(crate) config: Config,
    pub(crate) store: Store,
    pub(crate) tracer: Tracer,
    /// The provider in force (see [`Models`]).
    pub(crate) models: std::sync::RwLock<Arc<Models>>,
    /// Where API keys are kept.
    pub(crate) secrets: Arc<dyn SecretStore>,
    /// The web search service in force (see [`Search`]).
    pub(crate) search: std::sync::RwLock<Arc<Search>>,
    pub(crate) tools: Arc<ToolRegistry>,
    /// The approval gate with its rules, audit log and pending questions.
    pub(crate) gate: Gate,
    /// The user's skills (`<home>/skills`).
    pub(crate) skills: Arc<echo_tools::SkillStore>,
    /// Configured MCP servers; their tools are in `tools` while they are up. Replaced as a
    /// whole when the settings page changes the list.
    pub(crate) mcp: std::sync::RwLock<McpSet>,
    /// Serialises MCP list changes.
    pub(crate) mcp_change: tokio::sync::Mutex<()>,
    pub(crate) mcp_options: echo_mcp::McpOptions,
    pub(crate) prompts: Prompts,
    /// The user's bootstrap files (`AGENTS.md`, `SOUL.md`, `USER.md`, `TOOLS.md`).
    pub(crate) bootstrap: crate::bootstrap::Bootstrap,
    pub(crate) instance: Instance,
    pub(crate) background: Background,
    /// The line saying which provider the engine chose when nobody chose one (or how to get
    /// a model), shown once by front ends.
    pub(crate) provider_note: Option<String>,
    /// Built-in model downloads started by this process.
    pub(crate) downloads: Downloads,
    pub(crate) workdir: PathBuf,
    pub(crate) session_locks: Mutex<HashMap<String, Arc<SessionLock>>>,
    /// Sessions whose consolidation failed: how often in a row, and when it may try again.
    pub(crate) consolidation_backoff: Mutex<HashMap<String, (u32, std::time::Instant)>>,
    /// The tools each session's last turn was offered when the window made it choose (see
    /// `tool_choice`): the next turn offers the same while they serve it.
    pub(crate) tools_offered:
        Mutex<HashMap<String, crate::pipeline::context::tool_choice::LastChoice>>,
    /// Turns of this process that are running, by id, with the token that stops each.
    pub(crate) running: Mutex<HashMap<String, CancellationToken>>,
    pub(crate) memory: MemoryStore,
    /// Automations, their runs and the approval queue of unattended runs.
    pub(crate) automations: echo_automations::AutomationStore,
    /// Embedder + vector index, set up on first use (retrieval is BM25 only without them).
    pub(crate) semantic: Arc<SemanticSlot>,
    /// `[desktop]` as saved (changed through [`Api::save_quick_ask_shortcut`]).
    pub(crate) desktop: Mutex<echo_core::config::DesktopConfig>,
    /// `[trace]` as saved (the settings page changes it while the engine runs).
    pub(crate) trace: Arc<Mutex<echo_core::config::TraceConfig>>,
    /// `[memory] ask_before_remembering` as saved (the memory page changes it while the
    /// engine runs): extraction proposes instead of writing, and `memory_note` is off.
    pub(crate) ask_before_remembering: Arc<AtomicBool>,
    /// Long-lived tasks (the scheduled memory sweep, the search index warm-up).
    services: TaskTracker,
    /// Cancelled by [`Engine::close`]; stops every service.
    shutdown: CancellationToken,
}

impl Engine {
    /// Builds the engine on `config.home`: the store (migrated), this process's instance lock,
    /// clearing up after gone processes (`recovery.rs`: turns, claims, temporary chats), the
    /// model clients (the API key from `ECHO_LLM_API_KEY`, else from `secrets`), the tools,
    /// the gate, memory and its scheduled sweep.
    pub(crate) async fn build(
        mut config: Config,
        secrets: Arc<dyn SecretStore>,
    ) -> Result<Engine, ApiError> {
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
        recovery::after_gone_processes(&store, &instance).await?;
        // Long-lived tasks this engine starts; `close` cancels `shutdown` and waits for them.
        let services = TaskTracker::new();
        let shutdown = CancellationToken::new();
        let key_source = if config.llm.api_key.is_some() {
            KeySource::Environment
        } else {
            let (key, source) = stored_key(&secrets, &config.llm.effective_base_url()).await;
            config.llm.api_key = key;
            source
        };
        let provider_note = models::settle_provider(&mut config).await;
        if let Some(note) = &provider_note {
            tracing::info!("{note}");
        }
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
            spawn_service(&services, &shutdown, "memory sweep", async move {
                loop {
                    tokio::time::sleep(every).await;
                    if let Err(e) = sweeper.sweep(chrono::Utc::now()).await {
                        tracing::warn!(error = %e, "scheduled memory sweep failed");
                    }
                }
            });
        }
        // Captures and memory reads older than `[trace] retention_days` go at start and daily.
        let trace = Arc::new(Mutex::new(config.trace.clone()));
        prune_logged(&store, &memory, config.trace.retention_days).await;
        {
            let (store, memory) = (store.clone(), memory.clone());
            let trace = trace.clone();
            spawn_service(&services, &shutdown, "trace retention", async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(24 * 3600)).await;
                    let days = trace
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .retention_days;
                    prune_logged(&store, &memory, days).await;
                }
            });
        }
        let workdir = std::env::current_dir().unwrap_or_else(|_| home.clone());
        let semantic = Arc::new(SemanticSlot::default());
        if config.memory.release_after_secs > 0 {
            // An app open all day does not keep the embedder's weights and LanceDB's caches
            // through the hours nobody searches.
            let quiet = Duration::from_secs(config.memory.release_after_secs);
            let every = (quiet / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
            let slot = semantic.clone();
            spawn_service(&services, &shutdown, "memory search release", async move {
                loop {
                    tokio::time::sleep(every).await;
                    if slot.release_if_quiet(quiet) {
                        tracing::info!(
                            quiet_secs = quiet.as_secs(),
                            "memory search let go of the embedder and the vector index"
                        );
                    }
                }
            });
        }
        let tools = builtin_tools(&config);
        let search = Search::start(&config.search, &secrets, &tools).await;
        let skills = Arc::new(echo_tools::SkillStore::new(home.join("skills")));
        register(&tools, echo_tools::skill_tools(skills.clone()), "skill");
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
        let asks = Arc::new(AtomicBool::new(config.memory.ask_before_remembering));
        if config.memory.enabled {
            let note = Arc::new(MemoryNote::new(memory.clone(), asks.clone()));
            let recall = Arc::new(MemoryRecall {
                store: memory.clone(),
                semantic: semantic.clone(),
            });
            register(
                &tools,
                [note as Arc<dyn echo_tools::Tool>, recall],
                "memory",
            );
        }
        let history_tools: [Arc<dyn echo_tools::Tool>; 2] = [
            Arc::new(HistorySearch {
                store: store.clone(),
            }),
            Arc::new(ReadToolOutput {
                store: store.clone(),
            }),
        ];
        register(&tools, history_tools, "history");
        Ok(Engine {
            provider_note,
            downloads: Default::default(),
            automations: echo_automations::AutomationStore::new(store.pool().clone()),
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
            trace,
            ask_before_remembering: asks,
            background: Background::default(),
            session_locks: Mutex::new(HashMap::new()),
            consolidation_backoff: Mutex::new(HashMap::new()),
            tools_offered: Mutex::new(HashMap::new()),
            running: Mutex::new(HashMap::new()),
            config,
            store,
            models: std::sync::RwLock::new(Arc::new(models)),
            search: std::sync::RwLock::new(Arc::new(search)),
            secrets,
            instance,
            workdir,
            memory,
            semantic,
            services,
            shutdown,
        })
    }

    /// Adds a memory the person wrote (source `manual`, full confidence) and embeds it.
    pub(crate) async fn remember_manual(
        &self,
        text: &str,
        slot: Option<&str>,
        pinned: bool,
        scope: &str,
    ) -> Result<echo_memory::WriteOutcome, echo_memory::MemoryError> {
        let draft = echo_memory::NewMemory {
            content: text.to_string(),
            scope: Some(scope.to_string()),
            slot: slot.map(String::from),
            source: Some(echo_memory::MemorySource::Manual),
            confidence: Some(1.0),
            pinned,
            ..Default::default()
        };
        let outcome = self
            .memory
            .remember(
                draft,
                echo_memory::WriteOptions::plain(echo_memory::MemoryActor::User),
            )
            .await?;
        self.flush_vectors().await;
        Ok(outcome)
    }

    /// Stops what [`Engine::build`] started: the scheduled tasks at once, then waits (bounded
    /// by `agent.background_wait_secs`) for post-turn jobs, stops the MCP servers and closes
    /// the store.
    pub(crate) async fn close(&self) {
        self.shutdown.cancel();
        self.services.close();
        let limit = Duration::from_secs_f64(self.config.agent.background_wait_secs.max(0.0));
        if tokio::time::timeout(limit, self.services.wait())
            .await
            .is_err()
        {
            tracing::warn!("a background task did not stop in time");
        }
        self.background.wait(limit).await;
        // This process's temporary chats end with it.
        let own = self.instance.id();
        match recovery::drop_temporary_chats(&self.store, &|owner| owner == own).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "deleted this process's temporary chats"),
            Err(e) => tracing::warn!(error = %e, "deleting the temporary chats failed"),
        }
        self.mcp_manager().shutdown().await;
        self.store.close().await;
    }

    /// Cancelled when the engine closes.
    pub(crate) fn shutdown_token(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Runs a long-lived task (a schedule, an index build) until it ends or the engine closes.
    pub(crate) fn spawn_service<F>(&self, name: &'static str, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        spawn_service(&self.services, &self.shutdown, name, task);
    }
}

/// Runs `task` on `services` until it ends or `shutdown` is cancelled.
fn spawn_service<F>(
    services: &TaskTracker,
    shutdown: &CancellationToken,
    name: &'static str,
    task: F,
) where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let shutdown = shutdown.clone();
    services.spawn(async move {
        tokio::select! {
            () = task => {}
            () = shutdown.cancelled() => tracing::debug!(task = name, "stopped at close"),
        }
    });
}

/// The MCP server list and the manager running it.
pub(crate) struct McpSet {
    pub(crate) configs: Vec<echo_core::config::McpServerConfig>,
    pub(crate) manager: Arc<echo_mcp::McpManager>,
}

impl Engine {
    pub(crate) fn mcp_manager(&self) -> Arc<echo_mcp::McpManager> {
        self.mcp
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .manager
            .clone()
    }

    /// Whether memory work proposes instead of writing (`[memory] ask_before_remembering`).
    pub(crate) fn asks_before_remembering(&self) -> bool {
        self.ask_before_remembering.load(Ordering::Relaxed)
    }

    /// `[trace]` in force.
    pub(crate) fn trace_config(&self) -> echo_core::config::TraceConfig {
        self.trace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The redactor model calls are captured through (the provider's keys never reach
    /// storage), or `None` when `[trace] capture` is off. Asked where a trace starts.
    pub(crate) fn capture(&self) -> Option<Arc<echo_core::store::Redactor>> {
        self.trace_config().capture.then(|| {
            let models = self.models();
            Arc::new(echo_core::store::Redactor::new(
                models.config.api_key.iter(),
            ))
        })
    }

    pub(crate) fn models(&self) -> Arc<Models> {
        self.models
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn session_lock(&self, session: &SessionId) -> Arc<SessionLock> {
        let mut locks = self.session_locks.lock().unwrap_or_else(|p| p.into_inner());
        locks.entry(session.to_string()).or_default().clone()
    }

    /// Drops what this process keeps about sessions between turns (the turn lock, the
    /// consolidation back-off, the last tool choice) once they are deleted: `Some(id)` one
    /// session, `None` every session.
    pub(crate) fn forget_sessions(&self, which: Option<&SessionId>) {
        fn drop_from<V>(map: &Mutex<HashMap<String, V>>, which: Option<&SessionId>) {
            let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
            match which {
                Some(id) => {
                    map.remove(id.as_str());
                }
                None => map.clear(),
            }
        }
        drop_from(&self.session_locks, which);
        drop_from(&self.consolidation_backoff, which);
        drop_from(&self.tools_offered, which);
    }
}

/// Removes the memory reads and the captured model calls made more than `days` days before
/// `now` (what `[trace] retention_days` bounds): both are tried, each logged when it removed
/// something, and the first failure returned. The engine's start-up and daily passes log a
/// failure and go on (the captures are a convenience of the trace viewer, the reads link to
/// turns whose calls are gone); `Api::trace_prune` returns it.
pub(crate) async fn prune_by_retention(
    store: &echo_core::Store,
    memory: &MemoryStore,
    days: u32,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<echo_core::store::CapturePrune, ApiError> {
    let reads = memory.prune_reads(days, now).await;
    let captures = store.prune_captures(days, now).await;
    if let Ok(reads @ 1..) = reads {
        tracing::info!(reads, "pruned the memory read log");
    }
    if let Ok(report) = &captures
        && report.calls > 0
    {
        tracing::info!(
            calls = report.calls,
            blobs = report.blobs,
            "pruned captured model calls"
        );
    }
    reads?;
    Ok(captures?)
}

/// The engine's retention pass: [`prune_by_retention`], a failure logged.
async fn prune_logged(store: &echo_core::Store, memory: &MemoryStore, days: u32) {
    if let Err(e) = prune_by_retention(store, memory, days, chrono::Utc::now()).await {
        tracing::warn!(error = %e, "pruning by trace retention failed");
    }
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

/// The tool registry with `[tools]`' limits and the built-in tools.
fn builtin_tools(config: &Config) -> Arc<ToolRegistry> {
    let tools = Arc::new(ToolRegistry::with_limits(echo_tools::Limits {
        output_cap_chars: config.tools.output_cap_chars,
        breaker_failures: config.tools.breaker_failures,
        breaker_cooldown: Duration::from_secs_f64(config.tools.breaker_cooldown_secs.max(0.0)),
    }));
    tools.add_builtins();
    tools
}

/// Registers the engine's own tools of one kind (`what`); a name already taken is logged.
fn register(
    tools: &ToolRegistry,
    list: impl IntoIterator<Item = Arc<dyn echo_tools::Tool>>,
    what: &str,
) {
    for tool in list {
        if let Err(e) = tools.register(tool) {
            tracing::error!(error = %e, "{what} tool rejected");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn close_stops_every_background_task_the_engine_started() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = Config {
            home: dir.path().to_path_buf(),
            ..Config::default()
        };
        config.memory.enabled = true;
        config.memory.sweep_interval_hours = 24.0;
        // Long enough that a task that ignores the shutdown is still there after close.
        config.agent.background_wait_secs = 0.5;
        let secrets = crate::test_support::in_memory_secrets();
        let engine = Engine::build(config, secrets).await.expect("engine");
        // The scheduled sweep sleeps for a day; a service that never ends on its own.
        engine.spawn_service("test: forever", std::future::pending());
        assert!(
            engine.services.len() >= 2,
            "the sweep and the test service run"
        );
        engine.close().await;
        assert_eq!(engine.services.len(), 0, "every service stopped at close");
        assert!(engine.shutdown.is_cancelled());
    }

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
