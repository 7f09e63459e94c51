//! `echod serve` as a real process on loopback: refusing requests without the token, with a
//! foreign Host or Origin; pairing a browser page with a one-time code; a turn streamed as server-sent events whose approval question is
//! answered through the endpoint; the OpenAPI document.

mod common;

use common::gateway::Server;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Name, headers, expected status, expected error code.
type Case = (&'static str, Vec<(&'static str, String)>, u16, &'static str);

#[test]
fn requests_without_the_token_or_from_foreign_hosts_and_origins_are_refused() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start(&w);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(w.home.path().join("serve-token"))
            .expect("meta")
            .permissions(),
    );
    assert_eq!(
        mode & 0o777,
        0o600,
        "the token file is readable only by the user"
    );
    assert!(s.token.len() >= 64);

    let host = s.host();
    let good = s.bearer();
    let cases: Vec<Case> = vec![
        (
            "no token",
            vec![("Host", host.clone())],
            401,
            "unauthorized",
        ),
        (
            "wrong token",
            vec![
                ("Host", host.clone()),
                ("Authorization", "Bearer nope".into()),
            ],
            401,
            "unauthorized",
        ),
        (
            "token without Bearer",
            vec![("Host", host.clone()), ("Authorization", s.token.clone())],
            401,
            "unauthorized",
        ),
        (
            "foreign Origin",
            vec![
                ("Host", host.clone()),
                ("Authorization", good.clone()),
                ("Origin", "http://evil.example".into()),
            ],
            403,
            "foreign_origin",
        ),
        (
            "foreign Host (DNS rebinding)",
            vec![
                ("Host", format!("evil.example:{}", s.port)),
                ("Authorization", good.clone()),
            ],
            403,
            "foreign_host",
        ),
        (
            "right host, wrong port",
            vec![
                ("Host", "127.0.0.1:1".into()),
                ("Authorization", good.clone()),
            ],
            403,
            "foreign_host",
        ),
        (
            "good",
            vec![("Host", host.clone()), ("Authorization", good.clone())],
            200,
            "",
        ),
        (
            "good from localhost with its own Origin",
            vec![
                ("Host", format!("localhost:{}", s.port)),
                ("Authorization", good.clone()),
                ("Origin", format!("http://localhost:{}", s.port)),
            ],
            200,
            "",
        ),
    ];
    for (name, headers, status, code) in cases {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (got, body) = s.raw("GET", "/api/sessions", &headers, None);
        assert_eq!(got, status, "{name}: {body}");
        if !code.is_empty() {
            let v: Value =
                serde_json::from_str(&body).unwrap_or_else(|e| panic!("{name}: {e}: {body}"));
            assert_eq!(v["error"]["code"], code, "{name}");
        }
    }

    // The token survives a restart.
    let token = s.token.clone();
    drop(s);
    assert_eq!(Server::start(&w).token, token);
}

#[test]
fn a_turn_streams_as_events_and_its_approval_is_answered_through_the_endpoint() {
    let w = World::with_config(
        json!({ "steps": [
            { "model": "primary", "tool_calls": [{"id": "c1", "name": "shell", "arguments": "{\"command\": \"touch from-gateway.txt\"}"}] },
            { "model": "primary", "text": "made the file" },
            { "model": "explainer", "times": 5, "text": "It creates an empty file." },
        ]}),
        "[tools]\nexplain_model = \"explainer\"\n",
    );
    let s = Server::start(&w);

    let (status, body) = s.post("/api/turns", &json!({ "session": "web", "input": "" }));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("invalid_input"), "{body}");

    // Stream the turn; when the question arrives, answer it on another connection.
    let mut events = Vec::new();
    for line in s.stream_turn("web", "make a file").lines() {
        let line = line.expect("line");
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let event: Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}"));
        if event["type"] == "approval_requested" {
            assert!(
                event["detail"]
                    .as_str()
                    .unwrap_or("")
                    .contains("touch from-gateway.txt")
            );
            let id = event["request_id"].as_str().expect("request id");
            let (status, body) = s.post(
                &format!("/api/approvals/{id}"),
                &json!({ "answer": "maybe" }),
            );
            assert_eq!(status, 400, "{body}");
            let (status, body) = s.post(
                &format!("/api/approvals/{id}"),
                &json!({ "answer": "allow_once" }),
            );
            assert_eq!(status, 204, "{body}");
            let (status, _) = s.post(
                &format!("/api/approvals/{id}"),
                &json!({ "answer": "deny" }),
            );
            assert_eq!(status, 404, "a question is answered once");
        }
        let last = event["type"] == "turn_finished";
        events.push(event);
        if last {
            break;
        }
    }
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(
        kinds.contains(&"approval_requested") && kinds.contains(&"approval_resolved"),
        "{kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"turn_finished"));
    assert!(
        s.work().join("from-gateway.txt").exists(),
        "the allowed command ran"
    );

    let (status, audit) = s.get("/api/approvals");
    assert_eq!(status, 200);
    let audit: Value = serde_json::from_str(&audit).expect("json");
    assert_eq!(audit[0]["decided_by"], "user");
    assert_eq!(audit[0]["decision"], "allow");
    let (status, history) = s.get("/api/sessions/web/messages");
    assert_eq!(status, 200);
    assert!(history.contains("made the file"), "{history}");
    assert_eq!(s.get("/api/sessions/nope/messages").0, 404);
    let (status, _) = s.post("/api/turns/not-a-turn/cancel", &json!({}));
    assert_eq!(status, 404);
}

#[test]
fn the_openapi_document_describes_the_endpoints() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start(&w);
    let (status, body) = s.get("/api/openapi.json");
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&body).expect("json");
    for path in [
        "/api/turns",
        "/api/approvals/{request_id}",
        "/api/rules",
        "/api/sessions/{session}/messages",
        "/api/memory/{id}",
    ] {
        assert!(
            doc["paths"].get(path).is_some(),
            "{path} missing from {}",
            doc["paths"]
        );
    }
    assert!(doc["components"]["schemas"].get("SendTurn").is_some());
    // The server serves the document the repository keeps (which a test keeps current).
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json"),
        )
        .expect("docs/openapi.json"),
    )
    .expect("json");
    assert_eq!(doc, committed);
}

