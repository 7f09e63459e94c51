//! MCP server messages (docs/reliability.md, section 4): `echo-mcp` facing a server that answers with
//! anything — odd, wrong or hostile handshakes, tool lists (names, descriptions, schemas,
//! annotations), call results (content blocks of every kind, errors), lines that are not
//! JSON, notifications and requests of its own. The server is `mcp-test-server --script`,
//! which answers each request with the next scripted lines. Whatever it says: no panic
//! anywhere (spawned tasks included), the server is ready or failed with a reason within a
//! bound (failed, or waiting to restart), every tool it offers has a name providers accept, every call ends within a bound
//! with a result or a message, and shutting down ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use echo_core::ToolCall;
use echo_core::config::McpServerConfig;
use echo_mcp::{McpManager, McpOptions, ServerState};
use echo_tools::{ToolContext, ToolRegistry};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-test-server");

/// Set by the panic hook: a panic in a spawned task would otherwise go unseen.
static PANICKED: AtomicBool = AtomicBool::new(false);

/// Any JSON value, nested a little.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,30}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    ".{0,8}",
                    prop::sample::select(&["type", "properties", "required", "text"][..])
                        .prop_map(str::to_string),
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A line that answers request `$ID` with `result`.
fn result(result: Value) -> String {
    // `$ID` goes in as a string and comes out as the id itself.
    json!({"jsonrpc": "2.0", "id": "$ID", "result": result})
        .to_string()
        .replace("\"$ID\"", "$ID")
}

/// An answer in general: the expected `good` one, any result, an error, or not JSON.
fn answer(good: impl Strategy<Value = Value>) -> impl Strategy<Value = String> {
    prop_oneof![
        6 => good.prop_map(result),
        1 => any_json().prop_map(result),
        1 => (any::<i64>(), ".{0,40}", any_json()).prop_map(|(code, message, data)| {
            json!({"jsonrpc": "2.0", "id": "$ID",
                   "error": {"code": code, "message": message, "data": data}})
            .to_string()
            .replace("\"$ID\"", "$ID")
        }),
        1 => ".{0,60}",
    ]
}

/// Lines the server sends before its answer: notifications, requests of its own, noise.
fn chatter() -> impl Strategy<Value = Vec<String>> {
    let line = prop_oneof![
        Just(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}).to_string()),
        (".{0,20}", any_json()).prop_map(|(method, params)| {
            json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
        }),
        prop::sample::select(&["ping", "roots/list", "sampling/createMessage"][..]).prop_map(
            |method| {
                json!({"jsonrpc": "2.0", "id": 900, "method": method, "params": {}}).to_string()
            }
        ),
        ".{0,40}",
    ];
    prop::collection::vec(line, 0..3)
}

fn handshake() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&["2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"][..]),
        prop_oneof![Just(json!({"tools": {}})), any_json()],
        ".{0,20}",
    )
        .prop_map(|(version, capabilities, name)| {
            json!({"protocolVersion": version, "capabilities": capabilities,
                   "serverInfo": {"name": name, "version": "1"}})
        })
}

fn tool() -> impl Strategy<Value = Value> {
    let name = prop_oneof!["[a-z_]{1,12}", ".{0,80}"];
    let schema = prop_oneof![
        Just(json!({"type": "object"})),
        any_json().prop_map(|p| json!({"type": "object", "properties": p})),
        // A pattern that may not compile.
        ".{0,8}".prop_map(|p| json!({"type": "object",
            "properties": {"x": {"type": "string", "pattern": p}}})),
        any_json(),
    ];
    (
        name,
        prop::option::of(".{0,60}"),
        schema,
        prop::option::of(any_json()),
    )
        .prop_map(|(name, description, schema, annotations)| {
            json!({"name": name, "description": description, "inputSchema": schema,
                   "annotations": annotations})
        })
}

fn content_block() -> impl Strategy<Value = Value> {
    prop_oneof![
        ".{0,40}".prop_map(|t| json!({"type": "text", "text": t})),
        (".{0,24}", ".{0,12}")
            .prop_map(|(data, mime)| json!({"type": "image", "data": data, "mimeType": mime})),
        (".{0,20}", ".{0,20}").prop_map(|(uri, text)| json!({"type": "resource",
            "resource": {"uri": uri, "text": text}})),
        (".{0,8}", any_json()).prop_map(|(kind, rest)| json!({"type": kind, "x": rest})),
        any_json(),
    ]
}

