//! Bringing memories from another assistant (`echod memory import-text`): the memory model
//! reads the pasted text into cards, each card is shown with what keeping it would do to the
//! memories there, the person keeps, edits or drops it, and only kept cards are written, with
//! source `imported`. `--yes` keeps only cards that clash with nothing; a review that ends
//! early writes nothing and leaves the pasted text nowhere on disk. On the built-in model's
//! quoted style the call fixes the text's lines in its grammar.

mod common;

use common::World;
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;

/// ChatGPT's "Manage memories" list, as copied from its settings.
const PASTED: &str = "Saved memories\n\
    - Lives in Lyon.\n\
    - Is vegetarian.\n\
    - Has a cat named Miso.\n\
    - Tends the Garden plot number 14 on weekends.\n";

const CONFIG: &str = "[memory]\nextraction = false\nextraction_model = \"extractor\"\nembedder = \"none\"\n\
    [trace]\ncapture = true\n";

fn card(content: &str, evidence: &str, slot: Option<&str>, about: &str) -> Value {
    json!({"content": content, "evidence": evidence, "slot": slot, "value": null,
        "valid_until": null, "about": about})
}

/// The extractor reads the list into cards (one quoting words that are not in it) and the
/// judge calls what it is asked about a contradiction: only Lyon and Paris share a slot, and
/// no two texts share a word, so it is asked about nothing else.
fn script() -> Value {
    let cards = json!({"memories": [
        card("Resides in Lyon.", "Lives in Lyon", Some("home_city"), "person"),
        card("Vegetarian diet.", "Is vegetarian", Some("diet"), "person"),
        card("Owns a cat named Miso.", "Has a cat named Miso", None, "person"),
        card("Garden plot number 14.", "Garden plot number 14", Some("garden_plot"), "project"),
        card("Speaks Klingon.", "Speaks Klingon fluently", None, "person"),
    ]});
    json!({"steps": [
        {"model": "extractor", "when_tool": "import_memories", "times": 10, "tool_calls": [
            {"id": "i", "name": "import_memories", "arguments": cards.to_string()}]},
        {"model": "extractor", "when_tool": "judge_memory_conflict", "times": 20, "tool_calls": [
            {"id": "j", "name": "judge_memory_conflict",
             "arguments": "{\"verdict\": \"contradiction\", \"explanation\": \"One home city at a time.\"}"}]}
    ]})
}

fn pasted(w: &World) -> String {
    let file = w.home.path().join("chatgpt-memories.txt");
    std::fs::write(&file, PASTED).expect("write the pasted text");
    file.to_str().expect("utf8").to_string()
}