#[test]
fn a_running_turn_is_stopped_through_the_cancel_endpoint() {
    let w = World::new(json!({ "steps": [
        { "text": "one two three four five six seven eight nine ten", "chunks": 10, "chunk_delay_ms": 300 },
    ]}));
    let s = Server::start(&w);
    let mut finished = None;
    let mut cancelled = false;
    for line in s.stream_turn("web", "count slowly").lines() {
        let line = line.expect("line");
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let event: Value = serde_json::from_str(data).expect("json");
        if event["type"] == "token" && !cancelled {
            let (status, body) = s.raw(
                "DELETE",
                "/api/sessions/web?memories=delete",
                &[("Host", &s.host()), ("Authorization", &s.bearer())],
                None,
            );
            assert_eq!(
                status, 409,
                "a session with a running turn is not deleted: {body}"
            );
            assert!(body.contains("\"busy\""), "{body}");
            assert!(body.contains("turn running"), "{body}");
            let turn = event["turn_id"].as_str().expect("turn id");
            let (status, body) = s.post(&format!("/api/turns/{turn}/cancel"), &json!({}));
            assert_eq!(status, 204, "{body}");
            cancelled = true;
        }
        if event["type"] == "turn_finished" {
            finished = Some(event);
            break;
        }
    }
    let finished = finished.expect("turn_finished");
    assert_eq!(finished["status"], "interrupted");
    let (_, history) = s.get("/api/sessions/web/messages");
    assert!(
        history.contains("\"partial\""),
        "the partial answer is kept: {history}"
    );
}

#[test]
fn the_built_ui_is_served_without_a_token_but_only_to_this_host() {
    let ui = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        ui.path().join("index.html"),
        "<!doctype html><title>Echo Desk</title>",
    )
    .expect("write");
    std::fs::create_dir_all(ui.path().join("assets")).expect("mkdir");
    std::fs::write(ui.path().join("assets/app.js"), "console.log('hi')").expect("write");
    let w = World::new(json!({ "steps": [] }));
    let dir = ui.path().display().to_string();
    let s = Server::start_with(&w, &["--ui", &dir]);
    let host = s.host();
    let (status, body) = s.raw("GET", "/", &[("Host", &host)], None);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<title>Echo Desk</title>"));
    let (status, body) = s.raw("GET", "/assets/app.js", &[("Host", &host)], None);
    assert_eq!((status, body.as_str()), (200, "console.log('hi')"));
    let (status, body) = s.raw("GET", "/sessions/work", &[("Host", &host)], None);
    assert_eq!(status, 200, "client-side routes get the page: {body}");
    assert!(body.contains("<title>Echo Desk</title>"));
    let evil = format!("evil.example:{}", s.port);
    assert_eq!(s.raw("GET", "/", &[("Host", &evil)], None).0, 403);
    assert_eq!(
        s.raw("GET", "/api/sessions", &[("Host", &host)], None).0,
        401
    );

    let missing = w.run(&["serve", "--ui", "/nonexistent/dist"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has no index.html"));
}

#[test]
fn a_browser_page_pairs_with_a_one_time_code_for_a_token_that_dies_with_the_process() {
    let ui = tempfile::tempdir().expect("tempdir");
    std::fs::write(ui.path().join("index.html"), "<!doctype html>").expect("write");
    let dir = ui.path().display().to_string();
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start_with(&w, &["--ui", &dir]);
    let banner: Vec<String> = (0..3).map(|_| s.next_line()).collect();
    assert!(
        !banner.concat().contains(&s.token),
        "the file's token is never printed: {banner:?}"
    );
    let code_of = |line: &str| -> String {
        line.split_once("#pair=")
            .unwrap_or_else(|| panic!("no pairing code in {line:?}"))
            .1
            .to_string()
    };
    let open = banner
        .iter()
        .find(|l| l.starts_with(&format!("open: http://{}/#pair=", s.host())))
        .unwrap_or_else(|| panic!("no address to open in {banner:?}"));
    let code = code_of(open);
    let host = s.host();
    let pair = |s: &Server, code: &str, origin: Option<&str>| {
        let mut headers = vec![("Host", host.as_str())];
        headers.extend(origin.map(|o| ("Origin", o)));
        s.raw(
            "POST",
            "/api/pair",
            &headers,
            Some(&json!({ "code": code })),
        )
    };
    let sessions = |s: &Server, token: &str| {
        let bearer = format!("Bearer {token}");
        s.raw(
            "GET",
            "/api/sessions",
            &[("Host", &s.host()), ("Authorization", &bearer)],
            None,
        )
        .0
    };

    let (status, body) = pair(&s, &"0".repeat(code.len()), None);
    assert_eq!(status, 401, "a wrong code: {body}");
    assert_eq!(json_of(&body)["error"]["code"], "unauthorized");
    let (status, body) = pair(&s, &code, Some("http://evil.example"));
    assert_eq!(status, 403, "another site cannot pair: {body}");

    let (status, body) = pair(&s, &code, Some(&format!("http://{host}")));
    assert_eq!(
        status, 200,
        "the printed code pairs (a refused try did not spend it): {body}"
    );
    let token = json_of(&body)["token"]
        .as_str()
        .expect("a token")
        .to_string();
    assert_eq!(token.len(), 64);
    assert_ne!(token, s.token, "the page never gets the file's token");
    assert_eq!(sessions(&s, &token), 200, "the paired token opens the API");
    let (status, body) = pair(&s, &code, None);
    assert_eq!(status, 401, "a code works once: {body}");
    assert!(body.contains("open the newest address"), "{body}");

    // Each pairing prints the address for the next page; it is a new code, for the same token.
    let next = s.next_line();
    assert!(next.starts_with("paired a browser page"), "{next}");
    let second = code_of(&next);
    assert_ne!(second, code);
    let (status, body) = pair(&s, &second, None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["token"], token.as_str());
    let third = code_of(&s.next_line());

    // A new run: the paired token and the last run's code open nothing; the file's token does.
    let file_token = s.token.clone();
    drop(s);
    let s = Server::start_with(&w, &["--ui", &dir]);
    let host = s.host();
    let pair = |code: &str| {
        s.raw(
            "POST",
            "/api/pair",
            &[("Host", &host)],
            Some(&json!({ "code": code })),
        )
    };
    assert_eq!(
        sessions(&s, &token),
        401,
        "a paired token dies with its process"
    );
    assert_eq!(sessions(&s, &file_token), 200);
    assert_eq!(pair(&third).0, 401, "a code dies with its process");
    let (status, body) = s.raw("POST", "/api/pair", &[("Host", &host)], Some(&json!({})));
    assert_eq!(
        (status, json_of(&body)["error"]["code"].clone()),
        (400, json!("invalid_input")),
        "{body}"
    );

    // The sign-in log keeps each pairing and wrong code of both runs, newest first.
    let (status, body) = s.get("/api/devices/events");
    assert_eq!(status, 200, "{body}");
    let log = json_of(&body);
    assert_eq!(
        access_kinds(&log),
        [
            "wrong_code",
            "page_paired",
            "wrong_code",
            "page_paired",
            "wrong_code"
        ],
        "{log}"
    );
    assert!(log[1]["peer"].as_str().is_some(), "{log}");
}

#[test]
fn without_a_flag_serve_serves_the_ui_built_into_echod() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start(&w);
    let host = s.host();
    let (status, body) = s.raw("GET", "/", &[("Host", &host)], None);
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist/index.html");
    // The README's test command builds the UI before the Rust tests; a debug echod reads
    // ui/dist from disk, a release one carries it inside.
    match std::fs::read_to_string(&dist) {
        Ok(index) => {
            assert_eq!((status, body.as_str()), (200, index.as_str()));
            let (status, page) = s.raw("GET", "/memory/some-id", &[("Host", &host)], None);
            assert_eq!(
                (status, page.as_str()),
                (200, index.as_str()),
                "client-side routes"
            );
            let evil = format!("evil.example:{}", s.port);
            assert_eq!(s.raw("GET", "/", &[("Host", &evil)], None).0, 403);
        }
        Err(_) => {
            assert_eq!(status, 404, "{body}");
            assert!(body.contains("npm run build"), "{body}");
        }
    }
}

