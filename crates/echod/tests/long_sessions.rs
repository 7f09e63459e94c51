//! Long conversations (#6): compression into a rolling summary, the archive, the stable
//! prefix, bootstrap files, task-type routing and the planner — the real `echod` binary
//! against the scripted mock model, checked on what the model server received.

mod common;

use common::*;
use echo_core::Store;
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;

/// Config for a session on a small window, with nothing else calling the model in the
/// background (no extraction, no consolidation).
fn small_window(window: u32, max_tokens: u32) -> String {
    format!(
        "[llm]\ncontext_window = {window}\nmax_tokens = {max_tokens}\n\
         [memory]\nextraction = false\nembedder = \"none\"\nconsolidate_after = 0\n"
    )
}

/// Feeds `inputs` to one `echod chat` process, one line each; returns its stdout lines.
fn chat(w: &World, session: &str, inputs: &[String]) -> Vec<String> {
    let mut child = w
        .command(&["chat", "--session", session])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn echod chat");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for input in inputs {
            writeln!(stdin, "{input}").expect("write a line");
        }
    }
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "chat failed: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn offers(request: &Value, tool: &str) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == tool))
}

fn messages(request: &Value) -> &Vec<Value> {
    request["messages"].as_array().expect("messages")
}

fn text(message: &Value) -> &str {
    message["content"].as_str().unwrap_or_default()
}

