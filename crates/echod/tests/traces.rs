//! The trace viewer's engine side, through the real `echod` and the scripted mock model:
//! what each model call sent and received is kept (the key redacted, compactly), spans say
//! what they cover, turns filter, retention applies, capture can be switched off, a turn
//! exports as a case that `echod replay` runs again — and reports where an edited case
//! diverges. The shipped cases in `tests/cases/` replay clean, and any edit of one is
//! replayed or refused without a panic or a hang.

mod common;

use common::{World, stderr};
use serde_json::{Value, json};
use std::path::Path;

const KEY: &str = "sk-canary-trace-7f3Kq9Lm2Xw";

fn notes(dir: &Path) -> String {
    let path = dir.join("notes.txt");
    std::fs::write(&path, "the launch code is 4242\n").expect("write notes");
    path.to_str().expect("utf8 path").to_string()
}

fn tool_script(path: &str) -> Value {
    json!({"steps": [
        {"tool_calls": [{"id": "call_1", "name": "read_file",
                         "arguments": json!({"path": path}).to_string()}]},
        {"text": "The launch code is 4242."}
    ]})
}

fn spans_of<'a>(trace: &'a Value, kind: &str) -> Vec<&'a Value> {
    trace["spans"]
        .as_array()
        .expect("spans")
        .iter()
        .filter(|s| s["kind"] == kind)
        .collect()
}

#[test]
fn each_model_call_keeps_its_request_and_response_with_the_key_redacted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = notes(dir.path());
    let mut script = tool_script(&path);
    script["api_key"] = json!(KEY);
    let w = World::new(script);
    let out = w
        .command(&[
            "ask",
            "--session",
            "s1",
            &format!("what is in notes.txt? (my key is {KEY})"),
        ])
        .env("ECHO_LLM_API_KEY", KEY)
        .output()
        .expect("run echod");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let turns = w.turns();
    let turn_id = turns[0]["id"].as_str().expect("id");
    assert_eq!(turns[0]["approvals"], 0);
    assert_eq!(turns[0]["degraded"], false);
    let trace = w.trace(turn_id);
    assert_eq!(trace["turn"]["id"], turn_id);

    // Spans say what they cover.
    let models = spans_of(&trace, "model");
    assert_eq!(models.len(), 2, "{trace}");
    assert!(models.iter().all(|s| s["attrs"]["captured"] == true));
    let tools = spans_of(&trace, "tool");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "tool:read_file");
    assert!(
        tools[0]["attrs"]["result"]
            .as_str()
            .is_some_and(|r| r.contains("4242"))
    );
    assert_eq!(spans_of(&trace, "memory_read").len(), 1);
    assert!(
        spans_of(&trace, "stage")
            .iter()
            .any(|s| s["name"] == "context")
    );

    // The first call: the request as sent, the user's text with the key redacted.
    let first = w.json(&[
        "trace",
        "call",
        turn_id,
        models[0]["id"].as_str().expect("id"),
    ]);
    let messages = first["request"]["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system");
    let user = messages.last().expect("user message");
    assert_eq!(user["role"], "user");
    let text = user["content"].as_str().expect("user text");
    assert!(
        text.ends_with("what is in notes.txt? (my key is [redacted])"),
        "{text}"
    );
    assert!(
        first["request"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "read_file")
    );
    assert_eq!(first["response"]["tool_calls"][0]["name"], "read_file");
    // The second call sent the tool result back and got the answer.
    let second = w.json(&[
        "trace",
        "call",
        turn_id,
        models[1]["id"].as_str().expect("id"),
    ]);
    let sent = second["request"]["messages"].as_array().expect("messages");
    assert!(
        sent.iter()
            .any(|m| m["role"] == "tool"
                && m["content"].as_str().is_some_and(|c| c.contains("4242")))
    );
    assert_eq!(second["response"]["text"], "The launch code is 4242.");

    // The key is in no capture (the user's own message keeps it in the chat history).
    for call in [&first, &second] {
        assert!(!call.to_string().contains(KEY), "{call}");
    }

    // A span that is not a captured model call of this turn is a clear error.
    let out = w.run(&[
        "trace",
        "call",
        turn_id,
        tools[0]["id"].as_str().expect("id"),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("captured model call not found"));
}

#[test]
fn capture_off_keeps_the_spans_but_no_request_or_response() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = World::with_config(
        tool_script(&notes(dir.path())),
        "[trace]\ncapture = false\n",
    );
    w.ok(&["ask", "--session", "s1", "what is in notes.txt?"]);
    let turn_id = w.turns()[0]["id"].as_str().expect("id").to_string();
    let trace = w.trace(&turn_id);
    let models = spans_of(&trace, "model");
    assert_eq!(models.len(), 2);
    assert!(models.iter().all(|s| s["attrs"]["captured"] == false));
    let out = w.run(&[
        "trace",
        "call",
        &turn_id,
        models[0]["id"].as_str().expect("id"),
    ]);
    assert!(!out.status.success());
    let out = w.run(&["trace", "export", &turn_id, "case.json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no captured model calls"));
}