/// `memory import-text` with `answers` on stdin.
fn review(w: &World, args: &[&str], answers: &str) -> std::process::Output {
    let mut all = vec!["memory", "import-text"];
    all.extend_from_slice(args);
    let mut child = w
        .command(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn echod");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(answers.as_bytes())
        .expect("answers");
    child.wait_with_output().expect("echod ends")
}

fn active(w: &World, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["memory", "list", "--status", "active", "--json"];
    all.extend_from_slice(args);
    w.json(&all).as_array().expect("memories").clone()
}

fn contents(memories: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = memories
        .iter()
        .map(|m| m["content"].as_str().expect("content").to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn each_card_is_kept_edited_or_dropped_and_only_kept_cards_are_written() {
    let w = World::with_config(script(), CONFIG);
    w.ok(&["memory", "add", "--slot", "home_city", "Home city: Paris"]);
    let file = pasted(&w);

    // Lyon: keep (it replaces Paris); vegetarian: drop; Miso: edit; the plot: an unknown
    // answer first, then keep.
    let out = review(
        &w,
        &[&file],
        "k\nd\ne\nOwns a tabby cat called Miso.\nmaybe\nk\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", common::stderr(&out));
    assert!(stdout.contains("read 4 cards"), "{stdout}");
    assert!(
        stdout.contains("left out \"Speaks Klingon.\": the words it quotes are not in the text"),
        "{stdout}"
    );
    assert!(
        stdout.contains("replaces: Home city: Paris"),
        "the review says what keeping Lyon does: {stdout}"
    );
    assert!(stdout.contains("\"maybe\": answer k, e or d"), "{stdout}");
    assert!(
        stdout.contains("imported 3 cards: 3 new, 0 already known, 1 replaced an older memory"),
        "{stdout}"
    );

    let now = active(&w, &[]);
    assert_eq!(
        contents(&now),
        [
            "Garden plot number 14.",
            "Owns a tabby cat called Miso.",
            "Resides in Lyon."
        ]
    );
    for m in &now {
        assert_eq!(m["source"], "imported", "{m}");
        assert_eq!(m["scope"], "global", "no project named: {m}");
    }
    let lyon = now.iter().find(|m| m["slot"] == "home_city").expect("Lyon");
    assert_eq!(lyon["evidence"], "Lives in Lyon");
    let superseded = w.json(&["memory", "list", "--status", "superseded", "--json"]);
    assert_eq!(
        contents(superseded.as_array().expect("memories")),
        ["Home city: Paris"]
    );

    // The call saw the pasted text and the slots there are; the preview and the write each
    // asked the judge about Lyon and Paris.
    let requests = w.requests();
    let reads: Vec<&Value> = requests
        .iter()
        .filter(|r| r.to_string().contains("\"import_memories\""))
        .collect();
    assert_eq!(reads.len(), 1);
    let read = reads[0].to_string();
    assert!(
        read.contains("Has a cat named Miso") && read.contains("home_city"),
        "{read}"
    );
    let judged = requests
        .iter()
        .filter(|r| r.to_string().contains("\"judge_memory_conflict\""))
        .count();
    assert!(judged >= 2, "{judged} judge calls");
}

#[test]
fn yes_keeps_only_cards_that_clash_with_nothing_and_a_review_cut_short_writes_nothing() {
    let w = World::with_config(script(), CONFIG);
    w.ok(&["projects", "add", "Garden"]);
    w.ok(&["memory", "add", "--slot", "home_city", "Home city: Paris"]);
    let file = pasted(&w);

    // Answers run out after the first card: nothing is written, and the pasted text (with
    // trace capture on) is in no file of the data directory.
    let out = review(&w, &[&file, "--project", "Garden"], "k\n");
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("the review ended before every card was decided"),
        "{}",
        common::stderr(&out)
    );
    assert_eq!(contents(&active(&w, &[])), ["Home city: Paris"]);
    let found = common::files_containing(w.home.path(), b"Has a cat named Miso")
        .into_iter()
        .filter(|f| !f.ends_with("chatgpt-memories.txt"))
        .collect::<Vec<_>>();
    assert!(found.is_empty(), "the pasted text is on disk: {found:?}");

    // --yes: Lyon clashes with Paris and is skipped; the plot goes to the project.
    let out = review(&w, &[&file, "--project", "Garden", "--yes"], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", common::stderr(&out));
    assert!(stdout.contains("skipped: it clashes"), "{stdout}");
    assert!(stdout.contains("project: Garden"), "{stdout}");
    assert_eq!(
        contents(&active(&w, &["--project", "Garden"])),
        ["Garden plot number 14."]
    );
    assert_eq!(
        contents(&active(&w, &["--global"])),
        [
            "Home city: Paris",
            "Owns a cat named Miso.",
            "Vegetarian diet."
        ]
    );

    // Bad input is a clear error and writes nothing.
    let empty = w.home.path().join("empty.txt");
    std::fs::write(&empty, "  \n").expect("write");
    let out = review(&w, &[empty.to_str().expect("utf8"), "--yes"], "");
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("invalid text"),
        "{}",
        common::stderr(&out)
    );
    let out = review(&w, &[&file, "--project", "Nowhere", "--yes"], "");
    assert!(common::stderr(&out).contains("project not found: Nowhere"));
    assert_eq!(active(&w, &[]).len(), 4);
}

#[test]
fn a_model_that_fails_is_an_error_that_says_so() {
    let w = World::with_config(
        json!({"steps": [], "default": {"status": 500, "error_message": "overloaded"}}),
        CONFIG,
    );
    let file = pasted(&w);
    let out = review(&w, &[&file, "--yes"], "");
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("reading the pasted memories"), "{err}");
    assert!(active(&w, &[]).is_empty());
}

#[test]
fn the_quoted_style_fixes_the_texts_lines_in_the_call() {
    let w = World::with_config(
        json!({"steps": [
            {"model": "extractor", "when_tool": "keep_imported", "tool_calls": [
                {"id": "k", "name": "keep_imported", "arguments": json!({"decisions": [
                    {"statement": "Lives in Lyon.", "keep": true, "about": "person"},
                    {"statement": "Is vegetarian.", "keep": false},
                    {"statement": "Has a cat named Miso.", "keep": true, "about": "person"},
                    {"statement": "Tends the Garden plot number 14 on weekends.", "keep": false},
                    {"statement": "Saved memories", "keep": false}
                ]}).to_string()}]}
        ]}),
        "[memory]\nextraction = false\nextraction_model = \"extractor\"\nextraction_style = \"quoted\"\n\
         embedder = \"none\"\n",
    );
    let file = pasted(&w);
    let out = review(&w, &[&file, "--yes"], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", common::stderr(&out));
    assert_eq!(
        contents(&active(&w, &[])),
        ["Has a cat named Miso.", "Lives in Lyon."]
    );
    let requests = w.requests();
    let call = requests
        .iter()
        .find(|r| r.to_string().contains("\"keep_imported\""))
        .expect("a keep_imported call");
    let tool = call["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["function"]["name"] == "keep_imported")
        .expect("the tool");
    let fixed: Vec<&Value> =
        tool["function"]["parameters"]["properties"]["decisions"]["prefixItems"]
            .as_array()
            .expect("prefixItems")
            .iter()
            .map(|item| &item["properties"]["statement"]["const"])
            .collect();
    assert_eq!(
        fixed,
        [
            "Saved memories",
            "Lives in Lyon.",
            "Is vegetarian.",
            "Has a cat named Miso.",
            "Tends the Garden plot number 14 on weekends."
        ]
    );
}