/// The sequence rules every provider enforces, on a request as sent: system first, then a
/// user message; each tool result answers an open call of the assistant message before it;
/// every call is answered before the next user or assistant message; the request ends with
/// the user's message or a tool result.
fn check_sequence(request: &Value) -> Result<(), String> {
    let ms = messages(request);
    if ms.first().map(|m| &m["role"]) != Some(&json!("system")) {
        return Err("no system message first".into());
    }
    if ms.get(1).map(|m| &m["role"]) != Some(&json!("user")) {
        return Err(format!("history starts with {:?}", ms.get(1)));
    }
    let mut open: Vec<String> = Vec::new();
    for (i, m) in ms.iter().enumerate().skip(1) {
        match m["role"].as_str() {
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap_or_default().to_string();
                let Some(at) = open.iter().position(|o| *o == id) else {
                    return Err(format!("message {i}: result for {id:?} without its call"));
                };
                open.remove(at);
            }
            Some("user") | Some("assistant") => {
                if let Some(id) = open.first() {
                    return Err(format!("message {i}: call {id:?} has no result"));
                }
                open = m["tool_calls"]
                    .as_array()
                    .map(|cs| {
                        cs.iter()
                            .filter_map(|c| c["id"].as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
            }
            other => return Err(format!("message {i}: role {other:?}")),
        }
    }
    match ms.last().and_then(|m| m["role"].as_str()) {
        Some("user") | Some("tool") if open.is_empty() => Ok(()),
        other => Err(format!("ends with {other:?} and open calls {open:?}")),
    }
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

const SUMMARY: &str = "The user is auditing a log file turn by turn; each turn the assistant read it and noted the code word the user gave.";

#[test]
fn three_hundred_turns_with_big_tool_outputs_stay_within_an_8k_window() {
    const TURNS: usize = 300;
    const BUDGET: usize = 8192 - 512;
    let dir = tempfile::tempdir().expect("tempdir");
    let log: String = (0..120)
        .map(|n| format!("{n:04} GET /api/items?page={n} 200 in 12ms from 10.0.0.{n}\n"))
        .collect();
    assert!(log.len() > 5_000);
    let path = dir.path().join("access.log");
    std::fs::write(&path, &log).expect("write the log");
    let args = json!({ "path": path.to_str().expect("utf8") }).to_string();
    let mut steps = vec![json!({
        "when_tool": "summarize_history",
        "times": 10_000,
        "tool_calls": [{"id": "sum", "name": "summarize_history",
                        "arguments": json!({"summary": SUMMARY}).to_string()}]
    })];
    for i in 0..TURNS {
        steps.push(json!({"tool_calls": [{"id": format!("call-{i}"), "name": "read_file", "arguments": args}]}));
        steps.push(json!({"text": format!("Answer {i}.")}));
    }
    let w = World::with_config(json!({ "steps": steps }), &small_window(8192, 512));
    let inputs: Vec<String> = (0..TURNS)
        .map(|i| format!("turn {i}: read access.log again and remember code word K{i:03}X"))
        .collect();
    let out = chat(&w, "long", &inputs);
    let want: Vec<String> = (0..TURNS).map(|i| format!("Answer {i}.")).collect();
    assert_eq!(out, want, "every turn answered, in order");

    let requests = w.requests();
    let (summaries, turns): (Vec<&Value>, Vec<&Value>) = requests
        .iter()
        .partition(|r| offers(r, "summarize_history"));
    assert_eq!(turns.len(), 2 * TURNS, "two model calls per turn");
    assert!(
        summaries.len() >= 20,
        "the history was compressed again and again ({} summaries)",
        summaries.len()
    );
    for (i, request) in requests.iter().enumerate() {
        let tokens = wire_tokens(request);
        assert!(
            tokens <= BUDGET,
            "request {i}: {tokens} tokens over {BUDGET}"
        );
    }
    for (t, pair) in turns.chunks(2).enumerate() {
        for request in pair {
            if let Err(e) = check_sequence(request) {
                panic!("turn {t}: invalid sequence: {e}\n{request}");
            }
        }
        let first = messages(pair[0]);
        let last = first.last().expect("a message");
        assert_eq!(last["role"], "user");
        assert!(
            text(last).ends_with(&inputs[t]),
            "turn {t}: the current message is last and verbatim: {last}"
        );
        let second = messages(pair[1]);
        assert_eq!(
            second.last().map(|m| &m["tool_call_id"]),
            Some(&json!(format!("call-{t}")))
        );
    }
    // Late turns carry the summary and only a short tail, not the whole session.
    let late = messages(turns[2 * (TURNS - 1)]);
    assert!(
        text(&late[0]).contains("Earlier in this conversation") && text(&late[0]).contains(SUMMARY),
        "{}",
        text(&late[0])
    );
    assert!(late.len() < 20, "{} messages", late.len());
    // The summariser was asked with the current request in view and the previous summary.
    let asked = text(&messages(summaries[summaries.len() - 1])[1]);
    assert!(
        asked.contains("<previous-summary>") && asked.contains("<current-request>"),
        "{asked}"
    );

    // Nothing left the store; the middle is archived and searchable.
    assert_eq!(w.history("long").len(), 4 * TURNS);
    let home = w.home.path().to_path_buf();
    let (state, hits) = block_on(async move {
        let store = Store::open_in(&home).await.expect("store");
        let session = store
            .session_by_name("long")
            .await
            .expect("query")
            .expect("session");
        let state = store.compression_state(&session).await.expect("state");
        let hits = store
            .search_archive(&session, "K007X", 5)
            .await
            .expect("search");
        (state, hits)
    });
    let summary = state.summary.expect("a rolling summary");
    assert!(summary.to_seq > 4 * (TURNS as i64) / 2, "{summary:?}");
    // Turn 7's user message is seq 29 (four messages a turn).
    assert!(
        hits.iter().any(|h| h.from_seq < 29 && 29 <= h.to_seq),
        "{hits:?}"
    );
    // The trace of a compressing turn says what happened.
    let traced = w
        .turns()
        .iter()
        .map(|t| w.trace(t["id"].as_str().expect("id")))
        .find(|t| !spans_named(t, "compress").is_empty())
        .expect("a turn that compressed");
    let span = spans_named(&traced, "compress")[0];
    assert_eq!(span["status"], "ok", "{span}");
    assert!(span["attrs"]["chunks"].as_u64() >= Some(1), "{span}");
    let context = spans_named(&traced, "context")[0];
    assert_eq!(context["attrs"]["compression"], "compressed", "{context}");
    assert!(context["attrs"]["tokens_by_block"]["summary"].as_u64() > Some(0));

    // What was cut can be fetched back: a whole old tool output, and a detail by search.
    w.mock
        .set_script(json!({"steps": [
            {"when_tool": "summarize_history", "times": 10, "tool_calls": [{"id": "s", "name": "summarize_history", "arguments": json!({"summary": SUMMARY}).to_string()}]},
            {"tool_calls": [
                {"id": "back-1", "name": "read_tool_output", "arguments": json!({"call_id": "call-3"}).to_string()},
                {"id": "back-2", "name": "history_search", "arguments": json!({"query": "K005X"}).to_string()}
            ]},
            {"text": "Found it."}
        ]}))
        .expect("script");
    assert_eq!(
        w.ok(&["ask", "--session", "long", "what was in the log at turn 3?"]),
        "Found it.\n"
    );
    let history = w.history("long");
    let result = |id: &str| -> String {
        history
            .iter()
            .find(|m| m["tool_call_id"] == id)
            .map(|m| text(m).to_string())
            .unwrap_or_else(|| panic!("no result for {id}"))
    };
    assert_eq!(result("back-1"), log.trim_end(), "the whole output");
    assert!(result("back-2").contains("K005X"), "{}", result("back-2"));
}

#[test]
fn a_failed_summary_degrades_to_trimming_and_the_turns_still_answer() {
    let w = World::with_config(
        json!({
            "steps": [{
                "when_tool": "summarize_history",
                "times": 100,
                "tool_calls": [{"id": "s", "name": "summarize_history", "arguments": "{\"sumary\": 1}"}]
            }],
            "default": {"echo": true}
        }),
        &small_window(6000, 300),
    );
    let inputs: Vec<String> = (0..12)
        .map(|i| format!("message {i}: {}", "lorem ipsum dolor sit amet ".repeat(40)))
        .collect();
    let out = chat(&w, "frail", &inputs);
    // Each echoed answer is several lines (the runtime block, then the input).
    let answers = out.iter().filter(|l| l.starts_with("echo: ")).count();
    assert_eq!(answers, inputs.len(), "{out:?}");

    let requests = w.requests();
    let attempts = requests
        .iter()
        .filter(|r| offers(r, "summarize_history"))
        .count();
    // Tried, then left alone for the cooldown (two turns) before the next try.
    assert!((2..=4).contains(&attempts), "{attempts} summary attempts");
    for r in requests.iter().filter(|r| !offers(r, "summarize_history")) {
        assert!(wire_tokens(r) <= 5700, "{}", wire_tokens(r));
        check_sequence(r).expect("valid sequence");
    }
    let traces: Vec<Value> = w
        .turns()
        .iter()
        .map(|t| w.trace(t["id"].as_str().expect("id")))
        .collect();
    assert!(traces.iter().all(|t| t["turn"]["status"] == "completed"));
    let failed = traces
        .iter()
        .flat_map(|t| spans_named(t, "compress"))
        .filter(|s| s["level"] == "node")
        .collect::<Vec<_>>();
    assert!(!failed.is_empty());
    for span in &failed {
        assert_eq!(span["degraded_reason"], "summary_failed", "{span}");
        assert!(
            span["error"]
                .as_str()
                .is_some_and(|e| e.contains("malformed summarize_history output")),
            "{span}"
        );
    }
    assert!(
        traces
            .iter()
            .flat_map(|t| t["spans"].as_array().cloned().unwrap_or_default())
            .any(|s| s["degraded_reason"] == "context_trimmed"),
        "the fallback trimmed instead"
    );
}

#[test]
fn consecutive_turns_share_their_prefix_and_bootstrap_edits_apply_next_turn() {
    let w = World::new(json!({ "steps": [], "default": {"echo": true} }));
    w.ok(&["memory", "add", "The user's cat is called Miso.", "--pin"]);
    for input in ["hello", "what is my cat called?", "thanks"] {
        w.ok(&["ask", "--session", "p", input]);
    }
    let requests = w.requests();
    assert_eq!(requests.len(), 3);
    let system = |r: &Value| text(&messages(r)[0]).to_string();
    let first_system = system(&requests[0]);
    assert!(
        first_system.contains("Miso"),
        "the snapshot: {first_system}"
    );
    assert!(
        first_system.contains("Calm, direct and warm"),
        "SOUL.md's default is in the system block"
    );
    // Everything before the current message is repeated byte for byte on the next turn.
    for pair in requests.windows(2) {
        let (a, b) = (messages(&pair[0]), messages(&pair[1]));
        let shared = a.len() - 1;
        assert_eq!(a[..shared], b[..shared], "the prefix is stable");
        let bytes: usize = a[..shared].iter().map(|m| m.to_string().len()).sum();
        let total: usize = b.iter().map(|m| m.to_string().len()).sum();
        assert!(
            bytes * 2 > total,
            "most of the request is shared ({bytes}/{total})"
        );
    }

    // A bootstrap edit changes the system block from the next turn on, and then it is stable.
    std::fs::write(
        w.home.path().join("USER.md"),
        "My name is Lin and I prefer metric units.",
    )
    .expect("write USER.md");
    w.ok(&["ask", "--session", "p", "how far is 5 miles?"]);
    w.ok(&["ask", "--session", "p", "and 10?"]);
    let requests = w.requests();
    let (before, edited, next) = (&requests[2], &requests[3], &requests[4]);
    assert!(!system(before).contains("My name is Lin"));
    assert!(system(edited).contains("### USER.md\nMy name is Lin and I prefer metric units."));
    assert_eq!(system(edited), system(next));
}

#[test]
fn turns_are_routed_by_task_type_and_the_trace_says_why() {
    let w = World::with_config(
        json!({ "steps": [], "default": {"echo": true} }),
        "[routing]\ncode = [\"coder\", \"primary\"]\n",
    );
    w.ok(&[
        "ask",
        "--session",
        "r",
        "Why does this Rust function not compile?",
    ]);
    w.ok(&["ask", "--session", "r", "How was your weekend?"]);
    let models: Vec<Value> = w.requests().iter().map(|r| r["model"].clone()).collect();
    assert_eq!(models, [json!("coder"), json!("primary")]);
    let turns = w.turns();
    let context = |turn: &Value| {
        let trace = w.trace(turn["id"].as_str().expect("id"));
        spans_named(&trace, "context")[0]["attrs"].clone()
    };
    // Newest first.
    let (chat, code) = (context(&turns[0]), context(&turns[1]));
    assert_eq!(code["task_type"], "code");
    assert_eq!(code["model"], "coder");
    assert_eq!(code["model_reason"], "routing.code");
    assert_eq!(chat["task_type"], "chat");
    assert_eq!(chat["model"], "primary");
    assert!(
        chat["model_reason"]
            .as_str()
            .is_some_and(|r| r.contains("no [routing] entry for chat")),
        "{chat}"
    );
}

#[test]
fn the_planner_appends_a_plan_and_its_failure_is_only_traced() {
    const PLAN: &str = "1. List the appointments.\n2. Put them in order.";
    let w = World::with_config(
        json!({ "steps": [{"text": PLAN}], "default": {"echo": true} }),
        "[planner]\nenabled = true\n",
    );
    let input = "Plan my week: dentist, gym and the tax return";
    w.ok(&["ask", "--session", "plan", input]);
    w.ok(&["ask", "--session", "plan", "hello there"]);
    let requests = w.requests();
    assert_eq!(
        requests.len(),
        3,
        "one planner call, for the planning turn only"
    );
    let planner = messages(&requests[0]);
    assert!(requests[0]["tools"].is_null(), "the planner gets no tools");
    assert!(text(&planner[1]).contains(input));
    let turn = messages(&requests[1]);
    let current = text(turn.last().expect("message"));
    assert!(
        current.ends_with(&format!("{input}\n\n[Plan] {PLAN}")),
        "{current}"
    );
    assert!(
        turn.iter()
            .all(|m| m["role"] != "system" || !text(m).contains("[Plan]"))
    );

    // A planner that fails leaves the turn alone, and the trace says so.
    w.mock
        .set_script(json!({"steps": [{"status": 400, "error_message": "no such model"}], "default": {"echo": true}}))
        .expect("script");
    let answer = w.ok(&["ask", "--session", "plan", "Make a schedule for the move"]);
    assert!(answer.starts_with("echo: "), "{answer}");
    let turns = w.turns();
    let trace = w.trace(turns[0]["id"].as_str().expect("id"));
    let planner: Vec<&Value> = spans_named(&trace, "planner")
        .into_iter()
        .filter(|s| s["level"] == "node")
        .collect();
    assert_eq!(planner.len(), 1, "{trace}");
    assert_eq!(
        planner[0]["degraded_reason"], "planner_failed",
        "{}",
        planner[0]
    );
    assert_eq!(trace["turn"]["status"], "completed");
}

#[test]
fn openai_models_are_counted_with_their_own_encoding() {
    let w = World::new(json!({ "steps": [], "default": {"echo": true} }));
    w.ok(&["ask", "--session", "a", "hello"]);
    let out = w
        .command(&["ask", "--session", "b", "hello"])
        .env("ECHO_LLM_MODEL", "gpt-4o")
        .output()
        .expect("run echod");
    assert!(out.status.success(), "{}", stderr(&out));
    let turns = w.turns();
    let context = |turn: &Value| {
        let trace = w.trace(turn["id"].as_str().expect("id"));
        spans_named(&trace, "context")[0]["attrs"].clone()
    };
    // Newest first.
    let (real, estimated) = (context(&turns[0]), context(&turns[1]));
    assert_eq!(real["tokenizer"], "o200k_base");
    assert_eq!(estimated["tokenizer"], "estimate");
    let tools = |attrs: &Value| attrs["tokens_by_block"]["tools"].as_u64().unwrap_or(0);
    assert!(
        tools(&real) > 0 && tools(&real) < tools(&estimated),
        "the same tool definitions: {} real vs {} estimated",
        tools(&real),
        tools(&estimated)
    );
}

#[test]
fn a_server_that_repeats_call_ids_still_gets_each_result_paired_with_its_own_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut steps = Vec::new();
    for name in ["alpha", "beta"] {
        let path = dir.path().join(format!("{name}.txt"));
        std::fs::write(&path, format!("contents of {name}")).expect("write");
        let args = json!({ "path": path.to_str().expect("utf8") }).to_string();
        // Both turns' calls come back as "call_0", as from a server that numbers per response.
        steps.push(
            json!({"tool_calls": [{"id": "call_0", "name": "read_file", "arguments": args}]}),
        );
        steps.push(json!({"text": format!("Read {name}.")}));
    }
    steps.push(json!({"text": "Done."}));
    let w = World::with_config(json!({ "steps": steps }), &small_window(32_000, 512));
    let inputs: Vec<String> = ["read alpha", "read beta", "thanks"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        chat(&w, "ids", &inputs),
        ["Read alpha.", "Read beta.", "Done."]
    );

    let last = w.requests().pop().expect("requests");
    check_sequence(&last).expect("a valid sequence");
    let results: Vec<(&str, &str)> = messages(&last)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap_or_default(), text(m)))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].0, "call_0", "an unused id is kept");
    assert_ne!(results[1].0, "call_0", "the repeat got an id of its own");
    assert!(results[0].1.contains("contents of alpha"), "{results:?}");
    assert!(results[1].1.contains("contents of beta"), "{results:?}");
    // The stored history agrees with what was sent.
    let stored: Vec<String> = w
        .history("ids")
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str().map(String::from))
        .collect();
    assert_eq!(stored, [results[0].0, results[1].0]);
}