#[test]
fn sessions_are_renamed_and_deleted_with_their_history() {
    let w = World::new(json!({ "steps": [{ "text": "hello" }, { "text": "again" }] }));
    w.ok(&["ask", "--session", "first", "hi"]);
    w.ok(&["ask", "--session", "second", "hi"]);
    let s = Server::start(&w);
    let (status, body) = s.raw(
        "PATCH",
        "/api/sessions/first",
        &[("Host", &s.host()), ("Authorization", &s.bearer())],
        Some(&json!({ "new_name": "renamed" })),
    );
    assert_eq!(status, 200, "{body}");
    let renamed: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(renamed["name"], "renamed");
    assert_eq!(renamed["title"], "renamed", "lists show the name given");
    assert_eq!(renamed["message_count"], 2);
    let (status, body) = s.raw(
        "PATCH",
        "/api/sessions/renamed",
        &[("Host", &s.host()), ("Authorization", &s.bearer())],
        Some(&json!({ "new_name": "second" })),
    );
    assert_eq!(status, 400, "a taken name: {body}");
    assert!(body.contains("already exists"), "{body}");
    let (status, history) = s.get("/api/sessions/renamed/messages");
    assert_eq!(status, 200);
    assert!(history.contains("hello"), "{history}");

    let delete = |path: &str| {
        s.raw(
            "DELETE",
            path,
            &[("Host", &s.host()), ("Authorization", &s.bearer())],
            None,
        )
    };
    // Deleting a conversation says what becomes of the memories learned in it.
    let (status, body) = delete("/api/sessions/renamed");
    assert_eq!(status, 400, "no word on its memories: {body}");
    assert!(body.contains("memories"), "{body}");
    let (status, body) = delete("/api/sessions/renamed?memories=keep");
    assert_eq!((status, json_of(&body)), (200, json!({"memories": 0})));
    assert_eq!(delete("/api/sessions/renamed?memories=keep").0, 404);
    assert_eq!(s.get("/api/sessions/renamed/messages").0, 404);
    let (_, list) = s.get("/api/sessions");
    let list: Value = serde_json::from_str(&list).expect("json");
    let names: Vec<&str> = list
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["second"]);
    // The deleted session's turns and their traces are gone too.
    let turns = w.turns();
    assert_eq!(turns.len(), 1, "{turns:?}");
    drop(s);

    // The CLI does the same.
    w.ok(&["sessions", "rename", "second", "kept"]);
    let unasked = w.run(&["sessions", "delete", "kept"]);
    assert!(
        !unasked.status.success() && stderr(&unasked).contains("--memories keep|forget|delete"),
        "nobody can be asked, so the flag is needed: {}",
        stderr(&unasked)
    );
    w.ok(&["sessions", "delete", "kept", "--memories", "keep"]);
    let gone = w.run(&["sessions", "delete", "kept", "--memories", "keep"]);
    assert!(!gone.status.success());
    assert!(
        stderr(&gone).contains("session not found"),
        "{}",
        stderr(&gone)
    );
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[test]
fn provider_settings_are_saved_the_key_goes_to_the_keychain_and_the_next_turn_uses_it() {
    let w = World::new(json!({
        "api_key": "sk-test-provider-123",
        "steps": [{ "model": "keyed", "text": "answer with the key" }],
        "default": { "text": "OK" }
    }));
    let s = Server::start(&w);
    let (status, view) = s.get("/api/settings/provider");
    assert_eq!(status, 200, "{view}");
    let view = json_of(&view);
    assert_eq!(view["key_source"], "none", "{view}");
    assert_eq!(view["settings"]["base_url"], w.mock.base_url());
    assert!(
        view["env_overrides"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("ECHO_LLM_MODEL"))),
        "{view}"
    );
    let settings = json!({
        "kind": "openai", "base_url": w.mock.base_url(), "model": "keyed", "fallback_models": []
    });

    // Without a key the server refuses, and the test says so clearly.
    let (status, report) = s.post(
        "/api/settings/provider/test",
        &json!({ "settings": settings }),
    );
    assert_eq!(status, 200, "{report}");
    let report = json_of(&report);
    assert_eq!(report["ok"], false, "{report}");
    assert_eq!(report["code"], "llm_auth", "{report}");
    assert!(
        report["message"]
            .as_str()
            .is_some_and(|m| m.contains("refused the credentials")),
        "{report}"
    );
    // Testing with a key saves nothing.
    let (_, report) = s.post(
        "/api/settings/provider/test",
        &json!({ "settings": settings, "api_key": "sk-test-provider-123" }),
    );
    assert_eq!(json_of(&report)["ok"], true, "{report}");
    assert_eq!(
        json_of(&s.get("/api/settings/provider").1)["key_source"],
        "none"
    );

    // Bad settings are refused, naming the field, and change nothing.
    let (status, body) = s.put(
        "/api/settings/provider",
        &json!({ "settings": { "kind": "openai", "base_url": "ftp://x", "model": "m", "fallback_models": [] } }),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("base_url"), "{body}");

    let (status, saved) = s.put(
        "/api/settings/provider",
        &json!({ "settings": settings, "api_key": " sk-test-provider-123\n" }),
    );
    assert_eq!(status, 200, "{saved}");
    let saved = json_of(&saved);
    assert_eq!(saved["key_source"], "keychain", "{saved}");
    assert_eq!(saved["settings"]["model"], "keyed");
    let config = std::fs::read_to_string(w.home.path().join("config.toml")).expect("config");
    assert!(config.contains("model = \"keyed\""), "{config}");
    assert!(
        !config.contains("sk-test"),
        "the key must never reach the file:\n{config}"
    );

    // The next turn uses the new model and the key from the keychain, without a restart.
    let events = s.turn_events(&json!({ "session": "keyed", "input": "hi" }));
    let finished = events.last().expect("events");
    assert_eq!(finished["status"], "completed", "{events:?}");
    let last = w
        .mock
        .requests()
        .expect("requests")
        .pop()
        .expect("a request");
    assert_eq!(last["api_key"], "sk-test-provider-123");
    assert_eq!(last["body"]["model"], "keyed");
    drop(s);

    // Another process finds the key in the keychain.
    let shown = w.json(&["provider", "show", "--json"]);
    assert_eq!(shown["key_source"], "keychain", "{shown}");
    let test = w.run(&["provider", "test"]);
    assert!(test.status.success(), "{}", stderr(&test));
    // And removes it.
    w.ok(&["provider", "set", "--clear-key"]);
    let shown = w.json(&["provider", "show", "--json"]);
    assert_eq!(shown["key_source"], "none", "{shown}");
    let test = w.run(&["provider", "test"]);
    assert!(!test.status.success(), "no key, no answer");
    assert!(
        String::from_utf8_lossy(&test.stdout).contains("llm_auth"),
        "{}",
        String::from_utf8_lossy(&test.stdout)
    );
}