#[test]
fn capture_switched_off_in_the_settings_applies_to_the_next_turn_and_is_saved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = notes(dir.path());
    let mut script = tool_script(&path);
    script["steps"]
        .as_array_mut()
        .expect("steps")
        .push(json!({"text": "again"}));
    let w = World::new(script);
    assert_eq!(
        w.json(&["trace", "settings"]),
        json!({"capture": true, "retention_days": 30, "notice_rate": 0.3})
    );
    w.ok(&["ask", "--session", "s1", "what is in notes.txt?"]);
    assert_eq!(
        w.json(&[
            "trace",
            "settings",
            "--capture",
            "false",
            "--retention-days",
            "7"
        ]),
        json!({"capture": false, "retention_days": 7, "notice_rate": 0.3})
    );
    let config = std::fs::read_to_string(w.home.path().join("config.toml")).expect("config");
    assert!(
        config.contains("[trace]") && config.contains("capture = false"),
        "{config}"
    );
    w.ok(&["ask", "--session", "s1", "and now?"]);
    let turns = w.turns();
    let captured = |turn: &Value| -> Vec<Value> {
        spans_of(&w.trace(turn["id"].as_str().expect("id")), "model")
            .iter()
            .map(|s| s["attrs"]["captured"].clone())
            .collect()
    };
    assert_eq!(
        captured(&turns[0]),
        [json!(false)],
        "the turn after the change"
    );
    assert_eq!(captured(&turns[1]), [json!(true), json!(true)]);
    let bad = w.run(&["trace", "settings", "--retention-days", "99999"]);
    assert!(!bad.status.success());
    // The share of fallbacks from which the app says so: kept in the file, checked.
    let notice = w.json(&["trace", "settings", "--notice-rate", "0.5"]);
    assert_eq!(notice["notice_rate"], 0.5, "{notice}");
    assert_eq!(w.json(&["trace", "settings"])["notice_rate"], 0.5);
    let bad = w.run(&["trace", "settings", "--notice-rate", "2"]);
    assert!(
        !bad.status.success() && stderr(&bad).contains("between 0 and 1"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn retention_removes_old_captures_when_the_engine_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = World::with_config(
        tool_script(&notes(dir.path())),
        "[trace]\nretention_days = 0\n",
    );
    w.ok(&["ask", "--session", "s1", "what is in notes.txt?"]);
    // The next process applies the retention at start: with 0 days, every capture made
    // before that moment goes; the spans stay.
    let turn_id = w.turns()[0]["id"].as_str().expect("id").to_string();
    let trace = w.trace(&turn_id);
    let models = spans_of(&trace, "model");
    assert_eq!(models.len(), 2);
    let out = w.run(&[
        "trace",
        "call",
        &turn_id,
        models[0]["id"].as_str().expect("id"),
    ]);
    assert!(!out.status.success(), "the capture outlived its retention");
}

#[test]
fn turns_filter_by_session_status_and_model() {
    let w = World::new(json!({"steps": [
        {"text": "one"},
        {"text": "two"},
        {"status": 400, "error_message": "bad request"}
    ]}));
    w.ok(&["ask", "--session", "alpha", "first"]);
    w.ok(&["ask", "--session", "beta", "second"]);
    assert!(
        !w.run(&["ask", "--session", "beta", "third"])
            .status
            .success()
    );

    let list = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["trace", "list", "--json"];
        all.extend_from_slice(args);
        w.json(&all)
            .as_array()
            .expect("turns")
            .iter()
            .map(|t| t["input"].as_str().expect("input").to_string())
            .collect()
    };
    assert_eq!(list(&[]), ["third", "second", "first"]);
    assert_eq!(list(&["--session", "beta"]), ["third", "second"]);
    assert_eq!(list(&["--status", "failed"]), ["third"]);
    assert_eq!(
        list(&["--status", "completed", "--session", "alpha"]),
        ["first"]
    );
    assert_eq!(
        list(&["--model", "primary", "--status", "completed"]),
        ["second", "first"]
    );
    assert!(list(&["--since", "2999-01-01T00:00:00Z"]).is_empty());
    assert_eq!(list(&["--until", "2999-01-01T00:00:00Z"]).len(), 3);
    let bad = w.run(&["trace", "list", "--since", "yesterday"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("RFC 3339"));
    let bad = w.run(&["trace", "list", "--status", "done"]);
    assert!(!bad.status.success());
}

#[test]
fn an_exported_turn_replays_clean_and_an_edited_case_diverges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let w = World::new(tool_script(&notes(dir.path())));
    w.ok(&["ask", "--session", "s1", "what is in notes.txt?"]);
    let turn_id = w.turns()[0]["id"].as_str().expect("id").to_string();
    let case_path = w.home.path().join("case.json");
    let case_file = case_path.to_str().expect("utf8");
    w.ok(&["trace", "export", &turn_id, case_file]);
    let case: Value =
        serde_json::from_str(&std::fs::read_to_string(&case_path).expect("case")).expect("json");
    assert_eq!(case["input"], "what is in notes.txt?");
    assert_eq!(case["replies"].as_array().expect("replies").len(), 2);
    assert_eq!(case["tool_calls"][0]["name"], "read_file");
    assert!(
        case["tool_calls"][0]["result"]
            .as_str()
            .is_some_and(|r| r.contains("4242"))
    );
    assert_eq!(case["final_text"], "The launch code is 4242.");

    // The notes file is gone: the replay must answer read_file from the recording.
    std::fs::remove_file(dir.path().join("notes.txt")).expect("remove notes");
    let report = w.json(&["replay", case_file, "--json"]);
    assert_eq!(report["divergence"], Value::Null, "{report}");
    assert_eq!(report["replayed_calls"][0]["name"], "read_file");
    assert_eq!(report["final_text"], "The launch code is 4242.");

    // A case edited to expect another tool fails, naming the first difference.
    let mut edited = case.clone();
    edited["tool_calls"][0]["name"] = json!("list_dir");
    std::fs::write(&case_path, edited.to_string()).expect("write edited case");
    let out = w.run(&["replay", case_file]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("DIVERGED: tool call #1: expected list_dir, got read_file"),
        "{text}"
    );
    // Other arguments, and another final text, diverge too.
    let mut edited = case.clone();
    edited["tool_calls"][0]["arguments"] = json!("{\"path\": \"/elsewhere.txt\"}");
    std::fs::write(&case_path, edited.to_string()).expect("write edited case");
    let report = w.run(&["replay", case_file, "--json"]);
    assert_eq!(report.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&report.stdout).expect("report json");
    assert_eq!(report["divergence"]["kind"], "different_arguments");
    let mut edited = case;
    edited["final_text"] = json!("Something else.");
    std::fs::write(&case_path, edited.to_string()).expect("write edited case");
    let report: Value =
        serde_json::from_slice(&w.run(&["replay", case_file, "--json"]).stdout).expect("json");
    assert_eq!(report["divergence"]["kind"], "different_final_text");

    // Not a case: a clear error, exit 2 or 1, never a panic.
    std::fs::write(&case_path, "{\"format\": 1}").expect("write");
    let out = w.run(&["replay", case_file]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a replay case"));
}

#[test]
fn the_shipped_cases_replay_clean() {
    let cases = shipped_case_files();
    assert!(cases.len() >= 3, "tests/cases holds {} cases", cases.len());
    let w = World::new(json!({"steps": []}));
    for case in &cases {
        let out = w.run(&["replay", case.to_str().expect("utf8"), "--json"]);
        assert!(
            out.status.success(),
            "{} diverged: {}{}",
            case.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The files of the shipped replay cases (`tests/cases/*.json`), in name order.
fn shipped_case_files() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
}

/// The shipped replay cases, parsed.
fn shipped_cases() -> Vec<Value> {
    shipped_case_files()
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).expect("case")).expect("json"))
        .collect()
}

