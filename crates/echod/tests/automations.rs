//! Automations end to end: `echod automations …` defines them, `echod serve` (a real process)
//! watches real folders with real filesystem events and runs each settled event as a turn
//! against the scripted mock model. Each test checks the run history the CLI reports, the
//! sessions and traces the runs left, and what the model was sent.

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(60);

/// A world whose runs answer with an echo of their prompt, with writes allowed under `root`
/// and approval questions that expire after `expiry_secs`.
fn world(script: Value, root: &Path, expiry_secs: f64) -> World {
    World::with_config(
        script,
        &format!(
            "[tools]\nworkspace_roots = [{root:?}]\nexplain_approvals = false\n\
             [automations]\napproval_expiry_hours = {}\n\
             [routing]\ncode = [\"model-a\"]\nresearch = [\"model-b\"]\n",
            expiry_secs / 3600.0
        ),
    )
}

fn runs(w: &World, name: &str) -> Vec<Value> {
    match w.json(&["automations", "runs", name, "--limit", "5000", "--json"]) {
        Value::Array(a) => a,
        other => panic!("runs is not an array: {other}"),
    }
}

fn with_status<'a>(runs: &'a [Value], status: &str) -> Vec<&'a Value> {
    runs.iter().filter(|r| r["status"] == status).collect()
}

fn wait_active(w: &World, name: &str) {
    wait_for(&format!("{name} to be watching"), LONG, || {
        w.json(&["automations", "show", name, "--json"])["automation"]["state"] == "active"
    });
}

/// Waits until the first run for `file` has ended and returns it.
fn wait_run_for(w: &World, name: &str, file: &Path) -> Value {
    let path = file.to_string_lossy().to_string();
    let mut found = Value::Null;
    wait_for(&format!("the run for {path}"), LONG, || {
        let all = runs(w, name);
        match all.iter().find(|r| {
            r["path"] == path.as_str()
                && !["queued", "running", "waiting_for_approval"]
                    .contains(&r["status"].as_str().unwrap_or(""))
        }) {
            Some(r) => {
                found = r.clone();
                true
            }
            None => false,
        }
    });
    found
}

fn add(w: &World, args: &[&str]) -> Value {
    let mut all = vec!["automations", "add"];
    all.extend_from_slice(args);
    all.push("--json");
    w.json(&all)
}

#[test]
fn a_file_written_slowly_gives_one_run_after_it_settles_and_temp_files_give_none() {
    let root = tempfile::tempdir().expect("tempdir");
    let inbox = root.path().join("Inbox");
    std::fs::create_dir(&inbox).expect("inbox");
    let w = world(
        json!({"steps": [], "default": {"echo": true}}),
        root.path(),
        3600.0,
    );
    let inbox_s = inbox.to_string_lossy().to_string();
    add(
        &w,
        &[
            "--name",
            "Inbox summaries",
            "--watch",
            &inbox_s,
            "--glob",
            "*.txt",
            "--settle-ms",
            "2000",
            "--prompt",
            "Summarise {{path}} ({{event}}, {{ext}})",
        ],
    );
    let _serve = Serving::start(&w, root.path());
    wait_active(&w, "Inbox summaries");

    // Written in five pieces, one after the other with no pause: the 2 s settle window is
    // far longer than any stall between two writes on a loaded machine, so the pieces are one
    // event by the rule's own definition, not by how fast this test happens to run.
    let slow = inbox.join("report.txt");
    for i in 0..5 {
        let mut text = std::fs::read_to_string(&slow).unwrap_or_default();
        text.push_str(&format!("part {i}\n"));
        std::fs::write(&slow, text).expect("write");
    }
    // Editors' and browsers' leftovers, hidden files, other extensions.
    for name in [
        ".report.txt.swp",
        "report.txt~",
        "big.txt.part",
        "x.txt.crdownload",
        ".hidden.txt",
        "4913",
        "notes.md",
    ] {
        std::fs::write(inbox.join(name), "noise").expect("write");
    }
    let run = wait_run_for(&w, "Inbox summaries", &slow);
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(run["event"], "created");
    assert_eq!(run["cause"], "file");
    let session = run["session"].as_str().expect("the run names its session");
    assert!(session.starts_with("Inbox summaries · run "), "{session}");
    assert!(run["turn_id"].is_string());

    // A burst of writes to the same file is one "modified" run.
    for i in 0..4 {
        std::fs::write(&slow, format!("rewrite {i}\n")).expect("write");
    }
    let sentinel = inbox.join("zz-sentinel.txt");
    std::fs::write(&sentinel, "last").expect("write");
    wait_run_for(&w, "Inbox summaries", &sentinel);

    let all = runs(&w, "Inbox summaries");
    let paths: Vec<(&str, &str)> = all
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap_or(""),
                r["event"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        all.len(),
        3,
        "one run per settled event, none for temp files: {paths:?}"
    );
    assert_eq!(with_status(&all, "done").len(), 3, "{all:?}");
    let modified: Vec<_> = all.iter().filter(|r| r["event"] == "modified").collect();
    assert_eq!(modified.len(), 1, "{paths:?}");

    // The run was a real turn: its prompt, rendered, reached the model, and the trace says
    // it came from an automation.
    let prompts: Vec<String> = w
        .requests()
        .iter()
        .filter_map(|r| {
            r["messages"].as_array()?.last()?["content"]
                .as_str()
                .map(String::from)
        })
        .collect();
    let want = format!("Summarise {} (created, txt)", slow.display());
    assert_eq!(
        prompts.iter().filter(|p| p.contains(&want)).count(),
        1,
        "{prompts:#?}"
    );
    let trace = w.trace(run["turn_id"].as_str().expect("turn id"));
    assert_eq!(
        trace["turn"]["entry_point"], "automation",
        "{}",
        trace["turn"]
    );
}