#[test]
fn a_local_ollama_server_is_detected_with_its_models() {
    let w = World::new(json!({ "steps": [], "default": { "model": "llama3.2:3b", "text": "hi" } }));
    let mut cmd = w.command(&["serve"]);
    cmd.env("OLLAMA_HOST", w.mock.root_url());
    let s = Server::start_command(&w, cmd);
    let (status, body) = s.get("/api/settings/ollama");
    assert_eq!(status, 200, "{body}");
    let info = json_of(&body);
    assert_eq!(info["base_url"], format!("{}/v1", w.mock.root_url()));
    assert_eq!(info["models"], json!(["llama3.2:3b"]));
    drop(s);

    // Nothing listening: null, quickly.
    let mut cmd = w.command(&["serve"]);
    cmd.env("OLLAMA_HOST", "127.0.0.1:9");
    let s = Server::start_command(&w, cmd);
    let (status, body) = s.get("/api/settings/ollama");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body), Value::Null);
}

#[test]
fn regenerate_and_edit_replace_the_tail_of_the_history_but_lose_nothing() {
    let w = World::new(json!({ "steps": [
        { "text": "first answer" },
        { "text": "second answer" },
        { "text": "regenerated answer" },
        { "text": "edited answer" }
    ] }));
    let s = Server::start(&w);
    for input in ["one", "two"] {
        s.turn_events(&json!({ "session": "s", "input": input }));
    }
    let history = |s: &Server| json_of(&s.get("/api/sessions/s/messages").1);
    let before = history(&s);
    let last_user = before[2]["id"].as_str().expect("id").to_string();
    assert_eq!(before[2]["content"], "two");

    // Regenerate: same text, replacing the last user message and its answer.
    s.turn_events(&json!({ "session": "s", "input": "two", "replace_from": last_user }));
    let after = history(&s);
    let texts: Vec<&str> = after
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(texts, ["one", "first answer", "two", "regenerated answer"]);
    // The model saw the history without the replaced pair.
    let last = w.requests().pop().expect("request");
    let seen: Vec<&str> = last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        !seen.iter().any(|c| c.contains("second answer")),
        "{seen:?}"
    );

    // Edit and resend the first message: everything from it on is replaced.
    let first_user = after[0]["id"].as_str().expect("id").to_string();
    s.turn_events(&json!({ "session": "s", "input": "uno", "replace_from": first_user }));
    let texts: Vec<String> = history(&s)
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|m| m["content"].as_str().map(String::from))
        .collect();
    assert_eq!(texts, ["uno", "edited answer"]);
    let (_, list) = s.get("/api/sessions");
    assert_eq!(json_of(&list)[0]["message_count"], 2);

    // A replaced (or foreign) message cannot be replaced again.
    let (status, body) = s.post(
        "/api/turns",
        &json!({ "session": "s", "input": "x", "replace_from": last_user }),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("replace_from"), "{body}");
    drop(s);

    // Nothing was deleted: every turn's trace still stands.
    assert_eq!(w.turns().len(), 4);
}

