//! Opens a connection to one MCP server — a child process speaking stdio, or a
//! streamable-HTTP endpoint — lists its tools, and watches the connection until it breaks.

use std::collections::{HashMap, VecDeque};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use echo_core::config::McpServerConfig;
use echo_tools::ToolError;
use rmcp::model::{ClientCapabilities, ClientConfig, ClientRequest, Implementation, PingRequest};
use rmcp::service::{
    ClientInitializeError, RoleClient, RunningService, RunningServiceCancellationToken,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, ServiceError, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::process::Child;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::manager::McpOptions;
use crate::tool::{error_chain, service_error_text, unavailable};

/// How long a stopped server process may take to exit after its stdin closes.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How long closing a connection may take before its task is abandoned.
const CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// How long to wait for a process's exit status once its connection has broken.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(300);

/// How often a broken HTTP response stream is resumed before its request fails.
const SSE_RESUME_TRIES: usize = 2;

/// Lines of a server's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// Characters of stderr quoted in an error message.
const STDERR_QUOTED: usize = 400;

/// Why a server could not be connected.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    /// The program does not exist.
    #[error("could not start {command:?}: program not found (is it installed and on PATH?)")]
    NotFound {
        /// The configured command.
        command: String,
    },
    /// The program could not be started for another reason.
    #[error("could not start {command:?}: {source}")]
    Spawn {
        /// The configured command.
        command: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("could not set up HTTPS: {0}")]
    Tls(String),
    /// The server wants credentials it was not given.
    #[error("the server requires authorization; set an `Authorization` header in its `headers`")]
    Unauthorized,
    /// The MCP handshake failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// Listing the tools failed.
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    /// A step took too long.
    #[error("{what} took longer than {:.1}s", .after.as_secs_f64())]
    Timeout {
        /// The step.
        what: &'static str,
        /// Its limit.
        after: Duration,
    },
}

impl ConnectError {
    /// Whether trying again cannot help until the configuration changes.
    pub(crate) fn is_permanent(&self) -> bool {
        matches!(
            self,
            Self::NotFound { .. } | Self::Tls(_) | Self::Unauthorized
        )
    }
}

/// One connection's shared side: what tool calls use, and how they report it broken.
pub(crate) struct Connection {
    /// Sends requests to the server.
    pub(crate) peer: Peer<RoleClient>,
    down: CancellationToken,
    reason: Mutex<Option<String>>,
    stopped: AtomicBool,
}

impl Connection {
    fn new(peer: Peer<RoleClient>) -> Self {
        Self {
            peer,
            down: CancellationToken::new(),
            reason: Mutex::new(None),
            stopped: AtomicBool::new(false),
        }
    }

    /// The error for a call that cannot complete on this connection.
    pub(crate) fn unavailable(&self, server: &str) -> ToolError {
        if self.stopped.load(Ordering::Acquire) {
            ToolError::Failed(format!("MCP server {server} was stopped"))
        } else {
            unavailable(server, &self.reason())
        }
    }

    /// Marks the connection broken (the first reason given wins) and wakes everything
    /// waiting on it.
    pub(crate) fn fail(&self, reason: impl Into<String>) {
        {
            let mut slot = self.reason.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(reason.into());
            }
        }
        self.down.cancel();
    }

    /// Why the connection broke.
    pub(crate) fn reason(&self) -> String {
        let slot = self.reason.lock().unwrap_or_else(|p| p.into_inner());
        slot.clone()
            .unwrap_or_else(|| "the connection closed".to_string())
    }

    /// Resolves once the connection is marked broken.
    pub(crate) async fn down(&self) {
        self.down.cancelled().await;
    }
}

/// The last lines a server process wrote to stderr.
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    /// Drains `stderr` in the background (a full pipe would block the server), keeping the
    /// last lines and logging each at debug level.
    fn drain(server: String, stderr: tokio::process::ChildStderr) -> Self {
        let tail = Self::default();
        let kept = tail.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %server, line = %line, "MCP server stderr");
                let mut buf = kept.0.lock().unwrap_or_else(|p| p.into_inner());
                if buf.len() == STDERR_LINES {
                    buf.pop_front();
                }
                buf.push_back(line);
            }
        });
        tail
    }

    /// `"; stderr: …"` with the last lines, or nothing.
    fn note(&self) -> String {
        let buf = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let text = buf
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" | ");
        if text.is_empty() {
            return String::new();
        }
        let count = text.chars().count();
        let quoted: String = if count > STDERR_QUOTED {
            let tail: String = text.chars().skip(count - STDERR_QUOTED).collect();
            format!("…{tail}")
        } else {
            text
        };
        format!("; its stderr ends: {quoted}")
    }
}

