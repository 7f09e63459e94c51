//! `echo-mcp` against the test server, over stdio and streamable HTTP: tools appear
//! namespaced with their risks, calls work, and crashes, hangs and bad configurations are
//! survived.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use echo_core::ToolCall;
use echo_core::config::McpServerConfig;
use echo_mcp::{McpManager, McpOptions, ServerState, ServerStatus, TransportKind};
use echo_mcp_test_server::serve_http_in_process;
use echo_tools::{Risk, ToolContext, ToolOutcome, ToolRegistry};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-test-server");

/// How long any expected state change may take.
const DEADLINE: Duration = Duration::from_secs(15);

fn stdio(name: &str) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        command: Some(BIN.into()),
        args: vec![],
        env: Default::default(),
        url: None,
        headers: Default::default(),
        enabled: true,
    }
}

fn http(name: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
        command: None,
        url: Some(url.into()),
        ..stdio(name)
    }
}

/// Short limits so hangs and restarts are quick; `backoff_min` is long enough for a test to
/// see the server between its failure and its restart.
fn options() -> McpOptions {
    McpOptions {
        call_timeout: Duration::from_secs(1),
        init_timeout: Duration::from_secs(5),
        list_timeout: Duration::from_secs(5),
        backoff_min: Duration::from_millis(300),
        backoff_max: Duration::from_secs(1),
        healthy_after: Duration::from_secs(60),
        ping_interval: Duration::from_millis(200),
    }
}

fn start(configs: Vec<McpServerConfig>) -> (Arc<McpManager>, Arc<ToolRegistry>) {
    start_with(configs, options())
}

fn start_with(
    configs: Vec<McpServerConfig>,
    options: McpOptions,
) -> (Arc<McpManager>, Arc<ToolRegistry>) {
    let registry = Arc::new(ToolRegistry::new());
    let manager = McpManager::start_with(configs, registry.clone(), options);
    (manager, registry)
}

fn status_of(manager: &McpManager, name: &str) -> ServerStatus {
    manager
        .status()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name} in {:?}", manager.status()))
}