#[test]
fn mcp_servers_are_edited_through_the_settings_endpoint_and_applied_at_once() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start(&w);
    assert_eq!(json_of(&s.get("/api/settings/mcp").1), json!([]));

    // An invalid list is refused, naming the problem, and nothing changes.
    let (status, body) = s.put(
        "/api/settings/mcp",
        &json!({ "servers": [{ "name": "bad name", "command": "x", "args": [], "env": {}, "headers": {}, "enabled": true }] }),
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("bad name"), "{body}");
    assert_eq!(json_of(&s.get("/api/settings/mcp").1), json!([]));

    let server = json!({
        "name": "test", "command": mcp_test_server().display().to_string(), "args": [],
        "env": { "MCP_TEST_GREETING": "hi" }, "url": null, "headers": {}, "enabled": true
    });
    let (status, body) = s.put("/api/settings/mcp", &json!({ "servers": [server] }));
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)[0]["name"], "test");
    wait_for(
        "the new server to be ready with its tools",
        Duration::from_secs(30),
        || {
            let list = json_of(&s.get("/api/mcp").1);
            list[0]["state"] == "ready" && list[0]["tools"].as_u64().unwrap_or(0) > 0
        },
    );
    assert_eq!(json_of(&s.get("/api/settings/mcp").1), json!([server]));
    let config = std::fs::read_to_string(w.home.path().join("config.toml")).expect("config");
    assert!(
        config.contains("[[tools.mcp]]") && config.contains("name = \"test\""),
        "{config}"
    );
    assert!(
        config.contains("[memory]"),
        "the rest of the file stays:\n{config}"
    );
    drop(s);

    // Another process starts it from the saved file; removing it stops it there too.
    let listed = w.json(&["mcp", "list", "--json"]);
    assert_eq!(listed[0]["state"], "ready", "{listed}");
    let s = Server::start(&w);
    let (status, body) = s.put("/api/settings/mcp", &json!({ "servers": [] }));
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&s.get("/api/mcp").1), json!([]));
    assert_eq!(json_of(&s.get("/api/settings/mcp").1), json!([]));
}

#[test]
fn memory_operations_are_gateway_routes_with_typed_queries_and_bodies() {
    let w = World::new(json!({ "steps": [] }));
    let s = Server::start(&w);
    let (status, body) = s.post(
        "/api/memory",
        &json!({ "content": "My favourite tea is genmaicha", "pinned": true }),
    );
    assert_eq!(status, 200, "{body}");
    let added = json_of(&body);
    let id = added["memory"]["id"].as_str().expect("an id").to_string();
    assert_eq!(added["memory"]["source"], "manual", "{added}");

    // A query string is parsed into the typed request: an enum and a number.
    let (status, body) = s.get("/api/memory?tier=semantic&status=active");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("genmaicha"), "{body}");
    let (status, body) = s.get("/api/memory?tier=nonsense");
    assert_eq!(status, 400, "an unknown tier is refused: {body}");
    assert_eq!(json_of(&body)["error"]["code"], "invalid_input", "{body}");
    let (status, body) = s.get("/api/memory/search?query=genmaicha&k=3");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&id), "{body}");

    // A path parameter plus a JSON body.
    let (status, body) = s.raw(
        "PATCH",
        &format!("/api/memory/{id}"),
        &[("Host", &s.host()), ("Authorization", &s.bearer())],
        Some(&json!({ "content": "My favourite tea is sencha" })),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["content"], "My favourite tea is sencha");
    let (status, body) = s.post(&format!("/api/memory/{id}/undo"), &json!({}));
    assert_eq!(status, 200, "{body}");
    let (_, detail) = s.get(&format!("/api/memory/{id}"));
    assert_eq!(json_of(&detail)["content"], "My favourite tea is genmaicha");
    assert!(
        json_of(&detail)["history"]
            .as_array()
            .is_some_and(|h| h.len() >= 2)
    );

    // Unknown fields and unknown ids are clear errors, not silent successes.
    let (status, body) = s.post("/api/memory", &json!({ "content": "x", "colour": "red" }));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("colour"), "{body}");
    assert_eq!(s.get("/api/memory/no-such-memory").0, 404);
    // The CLI sees what the gateway wrote.
    let listed = w.json(&["memory", "list", "--json"]);
    assert!(listed.to_string().contains("genmaicha"), "{listed}");

    // Listing is paged on the server: a page, the total, text and boolean filters.
    s.post(
        "/api/memory",
        &json!({ "content": "The user cycles to work" }),
    );
    let (status, body) = s.get("/api/memory?limit=1&offset=0&sort=created");
    assert_eq!(status, 200, "{body}");
    let page = json_of(&body);
    assert_eq!(
        (
            page["items"].as_array().map(Vec::len),
            page["total"].as_u64()
        ),
        (Some(1), Some(2)),
        "{page}"
    );
    let (_, body) = s.get("/api/memory?text=CYCLES&in_conflict=false");
    assert_eq!(json_of(&body)["total"], 1, "{body}");
    assert_eq!(s.get("/api/memory?limit=ten").0, 400);

    // Deleting for good: refused without the typed confirmation, then everything goes.
    let (status, body) = s.post("/api/memory/delete", &json!({ "ids": [id] }));
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["deleted"], json!([id]), "{body}");
    assert_eq!(s.get(&format!("/api/memory/{id}")).0, 404);
    let (status, body) = s.post("/api/memory/delete_all", &json!({ "confirm": "yes" }));
    assert_eq!(status, 400, "{body}");
    let (status, body) = s.post(
        "/api/memory/delete_all",
        &json!({ "confirm": "delete all memories" }),
    );
    assert_eq!(status, 200, "{body}");
    let (_, body) = s.get("/api/memory");
    assert_eq!(json_of(&body)["total"], 0, "{body}");
}

