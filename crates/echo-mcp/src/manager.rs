//! [`McpManager`]: one supervisor task per configured server that connects it, registers its
//! tools, notices when it breaks, withdraws its tools and restarts it with backoff.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use backon::{BackoffBuilder, ExponentialBuilder};
use echo_core::config::McpServerConfig;
use echo_tools::{Tool, ToolError, ToolRegistry};
use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, validate};
use crate::connect::{Connection, Live, connect};
use crate::tool::{McpTool, SEPARATOR, unavailable};

/// Limits and restart pacing for every server of a manager.
#[derive(Clone, Copy, Debug)]
pub struct McpOptions {
    /// Longest one tool call may take; a call that takes longer counts as a hung server,
    /// which is restarted. Default 60 s.
    pub call_timeout: Duration,
    /// Longest the start may take: spawning the program or reaching the URL, and the MCP
    /// handshake. Default 30 s (a first `npx` run may download the server).
    pub init_timeout: Duration,
    /// Longest listing the tools may take after the handshake. Default 10 s.
    pub list_timeout: Duration,
    /// First delay before a restart; it doubles on each failure in a row. Default 0.5 s.
    pub backoff_min: Duration,
    /// Longest delay before a restart. Default 30 s.
    pub backoff_max: Duration,
    /// How long a server must stay up for the delay to start again from `backoff_min`.
    /// Default 60 s.
    pub healthy_after: Duration,
    /// How often a connected server is pinged. A ping that cannot be sent (the process or
    /// endpoint is gone) counts as a crash; one that is refused or slow does not (slowness is
    /// left to `call_timeout`). This is how a vanished HTTP server is noticed between calls
    /// and while a call waits for an answer that will never come. Default 10 s.
    pub ping_interval: Duration,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            call_timeout: Duration::from_secs(60),
            init_timeout: Duration::from_secs(30),
            list_timeout: Duration::from_secs(10),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            healthy_after: Duration::from_secs(60),
            ping_interval: Duration::from_secs(10),
        }
    }
}

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A child process speaking MCP on stdin/stdout.
    Stdio,
    /// A streamable-HTTP endpoint.
    Http,
}

/// Where a server is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// The first connection attempt is under way.
    Starting,
    /// Connected; its tools are registered.
    Ready,
    /// Not working now (see `error`); it is retried in the background.
    Restarting,
    /// Not working and not retried: the configuration must change (see `error`).
    Failed,
    /// Switched off in the configuration.
    Disabled,
    /// The manager was shut down.
    Stopped,
}

/// One server as the CLI and UI show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    /// Configured name; its tools are `name__tool`.
    pub name: String,
    /// How it is reached.
    pub transport: TransportKind,
    /// Where it is in its life.
    pub state: ServerState,
    /// Why it is not ready, or why it last broke.
    pub error: Option<String>,
    /// Tools it has registered now.
    pub tools: usize,
    /// Connection attempts after the first.
    pub restarts: u32,
    /// Process id while a stdio server runs.
    pub pid: Option<u32>,
}

/// What a server's tools and its supervisor share.
pub(crate) struct Shared {
    /// The configured name.
    pub(crate) name: String,
    /// The manager's options.
    pub(crate) options: McpOptions,
    status: Mutex<ServerStatus>,
    current: Mutex<Option<Arc<Connection>>>,
    changes: Arc<watch::Sender<()>>,
}

impl Shared {
    /// The live connection, or the error a call should fail with.
    pub(crate) fn connection(&self) -> Result<Arc<Connection>, ToolError> {
        if let Some(conn) = lock(&self.current).clone() {
            return Ok(conn);
        }
        let status = self.status();
        let reason = status
            .error
            .unwrap_or_else(|| "it is not connected yet".to_string());
        Err(match status.state {
            ServerState::Stopped => {
                ToolError::Failed(format!("MCP server {} was stopped", self.name))
            }
            ServerState::Failed | ServerState::Disabled => {
                ToolError::Failed(format!("MCP server {} is unavailable: {reason}", self.name))
            }
            _ => unavailable(&self.name, &reason),
        })
    }

    fn status(&self) -> ServerStatus {
        lock(&self.status).clone()
    }

    fn update(&self, change: impl FnOnce(&mut ServerStatus)) {
        change(&mut lock(&self.status));
        self.changes.send_replace(());
    }

    fn set_connection(&self, conn: Option<Arc<Connection>>) {
        *lock(&self.current) = conn;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the configured MCP servers for one process and offers their tools in a
/// [`ToolRegistry`]. Dropping it (or [`McpManager::shutdown`]) stops every server.
pub struct McpManager {
    servers: Vec<Arc<Shared>>,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    changes: Arc<watch::Sender<()>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.status()).finish()
    }
}