#[test]
fn a_small_window_offers_only_the_tools_related_to_the_turn() {
    let script = json!({ "steps": [
        {"tool_calls": [{"id": "t1", "name": "current_time"}]},
        {"text": "It is late."},
        {"text": "Hello."},
    ]});
    let offered = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(String::from))
            .collect()
    };
    // A roomy window offers every tool.
    let big = World::with_config(script.clone(), &small_window(32_000, 512));
    big.ok(&["ask", "--session", "t", "What is the current time?"]);
    let all = offered(&big.requests()[0]);

    // On 4k the definitions alone would take most of the window.
    let w = World::with_config(script, &small_window(4096, 512));
    w.ok(&["ask", "--session", "t", "What is the current time?"]);
    let requests = w.requests();
    let first = offered(&requests[0]);
    assert!(first.contains(&"current_time".to_string()), "{first:?}");
    assert!(
        first.len() < all.len(),
        "fewer tools than on a big window: {first:?} of {all:?}"
    );
    let tool_tokens: usize = requests[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t.to_string().len() / 3)
        .sum();
    assert!(
        tool_tokens < (4096 - 512) * 6 / 10,
        "{tool_tokens} tokens of tools"
    );
    let trace = w.trace(w.turns()[0]["id"].as_str().expect("id"));
    let context = spans_named(&trace, "context")[0];
    assert!(
        context["degraded_reason"]
            .as_str()
            .is_some_and(|r| r.contains("tools_trimmed")),
        "{context}"
    );
    let left_out: Vec<String> = serde_json::from_value(context["attrs"]["tools_left_out"].clone())
        .expect("tools_left_out names the tools");
    assert_eq!(left_out.len() + first.len(), all.len());

    // The next turn on the same session still offers the tool it called.
    w.ok(&["ask", "--session", "t", "hello again"]);
    let next = offered(w.requests().last().expect("request"));
    assert!(next.contains(&"current_time".to_string()), "{next:?}");
}

