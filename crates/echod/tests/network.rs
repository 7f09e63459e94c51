//! No surprise network (issue 20, suite 9): with the default settings `echod` connects to
//! nothing but the configured model server (and the local Ollama probe) — no telemetry, no
//! update check, no model download. Checked on the real process: every `connect()` it makes,
//! its threads included, is recorded with `strace`, and each address must be loopback.

mod common;

use common::*;
use serde_json::json;

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
    let text = std::fs::read_to_string(log.path()).expect("read the strace log");
    let addresses = text
        .lines()
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
        .collect();
    (out.status.success(), addresses)
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