/// The write_file call `model` makes when asked: `path` gets `content`.
fn write_step(model: &str, path: &Path, content: &str) -> Value {
    json!({"model": model, "times": 1, "tool_calls": [{"id": format!("w-{model}"), "name": "write_file",
        "arguments": json!({"path": path, "content": content}).to_string()}]})
}

#[test]
fn what_a_run_writes_never_sets_off_its_own_automation_nor_a_chain_back_to_it() {
    let root = tempfile::tempdir().expect("tempdir");
    let (one, two) = (root.path().join("one"), root.path().join("two"));
    std::fs::create_dir(&one).expect("one");
    std::fs::create_dir(&two).expect("two");
    // A (code → model-a) watches one/ and writes its summary into one/ (its own folder) and
    // two/; B (research → model-b) watches two/ and writes back into one/.
    let script = json!({"steps": [
        write_step("model-a", &one.join("a-summary.txt"), "summary by A"),
        write_step("model-a", &two.join("from-a.txt"), "handed to B"),
        {"model": "model-a", "times": 1, "text": "A is done."},
        write_step("model-b", &one.join("from-b.txt"), "handed back to A"),
        {"model": "model-b", "times": 1, "text": "B is done."},
    ], "default": {"text": "nothing to do"}});
    let w = world(script, root.path(), 3600.0);
    let (one_s, two_s) = (
        one.to_string_lossy().to_string(),
        two.to_string_lossy().to_string(),
    );
    let allow_all = format!("write_file={}/**", root.path().display());
    add(
        &w,
        &[
            "--name",
            "A",
            "--watch",
            &one_s,
            "--task",
            "code",
            "--settle-ms",
            "200",
            "--allow",
            &allow_all,
            "--prompt",
            "File {{path}}",
        ],
    );
    add(
        &w,
        &[
            "--name",
            "B",
            "--watch",
            &two_s,
            "--task",
            "research",
            "--settle-ms",
            "200",
            "--allow",
            &allow_all,
            "--prompt",
            "File {{path}}",
        ],
    );
    let _serve = Serving::start(&w, root.path());
    wait_active(&w, "A");
    wait_active(&w, "B");

    let start = one.join("incoming.txt");
    std::fs::write(&start, "a new file").expect("write");
    wait_run_for(&w, "B", &two.join("from-a.txt"));
    let back = wait_run_for(&w, "A", &one.join("from-b.txt"));
    assert_eq!(back["status"], "skipped", "{back}");
    assert!(
        back["reason"].as_str().unwrap_or("").starts_with("loop:"),
        "{back}"
    );
    let own = wait_run_for(&w, "A", &one.join("a-summary.txt"));
    assert_eq!(own["status"], "skipped", "A's own write: {own}");
    assert!(
        own["reason"]
            .as_str()
            .unwrap_or("")
            .contains("this automation"),
        "{own}"
    );

    let a_runs = runs(&w, "A");
    let b_runs = runs(&w, "B");
    assert_eq!(with_status(&a_runs, "done").len(), 1, "{a_runs:#?}");
    assert_eq!(with_status(&b_runs, "done").len(), 1, "{b_runs:#?}");
    assert_eq!(
        std::fs::read_to_string(one.join("from-b.txt")).expect("B wrote"),
        "handed back to A"
    );

    // A person editing the same file later is not the assistant: that starts a run.
    std::fs::write(one.join("a-summary.txt"), "edited by the person").expect("write");
    let summary = one.join("a-summary.txt").to_string_lossy().to_string();
    wait_for("a run for the person's edit", LONG, || {
        runs(&w, "A")
            .iter()
            .any(|r| r["path"] == summary.as_str() && r["status"] == "done")
    });
}