/// One change to a case.
#[derive(Clone, Debug)]
enum Edit {
    /// Remove the member or item.
    Remove,
    /// Put any JSON value there.
    Put(Value),
    /// Put a value of the same kind there: this text, this number, or this number's parity
    /// as a boolean (a case that still parses, with odd contents).
    Like(String, i64),
}

/// Applies `change` where `path` leads (each step picks a child by its index, modulo how many
/// there are; a leaf ends the walk early).
fn edit(value: &mut Value, path: &[usize], change: Edit) {
    let Some((&step, rest)) = path.split_first() else {
        *value = match (change, &*value) {
            (Edit::Put(new), _) => new,
            (Edit::Like(_, n), Value::Number(_)) => json!(n),
            (Edit::Like(_, n), Value::Bool(_)) => json!(n % 2 == 0),
            (Edit::Like(text, _), _) => json!(text),
            (Edit::Remove, _) => Value::Null,
        };
        return;
    };
    let remove = rest.is_empty() && matches!(change, Edit::Remove);
    let child = match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(step % map.len()).cloned().expect("key");
            if remove {
                map.remove(&key);
                return;
            }
            map.get_mut(&key).expect("child")
        }
        Value::Array(items) if !items.is_empty() => {
            let at = step % items.len();
            if remove {
                items.remove(at);
                return;
            }
            &mut items[at]
        }
        leaf => return edit(leaf, &[], change),
    };
    edit(child, rest, change);
}

