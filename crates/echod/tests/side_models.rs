//! The side model through the real `echod` binary and the mock model: after a session's
//! first answer it writes the session's title and offers follow-up questions, both after the
//! answer's tokens and `final`; when it fails, the answer and the first-line title stay and
//! the failure is counted as a degradation, not an error.

mod common;

use common::*;
use echo_agent::{EventHandler, TurnRequest};
use echo_core::TurnStatus;
use echo_core::vocab::EntryPoint;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const SIDE: &str = "[side]\nmodel = \"side\"\n";

fn follow_ups_step(questions: Value) -> Value {
    let arguments = json!({ "questions": questions }).to_string();
    json!({ "model": "side", "when_tool": "follow_ups", "times": 5,
            "tool_calls": [{ "id": "f1", "name": "follow_ups", "arguments": arguments }] })
}

fn event_types(events: &[Value]) -> Vec<&str> {
    events.iter().filter_map(|e| e["type"].as_str()).collect()
}

fn title_of(w: &World, name: &str) -> Value {
    let sessions = w.json(&["sessions", "list", "--json"]);
    sessions
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .map(|s| s["title"].clone())
        .unwrap_or(Value::Null)
}

/// Requests the side model received without tools (the title calls).
fn title_calls(w: &World) -> usize {
    w.requests()
        .iter()
        .filter(|r| r["model"] == "side" && r["tools"].as_array().is_none_or(Vec::is_empty))
        .count()
}

#[test]
fn the_side_model_titles_a_session_and_offers_follow_ups_after_the_answer() {
    let w = World::with_config(
        json!({ "steps": [
            { "model": "primary", "text": "Kyoto is lovely in spring.", "times": 2 },
            follow_ups_step(json!([
                "When do the cherry trees bloom?", "  Which   hotels suit kids? ",
                "when do the  cherry trees bloom?", "How do the trains work?",
                "A fourth one too many?"
            ])),
            { "model": "side", "text": "\"Kyoto in spring.\"\n" },
        ]}),
        SIDE,
    );
    let out = w.ok(&["ask", "--events", "Tell me about Kyoto\nfor a family trip"]);
    let events = events(&out);
    let types = event_types(&events);
    let first_token = types.iter().position(|t| *t == "token").expect("token");
    let final_at = types.iter().position(|t| *t == "final").expect("final");
    let follow_at = types
        .iter()
        .position(|t| *t == "follow_ups")
        .expect("follow_ups");
    assert!(first_token < final_at && final_at < follow_at, "{types:?}");
    assert_eq!(types.last(), Some(&"turn_finished"));
    assert_eq!(
        events[follow_at]["questions"],
        json!([
            "When do the cherry trees bloom?",
            "Which hotels suit kids?",
            "How do the trains work?"
        ])
    );
    // The answer is the main model's, untouched.
    assert_eq!(events[final_at]["text"], "Kyoto is lovely in spring.");
    assert_eq!(title_of(&w, "default"), "Kyoto in spring");

    // Both side jobs are background spans of the turn with the side model's call inside.
    let turn = events[0]["turn_id"].as_str().expect("turn").to_string();
    let trace = w.trace(&turn);
    for name in ["background:follow_ups", "background:session_title"] {
        let spans = spans_named(&trace, name);
        assert_eq!(spans.len(), 1, "{name}: {trace}");
        assert_eq!(spans[0]["kind"], "background", "{trace}");
        assert_eq!(spans[0]["degraded"], false, "{trace}");
    }
    let side_calls: Vec<&Value> = trace["spans"]
        .as_array()
        .map(|s| s.iter().filter(|s| s["model"] == "side").collect())
        .unwrap_or_default();
    assert_eq!(side_calls.len(), 2, "{trace}");

    // A second turn keeps the title: no new title call; a renamed session keeps its name.
    w.ok(&["ask", "and in autumn?"]);
    assert_eq!(title_calls(&w), 1);
    assert_eq!(title_of(&w, "default"), "Kyoto in spring");
}