impl McpManager {
    /// Starts every enabled server in the background with the default [`McpOptions`]; see
    /// [`McpManager::start_with`].
    pub fn start(configs: Vec<McpServerConfig>, registry: Arc<ToolRegistry>) -> Arc<Self> {
        Self::start_with(configs, registry, McpOptions::default())
    }

    /// Starts every enabled server in the background and returns at once. Each server's
    /// tools appear in `registry` as `{server}__{tool}` once it is connected. A server whose
    /// entry is invalid fails on its own (see [`McpManager::status`]); the others still start.
    /// Must be called within a Tokio runtime, else every server fails with a message saying so.
    pub fn start_with(
        configs: Vec<McpServerConfig>,
        registry: Arc<ToolRegistry>,
        options: McpOptions,
    ) -> Arc<Self> {
        let stop = CancellationToken::new();
        let changes = Arc::new(watch::Sender::new(()));
        let runtime = tokio::runtime::Handle::try_current();
        let mut names = HashSet::new();
        let mut servers = Vec::with_capacity(configs.len());
        let mut tasks = Vec::new();
        for config in configs {
            let transport = if config.url.is_some() && config.command.is_none() {
                TransportKind::Http
            } else {
                TransportKind::Stdio
            };
            let problem = problem_with(&config, &mut names, runtime.is_ok());
            let state = match (&problem, config.enabled) {
                (_, false) => ServerState::Disabled,
                (Some(_), true) => ServerState::Failed,
                (None, true) => ServerState::Starting,
            };
            if let Some(problem) = &problem {
                tracing::warn!(server = %config.name, error = %problem, "MCP server not started");
            }
            let shared = Arc::new(Shared {
                name: config.name.clone(),
                options,
                status: Mutex::new(ServerStatus {
                    name: config.name.clone(),
                    transport,
                    state,
                    error: problem,
                    tools: 0,
                    restarts: 0,
                    pid: None,
                }),
                current: Mutex::new(None),
                changes: changes.clone(),
            });
            if let (ServerState::Starting, Ok(runtime)) = (state, &runtime) {
                tasks.push(runtime.spawn(guard(
                    shared.clone(),
                    config,
                    registry.clone(),
                    stop.child_token(),
                )));
            }
            servers.push(shared);
        }
        Arc::new(Self {
            servers,
            stop,
            tasks: Mutex::new(tasks),
            changes,
        })
    }