/// A 4k model with everything else left at its defaults (`max_tokens` 4096): the answer's
/// reserve adapts to the window, so turns work and never ask for more than fits.
#[test]
fn a_4k_window_with_default_settings_answers_and_every_request_fits() {
    let w = World::with_config(
        json!({ "steps": [], "default": { "text": "Small but fine." } }),
        "[llm]\ncontext_window = 4096\n",
    );
    for i in 0..3 {
        let out = w.ok(&["ask", "--session", "small", &format!("hello number {i}")]);
        assert!(out.contains("Small but fine."), "{out}");
    }
    let requests = w.requests();
    assert!(!requests.is_empty());
    for r in &requests {
        let asked = r["max_tokens"].as_u64().unwrap_or(0);
        assert!(
            (1..=1024).contains(&asked),
            "a request asked for {asked} answer tokens: {r}"
        );
    }
}

/// The forced-call answers a long session on a small window needs: history summaries and
/// episode consolidations; everything else gets a long-ish answer.
fn background_script(answer: &str) -> Value {
    json!({ "steps": [
        {"when_tool": "summarize_history", "times": 1000, "tool_calls": [{"id": "s", "name": "summarize_history", "arguments": json!({"summary": "Earlier turns."}).to_string()}]},
        {"when_tool": "consolidate_episode", "times": 1000, "tool_calls": [{"id": "e", "name": "consolidate_episode", "arguments": json!({"summary": "An episode.", "memories": []}).to_string()}]},
    ], "default": { "text": answer } })
}