#[test]
fn a_failing_side_model_leaves_the_answer_and_the_first_line_and_counts_a_degradation() {
    let w = World::with_config(
        json!({ "steps": [
            { "model": "primary", "text": "Kyoto is lovely in spring." },
            { "model": "side", "status": 500, "times": 20 },
        ]}),
        &format!("{SIDE}[llm.retry]\nmax_retries = 0\n"),
    );
    let out = w.ok(&["ask", "--events", "Tell me about Kyoto"]);
    let events = events(&out);
    let types = event_types(&events);
    assert!(
        !types.contains(&"follow_ups") && !types.contains(&"error"),
        "{types:?}"
    );
    let finished = events.last().expect("finished");
    assert_eq!(finished["status"], "completed");
    let answer = events.iter().find(|e| e["type"] == "final").expect("final");
    assert_eq!(answer["text"], "Kyoto is lovely in spring.");
    assert_eq!(title_of(&w, "default"), "Tell me about Kyoto");
    let stats = w.json(&["trace", "stats", "--json"]);
    let side = stats["by_reason"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["reason"] == "side_model_failed"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(side["turns"], 1, "{stats}");
}

#[test]
fn side_jobs_switched_off_or_without_a_side_model_ask_nothing() {
    for config in [
        "[side]\nmodel = \"side\"\ntitles = false\nfollow_ups = false\n",
        "[side]\nmodel = \"none\"\n",
    ] {
        let w = World::with_config(
            json!({ "steps": [{ "model": "primary", "text": "Hello." }] }),
            config,
        );
        let out = w.ok(&["ask", "--events", "Hi there"]);
        assert!(!event_types(&events(&out)).contains(&"follow_ups"));
        assert_eq!(w.requests().len(), 1, "{config}");
        assert_eq!(title_of(&w, "default"), "Hi there");
    }
}

/// The person's next message goes first: follow-up questions still being written when the
/// next turn of the session arrives give way to it, without a degradation (the app takes a
/// new message as soon as an answer's `final` arrives). Through the engine as the app holds
/// it: one process, one session lock.
#[test]
fn follow_ups_still_being_written_give_way_to_the_next_message() {
    let w = World::with_config(
        json!({ "steps": [
            { "model": "primary", "text": "Kyoto is lovely in spring.", "times": 2 },
            { "model": "side", "when_tool": "follow_ups", "hang": true },
            follow_ups_step(json!(["Which months are quiet?"])),
            { "model": "side", "text": "Kyoto", "times": 5 },
        ]}),
        &format!("{SIDE}follow_ups_wait_secs = 5\n"),
    );
    let (runtime, api) = desktop_app(&w);
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let first = runtime.spawn({
        let (api, seen) = (api.clone(), seen.clone());
        let request = TurnRequest::new("trip", "Tell me about Kyoto", EntryPoint::Desktop);
        let record: EventHandler = Arc::new(move |e| {
            let e = serde_json::to_value(e).expect("event");
            seen.lock().expect("events").push(e);
        });
        async move { api.send(request, record, CancellationToken::new()).await }
    });
    let answered = || {
        seen.lock()
            .expect("events")
            .iter()
            .any(|e| e["type"] == "final")
    };
    wait_for("the first answer", Duration::from_secs(60), answered);

    let next = TurnRequest::new("trip", "And in autumn?", EntryPoint::Desktop);
    let second = runtime.block_on(api.send(next, Arc::new(|_| {}), CancellationToken::new()));
    assert_eq!(second.expect("second turn").status, TurnStatus::Completed);
    let first = runtime.block_on(first).expect("join").expect("first turn");
    assert_eq!(first.status, TurnStatus::Completed);
    assert_eq!(first.answer.as_deref(), Some("Kyoto is lovely in spring."));

    let events = seen.lock().expect("events").clone();
    let types = event_types(&events);
    assert!(!types.contains(&"follow_ups"), "{types:?}");
    assert_eq!(types.last(), Some(&"turn_finished"), "{types:?}");
    let trace = w.trace(first.turn_id.as_str());
    let spans = spans_named(&trace, "background:follow_ups");
    assert_eq!(spans.len(), 1, "{trace}");
    assert_eq!(
        spans[0]["attrs"]["gave_way"], "the next turn of the session",
        "{trace}"
    );
    assert_eq!(
        spans[0]["degraded"], false,
        "giving way is no failure: {trace}"
    );
}
