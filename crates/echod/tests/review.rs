//! The review queue's "edit into one": a conflict the judge left open is settled by keeping
//! one memory with a merged text; the other is superseded, the kept one edited through the
//! write path, and nothing changes when the request is bad.

mod common;

use common::World;
use serde_json::Value;

fn conflict_world() -> World {
    let w = World::with_config(common::diet_conflict_script(), common::EXTRACTION_CONFIG);
    w.ok(&[
        "ask",
        "--session",
        "s1",
        "I am vegetarian and I love a good steak",
    ]);
    w
}

fn open_conflicts(w: &World) -> Vec<Value> {
    match w.json(&["memory", "conflicts", "--json"]) {
        Value::Array(a) => a,
        other => panic!("not an array: {other}"),
    }
}

#[test]
fn a_conflict_is_edited_into_one_memory() {
    let w = conflict_world();
    let conflicts = open_conflicts(&w);
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    let conflict = conflicts[0]["id"]
        .as_str()
        .expect("conflict id")
        .to_string();
    let a = conflicts[0]["memory_a"].as_str().expect("a").to_string();
    let b = conflicts[0]["memory_b"].as_str().expect("b").to_string();

    // Bad requests change nothing: merged text without a memory to keep, or empty.
    let out = w.run(&[
        "memory", "resolve", &conflict, "--keep", "both", "--merged", "x",
    ]);
    assert!(!out.status.success());
    let out = w.run(&[
        "memory", "resolve", &conflict, "--keep", &a, "--merged", "  ",
    ]);
    assert!(!out.status.success());
    assert_eq!(open_conflicts(&w).len(), 1);

    let merged = "The user is vegetarian but makes an exception for steak.";
    w.ok(&[
        "memory", "resolve", &conflict, "--keep", &a, "--merged", merged,
    ]);
    assert!(open_conflicts(&w).is_empty());
    let active: Vec<Value> = w
        .json(&["memory", "list", "--status", "active", "--json"])
        .as_array()
        .expect("list")
        .clone();
    assert_eq!(active.len(), 1, "{active:?}");
    assert_eq!(active[0]["content"], merged);
    assert_eq!(
        w.json(&["memory", "show", &b, "--json"])["status"],
        "superseded"
    );
}
