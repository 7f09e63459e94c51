//! "Ask before remembering": with the setting on, what a turn's extraction finds waits as a
//! proposal (nothing is in memory, nothing is recalled) until the person keeps it (written
//! through the write path) or discards it; a proposal goes with its conversation, leaving
//! no byte of it on disk; with the setting off again, facts are written at once. The model
//! keeps no note of its own meanwhile (`memory_note` is neither offered nor obeyed).

mod common;

use common::{World, files_containing, offered};
use serde_json::{Value, json};

const SAID: &str = "I am vegetarian and my cat is called Quokka-7fz.";

fn extraction(memories: Value) -> Value {
    json!({"model": "extractor", "when_tool": "extract_memories", "tool_calls": [{
        "id": "x", "name": "extract_memories", "arguments": json!({"memories": memories}).to_string()}]})
}

fn fact(content: &str, slot: &str, evidence: &str) -> Value {
    json!({"kind": "fact", "subject": "user", "slot": slot, "content": content, "value": null,
        "source": "user_stated", "confidence": 0.9, "valid_until": null, "evidence": evidence})
}

fn script() -> Value {
    json!({"steps": [
        {"model": "primary", "text": "Noted."},
        extraction(json!([
            fact("The user is vegetarian.", "diet", "I am vegetarian"),
            fact("The user's cat is called Quokka-7fz.", "cat_name", "my cat is called Quokka-7fz"),
        ])),
        {"model": "primary", "text": "Noted again."},
        extraction(json!([fact("The user's cat is called Quokka-7fz.", "cat_name", "my cat is called Quokka-7fz")])),
        {"model": "primary", "text": "Noted, writing it."},
        extraction(json!([fact("The user plays the oboe.", "instrument", "I play the oboe")])),
    ]})
}

fn list(w: &World, args: &[&str]) -> Vec<Value> {
    w.json(args).as_array().expect("a list").clone()
}

fn contents(items: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = items
        .iter()
        .map(|m| m["content"].as_str().expect("content").to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn with_ask_before_remembering_nothing_is_written_until_kept() {
    let w = World::with_config(script(), common::EXTRACTION_CONFIG);
    let shown = w.ok(&["memory", "settings", "--ask-before-remembering", "on"]);
    assert!(shown.contains("ask before remembering: on"), "{shown}");
    let config = std::fs::read_to_string(w.home.path().join("config.toml")).expect("config");
    assert!(config.contains("ask_before_remembering = true"), "{config}");

    w.ok(&["ask", "--session", "pets", SAID]);
    assert!(
        list(&w, &["memory", "list", "--json"]).is_empty(),
        "nothing written"
    );
    let waiting = list(&w, &["memory", "proposals", "--json"]);
    assert_eq!(
        contents(&waiting),
        [
            "The user is vegetarian.",
            "The user's cat is called Quokka-7fz."
        ]
    );
    let id_of = |content: &str| {
        waiting
            .iter()
            .find(|p| p["content"] == content)
            .and_then(|p| p["id"].as_str())
            .expect("a proposal")
            .to_string()
    };

    // Keep one: it is written as extraction would have written it; discard the other.
    let kept = w.ok(&["memory", "keep", &id_of("The user is vegetarian.")]);
    assert!(kept.contains("The user is vegetarian."), "{kept}");
    w.ok(&[
        "memory",
        "discard",
        &id_of("The user's cat is called Quokka-7fz."),
    ]);
    let memories = list(&w, &["memory", "list", "--json"]);
    assert_eq!(contents(&memories), ["The user is vegetarian."]);
    assert_eq!(memories[0]["source"], "user_stated");
    assert_eq!(memories[0]["evidence"], "I am vegetarian");
    assert!(list(&w, &["memory", "proposals", "--json"]).is_empty());
    let out = w.run(&["memory", "keep", &id_of("The user is vegetarian.")]);
    assert!(!out.status.success(), "a proposal is kept once");
    assert!(
        common::stderr(&out).contains("memory proposal not found"),
        "{}",
        common::stderr(&out)
    );

    // A proposal goes with its conversation: no byte of it stays on disk.
    w.ok(&["ask", "--session", "pets", SAID]);
    assert_eq!(list(&w, &["memory", "proposals", "--json"]).len(), 1);
    w.ok(&["sessions", "delete", "pets", "--memories", "keep"]);
    assert!(list(&w, &["memory", "proposals", "--json"]).is_empty());
    let left = files_containing(w.home.path(), b"Quokka-7fz");
    assert!(left.is_empty(), "the proposal is still on disk in {left:?}");

    // Off again: facts are written at once.
    w.ok(&["memory", "settings", "--ask-before-remembering", "off"]);
    w.ok(&["ask", "I play the oboe."]);
    assert!(list(&w, &["memory", "proposals", "--json"]).is_empty());
    assert_eq!(
        contents(&list(&w, &["memory", "list", "--json"])),
        ["The user is vegetarian.", "The user plays the oboe."]
    );
}

#[test]
fn with_ask_before_remembering_the_model_keeps_no_note() {
    let note = |id: &str| {
        json!({"model": "primary", "times": 1, "tool_calls": [{"id": id, "name": "memory_note",
            "arguments": json!({"note": "The cat is Quokka-7fz"}).to_string()}]})
    };
    let w = World::new(json!({"steps": [
        note("n1"),
        {"model": "primary", "times": 1, "text": "Not noted."},
        note("n2"),
        {"model": "primary", "times": 1, "text": "Noted."},
    ]}));
    let working = |w: &World| list(w, &["memory", "list", "--tier", "working", "--json"]);
    w.ok(&["memory", "settings", "--ask-before-remembering", "on"]);
    w.ok(&["ask", "--session", "pets", SAID]);
    let requests = w.requests();
    let tools = offered(&requests[0]);
    assert!(!tools.iter().any(|t| t == "memory_note"), "{tools:?}");
    assert!(tools.iter().any(|t| t == "memory_recall"), "{tools:?}");
    // Called anyway, it is refused, and the model reads why.
    let result = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["tool_call_id"] == "n1"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(result.contains("nothing is noted"), "{result}");
    assert!(working(&w).is_empty());

    // Off again: offered, and the note is kept.
    w.ok(&["memory", "settings", "--ask-before-remembering", "off"]);
    w.ok(&["ask", "--session", "pets", SAID]);
    let requests = w.requests();
    assert!(offered(&requests[2]).iter().any(|t| t == "memory_note"));
    assert_eq!(contents(&working(&w)), ["The cat is Quokka-7fz"]);
}
