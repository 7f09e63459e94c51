//! Deletion that deletes: `echod memory delete` removes a memory, the older versions it
//! superseded and its history from everything on disk. The test writes a unique canary
//! string, checks it can be found in the data directory, deletes, and scans every file byte
//! for byte again.

mod common;

use common::{World, files_containing};
use serde_json::json;
use std::path::Path;

fn memory_id(added: &serde_json::Value) -> String {
    added["memory"]["id"]
        .as_str()
        .expect("memory id")
        .to_string()
}

#[test]
fn a_deleted_memory_with_its_versions_and_history_is_gone_from_every_file() {
    let w = World::new(json!({"steps": []}));
    let canary = "canary-q7zx-umbrella-4411";
    let first = memory_id(&w.json(&[
        "memory",
        "add",
        "--slot",
        "pet",
        "--json",
        &format!("My pet's name is {canary}-one"),
    ]));
    // The same slot: the newer memory supersedes the first.
    let second = memory_id(&w.json(&[
        "memory",
        "add",
        "--slot",
        "pet",
        "--json",
        &format!("My pet's name is {canary}-two"),
    ]));
    assert_ne!(first, second);
    // An edit leaves the old text in the history.
    w.ok(&[
        "memory",
        "edit",
        &second,
        &format!("My pet's name is {canary}-three"),
    ]);
    let other = memory_id(&w.json(&["memory", "add", "--json", "The user likes green tea"]));
    assert_eq!(
        w.json(&["memory", "show", &first, "--json"])["status"],
        "superseded"
    );
    let before = files_containing(w.home.path(), canary.as_bytes());
    assert!(
        !before.is_empty(),
        "the scan finds the canary while the memory exists"
    );

    // Nobody can be asked (stdin is not a terminal): nothing happens without --yes.
    let refused = w.run(&["memory", "delete", &second]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--yes"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    w.ok(&["memory", "show", &second, "--json"]);

    let out = w.ok(&["memory", "delete", &second, "--yes"]);
    assert!(out.contains(&format!("deleted {second}")), "{out}");
    assert!(
        out.contains(&format!("deleted {first}")),
        "the superseded version goes with it: {out}"
    );
    for id in [&first, &second] {
        assert!(
            !w.run(&["memory", "show", id]).status.success(),
            "{id} is gone"
        );
    }
    assert_eq!(
        w.json(&["memory", "show", &other, "--json"])["content"],
        "The user likes green tea",
        "other memories stay"
    );
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");

    // Everything, with the typed confirmation the API asks for.
    let out = w.ok(&["memory", "delete", "--all", "--yes"]);
    assert!(out.contains(&format!("deleted {other}")), "{out}");
    let left = w.json(&["memory", "list", "--json"]);
    assert_eq!(left, json!([]), "no memory is left");
    assert!(files_containing(w.home.path(), b"green tea").is_empty());
}

#[test]
fn a_deleted_memory_leaves_no_copy_in_captured_model_requests_or_tool_results() {
    // The turn is given the memory (recall puts it into the request, which the trace keeps)
    // and the model also looks it up with the memory tool (whose result the trace keeps).
    let canary = "canary-locker-9c2v-pelican";
    let w = World::new(json!({"steps": [
        {"tool_calls": [{"id": "call_1", "name": "memory_recall",
                         "arguments": "{\"query\": \"locker code gym\"}"}]},
        {"text": "Your locker code is in your notes."}
    ]}));
    let id = memory_id(&w.json(&[
        "memory",
        "add",
        "--pin",
        "--json",
        &format!("The user's gym locker code is {canary}"),
    ]));
    w.ok(&["ask", "--session", "s1", "what is my gym locker code?"]);
    let turn_id = w.turns()[0]["id"].as_str().expect("turn id").to_string();
    let trace = w.trace(&turn_id);
    let first_call = trace["spans"]
        .as_array()
        .expect("spans")
        .iter()
        .find(|s| s["kind"] == "model")
        .expect("a model span")["id"]
        .as_str()
        .expect("span id")
        .to_string();
    let captured = w
        .json(&["trace", "call", &turn_id, &first_call])
        .to_string();
    assert!(
        captured.contains(canary),
        "the request that injected the memory is captured: {captured}"
    );

    w.ok(&["memory", "delete", &id, "--yes"]);
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");
    let captured = w
        .json(&["trace", "call", &turn_id, &first_call])
        .to_string();
    assert!(captured.contains("[deleted memory]"), "{captured}");
}

/// LanceDB table versions kept under `dir` (one manifest each).
fn vector_versions(dir: &Path) -> usize {
    common::files_under(dir)
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "manifest"))
        .count()
}

#[test]
fn a_deletion_erases_the_vectors_and_every_earlier_version_of_the_vector_table() {
    // Every write makes a new LanceDB version whose files keep the vectors they held; a
    // deletion must not leave the deleted memory's vector in any of them.
    let dir = common::embed_model_dir();
    let w = World::with_config(
        json!({"steps": []}),
        &format!("[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {dir:?}\n"),
    );
    let cello = memory_id(&w.json(&[
        "memory",
        "add",
        "--json",
        "The user plays the cello every evening",
    ]));
    w.ok(&["memory", "add", "The user's sister lives in Lisbon"]);
    let vectors = w.home.path().join("vectors");
    assert!(
        vector_versions(&vectors) > 1,
        "each write is a version of the vector table"
    );
    let search = |query: &str| -> Vec<String> {
        w.json(&["memory", "search", "--json", query])
            .as_array()
            .expect("results")
            .iter()
            .filter_map(|r| r["memory"]["id"].as_str().map(String::from))
            .collect()
    };
    assert!(search("which musical instrument?").contains(&cello));

    w.ok(&["memory", "delete", &cello, "--yes"]);
    assert_eq!(
        vector_versions(&vectors),
        1,
        "only the current version of the vector table is left"
    );
    assert!(!search("which musical instrument?").contains(&cello));
    assert_eq!(
        search("where does the sister live?").len(),
        1,
        "the other memory's vector stays searchable"
    );
}

