//! Concurrency (docs/reliability.md, section 7): `echod serve`, the CLI and an `Api` opened in this
//! process (what the desktop app holds) on one data directory at once, several conversations
//! each driven by its own thread, turns taking the three in turn, with extraction,
//! consolidation and the periodic sweep running behind them. Every turn must end (within a bound) with its answer; no message may be lost or
//! saved twice; "database is locked" must never reach the person; and the data directory must
//! check clean afterwards.
//!
//! Size: `ECHO_SOAK_SESSIONS` × `ECHO_SOAK_TURNS` (4 × 6 in the test command; 8 × 50 at full
//! size).

mod common;

use common::gateway::Server;
use common::*;
use echo_agent::{Api, ApprovalMode, TurnRequest};
use echo_core::TurnStatus;
use echo_core::vocab::EntryPoint;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest a single turn may take, queueing behind the others included.
const TURN_BOUND: Duration = Duration::from_secs(90);

fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn script() -> Value {
    let fact = json!({"memories": [{"kind": "preference", "subject": "user", "slot": "drink",
        "content": "The user drinks green tea.", "value": "green tea",
        "source": "user_stated", "confidence": 0.9, "valid_until": null,
        "evidence": "I drink green tea"}]});
    let episode = json!({"summary": "The user talked about tea.", "memories": []});
    json!({"steps": [
        {"model": "primary", "times": 100000, "text": "Noted, thank you.", "chunks": 4, "chunk_delay_ms": 10},
        {"model": "extractor", "when_tool": "extract_memories", "times": 100000,
         "tool_calls": [{"id": "x", "name": "extract_memories", "arguments": fact.to_string()}]},
        {"model": "extractor", "when_tool": "consolidate_episode", "times": 100000,
         "tool_calls": [{"id": "c", "name": "consolidate_episode", "arguments": episode.to_string()}]},
        {"when_tool": "judge_memory_conflict", "times": 100000, "tool_calls": [{"id": "j",
         "name": "judge_memory_conflict",
         "arguments": json!({"verdict": "compatible", "explanation": "Both hold."}).to_string()}]},
    ]})
}

/// What one conversation's thread saw: the messages it sent, in order, and what went wrong.
struct Driven {
    session: String,
    sent: Vec<String>,
    problems: Vec<String>,
    slowest: Duration,
}

fn drive(
    w: &World,
    server: &Server,
    app: &(tokio::runtime::Runtime, Api),
    session: String,
    turns: usize,
) -> Driven {
    let mut driven = Driven {
        session: session.clone(),
        sent: Vec::new(),
        problems: Vec::new(),
        slowest: Duration::ZERO,
    };
    for i in 0..turns {
        let text = format!("{session} message {i}: I drink green tea in the afternoon.");
        let started = Instant::now();
        // Turns through the gateway, the CLI and the in-process engine by turns: two
        // processes and this one (and the background jobs of the gateway's and this
        // process's turns) writing the same database.
        let outcome = if i % 3 == 2 {
            let (runtime, api) = app;
            let request = TurnRequest::new(session.clone(), text.clone(), EntryPoint::Desktop)
                .approvals(ApprovalMode::Ask);
            let sent = runtime.block_on(api.send(
                request,
                Arc::new(|_| {}),
                tokio_util::sync::CancellationToken::new(),
            ));
            match sent {
                Ok(outcome) if outcome.status == TurnStatus::Completed => Ok(()),
                Ok(outcome) => Err(format!("in-process turn {i} ended with {outcome:?}")),
                Err(e) => Err(format!("in-process turn {i}: {e}")),
            }
        } else if i % 3 == 0 {
            let events = server.turn_events(&json!({"session": session, "input": text}));
            match events.last() {
                Some(e) if e["type"] == "turn_finished" && e["status"] == "completed" => Ok(()),
                other => Err(format!("gateway turn {i} ended with {other:?}")),
            }
        } else {
            let out = w.run(&["ask", "--session", &session, &text]);
            let err = stderr(&out);
            if err.contains("database is locked") {
                Err(format!("CLI turn {i}: {err}"))
            } else if out.status.success() {
                Ok(())
            } else {
                Err(format!("CLI turn {i} failed: {err}"))
            }
        };
        let took = started.elapsed();
        driven.slowest = driven.slowest.max(took);
        if took > TURN_BOUND {
            driven
                .problems
                .push(format!("turn {i} took {took:?} (bound {TURN_BOUND:?})"));
        }
        if let Err(e) = outcome {
            driven.problems.push(e);
        }
        driven.sent.push(text);
    }
    driven
}