/// Polls until `pred` holds for server `name`, failing with its last status at the deadline.
async fn wait_for(
    manager: &McpManager,
    name: &str,
    what: &str,
    pred: impl Fn(&ServerStatus) -> bool,
) -> ServerStatus {
    let start = Instant::now();
    loop {
        let status = status_of(manager, name);
        if pred(&status) {
            return status;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{name} never became {what}; last status {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn ready(manager: &McpManager, name: &str) -> ServerStatus {
    wait_for(manager, name, "ready", |s| s.state == ServerState::Ready).await
}

fn ctx() -> ToolContext {
    ToolContext {
        workdir: PathBuf::from("."),
        cancel: CancellationToken::new(),
        session_id: "test".into(),
        turn_id: "t".into(),
        temporary: false,
        project_id: None,
    }
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> ToolOutcome {
    let call = ToolCall {
        id: "c".into(),
        name: name.into(),
        arguments: args.to_string(),
    };
    registry
        .execute(&call, &ctx(), Duration::from_secs(30))
        .await
}

/// Asserts a call succeeds with `expect`.
async fn check_ok(registry: &ToolRegistry, name: &str, args: Value, expect: &str) {
    let out = call(registry, name, args).await;
    assert_eq!(
        (out.ok, out.content.as_str()),
        (true, expect),
        "{name}: {out:?}"
    );
}

/// The tools of server `s` as they should appear, with their risks.
fn expected_tools(s: &str) -> Vec<(String, Risk)> {
    [
        ("add", Risk::Exec),
        ("crash", Risk::Exec),
        ("delete_everything", Risk::Dangerous),
        ("echo", Risk::ReadOnly),
        ("fail", Risk::Exec),
        ("hang", Risk::Exec),
        ("web_lookup", Risk::Network),
    ]
    .into_iter()
    .map(|(t, r)| (format!("{s}__{t}"), r))
    .collect()
}

fn tools_of(registry: &ToolRegistry, s: &str) -> Vec<(String, Risk)> {
    registry
        .names()
        .into_iter()
        .filter(|n| n.starts_with(&format!("{s}__")))
        .map(|n| {
            let risk = registry.risk(&n).expect("listed tool has a risk");
            (n, risk)
        })
        .collect()
}

/// Everything a working server offers: namespaced tools with risks, schemas, the action shown
/// to the gate, successful calls and an error result.
async fn check_working_server(manager: &McpManager, registry: &ToolRegistry, s: &str) {
    let status = ready(manager, s).await;
    assert_eq!(status.tools, 7, "{status:?}");
    assert_eq!(status.error, None);
    assert_eq!(tools_of(registry, s), expected_tools(s));

    let spec = registry
        .specs()
        .into_iter()
        .find(|t| t.name == format!("{s}__echo"))
        .expect("echo spec");
    assert_eq!(spec.description, "Returns its text argument unchanged.");
    assert_eq!(spec.parameters["type"], "object");
    assert_eq!(spec.parameters["properties"]["text"]["type"], "string");
    let spec = registry
        .specs()
        .into_iter()
        .find(|t| t.name == format!("{s}__fail"))
        .expect("fail spec");
    assert_eq!(spec.parameters["properties"], json!({}));

    let prepared = registry
        .prepare(
            &ToolCall {
                id: "c".into(),
                name: format!("{s}__echo"),
                arguments: r#"{"text":"hi"}"#.into(),
            },
            &ctx(),
        )
        .await
        .expect("echo call prepares");
    assert_eq!(prepared.risk, Risk::ReadOnly);
    assert_eq!(prepared.action.server.as_deref(), Some(s));
    assert_eq!(
        prepared.action.detail,
        format!("{s} › echo\n{{\n  \"text\": \"hi\"\n}}")
    );

    check_ok(
        registry,
        &format!("{s}__echo"),
        json!({"text": "hello"}),
        "hello",
    )
    .await;
    check_ok(
        registry,
        &format!("{s}__add"),
        json!({"a": 2, "b": 3.5}),
        "5.5",
    )
    .await;
    check_ok(
        registry,
        &format!("{s}__delete_everything"),
        json!({}),
        "pretend-deleted",
    )
    .await;

    let out = call(registry, &format!("{s}__fail"), json!({})).await;
    assert!(!out.ok);
    assert_eq!(out.error_kind, Some("failed"));
    assert_eq!(out.content, "error: the fail tool failed, as asked");

    // The registry validates against the server's schema before anything is sent.
    let out = call(registry, &format!("{s}__echo"), json!({"text": 5})).await;
    assert_eq!(out.error_kind, Some("invalid_arguments"), "{out:?}");
}

#[tokio::test]
async fn stdio_server_tools_work() {
    let (manager, registry) = start(vec![stdio("t")]);
    check_working_server(&manager, &registry, "t").await;
    let status = status_of(&manager, "t");
    assert_eq!(status.transport, TransportKind::Stdio);
    assert!(status.pid.is_some());
    assert_eq!(status.restarts, 0);
    manager.shutdown().await;
}

#[tokio::test]
async fn http_server_tools_work() {
    let server = serve_http_in_process().await.expect("serve");
    let (manager, registry) = start(vec![http("web", &server.url())]);
    check_working_server(&manager, &registry, "web").await;
    let status = status_of(&manager, "web");
    assert_eq!(status.transport, TransportKind::Http);
    assert_eq!(status.pid, None);
    manager.shutdown().await;
    server.stop().await;
}

/// Crashing takes the tools away with a clear message; the server comes back by itself.
#[tokio::test]
async fn stdio_crash_is_survived_and_restarted() {
    let (manager, registry) = start(vec![stdio("t")]);
    let first_pid = ready(&manager, "t").await.pid;

    let out = call(&registry, "t__crash", json!({})).await;
    assert!(!out.ok);
    assert!(
        out.content
            .starts_with("error: MCP server t is unavailable: ")
            && out.content.ends_with("; restarting"),
        "{out:?}"
    );

    let down = wait_for(&manager, "t", "restarting", |s| {
        s.state == ServerState::Restarting
    })
    .await;
    assert_eq!(down.tools, 0);
    assert!(tools_of(&registry, "t").is_empty());
    let error = down.error.unwrap_or_default();
    assert!(error.contains("exit status: 3"), "{error}");

    let up = ready(&manager, "t").await;
    assert_eq!(up.restarts, 1);
    assert_ne!(up.pid, first_pid);
    assert_eq!(tools_of(&registry, "t"), expected_tools("t"));
    check_ok(&registry, "t__echo", json!({"text": "back"}), "back").await;
    manager.shutdown().await;
}

/// The `mcp-test-server --http` process, killed on drop.
struct HttpProcess(Child);

impl HttpProcess {
    fn spawn(addr: &str) -> (Self, SocketAddr) {
        let mut child = Command::new(BIN)
            .args(["--http", addr, "--exit-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn mcp-test-server --http");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the address");
        let addr = line.trim().parse().expect("an address on the first line");
        (Self(child), addr)
    }
}

impl Drop for HttpProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn http_crash_is_survived_and_reconnected() {
    let (mut process, addr) = HttpProcess::spawn("127.0.0.1:0");
    let url = format!("http://{addr}/mcp");
    let (manager, registry) = start(vec![http("web", &url)]);
    ready(&manager, "web").await;

    let out = call(&registry, "web__crash", json!({})).await;
    assert!(!out.ok);
    assert!(
        out.content
            .starts_with("error: MCP server web is unavailable: ")
            && out.content.ends_with("; restarting"),
        "{out:?}"
    );
    // The broken connection is noticed, not waited out.
    assert!(!out.content.contains("did not answer"), "{out:?}");
    let status = process.0.wait().expect("wait");
    assert_eq!(status.code(), Some(3));

    let down = wait_for(&manager, "web", "restarting", |s| {
        s.state == ServerState::Restarting
    })
    .await;
    assert_eq!(down.tools, 0);
    assert!(tools_of(&registry, "web").is_empty());
    // Let a reconnection attempt fail against the dead port before the server comes back.
    wait_for(&manager, "web", "retried", |s| s.restarts >= 1).await;

    let (_process, _) = HttpProcess::spawn(&addr.to_string());
    let up = ready(&manager, "web").await;
    assert!(up.restarts >= 1);
    check_ok(&registry, "web__echo", json!({"text": "back"}), "back").await;
    manager.shutdown().await;
}

/// A call that outlives its limit counts as a hung server: the call and every other call in
/// flight fail with a clear message, and the server is restarted once.
async fn check_hang_restarts(manager: &McpManager, registry: &ToolRegistry, s: &str) {
    ready(manager, s).await;
    let started = Instant::now();
    let hang = format!("{s}__hang");
    let (a, b) = tokio::join!(
        call(registry, &hang, json!({})),
        call(registry, &hang, json!({}))
    );
    let took = started.elapsed();
    for out in [&a, &b] {
        assert!(!out.ok);
        assert_eq!(out.error_kind, Some("failed"), "{out:?}");
        assert!(
            out.content
                .starts_with(&format!("error: MCP server {s} is unavailable: "))
                && out.content.ends_with("; restarting"),
            "{out:?}"
        );
    }
    assert!(
        [&a, &b]
            .iter()
            .any(|o| o.content.contains("hang did not answer within 1.0s")),
        "{a:?} {b:?}"
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );

    let down = wait_for(manager, s, "restarting", |st| {
        st.state == ServerState::Restarting
    })
    .await;
    assert!(
        down.error
            .as_deref()
            .unwrap_or("")
            .contains("did not answer"),
        "{down:?}"
    );
    let up = ready(manager, s).await;
    assert_eq!(up.restarts, 1);
    check_ok(
        registry,
        &format!("{s}__echo"),
        json!({"text": "again"}),
        "again",
    )
    .await;
}

#[tokio::test]
async fn stdio_hang_times_out_and_restarts() {
    let (manager, registry) = start(vec![stdio("t")]);
    let pid = ready(&manager, "t").await.pid;
    check_hang_restarts(&manager, &registry, "t").await;
    let old = pid.expect("pid");
    assert!(
        !PathBuf::from(format!("/proc/{old}")).exists(),
        "the hung process {old} is still there"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn http_hang_times_out_and_restarts() {
    let server = serve_http_in_process().await.expect("serve");
    let (manager, registry) = start(vec![http("web", &server.url())]);
    check_hang_restarts(&manager, &registry, "web").await;
    manager.shutdown().await;
    server.stop().await;
}

/// A server that never lists its tools is given up on after the limit and retried.
#[tokio::test]
async fn a_server_hanging_on_start_is_retried() {
    let hanging = McpServerConfig {
        args: vec!["--hang-on-list".into()],
        ..stdio("slow")
    };
    let (manager, registry) = start_with(
        vec![hanging, stdio("t")],
        McpOptions {
            list_timeout: Duration::from_millis(300),
            backoff_min: Duration::from_millis(50),
            ..options()
        },
    );
    check_working_server(&manager, &registry, "t").await;
    let slow = wait_for(&manager, "slow", "retried", |s| s.restarts >= 2).await;
    assert_eq!(slow.state, ServerState::Restarting, "{slow:?}");
    assert_eq!(
        slow.error.as_deref(),
        Some("listing its tools took longer than 0.3s")
    );
    assert!(tools_of(&registry, "slow").is_empty());
    manager.shutdown().await;
}

#[tokio::test]
async fn a_missing_command_fails_clearly_and_others_still_work() {
    let missing = McpServerConfig {
        command: Some("/nonexistent/mcp-server-for-echo".into()),
        ..stdio("gone")
    };
    let (manager, registry) = start(vec![missing, stdio("t")]);
    let gone = wait_for(&manager, "gone", "failed", |s| {
        s.state == ServerState::Failed
    })
    .await;
    assert_eq!(
        gone.error.as_deref(),
        Some(
            "could not start \"/nonexistent/mcp-server-for-echo\": program not found \
             (is it installed and on PATH?)"
        )
    );
    check_working_server(&manager, &registry, "t").await;
    assert!(tools_of(&registry, "gone").is_empty());
    // It is not retried: the configuration has to change first.
    assert_eq!(status_of(&manager, "gone").restarts, 0);
    manager.shutdown().await;
}

#[tokio::test]
async fn bad_server_names_are_rejected_and_others_still_work() {
    let (manager, registry) = start(vec![
        stdio("bad name"),
        stdio("a__b"),
        stdio("t"),
        stdio("t"),
        McpServerConfig {
            command: None,
            ..stdio("neither")
        },
        McpServerConfig {
            enabled: false,
            ..stdio("off")
        },
    ]);
    check_working_server(&manager, &registry, "t").await;
    let status = manager.status();
    let summary: Vec<(&str, ServerState, &str)> = status
        .iter()
        .map(|s| (s.name.as_str(), s.state, s.error.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "bad name",
                ServerState::Failed,
                "invalid MCP server name \"bad name\": use only letters, digits, '-' and '_'"
            ),
            (
                "a__b",
                ServerState::Failed,
                "invalid MCP server name \"a__b\": '_' may not start or end it, nor appear twice in a row"
            ),
            ("t", ServerState::Ready, ""),
            (
                "t",
                ServerState::Failed,
                "MCP server name \"t\" is used twice"
            ),
            (
                "neither",
                ServerState::Failed,
                "MCP server neither: set exactly one of `command` (stdio) or `url` (streamable HTTP)"
            ),
            ("off", ServerState::Disabled, ""),
        ]
    );
    assert_eq!(registry.names().len(), 7, "{:?}", registry.names());
    manager.shutdown().await;
}

#[tokio::test]
async fn shutdown_and_drop_stop_the_processes() {
    let (manager, registry) = start_with(
        vec![stdio("t")],
        McpOptions {
            call_timeout: Duration::from_secs(20),
            ..options()
        },
    );
    let pid = ready(&manager, "t").await.pid.expect("pid");
    let marker_dir = tempfile::tempdir().expect("tempdir");
    let marker = marker_dir.path().join("called");
    let in_flight = tokio::spawn({
        let registry = registry.clone();
        let args = json!({ "marker": marker.to_string_lossy() });
        async move { call(&registry, "t__hang", args).await }
    });
    // The server creates the marker when the call reaches it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the call never reached the server"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    manager.shutdown().await;
    let out = in_flight.await.expect("the call's task");
    assert_eq!(
        (out.error_kind, out.content.as_str()),
        (Some("failed"), "error: MCP server t was stopped")
    );
    assert!(!PathBuf::from(format!("/proc/{pid}")).exists());
    assert!(registry.names().is_empty());
    assert_eq!(status_of(&manager, "t").state, ServerState::Stopped);
    let out = call(&registry, "t__echo", json!({"text": "x"})).await;
    assert_eq!(out.error_kind, Some("unknown_tool"));

    let (manager, registry) = start(vec![stdio("t")]);
    let pid = ready(&manager, "t").await.pid.expect("pid");
    drop(manager);
    let start = Instant::now();
    while PathBuf::from(format!("/proc/{pid}")).exists() || !registry.names().is_empty() {
        assert!(
            start.elapsed() < DEADLINE,
            "process {pid} outlived its manager"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_status_serializes_for_the_ui() {
    let (manager, _registry) = start(vec![stdio("t")]);
    ready(&manager, "t").await;
    let settled = manager.settled(DEADLINE).await;
    let mut json = serde_json::to_value(&settled).expect("serialize");
    json[0]["pid"] = json!("PID");
    assert_eq!(
        json,
        json!([{"name": "t", "transport": "stdio", "state": "ready", "error": null,
                "tools": 7, "restarts": 0, "pid": "PID"}])
    );
    manager.shutdown().await;
}

/// Whether a process runs (exists and is not a zombie waiting to be reaped).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn a_launchers_children_die_with_the_server() {
    // Like `npx`, the configured command leaves a process of its own behind the server.
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("child.pid");
    let config = McpServerConfig {
        command: Some("sh".into()),
        args: vec![
            "-c".into(),
            format!(
                "sleep 1000 & echo $! > '{}'; exec '{BIN}'",
                pidfile.display()
            ),
        ],
        ..stdio("launched")
    };
    let (manager, _registry) = start(vec![config]);
    ready(&manager, "launched").await;
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    assert!(
        alive(pid),
        "the launcher's child runs while the server does"
    );
    manager.shutdown().await;
    let start = Instant::now();
    while alive(pid) {
        assert!(
            start.elapsed() < DEADLINE,
            "process {pid} outlived its MCP server"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