    /// Every configured server, in configuration order.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// Waits until no server is still on its first connection attempt, or `limit` has
    /// passed, and returns the status then (for a CLI that lists servers once).
    pub async fn settled(&self, limit: Duration) -> Vec<ServerStatus> {
        let mut changes = self.changes.subscribe();
        let _ = tokio::time::timeout(limit, async {
            while self
                .status()
                .iter()
                .any(|s| s.state == ServerState::Starting)
            {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        self.status()
    }

    /// Stops every server: withdraws its tools, fails its in-flight calls, and ends its
    /// process or connection. Returns once all are stopped.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        for task in tasks {
            let _ = task.await;
        }
    }
}

impl Drop for McpManager {
    /// Tells every supervisor to stop; each closes its connection and kills its process on
    /// its own (and a process whose supervisor is dropped unrun is killed with its handle).
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Why an enabled server cannot be started at all, if it cannot; `names` collects the names
/// seen so far.
fn problem_with(
    config: &McpServerConfig,
    names: &mut HashSet<String>,
    has_runtime: bool,
) -> Option<String> {
    if !config.enabled {
        return None;
    }
    if let Err(e) = validate(config) {
        return Some(e.to_string());
    }
    if !names.insert(config.name.clone()) {
        let name = config.name.clone();
        return Some(ConfigError::DuplicateName { name }.to_string());
    }
    if !has_runtime {
        return Some("no Tokio runtime to run MCP servers on".to_string());
    }
    None
}

/// Runs [`supervise`] so that a bug in it fails this server with a message instead of leaving
/// it stuck (and never takes the caller down).
async fn guard(
    shared: Arc<Shared>,
    config: McpServerConfig,
    registry: Arc<ToolRegistry>,
    stop: CancellationToken,
) {
    let prefix = format!("{}{SEPARATOR}", shared.name);
    let supervisor = tokio::spawn(supervise(shared.clone(), config, registry.clone(), stop));
    // Dropping this task (runtime shutdown) drops the supervisor with it.
    let _abort_on_drop = AbortOnDrop(supervisor.abort_handle());
    if let Err(e) = supervisor.await
        && e.is_panic()
    {
        tracing::error!(server = %shared.name, "MCP supervisor panicked");
        registry.unregister_prefix(&prefix);
        shared.set_connection(None);
        shared.update(|s| {
            s.state = ServerState::Failed;
            s.error = Some("the MCP client failed internally; restart Echo Desk".to_string());
            s.tools = 0;
            s.pid = None;
        });
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Keeps one server connected until `stop` is cancelled.
async fn supervise(
    shared: Arc<Shared>,
    config: McpServerConfig,
    registry: Arc<ToolRegistry>,
    stop: CancellationToken,
) {
    let prefix = format!("{}{SEPARATOR}", shared.name);
    let backoff = || {
        ExponentialBuilder::default()
            .with_min_delay(shared.options.backoff_min)
            .with_max_delay(shared.options.backoff_max)
            .with_factor(2.0)
            .without_max_times()
            .build()
    };
    let mut delays = backoff();
    let mut first = true;
    loop {
        if !first {
            shared.update(|s| s.restarts += 1);
        }
        first = false;
        let attempt = tokio::select! {
            () = stop.cancelled() => break,
            attempt = connect(&config, &shared.options) => attempt,
        };
        match attempt {
            Err(e) => {
                let permanent = e.is_permanent();
                tracing::warn!(server = %shared.name, error = %e, permanent, "MCP server did not start");
                shared.update(|s| {
                    s.state = if permanent {
                        ServerState::Failed
                    } else {
                        ServerState::Restarting
                    };
                    s.error = Some(e.to_string());
                    s.tools = 0;
                    s.pid = None;
                });
                if permanent {
                    return;
                }
            }
            Ok(mut live) => {
                let up_since = Instant::now();
                let count = register(&registry, &prefix, &shared, &live);
                shared.set_connection(Some(live.conn.clone()));
                shared.update(|s| {
                    s.state = ServerState::Ready;
                    s.error = None;
                    s.tools = count;
                    s.pid = live.pid;
                });
                tracing::info!(server = %shared.name, tools = count, "MCP server ready");
                let down = live.until_down(&stop, shared.options.ping_interval).await;
                registry.unregister_prefix(&prefix);
                shared.set_connection(None);
                let Some(reason) = down else {
                    live.close(true).await;
                    break;
                };
                tracing::warn!(server = %shared.name, %reason, "MCP server unavailable; restarting");
                shared.update(|s| {
                    s.state = ServerState::Restarting;
                    s.error = Some(reason);
                    s.tools = 0;
                    s.pid = None;
                });
                live.close(false).await;
                if up_since.elapsed() >= shared.options.healthy_after {
                    delays = backoff();
                }
            }
        }
        let delay = delays.next().unwrap_or(shared.options.backoff_max);
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(delay) => {}
        }
    }
    registry.unregister_prefix(&prefix);
    shared.set_connection(None);
    shared.update(|s| {
        s.state = ServerState::Stopped;
        s.tools = 0;
        s.pid = None;
    });
}

/// Registers the server's tools in place of any it had; returns how many were taken.
fn register(registry: &ToolRegistry, prefix: &str, shared: &Arc<Shared>, live: &Live) -> usize {
    registry.unregister_prefix(prefix);
    let mut count = 0;
    for listed in &live.tools {
        let tool = McpTool::new(shared.clone(), listed);
        let name = tool.name().to_string();
        if registry.risk(&name).is_some() {
            tracing::warn!(server = %shared.name, tool = %listed.name, "two tools share the name {name}; keeping the first");
            continue;
        }
        let registered = registry.register(Arc::new(tool)).or_else(|e| {
            tracing::warn!(server = %shared.name, tool = %listed.name, error = %e, "tool schema rejected; accepting any arguments object");
            registry.register(Arc::new(
                McpTool::new(shared.clone(), listed).with_permissive_schema(),
            ))
        });
        match registered {
            Ok(()) => count += 1,
            Err(e) => {
                tracing::warn!(server = %shared.name, tool = %listed.name, error = %e, "tool not registered")
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starting_outside_a_runtime_fails_each_server_without_panicking() {
        let config = McpServerConfig {
            name: "t".into(),
            command: Some("true".into()),
            args: vec![],
            env: Default::default(),
            url: None,
            headers: Default::default(),
            enabled: true,
        };
        let manager = McpManager::start(vec![config], Arc::new(ToolRegistry::new()));
        let status = manager.status();
        assert_eq!(status.len(), 1);
        assert_eq!(status[0].state, ServerState::Failed);
        assert_eq!(
            status[0].error.as_deref(),
            Some("no Tokio runtime to run MCP servers on")
        );
    }
}