#[test]
fn fading_counts_and_export_import_are_gateway_routes() {
    // One turn gives the model the memory (recall), so the fading curve shows a use.
    let w = World::new(json!({ "steps": [{ "text": "Genmaicha it is." }] }));
    let s = Server::start(&w);
    let (_, body) = s.post(
        "/api/memory",
        &json!({ "content": "My favourite tea is genmaicha" }),
    );
    let id = json_of(&body)["memory"]["id"]
        .as_str()
        .expect("an id")
        .to_string();
    w.ok(&["ask", "--session", "tea", "which tea is my favourite?"]);

    let (status, body) = s.get(&format!("/api/memory/{id}/fading"));
    assert_eq!(status, 200, "{body}");
    let fading = json_of(&body);
    assert_eq!(fading["memory_id"], id.as_str());
    let points = fading["points"].as_array().expect("points");
    assert!(points.len() > 10, "{fading}");
    let first = points[0]["effective"].as_f64().expect("effective");
    let last = points.last().expect("a point")["effective"]
        .as_f64()
        .expect("effective");
    assert!(last < first, "an unpinned memory fades: {first} → {last}");
    assert_eq!(fading["archive_reason"], "faded", "{fading}");
    assert_eq!(fading["uses"].as_array().map(Vec::len), Some(1), "{fading}");
    assert_eq!(s.get("/api/memory/no-such-memory/fading").0, 404);

    let (status, body) = s.get("/api/memory/stats");
    assert_eq!(status, 200, "{body}");
    let stats = json_of(&body);
    assert!(
        stats["counts"]
            .as_array()
            .expect("counts")
            .iter()
            .any(|c| c["tier"] == "semantic" && c["status"] == "active" && c["count"] == 1),
        "{stats}"
    );
    assert_eq!(stats["open_conflicts"], 0);
    assert_eq!(
        (stats["will_expire"].as_u64(), stats["will_fade"].as_u64()),
        (Some(0), Some(0))
    );

    // Export as text, delete everything, import the text back.
    let (status, body) = s.get("/api/memory/export");
    assert_eq!(status, 200, "{body}");
    let export = json_of(&body);
    assert_eq!(export["count"], 1);
    assert!(
        export["file_name"]
            .as_str()
            .is_some_and(|n| n.ends_with(".jsonl"))
    );
    let text = export["text"].as_str().expect("text").to_string();
    assert!(text.contains("genmaicha"));
    s.post(
        "/api/memory/delete_all",
        &json!({ "confirm": "delete all memories" }),
    );
    let (status, body) = s.post("/api/memory/import", &json!({ "text": text }));
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["created"], 1, "{body}");
    let (_, body) = s.get("/api/memory?text=genmaicha");
    assert_eq!(json_of(&body)["total"], 1, "{body}");
    // A bad upload names the problem and writes nothing.
    let (status, body) = s.post("/api/memory/import", &json!({ "text": "not an export" }));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("line 1"), "{body}");
}

#[test]
fn hostile_requests_are_refused_or_bounded_and_a_dropped_stream_does_not_stop_the_turn() {
    hostile_requests(false);
}