#[test]
fn an_unattended_call_that_needs_approval_waits_then_resumes_ends_on_deny_and_on_expiry() {
    let root = tempfile::tempdir().expect("tempdir");
    let inbox = root.path().join("in");
    let notes = root.path().join("notes");
    std::fs::create_dir(&inbox).expect("in");
    std::fs::create_dir(&notes).expect("notes");
    let step = |n: u32| {
        write_step(
            "model-a",
            &notes.join(format!("note{n}.md")),
            &format!("note {n}"),
        )
    };
    let done = json!({"model": "model-a", "times": 1, "text": "Filed."});
    let script = json!({"steps": [step(1), done, step(2), done, step(3), done, step(4), done]});
    let w = world(script, root.path(), 4.0);
    let inbox_s = inbox.to_string_lossy().to_string();
    add(
        &w,
        &[
            "--name",
            "Filer",
            "--watch",
            &inbox_s,
            "--task",
            "code",
            "--settle-ms",
            "200",
            "--prompt",
            "File {{name}} into notes",
        ],
    );
    let _serve = Serving::start(&w, root.path());
    wait_active(&w, "Filer");

    let waiting_question = |file: &str| -> Value {
        let mut q = Value::Null;
        wait_for(&format!("the question of {file}'s run"), LONG, || {
            let all = runs(&w, "Filer");
            let waiting = all.iter().any(|r| {
                r["status"] == "waiting_for_approval"
                    && r["path"].as_str().is_some_and(|p| p.ends_with(file))
            });
            if !waiting {
                return false;
            }
            match w.json(&["approvals", "queue", "--json"]) {
                Value::Array(a) if a.len() == 1 => {
                    q = a[0].clone();
                    true
                }
                _ => false,
            }
        });
        q
    };

    // 1: allowed once, from another process (the CLI): the run goes on and writes.
    std::fs::write(inbox.join("first.txt"), "1").expect("write");
    let q = waiting_question("first.txt");
    assert_eq!(q["tool"], "write_file");
    assert_eq!(q["automation"], "Filer");
    assert!(
        q["detail"].as_str().unwrap_or("").contains("note1.md"),
        "{q}"
    );
    w.ok(&[
        "approvals",
        "answer",
        q["id"].as_str().expect("id"),
        "allow_once",
    ]);
    let run = wait_run_for(&w, "Filer", &inbox.join("first.txt"));
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        std::fs::read_to_string(notes.join("note1.md")).expect("written"),
        "note 1"
    );

    // 2: denied: nothing is written and the model is told.
    std::fs::write(inbox.join("second.txt"), "2").expect("write");
    let q = waiting_question("second.txt");
    w.ok(&["approvals", "answer", q["id"].as_str().expect("id"), "deny"]);
    let run = wait_run_for(&w, "Filer", &inbox.join("second.txt"));
    assert_eq!(run["status"], "done", "{run}");
    assert!(!notes.join("note2.md").exists());

    // 3: nobody answers: the question expires (4 s here) and the call is denied.
    std::fs::write(inbox.join("third.txt"), "3").expect("write");
    let q = waiting_question("third.txt");
    let run = wait_run_for(&w, "Filer", &inbox.join("third.txt"));
    assert_eq!(run["status"], "done", "{run}");
    assert!(!notes.join("note3.md").exists());
    let all = w.json(&["approvals", "queue", "--all", "--json"]);
    let third = all
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == q["id"]))
        .expect("the expired question is kept");
    assert_eq!(third["status"], "expired");

    // What each denial told the model.
    let results: Vec<String> = w
        .requests()
        .iter()
        .filter_map(|r| {
            let last = r["messages"].as_array()?.last()?.clone();
            (last["role"] == "tool").then(|| last["content"].as_str().unwrap_or("").to_string())
        })
        .collect();
    assert!(
        results.iter().any(|t| t.contains("the user denied it")),
        "{results:#?}"
    );
    assert!(
        results.iter().any(|t| t.contains("nobody answered")),
        "{results:#?}"
    );

    // 4: "allow for this automation": it becomes a pre-approval of Filer only.
    std::fs::write(inbox.join("fourth.txt"), "4").expect("write");
    let q = waiting_question("fourth.txt");
    w.ok(&[
        "approvals",
        "answer",
        q["id"].as_str().expect("id"),
        "allow_automation",
    ]);
    wait_run_for(&w, "Filer", &inbox.join("fourth.txt"));
    assert!(notes.join("note4.md").exists());
    let shown = w.json(&["automations", "show", "Filer", "--json"]);
    let allow = &shown["automation"]["spec"]["allow"];
    assert_eq!(allow[0]["tool"], "write_file", "{shown}");
    let rules = w.json(&["rules", "list", "--json"]);
    assert_eq!(rules, json!([]), "no global rule was added");
}