/// Every request a 4k model gets fits its window, background ones included: a long stretch
/// is consolidated in window-sized chunks instead of one request several windows long.
#[test]
fn on_a_4k_window_every_request_fits_and_a_long_stretch_is_consolidated_in_chunks() {
    let answer = "Here is a fairly long answer that goes on for a while. ".repeat(8);
    let w = World::with_config(
        background_script(&answer),
        "[llm]\ncontext_window = 4096\nmax_tokens = 1024\n\
         [memory]\nextraction = false\nembedder = \"none\"\nconsolidate_after = 62\n",
    );
    let inputs: Vec<String> = (0..31)
        .map(|i| {
            format!(
                "Turn {i}: {}",
                "tell me more about the garden plans. ".repeat(8)
            )
        })
        .collect();
    chat(&w, "long", &inputs);
    let requests = w.requests();
    let budget = 4096 - 1024;
    for r in &requests {
        let tokens = wire_tokens(r);
        assert!(
            tokens <= budget,
            "a request of {tokens} tokens for a window that leaves {budget}: {}",
            r["tools"][0]["function"]["name"]
        );
    }
    let stretch: usize = inputs.iter().map(|i| i.len()).sum::<usize>() + 31 * answer.len();
    let consolidations = requests
        .iter()
        .filter(|r| offers(r, "consolidate_episode"))
        .count();
    assert!(
        consolidations >= 3,
        "a stretch of {stretch} characters in {consolidations} consolidation request(s)"
    );
}

/// A consolidation that fails is not retried on every turn: it waits, longer each time.
#[test]
fn a_failing_consolidation_backs_off_instead_of_retrying_every_turn() {
    let w = World::with_config(
        json!({ "steps": [
            {"when_tool": "consolidate_episode", "times": 1000, "status": 500, "error_message": "overloaded"},
        ], "default": { "text": "Fine." } }),
        "[llm]\ncontext_window = 4096\n[llm.retry]\nmax_retries = 0\n\
         [memory]\nextraction = false\nembedder = \"none\"\nconsolidate_after = 2\n",
    );
    let inputs: Vec<String> = (0..6).map(|i| format!("message {i}")).collect();
    chat(&w, "s", &inputs);
    let tries = w
        .requests()
        .iter()
        .filter(|r| offers(r, "consolidate_episode"))
        .count();
    assert_eq!(tries, 1, "one try, then a wait: {tries} tries in 6 turns");
}