fn call_result() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(content_block(), 0..4),
        prop::option::of(any::<bool>()),
        prop::option::of(any_json()),
    )
        .prop_map(|(content, is_error, structured)| {
            json!({"content": content, "isError": is_error, "structuredContent": structured})
        })
}

/// What the server says to each of its first requests: the handshake, the tool list, then
/// calls.
fn script() -> impl Strategy<Value = Vec<Vec<String>>> {
    let turn = |good: BoxedStrategy<Value>| {
        (chatter(), answer(good)).prop_map(|(mut lines, answer)| {
            lines.push(answer);
            lines
        })
    };
    (
        turn(handshake().boxed()),
        turn(
            prop::collection::vec(tool(), 0..4)
                .prop_map(|tools| json!({"tools": tools}))
                .boxed(),
        ),
        prop::collection::vec(turn(call_result().boxed()), 0..4),
    )
        .prop_map(|(hello, list, calls)| {
            let mut script = vec![hello, list];
            script.extend(calls);
            script
        })
}

/// Short limits, and no restart within a case.
fn options() -> McpOptions {
    McpOptions {
        call_timeout: Duration::from_secs(1),
        init_timeout: Duration::from_secs(2),
        list_timeout: Duration::from_secs(2),
        backoff_min: Duration::from_secs(60),
        backoff_max: Duration::from_secs(60),
        healthy_after: Duration::from_secs(60),
        ping_interval: Duration::from_secs(60),
    }
}

/// A tool name every provider accepts.
fn acceptable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

async fn face(script: &[Vec<String>], file: &std::path::Path) -> Result<(), TestCaseError> {
    std::fs::write(file, serde_json::to_string(script).expect("script")).expect("write script");
    let config = McpServerConfig {
        name: "h".into(),
        command: Some(BIN.into()),
        args: vec!["--script".into(), file.display().to_string()],
        env: Default::default(),
        url: None,
        headers: Default::default(),
        enabled: true,
    };
    let registry = Arc::new(ToolRegistry::new());
    let manager = McpManager::start_with(vec![config], registry.clone(), options());
    let status = manager.settled(Duration::from_secs(10)).await;
    let status = &status[0];
    prop_assert!(
        status.state != ServerState::Starting,
        "not settled: {status:?}"
    );
    if status.state != ServerState::Ready {
        prop_assert!(
            status.error.as_ref().is_some_and(|e| !e.trim().is_empty()),
            "failed without a reason: {status:?}"
        );
    }
    let names = registry.names();
    for name in &names {
        prop_assert!(acceptable(name), "offered as {name:?}");
    }
    let ctx = ToolContext {
        workdir: ".".into(),
        cancel: CancellationToken::new(),
        session_id: "hostile".into(),
        turn_id: "t".into(),
        temporary: false,
        project_id: None,
    };
    for name in &names {
        let call = ToolCall {
            id: "c".into(),
            name: name.clone(),
            arguments: "{}".into(),
        };
        let out = tokio::time::timeout(
            Duration::from_secs(10),
            registry.execute(&call, &ctx, Duration::from_secs(5)),
        )
        .await;
        let Ok(out) = out else {
            return Err(TestCaseError::fail(format!("calling {name} never ended")));
        };
        prop_assert!(
            out.ok || !out.content.trim().is_empty(),
            "{name} failed without a message"
        );
    }
    let stopped = tokio::time::timeout(Duration::from_secs(10), manager.shutdown()).await;
    prop_assert!(stopped.is_ok(), "shutting down never ended");
    prop_assert!(!PANICKED.load(Ordering::SeqCst), "something panicked");
    Ok(())
}

#[test]
fn any_server_message_is_survived_with_a_bounded_wait_and_a_reason() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICKED.store(true, Ordering::SeqCst);
        default_hook(info);
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("script.json");
    // Each case is a server process: fewer than proptest's default unless PROPTEST_CASES
    // says.
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 48;
    }
    proptest!(config, |(script in script())| {
        runtime.block_on(face(&script, &file))?;
    });
}