/// The hostile-request suite against a gateway started with `--ui`, over TLS when `tls`.
fn hostile_requests(tls: bool) {
    let ui_root = tempfile::tempdir().expect("tempdir");
    let ui = ui_root.path().join("dist");
    std::fs::create_dir_all(&ui).expect("mkdir");
    std::fs::write(
        ui.join("index.html"),
        "<!doctype html><title>Echo Desk</title>",
    )
    .expect("write");
    std::fs::write(
        ui_root.path().join("secret.txt"),
        "top-secret-outside-the-ui",
    )
    .expect("write");
    let w = World::new(json!({ "steps": [
        { "model": "primary", "text": "one two three four five six seven eight nine ten",
          "chunks": 10, "chunk_delay_ms": 150 },
    ]}));
    let dir = ui.display().to_string();
    let s = if tls {
        Server::start_tls(&w, &["--ui", &dir])
    } else {
        Server::start_with(&w, &["--ui", &dir])
    };
    let host = s.host();
    let good = s.bearer();

    // The token only counts in the Authorization header.
    let (status, _) = s.raw(
        "GET",
        &format!("/api/sessions?token={}", s.token),
        &[("Host", &host)],
        None,
    );
    assert_eq!(status, 401, "a token in the query string is not accepted");
    // `Origin: null` (a sandboxed page, a file:// page) is foreign.
    let (status, body) = s.raw(
        "GET",
        "/api/sessions",
        &[
            ("Host", &host),
            ("Authorization", &good),
            ("Origin", "null"),
        ],
        None,
    );
    assert_eq!(status, 403, "{body}");

    // Path parameters that try to climb out name nothing.
    for path in [
        "/api/sessions/..%2F..%2Fetc%2Fpasswd/messages",
        "/api/traces/..%2F..%2Fsecret.txt",
        "/api/memory/..%2Fsecret.txt",
        "/api/settings/bootstrap/..%2F..%2Fsecret.txt",
        "/api/automations/..%2F..%2Fsecret.txt",
    ] {
        let (status, body) = s.raw(
            "GET",
            path,
            &[("Host", &host), ("Authorization", &good)],
            None,
        );
        assert!(
            (400..500).contains(&status) && !body.contains("root:") && !body.contains("top-secret"),
            "{path}: {status} {body}"
        );
    }
    // The UI folder is all `--ui` serves.
    for path in [
        "/../secret.txt",
        "/..%2fsecret.txt",
        "/%2e%2e/secret.txt",
        "/assets/..%2f..%2fsecret.txt",
        "/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    ] {
        let (status, body) = s.raw("GET", path, &[("Host", &host)], None);
        assert!(
            !body.contains("top-secret") && !body.contains("root:"),
            "{path}: {status} {body}"
        );
    }

    // An oversized body is refused before it is read whole; the server goes on. (Plain HTTP
    // only: the limit is the router's, behind TLS as behind TCP, and a TLS client whose
    // write failed once the server closed reads nothing more.)
    if !tls {
        let big = 40 * 1024 * 1024;
        let mut conn = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        conn.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        write!(
            conn,
            "POST /api/memory/import HTTP/1.1\r\nHost: {host}\r\nAuthorization: {good}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n\
             {{\"text\": \"",
            big + 13
        )
        .expect("send the head");
        // The server may answer and close before the body is sent: a failed write is expected.
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..40 {
            if conn.write_all(&chunk).is_err() {
                break;
            }
        }
        let mut answer = String::new();
        let _ = conn.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 413"), "a 40 MB body: {answer}");
        let (status, _) = s.get("/api/sessions");
        assert_eq!(status, 200, "the server goes on");
    }

    // Many idle connections at once do not lock the door for the next client.
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(("127.0.0.1", s.port)).expect("connect"))
        .collect();
    let (status, _) = s.get("/api/sessions");
    assert_eq!(status, 200, "with {} idle connections open", idle.len());
    drop(idle);

    // A client that drops the event stream mid-answer: the turn goes on and completes.
    let mut stream = s.stream_turn("dropped", "count to ten");
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stream.read_line(&mut line).expect("read") > 0,
            "the stream ended early"
        );
        if line.contains("\"type\":\"token\"") {
            break;
        }
    }
    drop(stream);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (_, body) = s.get("/api/sessions/dropped/messages");
        if body.contains("one two three four five six seven eight nine ten") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the turn did not complete after its client left: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn slow_clients_are_dropped_and_a_thousand_connections_stay_bounded() {
    let w = World::new(json!({"steps": []}));
    let s = Server::start(&w);
    let before = proc_kib(s.child.id(), "VmRSS");

    // Slowloris: a request head trickled one header a second is cut off, not waited for.
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
    write!(slow, "GET /api/sessions HTTP/1.1\r\nHost: {}\r\n", s.host()).expect("send");
    slow.set_read_timeout(Some(Duration::from_secs(1)))
        .expect("timeout");
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let mut sent = 0;
    let dropped = loop {
        if write!(slow, "X-Slow-{sent}: 1\r\n").is_err() {
            break true;
        }
        sent += 1;
        // The server closing (0 bytes) or answering (a 408) both end it; a timeout does not.
        let mut byte = [0u8; 1];
        if slow.read(&mut byte).is_ok() {
            break true;
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
    };
    assert!(
        dropped,
        "a client trickling its headers was served for {sent} s"
    );

    // A thousand connections at once, saying nothing: the next real request is still
    // answered (once the silent ones time out), and memory stays bounded.
    let idle: Vec<TcpStream> = (0..1000)
        .map(|_| TcpStream::connect(("127.0.0.1", s.port)).expect("connect"))
        .collect();
    let (status, _) = s.get("/api/sessions");
    assert_eq!(status, 200, "with {} silent connections open", idle.len());
    let peak = proc_kib(s.child.id(), "VmHWM");
    drop(idle);
    eprintln!("echod serve: {before} KiB resident before, {peak} KiB peak with 1000 connections");
    assert!(
        peak < before + 100 * 1024,
        "1000 connections cost {} KiB",
        peak - before
    );
}

#[test]
fn any_json_body_on_any_route_is_answered_without_a_server_error() {
    use proptest::prelude::*;
    let w = World::new(json!({"steps": [], "default": {"text": "ok"}}));
    let s = Server::start(&w);
    let (_, doc) = s.get("/api/openapi.json");
    let doc = json_of(&doc);
    let mut routes = Vec::new();
    for (path, methods) in doc["paths"].as_object().expect("paths") {
        for method in ["post", "put", "patch"] {
            if methods.get(method).is_some() {
                let path = path
                    .split('/')
                    .map(|part| if part.starts_with('{') { "x" } else { part })
                    .collect::<Vec<_>>()
                    .join("/");
                routes.push((method.to_uppercase(), path));
            }
        }
    }
    assert!(routes.len() >= 20, "the routes with bodies: {routes:?}");
    let body =
        common::any_json::any_json(&["name", "session", "input", "confirm", "spec", "ids"], &[]);
    proptest!(|(k in 0..routes.len(), body in body)| {
        let (method, path) = &routes[k];
        let (status, text) = s.raw(
            method,
            path,
            &[("Host", &s.host()), ("Authorization", &s.bearer())],
            Some(&body),
        );
        prop_assert!(
            (200..500).contains(&status),
            "{method} {path} {body}: {status} {text}"
        );
    });
    // Still serving.
    assert_eq!(s.get("/api/sessions").0, 200);
}

#[test]
fn over_tls_hostile_requests_are_refused_or_bounded_as_over_plain_http() {
    hostile_requests(true);
}

#[test]
fn beyond_loopback_serve_starts_only_with_tls() {
    let w = World::new(json!({ "steps": [] }));
    let out = output_within(
        &mut w.command(&["serve", "--listen", "0.0.0.0:0"]),
        Duration::from_secs(60),
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without TLS")
            && err.contains("--tls-local-ca"),
        "{err}"
    );
    assert!(
        !w.home.path().join("serve-token").exists(),
        "it stopped before anything"
    );

    let out = w.run(&["serve", "--listen", "0.0.0.0:0", "--tls-cert", "cert.pem"]);
    assert!(!out.status.success() && stderr(&out).contains("--tls-key"));
    let out = output_within(
        &mut w.command(&[
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--tls-cert",
            "/nonexistent/cert.pem",
            "--tls-key",
            "/nonexistent/key.pem",
        ]),
        Duration::from_secs(60),
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("cannot read the certificates in /nonexistent/cert.pem"),
        "{err}"
    );
}

/// One request over TLS to `127.0.0.1:port`, naming the server `name` (SNI and the
/// certificate check); the status and body.
fn over_tls(
    config: &std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
    name: &str,
    port: u16,
    headers: &[(&str, &str)],
) -> Result<(u16, String), String> {
    use tokio_rustls::rustls;
    let tcp = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    let server =
        rustls::pki_types::ServerName::try_from(name.to_string()).map_err(|e| e.to_string())?;
    let conn = rustls::ClientConnection::new(config.clone(), server).map_err(|e| e.to_string())?;
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    let mut request = "GET /api/sessions HTTP/1.1\r\nConnection: close\r\n".to_string();
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    if let Err(e) = stream.read_to_end(&mut bytes)
        && (e.kind() != std::io::ErrorKind::UnexpectedEof || bytes.is_empty())
    {
        return Err(e.to_string());
    }
    let text = String::from_utf8_lossy(&bytes).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, text))
}