#[test]
fn the_gateway_the_cli_and_the_app_share_a_data_directory_without_losing_a_message() {
    let sessions = size("ECHO_SOAK_SESSIONS", 4);
    let turns = size("ECHO_SOAK_TURNS", 6);
    let w = World::with_config(
        script(),
        "[memory]\nextraction = true\nextraction_model = \"extractor\"\nembedder = \"none\"\n\
         consolidate_after = 4\nsweep_interval_hours = 0.001\n",
    );
    let server = Server::start(&w);
    let app = desktop_app(&w);
    let t0 = Instant::now();
    let results: Vec<Driven> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..sessions)
            .map(|k| {
                let (w, server, app) = (&w, &server, &app);
                scope.spawn(move || drive(w, server, app, format!("c{k}"), turns))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a driver thread panicked"))
            .collect()
    });
    let elapsed = t0.elapsed();
    drop(server);
    // The app's background jobs (extraction, consolidation) end before the check, as the
    // app's do when it quits.
    let (runtime, api) = app;
    runtime.block_on(api.close());
    drop(api);
    drop(runtime);

    for d in &results {
        assert!(d.problems.is_empty(), "{}: {:?}", d.session, d.problems);
        let said: Vec<String> = w
            .history(&d.session)
            .iter()
            .filter(|m| m["role"] == "user")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect();
        assert_eq!(said, d.sent, "{}: every message once, in order", d.session);
        let answers = w
            .history(&d.session)
            .iter()
            .filter(|m| m["role"] == "assistant" && m["content"] == "Noted, thank you.")
            .count();
        assert_eq!(answers, turns, "{}: every turn answered once", d.session);
    }
    // Each of the three really ran its share of the turns.
    let mut by_entry: HashMap<String, usize> = HashMap::new();
    let listed = w.json(&["trace", "list", "--limit", "1000000", "--json"]);
    for turn in listed.as_array().expect("turns") {
        let entry = turn["entry_point"].as_str().unwrap_or("?").to_string();
        *by_entry.entry(entry).or_default() += 1;
    }
    let share = |k: usize| sessions * (0..turns).filter(|i| i % 3 == k).count();
    assert_eq!(
        (
            by_entry.get("gateway"),
            by_entry.get("cli"),
            by_entry.get("desktop")
        ),
        (Some(&share(0)), Some(&share(1)), Some(&share(2))),
        "{by_entry:?}"
    );
    let check = w.json(&["data", "check", "--json"]);
    assert_eq!(check["problems"], json!([]), "{check:#}");
    let slowest = results.iter().map(|d| d.slowest).max().unwrap_or_default();
    eprintln!(
        "concurrency: {sessions} conversations x {turns} turns through the gateway, the CLI and \
         the app \
         in {elapsed:?}; slowest turn {slowest:?}; {} memories",
        check["memories"]
    );
}

/// Resident memory (KiB) and open file descriptors of a process.
fn footprint(pid: u32) -> (u64, usize) {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0);
    (proc_kib(pid, "VmRSS"), fds)
}

/// The soak: `ECHO_SOAK_LONG` turns (300 in the test command; 10,000 at full size) through
/// one long-running gateway, a new conversation every 50 turns, extraction after each. The
/// gateway's resident memory, open file descriptors and time per turn are sampled ten times;
/// at the end, memory and descriptors must not have grown past the second sample's (after
/// warm-up) by more than a margin, so a leak of a descriptor or a buffer per turn fails it.
/// Time per turn is printed with the curve.
#[test]
fn a_long_soak_keeps_memory_descriptors_and_turn_time_flat() {
    let turns = size("ECHO_SOAK_LONG", 300);
    let w = World::with_config(
        script(),
        "[memory]\nextraction = true\nextraction_model = \"extractor\"\nembedder = \"none\"\n\
         consolidate_after = 20\n",
    );
    let server = Server::start(&w);
    let pid = server.child.id();
    let tenth = (turns / 10).max(1);
    let mut samples = Vec::new();
    let mut window = Instant::now();
    for i in 0..turns {
        let session = format!("soak{}", i / 50);
        let events = server.turn_events(&json!({"session": session,
            "input": format!("Turn {i}: I drink green tea in the afternoon.")}));
        let last = events.last().cloned().unwrap_or_default();
        assert!(
            last["type"] == "turn_finished" && last["status"] == "completed",
            "turn {i} ended with {last}"
        );
        if (i + 1) % tenth == 0 {
            let (rss, fds) = footprint(pid);
            let per_turn = window.elapsed() / tenth as u32;
            window = Instant::now();
            samples.push((i + 1, rss, fds, per_turn));
        }
    }
    let curve: Vec<String> = samples
        .iter()
        .map(|(n, rss, fds, t)| format!("{n}: {} MiB, {fds} fds, {t:?}/turn", rss / 1024))
        .collect();
    eprintln!("soak of {turns} turns: {}", curve.join("; "));
    let (_, rss_early, fds_early, time_early) = samples[1.min(samples.len() - 1)];
    let (_, rss_late, fds_late, time_late) = samples[samples.len() - 1];
    assert!(
        fds_late <= fds_early + 8,
        "open descriptors grew: {curve:?}"
    );
    assert!(
        rss_late <= rss_early + rss_early / 2,
        "resident memory grew by half: {curve:?}"
    );
    // Time per turn is reported, not asserted: one machine's load is not the engine's.
    eprintln!("soak: {time_early:?}/turn after warm-up, {time_late:?}/turn at the end");
}