#[test]
fn a_pre_approval_holds_for_its_own_automation_only() {
    let root = tempfile::tempdir().expect("tempdir");
    let (a_dir, b_dir, notes) = (
        root.path().join("a"),
        root.path().join("b"),
        root.path().join("notes"),
    );
    for d in [&a_dir, &b_dir, &notes] {
        std::fs::create_dir(d).expect("dir");
    }
    let script = json!({"steps": [
        write_step("model-a", &notes.join("by-a.md"), "a"),
        {"model": "model-a", "times": 1, "text": "ok"},
        write_step("model-b", &notes.join("by-b.md"), "b"),
        {"model": "model-b", "times": 1, "text": "ok"},
    ]});
    let w = world(script, root.path(), 3600.0);
    let allow = format!("write_file={}/**", notes.display());
    add(
        &w,
        &[
            "--name",
            "Trusted",
            "--watch",
            &a_dir.to_string_lossy(),
            "--task",
            "code",
            "--settle-ms",
            "200",
            "--allow",
            &allow,
            "--prompt",
            "{{path}}",
        ],
    );
    add(
        &w,
        &[
            "--name",
            "Other",
            "--watch",
            &b_dir.to_string_lossy(),
            "--task",
            "research",
            "--settle-ms",
            "200",
            "--prompt",
            "{{path}}",
        ],
    );
    let _serve = Serving::start(&w, root.path());
    wait_active(&w, "Trusted");
    wait_active(&w, "Other");
    std::fs::write(a_dir.join("x.txt"), "x").expect("write");
    std::fs::write(b_dir.join("y.txt"), "y").expect("write");
    let trusted = wait_run_for(&w, "Trusted", &a_dir.join("x.txt"));
    assert_eq!(trusted["status"], "done");
    assert!(
        notes.join("by-a.md").exists(),
        "pre-approved: written without a question"
    );
    wait_for("Other's question", LONG, || {
        runs(&w, "Other")
            .iter()
            .any(|r| r["status"] == "waiting_for_approval")
    });
    assert!(!notes.join("by-b.md").exists());
    let queue = w.json(&["approvals", "queue", "--json"]);
    assert_eq!(queue.as_array().map(Vec::len), Some(1), "{queue}");
    assert_eq!(queue[0]["automation"], "Other");
}