#[test]
fn delete_all_data_leaves_no_byte_of_it_in_any_file() {
    // The canary goes everywhere a person's data goes: a message (history, the trace's
    // captured request, the archive), a memory (SQLite and the vector table), a tool result
    // that showed the memory, and USER.md.
    let canary = "canary-all-data-7h3k-walrus";
    let dir = common::embed_model_dir();
    let w = World::with_config(
        json!({"steps": [
            {"tool_calls": [{"id": "call_1", "name": "memory_recall",
                             "arguments": "{\"query\": \"password\"}"}]},
            {"text": "Noted."},
            {"text": "Hello again."}
        ]}),
        &format!("[memory]\nextraction = false\nembedder = \"local\"\nembed_model_dir = {dir:?}\n"),
    );
    w.ok(&[
        "memory",
        "add",
        "--pin",
        &format!("The user's password is {canary}"),
    ]);
    w.ok(&[
        "ask",
        "--session",
        "s1",
        &format!("my password is {canary}, what do you know about it?"),
    ]);
    let user_notes = w.home.path().join("USER.md");
    std::fs::write(&user_notes, format!("Password: {canary}\n")).expect("write USER.md");
    let config = std::fs::read(w.home.path().join("config.toml")).expect("config");
    let before = files_containing(w.home.path(), canary.as_bytes());
    assert!(
        before.len() >= 2,
        "the scan finds the canary in the database and USER.md: {before:?}"
    );

    // Nobody can be asked (stdin is not a terminal): nothing happens without --yes.
    let refused = w.run(&["data", "delete-all"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--yes"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!files_containing(w.home.path(), canary.as_bytes()).is_empty());

    let out = w.ok(&["data", "delete-all", "--yes"]);
    assert!(
        out.contains("deleted 1 conversation(s), 1 memory(ies)") && out.contains("USER.md"),
        "{out}"
    );
    let after = files_containing(w.home.path(), canary.as_bytes());
    assert!(after.is_empty(), "the canary is still on disk in {after:?}");
    assert_eq!(w.json(&["sessions", "list", "--json"]), json!([]));
    assert_eq!(w.json(&["memory", "list", "--json"]), json!([]));
    assert_eq!(w.json(&["trace", "list", "--json"]), json!([]));
    assert!(!user_notes.exists());
    assert_eq!(
        std::fs::read(w.home.path().join("config.toml")).expect("config"),
        config,
        "settings stay"
    );

    // The assistant still works, from a clean slate.
    let answer = w.ok(&["ask", "--session", "s1", "hello"]);
    assert!(answer.contains("Hello again."), "{answer}");
    assert_eq!(
        w.json(&["sessions", "list", "--json"])
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

/// A turn in `session` whose message holds `canary`, from which extraction learns a memory
/// quoting it; long enough with a small window that part of it is archived (summarised).
fn conversation_with_a_learned_memory(w: &World, session: &str, canary: &str) {
    let said = format!("My locker code is {canary} and I go to the gym on Mondays");
    let memory = json!({"memories": [{"kind": "fact", "subject": "user", "slot": null,
        "content": format!("The user's locker code is {canary}."), "value": canary,
        "source": "user_stated", "confidence": 0.9, "valid_until": null,
        "evidence": format!("My locker code is {canary}")}]});
    w.mock
        .set_script(json!({"steps": [
            {"model": "primary", "times": 10, "text": "Noted."},
            {"model": "extractor", "when_tool": "extract_memories", "times": 10, "tool_calls": [{
                "id": "x", "name": "extract_memories", "arguments": memory.to_string()}]},
        ]}))
        .expect("script");
    w.ok(&["ask", "--session", session, &said]);
}

#[test]
fn deleting_a_conversation_removes_every_copy_and_its_memories_as_asked() {
    let w = World::with_config(json!({"steps": []}), common::EXTRACTION_CONFIG);
    let gone = "canary-conversation-4k2q-otter";
    let kept = "canary-conversation-8m1z-heron";
    conversation_with_a_learned_memory(&w, "deleted", gone);
    conversation_with_a_learned_memory(&w, "kept", kept);
    let memories = w.ok(&["memory", "list"]);
    assert!(
        memories.contains(gone) && memories.contains(kept),
        "{memories}"
    );
    let before = files_containing(w.home.path(), gone.as_bytes());
    assert!(!before.is_empty(), "the scan finds the conversation");

    // Deleted with its memories: no byte of it is left (messages, trace spans, captured
    // requests and their message blobs, the memory and its history).
    let out = w.ok(&["sessions", "delete", "deleted", "--memories", "delete"]);
    assert!(out.contains("and 1 memory(ies)"), "{out}");
    let after = files_containing(w.home.path(), gone.as_bytes());
    assert!(
        after.is_empty(),
        "the deleted conversation is still in {after:?}"
    );

    // Deleted keeping its memories: the conversation goes, what it taught stays.
    w.ok(&["sessions", "delete", "kept", "--memories", "keep"]);
    let memories = w.ok(&["memory", "list"]);
    assert!(memories.contains(kept), "{memories}");
    let history = w.run(&["history", "kept"]);
    assert!(!history.status.success(), "the conversation is gone");
}
