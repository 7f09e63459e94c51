//! No surprise network (docs/reliability.md, section 9): with the default settings `echod` connects to
//! nothing but the configured model server (and the local Ollama probe) — no telemetry, no
//! update check, no model download. Checked on the real process: every `connect()` it makes,
//! its threads and child processes (an MCP server) included, is recorded with `strace`, and
//! each address must be loopback. Covered: `echod ask`, `memory search`, and `echod serve`
//! starting an MCP server, answering a turn and running an automation.

mod common;

use common::*;
use serde_json::{Value, json};
use std::time::Duration;

/// Runs `echod args` in `w` under `strace`, with `env` changes; returns its exit status and
/// the addresses of every IP connection it opened.
fn connections(w: &World, args: &[&str], env: &[(&str, Option<&str>)]) -> (bool, Vec<String>) {
    let log = tempfile::NamedTempFile::new().expect("strace log");
    let log_path = log.path().to_str().expect("utf8 path");
    let mut command = under_strace(
        &w.command(args),
        &["-f", "-qq", "-e", "trace=connect", "-o", log_path],
    );
    for (key, value) in env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let out = command
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run strace (apt-get install strace)");
    (out.status.success(), connected_to(log.path()))
}

/// The addresses of every IP connection an `strace -e trace=connect` log records.
fn connected_to(log: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).expect("read the strace log");
    text.lines()
        .filter(|l| l.contains("connect(") && l.contains("sa_family=AF_INET"))
        .map(|l| {
            let addr = |key: &str| {
                l.split(key)
                    .nth(1)
                    .and_then(|rest| rest.split('"').nth(1))
                    .map(str::to_string)
            };
            addr("inet_addr(")
                .or_else(|| addr("inet_pton(AF_INET6, "))
                .unwrap_or_else(|| l.to_string())
        })
        .collect()
}

fn assert_loopback_only(what: &str, addresses: &[String]) {
    let foreign: Vec<&String> = addresses
        .iter()
        .filter(|a| a.as_str() != "127.0.0.1" && a.as_str() != "::1")
        .collect();
    assert!(
        foreign.is_empty(),
        "{what} connected to {foreign:?} (all: {addresses:?})"
    );
    assert!(
        !addresses.is_empty(),
        "{what}: strace saw no connection at all"
    );
}

#[test]
fn with_default_settings_echod_connects_only_to_the_model_server() {
    // Default settings (memory on, the local embedder, extraction), the model server on
    // loopback; and no embedding model anywhere, so nothing may be fetched from the web.
    let w = World::with_config(
        json!({"steps": [], "default": {"text": "Noted."}}),
        "[memory]\nextraction = true\n",
    );
    let nowhere = tempfile::tempdir().expect("an empty home");
    let env = [
        ("HOME", nowhere.path().to_str()),
        ("XDG_CACHE_HOME", None),
        ("ECHO_EMBED_MODEL_DIR", None),
    ];
    let (ok, turn) = connections(&w, &["ask", "I keep bees on the roof."], &env);
    assert!(ok, "the turn works without the embedding model");
    assert_loopback_only("echod ask", &turn);
    let (ok, search) = connections(&w, &["memory", "search", "bees"], &env);
    assert!(ok);
    // A memory search opens the embedder, the one place that used to download on its own.
    assert_loopback_only("echod memory search", &[search, turn].concat());
}

const LONG: Duration = Duration::from_secs(60);

#[test]
fn echod_serve_with_an_mcp_server_a_turn_and_an_automation_run_connects_only_to_loopback() {
    // Default settings as above, an MCP server (started with the gateway, a child process the
    // trace follows) and a scheduled automation, run on demand.
    let w = World::with_config(
        json!({"steps": [], "default": {"text": "Noted."}}),
        &format!(
            "[memory]\nextraction = true\n\n[[tools.mcp]]\nname = \"notes\"\ncommand = {:?}\n",
            mcp_test_server().display().to_string()
        ),
    );
    w.ok(&[
        "automations",
        "add",
        "--name",
        "Morning notes",
        "--cron",
        "0 8 * * *",
        "--prompt",
        "Summarise my notes.",
    ]);
    let nowhere = tempfile::tempdir().expect("an empty home");
    let log = tempfile::NamedTempFile::new().expect("strace log");
    let log_path = log.path().to_str().expect("utf8 path");
    let mut command = under_strace(
        &w.command(&["serve"]),
        &["-f", "-qq", "-e", "trace=connect", "-o", log_path],
    );
    command
        .env("HOME", nowhere.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("ECHO_EMBED_MODEL_DIR");
    let mut s = gateway::Server::start_command(&w, command);

    wait_for("the MCP server to start", LONG, || {
        let (_, body) = s.get("/api/mcp");
        let servers: Value = serde_json::from_str(&body).unwrap_or_default();
        servers[0]["state"] == "ready"
    });
    let events = s.turn_events(&json!({"session": "s1", "input": "I keep bees on the roof."}));
    assert!(
        events.iter().any(|e| e["type"] == "turn_finished"),
        "the turn ran: {events:?}"
    );
    w.ok(&["automations", "run", "Morning notes"]);
    let mut run = Value::Null;
    wait_for("the automation run to end", LONG, || {
        run = w.json(&["automations", "runs", "Morning notes", "--json"])[0].clone();
        !["queued", "running"].contains(&run["status"].as_str().unwrap_or("queued"))
    });
    assert_eq!(run["status"], "done", "{run}");
    let asked = w.requests();
    assert!(
        asked
            .iter()
            .any(|r| r.to_string().contains("Summarise my notes.")),
        "the run asked the model: {asked:?}"
    );

    // Ctrl-C for the gateway under strace (a clean stop, its MCP server with it); strace
    // ends with the last process it follows.
    let strace = s.child.id();
    let children = std::fs::read_to_string(format!("/proc/{strace}/task/{strace}/children"))
        .expect("strace's children");
    let serve = children.split_whitespace().next().expect("echod serve");
    let stopped = std::process::Command::new("kill")
        .args(["-INT", serve])
        .status()
        .expect("kill");
    assert!(stopped.success());
    wait_for("echod serve and strace to end", LONG, || {
        matches!(s.child.try_wait(), Ok(Some(_)))
    });
    assert_loopback_only(
        "echod serve (MCP start-up, a turn, an automation run)",
        &connected_to(log.path()),
    );
}