#[test]
fn a_burst_of_files_is_processed_once_each_in_order_across_a_kill_and_two_processes() {
    const FILES: usize = 1000;
    let root = tempfile::tempdir().expect("tempdir");
    let inbox = root.path().join("burst");
    std::fs::create_dir(&inbox).expect("burst");
    let w = world(
        json!({"steps": [], "default": {"echo": true}}),
        root.path(),
        3600.0,
    );
    add(
        &w,
        &[
            "--name",
            "Burst",
            "--watch",
            &inbox.to_string_lossy(),
            "--settle-ms",
            "300",
            "--concurrency",
            "2",
            "--prompt",
            "{{name}}",
        ],
    );
    let first = Serving::start(&w, root.path());
    wait_active(&w, "Burst");
    for i in 0..FILES {
        std::fs::write(inbox.join(format!("f{i:04}.txt")), format!("file {i}")).expect("write");
    }
    // Every file is queued, then the process dies in the middle of the work.
    wait_for("every file queued", LONG, || {
        runs(&w, "Burst").len() >= FILES
    });
    wait_for("some runs done", LONG, || {
        with_status(&runs(&w, "Burst"), "done").len() >= 20
    });
    first.kill();
    let left = FILES - with_status(&runs(&w, "Burst"), "done").len();
    assert!(left > 0, "the kill came before the end");

    // Two processes come up; the store decides who runs it.
    let _a = Serving::start(&w, root.path());
    let _b = Serving::start(&w, root.path());
    wait_for("every run done", Duration::from_secs(240), || {
        with_status(&runs(&w, "Burst"), "done").len() >= FILES
    });
    let all = runs(&w, "Burst");
    assert_eq!(all.len(), FILES, "no event queued twice");
    let mut paths: Vec<&str> = all.iter().filter_map(|r| r["path"].as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), FILES, "each file once");
    // Each turn ran once: one model request per file (the killed turns ran again once).
    let asked = w
        .requests()
        .iter()
        .filter(|r| r["messages"].as_array().is_some_and(|m| !m.is_empty()))
        .count();
    let retried: usize = all
        .iter()
        .filter(|r| r["attempts"].as_i64() == Some(2))
        .count();
    assert!(
        asked <= FILES + retried,
        "asked {asked} times for {FILES} files ({retried} retried)"
    );
    // In order: runs started in the order their events were queued (up to the concurrency
    // of 2, and apart from those started again after the kill).
    let mut by_seq: Vec<&Value> = all.iter().filter(|r| r["attempts"] == 1).collect();
    by_seq.sort_by_key(|r| r["seq"].as_i64());
    let started: Vec<&str> = by_seq
        .iter()
        .filter_map(|r| r["started_at"].as_str())
        .collect();
    let out_of_order = started.windows(3).filter(|w| w[2] < w[0]).count();
    assert_eq!(out_of_order, 0, "runs start in queue order");
}

#[test]
fn a_folder_that_vanishes_puts_the_rule_in_error_and_it_resumes_when_the_folder_is_back() {
    let root = tempfile::tempdir().expect("tempdir");
    let inbox = root.path().join("Inbox");
    std::fs::create_dir(&inbox).expect("inbox");
    let w = world(
        json!({"steps": [], "default": {"echo": true}}),
        root.path(),
        3600.0,
    );
    add(
        &w,
        &[
            "--name",
            "Inbox",
            "--watch",
            &inbox.to_string_lossy(),
            "--settle-ms",
            "200",
            "--prompt",
            "{{path}}",
        ],
    );
    let _serve = Serving::start(&w, root.path());
    wait_active(&w, "Inbox");

    std::fs::remove_dir(&inbox).expect("remove");
    let mut reason = String::new();
    wait_for("the error state", LONG, || {
        let a = &w.json(&["automations", "show", "Inbox", "--json"])["automation"];
        reason = a["state_reason"].as_str().unwrap_or_default().to_string();
        a["state"] == "error"
    });
    assert!(
        reason.contains("does not exist") && reason.contains("Inbox"),
        "{reason}"
    );

    std::fs::create_dir(&inbox).expect("back");
    wait_active(&w, "Inbox");
    let file = inbox.join("after.txt");
    std::fs::write(&file, "hello again").expect("write");
    let run = wait_run_for(&w, "Inbox", &file);
    assert_eq!(run["status"], "done", "{run}");
}