/// The `tls:` line `echod serve` printed.
fn tls_line(s: &Server) -> String {
    loop {
        let line = s.next_line();
        if line.starts_with("tls: ") {
            return line;
        }
    }
}

fn sha256_of_pem_certificate(path: &std::path::Path) -> String {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let der = CertificateDer::from_pem_file(path).expect("a certificate");
    let digest = ring::digest::digest(&ring::digest::SHA256, der.as_ref());
    let hex: Vec<String> = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
    hex.join(":")
}

#[test]
fn with_its_local_ca_serve_speaks_tls_for_the_names_it_was_given() {
    let w = World::new(json!({ "steps": [] }));
    let args = [
        "--listen",
        "0.0.0.0:0",
        "--tls-local-ca",
        "--host",
        "echo-desk.test",
    ];
    let s = Server::start_with(&w, &args);
    let ca = w.home.path().join("tls/ca.pem");
    let fingerprint = sha256_of_pem_certificate(&ca);
    let line = tls_line(&s);
    assert!(line.contains(&fingerprint), "{line} / {fingerprint}");
    let key_mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(w.home.path().join("tls/ca-key.pem"))
            .expect("the CA's key")
            .permissions(),
    );
    assert_eq!(key_mode & 0o777, 0o600, "the CA's key is the user's only");

    let trusted = common::gateway::trusting(&ca);
    let good = s.bearer();
    let port = s.port;
    for name in ["echo-desk.test", "localhost"] {
        let host = format!("{name}:{port}");
        let (status, body) = over_tls(
            &trusted,
            name,
            port,
            &[("Host", &host), ("Authorization", &good)],
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(status, 200, "{name}: {body}");
    }
    let named = format!("echo-desk.test:{port}");
    let refused = [
        ("Host", format!("evil.test:{port}"), "foreign_host"),
        (
            "Origin",
            format!("http://echo-desk.test:{port}"),
            "foreign_origin",
        ),
    ];
    for (header, value, code) in refused {
        let headers = [
            ("Host", named.as_str()),
            ("Authorization", &good),
            (header, &value),
        ];
        let headers = if header == "Host" {
            &headers[1..]
        } else {
            &headers[..]
        };
        let (status, body) = over_tls(&trusted, "echo-desk.test", port, headers).expect("TLS");
        assert_eq!(status, 403, "{header}: {value}: {body}");
        assert!(body.contains(code), "{body}");
    }
    let same_site = format!("https://echo-desk.test:{port}");
    let headers = [
        ("Host", named.as_str()),
        ("Authorization", &good),
        ("Origin", &same_site),
    ];
    let (status, body) = over_tls(&trusted, "echo-desk.test", port, &headers).expect("TLS");
    assert_eq!(status, 200, "{body}");

    // A name the certificate is not for, and a client that trusts another CA: no handshake.
    assert!(over_tls(&trusted, "elsewhere.test", port, &[("Host", &named)]).is_err());
    let stranger = other_ca(&tempfile::tempdir().expect("tempdir"));
    assert!(over_tls(&stranger, "echo-desk.test", port, &[("Host", &named)]).is_err());
    // Plain HTTP on the TLS port gets no HTTP answer.
    let mut plain = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    plain
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        plain,
        "GET /api/sessions HTTP/1.1\r\nHost: {named}\r\nAuthorization: {good}\r\n\r\n"
    )
    .expect("send");
    let mut bytes = Vec::new();
    let _ = plain.read_to_end(&mut bytes);
    assert!(
        !bytes.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&bytes)
    );

    // Started again, it keeps its CA: a device trusts it once.
    drop(s);
    let s = Server::start_with(&w, &args);
    assert!(tls_line(&s).contains(&fingerprint));
    let host = format!("echo-desk.test:{}", s.port);
    let (status, body) = over_tls(
        &trusted,
        "echo-desk.test",
        s.port,
        &[("Host", &host), ("Authorization", &s.bearer())],
    )
    .expect("TLS after a restart");
    assert_eq!(status, 200, "{body}");
}

/// A CA of its own (written to `dir`) and a client trusting only it.
fn other_ca(dir: &tempfile::TempDir) -> std::sync::Arc<tokio_rustls::rustls::ClientConfig> {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("CA");
    let path = dir.path().join("other-ca.pem");
    std::fs::write(&path, cert.pem()).expect("write");
    common::gateway::trusting(&path)
}

#[test]
fn with_the_persons_own_certificate_serve_speaks_tls_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).expect("CA");
    let issuer = rcgen::Issuer::new(ca, &ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("leaf");
    let (cert_path, key_path, ca_path) = (
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
        dir.path().join("ca.pem"),
    );
    std::fs::write(&cert_path, leaf.pem() + &ca_cert.pem()).expect("write");
    std::fs::write(&key_path, key.serialize_pem()).expect("write");
    std::fs::write(&ca_path, ca_cert.pem()).expect("write");

    let w = World::new(json!({ "steps": [] }));
    let (cert, key) = (
        cert_path.display().to_string(),
        key_path.display().to_string(),
    );
    let mut s = Server::start_with(
        &w,
        &[
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
    );
    s.tls = Some(common::gateway::trusting(&ca_path));
    let (status, body) = s.get("/api/sessions");
    assert_eq!(status, 200, "{body}");
    assert!(!w.home.path().join("tls").exists(), "no local CA was made");
    drop(s);

    // A key that is not the certificate's is refused at start, saying so.
    let other = dir.path().join("other-key.pem");
    std::fs::write(
        &other,
        rcgen::KeyPair::generate().expect("key").serialize_pem(),
    )
    .expect("write");
    let other = other.display().to_string();
    let out = output_within(
        &mut w.command(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &other,
        ]),
        Duration::from_secs(60),
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("do not go together"), "{err}");
}