#[test]
fn any_edit_of_a_case_is_replayed_or_refused_without_a_panic_or_a_hang() {
    use proptest::prelude::*;
    let cases = shipped_cases();
    let w = World::new(json!({"steps": []}));
    let file = w.home.path().join("edited.json");
    let file_arg = file.to_str().expect("utf8").to_string();
    // Each case is a process: fewer than proptest's default unless PROPTEST_CASES says.
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 32;
    }
    let keys = &[
        "format",
        "input",
        "max_iterations",
        "tools_offered",
        "memories",
        "replies",
        "tool_calls",
        "final_text",
        "name",
        "arguments",
        "result",
        "parameters",
        "content",
    ];
    let change = prop_oneof![
        1 => Just(Edit::Remove),
        2 => common::any_json::any_json(keys, &[]).prop_map(Edit::Put),
        3 => (".{0,40}", any::<i64>()).prop_map(|(t, n)| Edit::Like(t, n)),
    ];
    let edits = (
        0..cases.len(),
        prop::collection::vec((prop::collection::vec(0usize..64, 1..6), change), 1..4),
        prop::option::weighted(0.1, 0.0f64..1.0),
    );
    proptest!(config, |((k, changes, cut) in edits)| {
        let mut case = cases[k].clone();
        for (path, change) in changes {
            edit(&mut case, &path, change);
        }
        let mut text = case.to_string();
        if let Some(cut) = cut {
            let mut at = (text.len() as f64 * cut) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
        std::fs::write(&file, &text).expect("write case");
        let out = common::output_within(
            &mut w.command(&["replay", &file_arg, "--json"]),
            std::time::Duration::from_secs(60),
        );
        let stderr = common::stderr(&out);
        prop_assert!(!stderr.contains("panicked"), "{text}\n{stderr}");
        match out.status.code() {
            // Replayed: the same trajectory, or a divergence, as a report.
            Some(0 | 1) if out.stdout.first() == Some(&b'{') => {
                let report: Result<Value, _> = serde_json::from_slice(&out.stdout);
                prop_assert!(report.is_ok(), "{text}\n{}", String::from_utf8_lossy(&out.stdout));
            }
            // Refused: a message saying why.
            _ => prop_assert!(
                !stderr.trim().is_empty(),
                "{text}: exit {:?} with nothing said",
                out.status
            ),
        }
    });
}

#[test]
fn background_model_calls_are_captured_too() {
    // Memory extraction and the conflict judge run after the answer, on the memory model:
    // their calls are traced under the turn and keep what they sent and received, with the
    // key redacted, like the main loop's.
    let mut script = common::diet_conflict_script();
    script["api_key"] = json!(KEY);
    let w = World::with_config(script, common::EXTRACTION_CONFIG);
    let out = w
        .command(&[
            "ask",
            "--session",
            "s1",
            &format!("I am vegetarian and I love a good steak (key {KEY})"),
        ])
        .env("ECHO_LLM_API_KEY", KEY)
        .output()
        .expect("run echod");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let turn_id = w.turns()[0]["id"].as_str().expect("id").to_string();
    let trace = w.trace(&turn_id);
    let models = spans_of(&trace, "model");
    let named = |name: &str| {
        models
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} call span in {trace}"))
    };
    for (name, tool) in [
        ("extract_memories", "extract_memories"),
        ("judge_memory_conflict", "judge_memory_conflict"),
    ] {
        let span = named(name);
        assert_eq!(span["attrs"]["captured"], true, "{span}");
        assert_eq!(span["model"], "extractor");
        let call = w.json(&[
            "trace",
            "call",
            &turn_id,
            span["id"].as_str().expect("span id"),
        ]);
        assert_eq!(call["request"]["tool_choice"], tool, "{call}");
        assert_eq!(call["response"]["tool_calls"][0]["name"], tool, "{call}");
        let sent = call["request"].to_string();
        assert!(!sent.contains(KEY), "the key reached storage: {sent}");
    }
    let extraction = w.json(&[
        "trace",
        "call",
        &turn_id,
        named("extract_memories")["id"].as_str().expect("span id"),
    ]);
    let sent = extraction["request"]["messages"].to_string();
    assert!(
        sent.contains("I am vegetarian and I love a good steak (key [redacted])"),
        "{sent}"
    );
}
