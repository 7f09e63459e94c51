//! Crash safety: a process killed (SIGKILL) in the middle of a consolidation leaves the
//! stretch claimed; the next process gives the claim back and the stretch is consolidated,
//! so no part of the conversation is skipped by long-term memory.

mod common;

use common::World;
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};

const CONFIG: &str = "[memory]\nextraction = false\nembedder = \"none\"\n\
    extraction_model = \"extractor\"\nconsolidate_after = 4\n\
    [agent]\nbackground_wait_secs = 600\n";

fn sessions(w: &World) -> Vec<Value> {
    w.json(&["sessions", "list", "--json"])
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_consolidation_killed_midway_is_done_again_by_the_next_process() {
    let w = World::with_config(
        json!({"steps": [
            {"model": "primary", "times": 10, "text": "Noted."},
            {"model": "extractor", "when_tool": "consolidate_episode", "hang": true, "times": 10},
        ]}),
        CONFIG,
    );
    w.ok(&[
        "ask",
        "--session",
        "trip",
        "We are planning a trip to Kyoto in April.",
    ]);
    // The second turn makes four messages: its consolidation starts, and hangs.
    let mut child = w
        .command(&["ask", "--session", "trip", "We want to see the temples."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn echod");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !w
        .mock
        .requests()
        .expect("requests")
        .iter()
        .any(|r| r.to_string().contains("consolidate_episode"))
    {
        assert!(Instant::now() < deadline, "the consolidation never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    // The killed process had claimed messages 1-4 (the boundary moved to 4). Any `echod`
    // that opens the data directory now gives the claim back: the owner is gone.
    assert_eq!(
        sessions(&w)[0]["consolidated_seq"],
        0,
        "the claim is given back"
    );

    let episode = json!({"summary": "The user planned a trip to Kyoto in April to see the temples.",
                         "memories": []});
    w.mock
        .set_script(json!({"steps": [
            {"model": "primary", "times": 10, "text": "Noted."},
            {"model": "extractor", "when_tool": "consolidate_episode", "times": 10,
             "tool_calls": [{"id": "c", "name": "consolidate_episode", "arguments": episode.to_string()}]},
        ]}))
        .expect("script");
    w.ok(&["ask", "--session", "trip", "And we like green tea."]);
    let episodes = w.json(&["memory", "list", "--tier", "episodic", "--json"]);
    let episodes = episodes.as_array().cloned().unwrap_or_default();
    assert_eq!(
        episodes.len(),
        1,
        "the stretch the killed process claimed is consolidated: {episodes:?}"
    );
    assert!(
        episodes[0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("Kyoto")),
        "{episodes:?}"
    );
    assert_eq!(sessions(&w)[0]["consolidated_seq"], 6);
}