#[test]
fn files_that_arrive_while_nothing_runs_are_run_when_a_process_takes_the_rule_up_again() {
    let root = tempfile::tempdir().expect("tempdir");
    let inbox = root.path().join("Inbox");
    let elsewhere = root.path().join("Downloads");
    std::fs::create_dir(&inbox).expect("inbox");
    std::fs::create_dir(&elsewhere).expect("downloads");
    let before = inbox.join("before.txt");
    std::fs::write(&before, "here before the rule").expect("write");
    let w = world(
        json!({"steps": [], "default": {"echo": true}}),
        root.path(),
        3600.0,
    );
    add(
        &w,
        &[
            "--name",
            "Inbox",
            "--watch",
            &inbox.to_string_lossy(),
            "--events",
            "created",
            "--settle-ms",
            "200",
            "--prompt",
            "{{path}}",
        ],
    );
    // A second rule with a long settle window, for a file still being written at the start.
    let slow_dir = root.path().join("Slow");
    std::fs::create_dir(&slow_dir).expect("slow");
    add(
        &w,
        &[
            "--name",
            "Slow",
            "--watch",
            &slow_dir.to_string_lossy(),
            "--events",
            "created",
            "--settle-ms",
            "3000",
            "--prompt",
            "{{path}}",
        ],
    );
    let show = || w.json(&["automations", "show", "Inbox", "--json"])["automation"].clone();
    let first = Serving::start(&w, root.path());
    wait_active(&w, "Inbox");
    wait_for("the first watermarks", LONG, || {
        show()["watched_until"].is_string()
            && w.json(&["automations", "show", "Slow", "--json"])["automation"]["watched_until"]
                .is_string()
    });
    let live = inbox.join("live.txt");
    std::fs::write(&live, "seen by the watcher").expect("write");
    assert_eq!(wait_run_for(&w, "Inbox", &live)["status"], "done");

    // Nothing runs automations: a file is written, another moved in (it keeps its old mtime).
    let downloaded = elsewhere.join("moved.txt");
    std::fs::write(&downloaded, "downloaded earlier").expect("write");
    first.kill();
    let offline = inbox.join("offline.txt");
    std::fs::write(&offline, "written while nothing watched").expect("write");
    let moved = inbox.join("moved.txt");
    std::fs::rename(&downloaded, &moved).expect("move in");
    let partial = slow_dir.join("partial.txt");
    std::fs::write(&partial, "the first half, ").expect("write");

    let second = Serving::start(&w, root.path());
    // The file the catch-up finds in Slow is still being written: it is handed over once it
    // has settled, after the rest arrived, not half-done. The rest is appended at once:
    // waiting for the Inbox runs first let a loaded machine pass Slow's 3 s settle window,
    // and the half-written file was rightly handed over as settled (suite 10).
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&partial)
            .expect("open");
        f.write_all(b"the second half").expect("append");
    }
    let appended_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    for file in [&offline, &moved] {
        let run = wait_run_for(&w, "Inbox", file);
        assert_eq!(run["status"], "done", "{run}");
        assert_eq!(run["event"], "created", "{run}");
    }
    let run = wait_run_for(&w, "Slow", &partial);
    assert_eq!(run["status"], "done", "{run}");
    assert!(
        run["created_at"].as_str().unwrap_or_default() >= appended_at.as_str(),
        "queued before the file was complete ({appended_at}): {run}"
    );
    assert_eq!(runs(&w, "Slow").len(), 1);
    let all = runs(&w, "Inbox");
    let count = |file: &Path| {
        all.iter()
            .filter(|r| r["path"] == file.to_string_lossy().as_ref())
            .count()
    };
    assert_eq!(
        count(&live),
        1,
        "the file seen before the quit ran once: {all:?}"
    );
    // Each run's session says whose run it is (the chat sidebar keeps them out of the way).
    let sessions = w.json(&["sessions", "list", "--json"]);
    let of_run = |r: &Value| {
        sessions
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == r["session"]).cloned())
            .unwrap_or(Value::Null)
    };
    assert!(
        all.iter().all(|r| of_run(r)["automation"] == "Inbox"),
        "{sessions}"
    );
    assert_eq!(
        count(&before),
        0,
        "files there before the rule never run it: {all:?}"
    );

    // Paused, then resumed: what arrived while it was paused is not replayed.
    w.ok(&["automations", "disable", "Inbox"]);
    wait_for("the rule to be paused", LONG, || {
        show()["state"] == "paused"
    });
    let paused = inbox.join("paused.txt");
    std::fs::write(&paused, "arrived while paused").expect("write");
    w.ok(&["automations", "enable", "Inbox"]);
    wait_active(&w, "Inbox");
    let resumed = inbox.join("resumed.txt");
    std::fs::write(&resumed, "arrived after the resume").expect("write");
    assert_eq!(wait_run_for(&w, "Inbox", &resumed)["status"], "done");
    drop(second);
    let all = runs(&w, "Inbox");
    assert!(
        !all.iter()
            .any(|r| r["path"] == paused.to_string_lossy().as_ref()),
        "a file that arrived while the rule was paused ran: {all:?}"
    );
}

