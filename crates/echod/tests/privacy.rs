//! Privacy: canary secrets through a full turn (answer, tool call, memory extraction,
//! trace capture, exports). An API key given through the environment appears in no log at
//! any level and in no file the app writes; what the person typed appears in no log either
//! (only in the conversation and the memories learned from it). A key kept in the OS keychain,
//! or typed into the settings page, reaches the model server and no log or file either. A
//! crash writes no core file. A temporary chat leaves no byte on disk once it is left, its
//! process closes, or the next process starts after a kill, and memory as it was.

mod common;

use common::{World, files_containing, offered};
use serde_json::json;

const KEY: &str = "sk-canary-key-51x9-heron";
const SAID: &str = "canary-said-7q2m-otter";

fn script() -> serde_json::Value {
    let memory = json!({"memories": [{"evidence": format!("my locker code is {SAID}"),
        "content": format!("The user's locker code is {SAID}."), "subject": "user",
        "kind": "fact", "slot": "locker_code", "value": SAID, "source": "user_stated",
        "confidence": 0.9, "valid_until": null}]});
    json!({"steps": [
        {"model": "primary", "tool_calls": [{"id": "call_1", "name": "memory_recall",
            "arguments": "{\"query\": \"locker\"}"}]},
        {"model": "primary", "text": "Noted."},
        {"model": "extractor", "when_tool": "extract_memories", "tool_calls": [{
            "id": "x", "name": "extract_memories", "arguments": memory.to_string()}]},
        {"model": "primary", "text": "Hello."}
    ]})
}

#[test]
fn a_key_and_what_the_person_said_reach_no_log_at_any_level_and_the_key_no_file() {
    let w = World::with_config(script(), common::EXTRACTION_CONFIG);
    let out = w
        .command(&[
            "ask",
            "--session",
            "s1",
            &format!("my locker code is {SAID}"),
        ])
        .env("ECHO_LLM_API_KEY", KEY)
        .env("ECHO_LOG", "trace")
        .output()
        .expect("run echod");
    let logs = common::stderr(&out);
    assert!(out.status.success(), "{logs}");
    assert!(
        logs.lines().count() > 20,
        "trace-level logging is on: {logs}"
    );
    assert!(!logs.contains(KEY), "the key is in the logs");
    assert!(!logs.contains(SAID), "what the person said is in the logs");
    // The turn really ran: the memory was learned from it.
    let memories = w.json(&["memory", "list", "--json"]).to_string();
    assert!(memories.contains(SAID), "{memories}");

    // The default level, a second turn.
    let out = w
        .command(&["ask", "--session", "s1", &format!("hello again, {SAID}")])
        .env("ECHO_LLM_API_KEY", KEY)
        .output()
        .expect("run echod");
    assert!(out.status.success());
    assert!(!common::stderr(&out).contains(SAID));

    // Exports: the memory file and a turn's replay case.
    let exports = tempfile::tempdir().expect("tempdir");
    let memory_file = exports.path().join("memories.jsonl");
    w.ok(&["memory", "export", memory_file.to_str().expect("utf8")]);
    let turn = w.turns()[1]["id"].as_str().expect("turn id").to_string();
    let case = exports.path().join("case.json");
    w.ok(&["trace", "export", &turn, case.to_str().expect("utf8")]);
    assert!(
        std::fs::read_to_string(&case).expect("case").contains(SAID),
        "the case holds the turn (the scan below is not empty-handed)"
    );
    assert_eq!(
        files_containing(exports.path(), KEY.as_bytes()),
        Vec::<String>::new()
    );
    assert_eq!(
        files_containing(w.home.path(), KEY.as_bytes()),
        Vec::<String>::new()
    );
}