/// A connected server.
pub(crate) struct Live {
    /// The shared side, for tool calls.
    pub(crate) conn: Arc<Connection>,
    /// Its tools as listed at connection time.
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// Its process id (stdio).
    pub(crate) pid: Option<u32>,
    service: Option<RunningServiceCancellationToken>,
    task: JoinHandle<()>,
    child: Option<Child>,
    /// The server's process group (its own), killed as a whole when the server stops, so a
    /// launcher's children (`npx` → `node`) do not outlive it.
    group: Option<ProcessGroup>,
    stderr: StderrTail,
}

/// A process group that is SIGKILLed when dropped (a group already gone is fine).
struct ProcessGroup(#[cfg_attr(not(unix), allow(dead_code))] u32);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Ok(id) = i32::try_from(self.0) {
            use nix::sys::signal::{Signal, killpg};
            let _ = killpg(nix::unistd::Pid::from_raw(id), Signal::SIGKILL);
        }
    }
}

/// Connects to the server `config` describes (already validated), within the start limits.
pub(crate) async fn connect(
    config: &McpServerConfig,
    options: &McpOptions,
) -> Result<Live, ConnectError> {
    let mut group = None;
    let (running, child, stderr) = match (&config.command, &config.url) {
        (Some(command), _) => {
            let (mut child, stderr) = spawn(config, command)?;
            group = child.id().map(ProcessGroup);
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(ConnectError::Handshake(
                    "the process has no stdio pipes".into(),
                ));
            };
            let running = handshake(options, client_info().serve((stdout, stdin))).await;
            match running {
                Ok(running) => (running, Some(child), stderr),
                Err(e) => return Err(explain_early_exit(e, &mut child, &stderr).await),
            }
        }
        (None, Some(url)) => {
            let transport = http_transport(config, url)?;
            let running = handshake(options, client_info().serve(transport)).await?;
            (running, None, StderrTail::default())
        }
        (None, None) => {
            return Err(ConnectError::Handshake(
                "neither a command nor a url is configured".into(),
            ));
        }
    };
    let tools =
        match tokio::time::timeout(options.list_timeout, running.peer().list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => return Err(ConnectError::ListTools(service_error_text(&e))),
            Err(_) => {
                return Err(ConnectError::Timeout {
                    what: "listing its tools",
                    after: options.list_timeout,
                });
            }
        };
    let conn = Arc::new(Connection::new(running.peer().clone()));
    let service = Some(running.cancellation_token());
    let task = tokio::spawn(async move {
        let _ = running.waiting().await;
    });
    Ok(Live {
        conn,
        tools,
        pid: child.as_ref().and_then(Child::id),
        service,
        task,
        child,
        group,
        stderr,
    })
}

type Running = RunningService<RoleClient, ClientConfig>;

/// Runs the MCP handshake within the start limit.
async fn handshake(
    options: &McpOptions,
    serve: impl Future<Output = Result<Running, ClientInitializeError>>,
) -> Result<Running, ConnectError> {
    match tokio::time::timeout(options.init_timeout, serve).await {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(e)) if e.is_authorization_required() => Err(ConnectError::Unauthorized),
        Ok(Err(ClientInitializeError::TransportError { error, .. })) => {
            Err(ConnectError::Handshake(error_chain(error.error.as_ref())))
        }
        Ok(Err(e)) => Err(ConnectError::Handshake(error_chain(&e))),
        Err(_) => Err(ConnectError::Timeout {
            what: "the MCP handshake",
            after: options.init_timeout,
        }),
    }
}

/// A failed handshake explained by the process's exit, when it exited.
async fn explain_early_exit(
    error: ConnectError,
    child: &mut Child,
    stderr: &StderrTail,
) -> ConnectError {
    match tokio::time::timeout(EXIT_STATUS_WAIT, child.wait()).await {
        Ok(Ok(status)) => ConnectError::Handshake(format!("{}{}", exited(status), stderr.note())),
        _ => error,
    }
}

fn exited(status: ExitStatus) -> String {
    format!("the server process exited ({status})")
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("echo-desk", env!("CARGO_PKG_VERSION")),
    )
}

/// Starts the server program with piped stdio in a process group of its own; it is killed
/// if its handle is dropped (and its whole group with [`ProcessGroup`]).
fn spawn(config: &McpServerConfig, command: &str) -> Result<(Child, StderrTail), ConnectError> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&config.args)
        .envs(&config.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ConnectError::NotFound {
                command: command.to_string(),
            }
        } else {
            ConnectError::Spawn {
                command: command.to_string(),
                source,
            }
        }
    })?;
    let stderr = match child.stderr.take() {
        Some(stderr) => StderrTail::drain(config.name.clone(), stderr),
        None => StderrTail::default(),
    };
    Ok((child, stderr))
}