#[test]
fn a_run_waiting_for_approval_keeps_its_question_across_a_restart_and_an_answer_given_meanwhile_stands()
 {
    let root = tempfile::tempdir().expect("tempdir");
    let inbox = root.path().join("in");
    let notes = root.path().join("notes");
    std::fs::create_dir(&inbox).expect("in");
    std::fs::create_dir(&notes).expect("notes");
    // Each run's model asks for the same write in both attempts, then says it is done.
    let step = |n: u32| {
        let mut s = write_step(
            "model-a",
            &notes.join(format!("note{n}.md")),
            &format!("note {n}"),
        );
        s["times"] = json!(2);
        s
    };
    let done = json!({"model": "model-a", "times": 1, "text": "Filed."});
    let w = world(
        json!({"steps": [step(1), done, step(2), done]}),
        root.path(),
        3600.0,
    );
    add(
        &w,
        &[
            "--name",
            "Filer",
            "--watch",
            &inbox.to_string_lossy(),
            "--task",
            "code",
            "--settle-ms",
            "200",
            "--prompt",
            "File {{name}} into notes",
        ],
    );
    let pending = || match w.json(&["approvals", "queue", "--json"]) {
        Value::Array(a) => a,
        other => panic!("the queue is not an array: {other}"),
    };
    let waiting_on = |file: &str| -> Value {
        let mut q = Value::Null;
        wait_for(&format!("{file}'s run to wait"), LONG, || {
            let waiting = runs(&w, "Filer").iter().any(|r| {
                r["status"] == "waiting_for_approval"
                    && r["path"].as_str().is_some_and(|p| p.ends_with(file))
            });
            let open = pending();
            if waiting && open.len() == 1 {
                q = open[0].clone();
            }
            waiting && open.len() == 1
        });
        q
    };

    // 1: the process ends while the run waits; the person answers while nothing runs; the
    // next process starts the run again and the answer stands: no second question.
    let first = Serving::start(&w, root.path());
    wait_active(&w, "Filer");
    std::fs::write(inbox.join("first.txt"), "1").expect("write");
    let q1 = waiting_on("first.txt");
    first.kill();
    w.ok(&[
        "approvals",
        "answer",
        q1["id"].as_str().expect("id"),
        "allow_once",
    ]);
    let second = Serving::start(&w, root.path());
    let run = wait_run_for(&w, "Filer", &inbox.join("first.txt"));
    assert_eq!(
        (run["status"].as_str(), run["attempts"].as_i64()),
        (Some("done"), Some(2)),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(notes.join("note1.md")).expect("written"),
        "note 1"
    );

    // 2: unanswered across the restart: the run waits on the same question, then goes on.
    std::fs::write(inbox.join("second.txt"), "2").expect("write");
    let q2 = waiting_on("second.txt");
    second.kill();
    let _third = Serving::start(&w, root.path());
    wait_for("the second attempt to reach the call", LONG, || {
        runs(&w, "Filer").iter().any(|r| {
            r["attempts"] == 2
                && r["status"] == "waiting_for_approval"
                && r["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("second.txt"))
        })
    });
    let open = pending();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0]["id"], q2["id"], "the same question, not a new one");
    w.ok(&[
        "approvals",
        "answer",
        q2["id"].as_str().expect("id"),
        "allow_once",
    ]);
    let run = wait_run_for(&w, "Filer", &inbox.join("second.txt"));
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        std::fs::read_to_string(notes.join("note2.md")).expect("written"),
        "note 2"
    );
    let all = w.json(&["approvals", "queue", "--all", "--json"]);
    assert_eq!(
        all.as_array().map(Vec::len),
        Some(2),
        "one question per run, none asked twice: {all}"
    );
}