/// What a crash leaves: `echod serve`, started the way a shell that allows core files would
/// start it, turns them off for itself; killed by SIGABRT after a turn (the key and what was
/// said are in its memory), it writes no core file, and its crash output holds neither.
/// (SIGABRT, whose default action is a core file; Rust's own SIGSEGV handler lets a SIGSEGV
/// that did not come from a fault pass once.)
#[test]
fn a_crash_writes_no_core_file_and_its_output_holds_no_key() {
    use std::os::unix::process::ExitStatusExt;
    let w = World::new(json!({"steps": [{"model": "primary", "text": "Noted."}]}));
    let serve = w.command(&["serve"]);
    let mut allowing = std::process::Command::new("bash");
    allowing
        .args([
            "-c",
            "ulimit -S -c \"$(ulimit -H -c)\" && exec \"$0\" \"$@\"",
        ])
        .arg(serve.get_program())
        .args(serve.get_args())
        .env("ECHO_LLM_API_KEY", KEY)
        .stdin(std::process::Stdio::null());
    for (name, value) in serve.get_envs() {
        match value {
            Some(value) => allowing.env(name, value),
            None => allowing.env_remove(name),
        };
    }
    let log = tempfile::NamedTempFile::new().expect("log file");
    let mut s = common::gateway::Server::start_logging(
        &w,
        allowing,
        log.reopen().expect("log file").into(),
    );
    let events =
        s.turn_events(&json!({"session": "s1", "input": format!("my locker code is {SAID}")}));
    assert!(
        events.iter().any(|e| e["type"] == "turn_finished"),
        "the turn ran: {events:?}"
    );
    let pid = s.child.id();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let core = limits
        .lines()
        .find(|l| l.starts_with("Max core file size"))
        .expect("a core limit");
    let soft: Vec<&str> = core.split_whitespace().skip(4).take(1).collect();
    assert_eq!(
        soft,
        ["0"],
        "echod turned core files off for itself: {core}"
    );

    let killed = std::process::Command::new("kill")
        .args(["-ABRT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = s.child.wait().expect("wait");
    assert_eq!(status.signal(), Some(6), "{status:?}");
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
    // A core handed to a helper program (systemd-coredump, apport) is that program's to keep
    // or drop (both drop it when the limit is 0); a plain file pattern is checked here.
    if !pattern.starts_with('|') {
        assert!(
            !status.core_dumped(),
            "a core file was written ({pattern:?})"
        );
        let cores: Vec<_> = std::fs::read_dir(s.work())
            .expect("work dir")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("core"))
            .collect();
        assert!(cores.is_empty(), "{cores:?}");
    }
    let output = std::fs::read_to_string(log.path()).expect("crash output");
    assert!(!output.contains(KEY) && !output.contains(SAID), "{output}");
    assert_eq!(
        files_containing(w.home.path(), KEY.as_bytes()),
        Vec::<String>::new()
    );
}

#[test]
fn a_key_kept_in_the_keychain_reaches_the_server_and_no_log_or_file() {
    const KEYCHAIN_KEY: &str = "sk-canary-keychain-3d8w-lynx";
    let w = World::new(json!({"steps": [], "default": {"text": "Noted."}}));
    // Saved the way Settings saves it (`Api::set_provider`): into the OS keychain.
    let set = common::output_with_line(
        w.command(&["provider", "set", "--key-stdin"])
            .env("ECHO_LOG", "trace"),
        KEYCHAIN_KEY,
    );
    assert!(set.status.success(), "{}", tail(&set));
    let out = w
        .command(&["ask", "hello"])
        .env("ECHO_LOG", "trace")
        .output()
        .expect("run echod");
    let used = w.mock.requests().expect("requests");
    // Leave the keychain as it was before asserting anything.
    w.ok(&["provider", "set", "--clear-key"]);
    assert!(out.status.success(), "{}", tail(&out));
    assert_eq!(
        used.last().map(|r| r["api_key"].clone()),
        Some(json!(KEYCHAIN_KEY)),
        "the turn used the key from the keychain"
    );
    for (what, logs) in [("provider set", &set), ("ask", &out)] {
        let text = format!(
            "{}{}",
            common::stderr(logs),
            String::from_utf8_lossy(&logs.stdout)
        );
        assert!(
            !text.contains(KEYCHAIN_KEY),
            "the key is in the output of {what}"
        );
    }
    assert_eq!(
        files_containing(w.home.path(), KEYCHAIN_KEY.as_bytes()),
        Vec::<String>::new()
    );
}

#[test]
fn a_key_typed_into_the_settings_page_reaches_no_log_or_file() {
    const TYPED_KEY: &str = "sk-canary-typed-6p4r-ibis";
    let w = World::new(json!({"api_key": TYPED_KEY, "steps": [], "default": {"text": "Noted."}}));
    let logs = tempfile::NamedTempFile::new().expect("log file");
    let mut command = w.command(&["serve"]);
    command.env("ECHO_LOG", "trace");
    let s = common::gateway::Server::start_logging(
        &w,
        command,
        std::process::Stdio::from(logs.reopen().expect("log file")),
    );
    // What Settings → Model provider sends when the person types a key and saves.
    let settings = json!({"kind": "openai", "base_url": w.mock.base_url(), "model": "typed",
        "fallback_models": []});
    let (saved, answer) = s.put(
        "/api/settings/provider",
        &json!({"settings": settings, "api_key": TYPED_KEY}),
    );
    let events = s.turn_events(&json!({"session": "typed", "input": "hello"}));
    // Leave the keychain as it was before asserting anything.
    let (cleared, _) = s.put(
        "/api/settings/provider",
        &json!({"settings": settings, "clear_api_key": true}),
    );
    assert_eq!((saved, cleared), (200, 200), "saving answered: {answer}");
    assert_eq!(
        events.last().map(|e| e["status"].clone()),
        Some(json!("completed")),
        "the turn used the typed key (the server refuses any other): {events:?}"
    );
    drop(s);
    let log = std::fs::read_to_string(logs.path()).expect("read the log");
    assert!(log.lines().count() > 20, "trace-level logging is on: {log}");
    assert!(
        !log.contains(TYPED_KEY),
        "the typed key is in the gateway's log"
    );
    assert_eq!(
        files_containing(w.home.path(), TYPED_KEY.as_bytes()),
        Vec::<String>::new()
    );
}

/// The end of a trace-level run's stderr: where its error is, without the thousand lines of
/// trace before it.
fn tail(out: &std::process::Output) -> String {
    let all = common::stderr(out);
    let lines: Vec<&str> = all.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// What a temporary chat said, for the scans.
const TEMP_SAID: &str = "quokka-marimba-5z8t";

/// A turn that tries to keep a note, then answers; an extractor that would learn what was said.
fn temporary_script() -> serde_json::Value {
    let memory = json!({"memories": [{"evidence": format!("my gate code is {TEMP_SAID}"),
        "content": format!("The user's gate code is {TEMP_SAID}."), "subject": "user",
        "kind": "fact", "slot": "gate_code", "value": TEMP_SAID, "source": "user_stated",
        "confidence": 0.9, "valid_until": null}]});
    json!({"steps": [
        {"model": "primary", "times": 1, "tool_calls": [{"id": "n1", "name": "memory_note",
            "arguments": json!({"note": format!("gate code {TEMP_SAID}")}).to_string()}]},
        {"model": "extractor", "when_tool": "extract_memories", "times": 100, "tool_calls": [{
            "id": "x", "name": "extract_memories", "arguments": memory.to_string()}]},
        {"model": "primary", "times": 100, "text": format!("Understood: {TEMP_SAID}.")}
    ]})
}

/// `echod ask --temporary`: the answer comes, then nothing of the chat is left in any file
/// (history, trace, captured requests), it is in no list, memory learned nothing (no
/// extraction call, the model's note refused) and was not read or touched; with
/// `--temporary=recall` memory is read but still not touched, while a kept turn touches it.
#[test]
fn a_temporary_chat_leaves_no_byte_on_disk_and_memory_as_it_was() {
    let w = World::with_config(temporary_script(), common::EXTRACTION_CONFIG);
    let teal = w.json(&[
        "memory",
        "add",
        "--json",
        "The user's favourite colour is teal.",
    ]);
    let teal = teal["memory"]["id"]
        .as_str()
        .expect("memory id")
        .to_string();
    let touched = |w: &World| {
        let shown = w.json(&["memory", "show", &teal, "--json"]);
        (shown["access_count"].as_i64(), shown["answers"].as_u64())
    };
    assert_eq!(touched(&w), (Some(0), Some(0)));

    let said = format!("my gate code is {TEMP_SAID}");
    let answer = w.ok(&["ask", "--temporary", &said]);
    assert!(answer.contains(TEMP_SAID), "{answer}");
    let requests = w.requests();
    assert!(
        requests
            .iter()
            .all(|r| offered(r).iter().all(|t| t != "extract_memories")),
        "no extraction ran: {requests:?}"
    );
    let first = &requests[0];
    assert!(
        !offered(first).iter().any(|t| t.starts_with("memory_")),
        "a sealed temporary chat is offered no memory tool: {:?}",
        offered(first)
    );
    assert!(
        !first.to_string().contains("teal"),
        "a sealed chat reads no memory"
    );
    let refused = requests[1]["messages"].to_string();
    assert!(
        refused.contains("temporary chat"),
        "the note was refused: {refused}"
    );

    assert_eq!(
        files_containing(w.home.path(), TEMP_SAID.as_bytes()),
        Vec::<String>::new()
    );
    assert_eq!(
        common::scan::terms_on_disk(w.home.path(), TEMP_SAID),
        Vec::<String>::new()
    );
    assert!(w.turns().is_empty(), "no trace is left");
    let sessions = w.ok(&["sessions", "list", "--json"]);
    assert!(!sessions.contains("temporary-"), "{sessions}");
    assert_eq!(touched(&w), (Some(0), Some(0)));

    // Allowed to recall: memory reaches the model, and stays untouched.
    let before = w.requests().len();
    w.ok(&["ask", "--temporary=recall", "which colour do I like?"]);
    let recalled = &w.requests()[before];
    assert!(recalled.to_string().contains("teal"), "{recalled}");
    assert!(offered(recalled).iter().any(|t| t == "memory_recall"));
    assert!(!offered(recalled).iter().any(|t| t == "memory_note"));
    assert_eq!(touched(&w), (Some(0), Some(0)));
    assert!(w.turns().is_empty(), "no trace is left");

    // A kept turn counts the use: the check above could fail.
    w.ok(&["ask", "--session", "kept", "which colour do I like?"]);
    let (count, answers) = touched(&w);
    assert!(
        count > Some(0) && answers == Some(1),
        "{count:?} {answers:?}"
    );
    let refused = w.run(&["ask", "--session", "kept", "--temporary", "hello"]);
    assert!(
        !refused.status.success(),
        "--session and --temporary conflict"
    );
}

/// A temporary chat whose process is killed mid-answer is on disk (the scan finds it), and the
/// next process to open the data directory deletes it: no byte of it is left.
#[test]
fn a_temporary_chat_cut_off_by_a_kill_is_gone_after_the_next_start() {
    let w = World::new(json!({"steps": [{"model": "primary", "hang": true}]}));
    let said = format!("my gate code is {TEMP_SAID}");
    let mut child = w
        .command(&["ask", "--temporary", &said])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn echod ask");
    common::wait_for(
        "the model request",
        std::time::Duration::from_secs(60),
        || !w.requests().is_empty(),
    );
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert!(
        !files_containing(w.home.path(), TEMP_SAID.as_bytes()).is_empty(),
        "the running chat is on disk (a scan that finds nothing proves nothing)"
    );
    w.ok(&["sessions", "list"]);
    assert_eq!(
        files_containing(w.home.path(), TEMP_SAID.as_bytes()),
        Vec::<String>::new()
    );
    assert!(w.turns().is_empty(), "no trace is left");
}

/// Over HTTP (the app's path): a temporary chat answers, is in no list while open, cannot be
/// asked for in a kept conversation, and is gone from every file when it is left (DELETE) or
/// when `echod serve` is stopped with SIGTERM while one is open.
#[test]
fn a_temporary_chat_over_http_is_gone_when_left_or_when_the_server_stops() {
    let w = World::new(json!({"steps": [
        {"model": "primary", "times": 1, "text": format!("Understood: {TEMP_SAID}.")},
        {"model": "primary", "times": 1, "text": "Hello."},
        {"model": "primary", "times": 100, "text": format!("Understood: {TEMP_SAID}.")}
    ]}));
    let server = common::gateway::Server::start(&w);
    let said = format!("my gate code is {TEMP_SAID}");
    let events = server.turn_events(&json!({"session": "tmp-a", "input": said,
        "temporary": "sealed"}));
    assert!(
        events.iter().any(|e| e["type"] == "turn_finished"),
        "{events:?}"
    );
    let (_, listed) = server.get("/api/sessions");
    assert!(!listed.contains("tmp-a"), "{listed}");
    let (status, history) = server.get("/api/sessions/tmp-a/messages");
    assert_eq!(status, 200, "open, it has its history");
    assert!(history.contains(TEMP_SAID));

    server.turn_events(&json!({"session": "kept", "input": "hello"}));
    let (status, refused) = server.post(
        "/api/turns",
        &json!({"session": "kept", "input": "hi", "temporary": "sealed"}),
    );
    assert_eq!(status, 400, "{refused}");
    assert!(refused.contains("kept conversation"), "{refused}");

    let (status, deleted) = server.raw(
        "DELETE",
        "/api/sessions/tmp-a?memories=keep",
        &[
            ("Host", &server.host()),
            ("Authorization", &server.bearer()),
        ],
        None,
    );
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        files_containing(w.home.path(), TEMP_SAID.as_bytes()),
        Vec::<String>::new()
    );

    // Left open when the server stops: deleted as it closes.
    server.turn_events(&json!({"session": "tmp-b", "input": said, "temporary": "recall"}));
    assert!(!files_containing(w.home.path(), TEMP_SAID.as_bytes()).is_empty());
    let pid = server.child.id().to_string();
    let term = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill -TERM");
    assert!(term.success());
    let mut server = server;
    common::wait_for(
        "echod serve to stop",
        std::time::Duration::from_secs(60),
        || matches!(server.child.try_wait(), Ok(Some(_))),
    );
    assert_eq!(
        files_containing(w.home.path(), TEMP_SAID.as_bytes()),
        Vec::<String>::new()
    );
}