/// The streamable-HTTP transport for `url` with the configured headers.
fn http_transport(
    config: &McpServerConfig,
    url: &str,
) -> Result<StreamableHttpClientTransport<reqwest_mcp::Client>, ConnectError> {
    let headers: HashMap<http::HeaderName, http::HeaderValue> = config
        .headers
        .iter()
        .filter_map(|(name, value)| {
            // Validated with the configuration; an entry that still fails is left out.
            let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
            let value = http::HeaderValue::from_str(value).ok()?;
            Some((name, value))
        })
        .collect();
    let mut transport_config =
        StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    // A response stream that breaks is resumed only briefly: a server that stays away is
    // treated as down (and reconnected by the supervisor) rather than waited for.
    let mut resume = ExponentialBackoff::default();
    resume.max_times = Some(SSE_RESUME_TRIES);
    resume.base_duration = Duration::from_millis(250);
    resume.max_delay = Some(Duration::from_secs(1));
    transport_config.retry_config = Arc::new(resume);
    Ok(StreamableHttpClientTransport::with_client(
        http_client()?,
        transport_config,
    ))
}

/// An HTTP client with TLS on ring and the platform's certificate verifier, following no
/// redirects (a redirect would replay custom headers such as `Authorization`).
pub(crate) fn http_client() -> Result<reqwest_mcp::Client, ConnectError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
        .map_err(|e| ConnectError::Tls(e.to_string()))?;
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError::Tls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    reqwest_mcp::Client::builder()
        .tls_backend_preconfigured(tls)
        // Idle pooled connections stall on delayed ACKs (rmcp's advice).
        .pool_max_idle_per_host(0)
        .redirect(reqwest_mcp::redirect::Policy::none())
        .build()
        .map_err(|e| ConnectError::Tls(e.to_string()))
}

/// Pings the server every `interval` until a ping cannot be sent; returns why.
async fn pings(peer: &Peer<RoleClient>, interval: Duration) -> String {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let ping = peer.send_request(ClientRequest::PingRequest(PingRequest::default()));
        if let Ok(Err(e @ (ServiceError::TransportSend(_) | ServiceError::TransportClosed))) =
            tokio::time::timeout(interval, ping).await
        {
            return format!("a ping could not be sent: {}", service_error_text(&e));
        }
    }
}

impl Live {
    /// Waits until the connection breaks (returning why) or `stop` is cancelled (`None`).
    pub(crate) async fn until_down(
        &mut self,
        stop: &CancellationToken,
        ping_interval: Duration,
    ) -> Option<String> {
        let conn = self.conn.clone();
        let child = &mut self.child;
        let task = &mut self.task;
        let reason = tokio::select! {
            () = stop.cancelled() => return None,
            () = conn.down() => conn.reason(),
            reason = pings(&conn.peer, ping_interval) => reason,
            status = async {
                match child.as_mut() {
                    Some(child) => child.wait().await,
                    None => std::future::pending().await,
                }
            } => match status {
                Ok(status) => exited(status),
                Err(e) => format!("waiting for the server process failed: {e}"),
            },
            _ = task => "the connection closed".to_string(),
        };
        // A broken connection usually means the process died: say how, when it did.
        let reason = match child.as_mut() {
            Some(child) => match tokio::time::timeout(EXIT_STATUS_WAIT, child.wait()).await {
                Ok(Ok(status)) => format!("{}{}", exited(status), self.stderr.note()),
                _ => reason,
            },
            None => reason,
        };
        self.conn.fail(reason.clone());
        Some(reason)
    }

    /// Closes the connection and stops the process: stdin is closed first, and a process
    /// still running after a short grace is killed. `stopping`: for good (no restart follows),
    /// which is what calls still waiting on it are told.
    pub(crate) async fn close(mut self, stopping: bool) {
        if stopping {
            self.conn.stopped.store(true, Ordering::Release);
        }
        self.conn.fail("the server was stopped");
        if let Some(service) = self.service.take() {
            service.cancel();
        }
        if let Some(mut child) = self.child.take()
            && tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
        // Whatever the server started of its own goes with it.
        drop(self.group.take());
        // `until_down` may have seen the task finish already; a finished handle is not
        // awaited twice.
        if !self.task.is_finished()
            && tokio::time::timeout(CLOSE_LIMIT, &mut self.task)
                .await
                .is_err()
        {
            self.task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// reqwest 0.13 is built without a default crypto provider; building a client without
    /// the preconfigured ring TLS would panic.
    #[test]
    fn the_https_client_builds_on_ring() {
        assert!(http_client().is_ok());
    }
}
