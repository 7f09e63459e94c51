//! Provider faults, one table: each way a model server can fail, served by the scripted mock
//! model over real HTTP, through the real `echod`. Every case ends within a bound (short
//! timeouts, one retry), with no panic, with the person's message kept in the history, and
//! either an answer (a retry or the engine's own recovery) or a one-line error naming the
//! server and the model.

mod common;

use common::World;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const CONFIG: &str = "[agent]\nmax_iterations = 3\n\
    [llm.timeouts]\nconnect_secs = 2\nfirst_byte_secs = 2\nidle_secs = 2\n\
    [llm.retry]\nmax_retries = 1\ninitial_backoff_ms = 20\nmax_backoff_ms = 1500\n";

/// What a case must end with.
enum Ends {
    /// The turn completes and the answer contains this.
    Answer(&'static str),
    /// The turn fails and the error line contains this (besides server and model).
    Error(&'static str),
    /// Either, as long as it ends in time.
    InTime,
}

/// One OpenAI stream event carrying `text`.
fn sse_text(text: &str) -> String {
    let chunk = json!({"id": "x", "object": "chat.completion.chunk", "model": "primary",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    format!("data: {chunk}\n\n")
}

/// The end of an OpenAI stream.
const SSE_END: &str = "data: {\"id\": \"x\", \"object\": \"chat.completion.chunk\", \"model\": \"primary\", \"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn cases() -> Vec<(&'static str, Value, Ends)> {
    let text = |t: &str| json!({"text": t});
    vec![
        (
            "500 on every attempt",
            json!([{"status": 500, "times": 5}]),
            Ends::Error("HTTP 500"),
        ),
        (
            "503 on every attempt",
            json!([{"status": 503, "times": 5, "error_message": "overloaded"}]),
            Ends::Error("HTTP 503"),
        ),
        (
            "429 with Retry-After, then an answer",
            json!([{"status": 429, "retry_after": 1}, text("after the wait")]),
            Ends::Answer("after the wait"),
        ),
        (
            "429 without Retry-After on every attempt",
            json!([{"status": 429, "times": 5}]),
            Ends::Error("HTTP 429"),
        ),
        (
            "a hang before the first byte",
            json!([{"hang": true, "times": 5}]),
            Ends::Error("primary"),
        ),
        (
            "a hang in the middle of the stream",
            json!([{"text": "a long answer that stops", "chunks": 6, "hang_after_chunks": 2, "times": 5}]),
            Ends::Error("primary"),
        ),
        (
            "a stream cut in the middle",
            json!([{"text": "a long answer that is cut", "chunks": 6, "cut_after_chunks": 2, "times": 5}]),
            Ends::Error("primary"),
        ),
        (
            "malformed tool-call JSON, then an answer",
            json!([
                {"tool_calls": [{"id": "c1", "name": "current_time", "arguments": "{\"zone\": "}]},
                text("recovered")
            ]),
            Ends::Answer("recovered"),
        ),
        (
            "an HTML error page with status 200",
            json!([{"raw_body": "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>",
                    "raw_content_type": "text/html", "times": 5}]),
            Ends::Error("neither JSON nor an event stream: <!DOCTYPE html>"),
        ),
        (
            "an event stream sent as text/plain",
            json!([{"raw_body": format!("{}{}", sse_text("plain but fine"), SSE_END),
                    "raw_content_type": "text/plain"}]),
            Ends::Answer("plain but fine"),
        ),
        (
            "a whole JSON answer (not a stream) sent as text/plain",
            json!([{"raw_body": json!({"id": "x", "object": "chat.completion", "model": "primary",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": "plain JSON"}}]})
                        .to_string(),
                    "raw_content_type": "text/plain"}]),
            Ends::Answer("plain JSON"),
        ),
        (
            "a stream that is not UTF-8",
            json!([{"raw_body_hex": hex(&[sse_text("ok ").as_bytes(), b"\xff\xfe", SSE_END.as_bytes()].concat()),
                    "raw_content_type": "text/event-stream", "times": 5}]),
            Ends::Error("not UTF-8"),
        ),
        (
            "a 20 MB answer",
            json!([{"raw_body": sse_text(&"x".repeat(1000)), "raw_repeat": 20_000,
                    "raw_content_type": "text/event-stream", "times": 5}]),
            Ends::Error("the answer grew past 8 MB"),
        ),
        (
            "a model that never stops calling tools",
            json!([{"tool_calls": [{"id": "c1", "name": "current_time", "arguments": "{}"}], "times": 50}]),
            Ends::InTime,
        ),
    ]
}

#[test]
fn every_provider_fault_ends_in_bounded_time_with_the_message_kept_and_a_clear_outcome() {
    let mut failures = Vec::new();
    for (name, steps, ends) in cases() {
        let w = World::with_config(json!({ "steps": steps }), CONFIG);
        let said = format!("message for the case {name}");
        let started = Instant::now();
        let out = w.run(&["ask", "--session", "s", &said]);
        let took = started.elapsed();
        let stderr = common::stderr(&out);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut problems = Vec::new();
        if took > Duration::from_secs(30) {
            problems.push(format!("took {took:?}"));
        }
        if stderr.contains("panicked") {
            problems.push("panicked".into());
        }
        let history = w.history("s");
        if !history
            .iter()
            .any(|m| m["role"] == "user" && m["content"] == said.as_str())
        {
            problems.push("the message is not in the history".into());
        }
        match ends {
            Ends::Answer(text) => {
                if !out.status.success() || !stdout.contains(text) {
                    problems.push(format!("no answer {text:?}"));
                }
            }
            Ends::InTime => {
                // Either outcome is fine for a runaway model, as long as it ends: the
                // iteration limit asks for an answer without tools.
            }
            Ends::Error(text) => {
                let line = stderr
                    .lines()
                    .find(|l| l.contains("failed"))
                    .unwrap_or_default();
                let server = w
                    .mock
                    .base_url()
                    .trim_start_matches("http://")
                    .trim_end_matches("/v1")
                    .to_string();
                if out.status.success()
                    || !line.contains(&server)
                    || !line.contains("(model primary)")
                    || !line.contains(text)
                {
                    problems.push(format!(
                        "no one-line error naming {server}, the model and {text:?}"
                    ));
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{name}: {}\nstdout: {stdout}\nstderr: {stderr}",
                problems.join("; ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_server_that_refuses_connections_is_a_clear_error_and_the_message_is_kept() {
    let w = World::with_config(json!({"steps": []}), CONFIG);
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let out = w
        .command(&["ask", "--session", "s", "hello?"])
        .env("ECHO_LLM_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .output()
        .expect("run");
    let stderr = common::stderr(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!("127.0.0.1:{port}")) && stderr.contains("primary"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        w.history("s")
            .iter()
            .any(|m| m["role"] == "user" && m["content"] == "hello?")
    );
}

#[test]
fn a_tls_failure_is_a_clear_error_and_the_message_is_kept() {
    // The mock speaks plain HTTP: an https URL to it fails the TLS handshake.
    let w = World::with_config(json!({"steps": []}), CONFIG);
    let server = w.mock.base_url().trim_start_matches("http://").to_string();
    let out = w
        .command(&["ask", "--session", "s", "hello?"])
        .env("ECHO_LLM_BASE_URL", format!("https://{server}"))
        .output()
        .expect("run");
    let stderr = common::stderr(&out);
    assert!(!out.status.success());
    let host = server.trim_end_matches("/v1");
    assert!(
        stderr.contains(host) && stderr.contains("primary") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(
        w.history("s")
            .iter()
            .any(|m| m["role"] == "user" && m["content"] == "hello?")
    );
}
