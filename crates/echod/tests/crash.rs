//! Crash safety (docs/reliability.md, section 1).
//!
//! - A process killed (SIGKILL) in the middle of a consolidation leaves the stretch claimed;
//!   the next process gives the claim back and the stretch is consolidated, so no part of the
//!   conversation is skipped by long-term memory.
//! - An extraction its process did not finish (killed, or `echod ask` gone after its bounded
//!   wait) is run again by the next process's turn, so what was said is not lost to memory.
//! - The kill harness: turns through `echod ask` and `echod serve`, memory imports and sweeps,
//!   each killed at a random moment, `ECHO_CRASH_KILLS` times (12 in the test command, 200 at
//!   full size; `ECHO_CRASH_SEED` replays a run). After every kill the next process must find
//!   the database sound, nothing left running or claimed, the search indexes agreeing with
//!   SQLite, and every message whose turn had started in the history; at the end, no request
//!   the model was sent holds a tool call without its result.

mod common;

use common::gateway::Server;
use common::{World, embed_model_dir};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
fn a_stretch_whose_episode_was_written_before_a_kill_gets_no_second_episode() {
    let episode = json!({"summary": "The user is planning a trip to Kyoto.", "memories": []});
    let w = World::with_config(
        json!({"steps": [
            {"model": "primary", "times": 10, "text": "Noted."},
            {"model": "extractor", "when_tool": "consolidate_episode", "times": 10,
             "tool_calls": [{"id": "c", "name": "consolidate_episode",
                             "arguments": episode.to_string()}]},
        ]}),
        CONFIG,
    );
    let episodes = || {
        w.json(&["memory", "list", "--tier", "episodic", "--json"])
            .as_array()
            .map_or(0, Vec::len)
    };
    w.ok(&[
        "ask",
        "--session",
        "trip",
        "We are planning a trip to Kyoto in April.",
    ]);
    w.ok(&["ask", "--session", "trip", "We want to see the temples."]);
    assert_eq!(episodes(), 1, "four messages make one episode");
    // What a kill between writing the episode and finishing the claim leaves behind: the
    // stretch still claimed, by a process that is gone.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store = echo_core::Store::open_in(w.home.path())
            .await
            .expect("store");
        let session = store
            .session_by_name("trip")
            .await
            .expect("session")
            .expect("trip");
        let to = store.consolidated_seq(&session).await.expect("boundary");
        assert_eq!(to, 4);
        store
            .release_consolidation(&session, 0, to)
            .await
            .expect("release");
        let claimed = store
            .claim_consolidation(&session, 0, to, "a-process-that-is-gone")
            .await
            .expect("claim");
        assert!(claimed);
    });
    // The next process gives the claim back and consolidates the stretch again, reusing the
    // episode it finds.
    let asked = w.mock.requests().expect("requests").len();
    w.ok(&[
        "ask",
        "--session",
        "trip",
        "And we would like to eat ramen.",
    ]);
    let again = w.mock.requests().expect("requests")[asked..]
        .iter()
        .filter(|r| r.to_string().contains("consolidate_episode"))
        .count();
    assert!(again >= 1, "the stretch was consolidated again");
    assert_eq!(episodes(), 1, "and its episode was not written twice");
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

#[test]
fn an_extraction_its_process_did_not_finish_is_run_again_by_the_next_one() {
    let config = "[memory]\nembedder = \"none\"\nextraction_model = \"extractor\"\n\
        [agent]\nbackground_wait_secs = 600\n";
    let w = World::with_config(
        json!({"steps": [
            {"model": "primary", "times": 10, "text": "Noted."},
            {"model": "extractor", "when_tool": "extract_memories", "hang": true, "times": 1},
        ]}),
        config,
    );
    let extractions_of = |words: &str| {
        w.mock
            .requests()
            .expect("requests")
            .iter()
            .filter(|r| {
                let r = r.to_string();
                r.contains("\"extract_memories\"") && r.contains(words)
            })
            .count()
    };
    // The answer is saved; the extraction after it hangs, and the process is gone before
    // it ends (as `echod ask` leaves after its bounded wait, or a crash).
    let mut child = w
        .command(&["ask", "--session", "food", "I'm allergic to peanuts."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn echod");
    let deadline = Instant::now() + Duration::from_secs(60);
    while extractions_of("allergic to peanuts") == 0 {
        assert!(Instant::now() < deadline, "the extraction never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");

    let fact = json!({"memories": [{"kind": "fact", "subject": "user", "slot": "allergy",
        "content": "The user is allergic to peanuts.", "value": "peanuts",
        "source": "user_stated", "confidence": 0.9, "valid_until": null,
        "evidence": "I'm allergic to peanuts"}]});
    w.mock
        .set_script(json!({"steps": [
            {"model": "primary", "times": 10, "text": "Noted."},
            {"model": "extractor", "when_tool": "extract_memories", "times": 10,
             "tool_calls": [{"id": "x", "name": "extract_memories", "arguments": fact.to_string()}]},
        ]}))
        .expect("script");
    // The next turn, in another conversation, runs the unfinished extraction again.
    w.ok(&["ask", "--session", "weather", "Will it rain tomorrow?"]);
    assert_eq!(
        extractions_of("allergic to peanuts"),
        2,
        "the unfinished extraction ran again"
    );
    let memories = w.json(&["memory", "list", "--json"]);
    assert!(
        memories.to_string().contains("allergic to peanuts"),
        "{memories}"
    );
    // It ended, so it is not run a third time.
    w.ok(&["ask", "--session", "weather", "And the day after?"]);
    assert_eq!(extractions_of("allergic to peanuts"), 2);
}

/// What one step of the harness does before it is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
    /// A turn whose answer streams slowly, followed by extraction and, every fourth
    /// message, consolidation; long messages on a small window make it compress too.
    Stream,
    /// A turn that runs a shell command (allowed by a rule) between its two model calls.
    Tool,
    /// A memory import of many memories (SQLite, then the vector index).
    Import,
    /// The forgetting sweep.
    Sweep,
    /// A turn through `echod serve`, killed with the whole gateway.
    Serve,
}

const OPS: [Op; 5] = [Op::Stream, Op::Tool, Op::Import, Op::Sweep, Op::Serve];

fn harness_config() -> String {
    format!(
        "[llm]\ncontext_window = 3000\nmax_tokens = 300\n\
         [memory]\nextraction = true\nextraction_model = \"extractor\"\nconsolidate_after = 4\n\
         embedder = \"local\"\nembed_model_dir = {:?}\n\
         [agent]\nbackground_wait_secs = 600\n",
        embed_model_dir()
    )
}

/// The script for one step: slow enough that a random kill lands inside each stage.
fn harness_script(op: Op) -> Value {
    let fact = json!({"memories": [{"kind": "preference", "subject": "user", "slot": "drink",
        "content": "The user drinks green tea every morning.", "value": "green tea",
        "source": "user_stated", "confidence": 0.9, "valid_until": null,
        "evidence": "I drink green tea every morning"}]});
    let episode = json!({"summary": "The user talked about tea and the garden.", "memories": []});
    let answer = "Here is a long answer about tea, gardens and mornings. ".repeat(6);
    let mut steps = vec![];
    if op == Op::Tool {
        steps.push(
            json!({"model": "primary", "tool_calls": [{"id": "sh", "name": "shell",
            "arguments": json!({"command": "sleep 0.4"}).to_string()}]}),
        );
    }
    steps.extend([
        json!({"model": "primary", "times": 1000, "text": answer, "chunks": 30, "chunk_delay_ms": 25}),
        json!({"model": "extractor", "when_tool": "extract_memories", "times": 1000, "delay_ms": 200,
            "tool_calls": [{"id": "x", "name": "extract_memories", "arguments": fact.to_string()}]}),
        json!({"model": "extractor", "when_tool": "consolidate_episode", "times": 1000, "delay_ms": 200,
            "tool_calls": [{"id": "c", "name": "consolidate_episode", "arguments": episode.to_string()}]}),
        json!({"when_tool": "summarize_history", "times": 1000, "delay_ms": 200,
            "tool_calls": [{"id": "s", "name": "summarize_history",
                "arguments": json!({"summary": "Earlier: tea, the garden and mornings."}).to_string()}]}),
        json!({"when_tool": "judge_memory_conflict", "times": 1000, "tool_calls": [{"id": "j",
            "name": "judge_memory_conflict",
            "arguments": json!({"verdict": "compatible", "explanation": "Both hold."}).to_string()}]}),
    ]);
    json!({"steps": steps})
}

/// A user message: unique (so it can be found in the history), long (so the small window
/// compresses), and with the words the scripted extraction quotes.
fn message(i: usize) -> String {
    format!(
        "Note {i}: I drink green tea every morning. {}",
        "We also talked about the garden, the roses and the old apple tree. ".repeat(12)
    )
}

/// An export file of `n` memories, made from one real export line.
fn import_file(w: &World, dir: &std::path::Path, n: usize, round: usize) -> std::path::PathBuf {
    let one = dir.join("one.jsonl");
    if !one.exists() {
        w.ok(&["memory", "add", "The user keeps bees on the roof."]);
        w.ok(&["memory", "export", one.to_str().expect("utf-8 path")]);
    }
    let text = std::fs::read_to_string(&one).expect("export");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    let memory: Value = lines
        .map(|l| serde_json::from_str::<Value>(l).expect("a memory line"))
        .find(|m| m["content"].as_str().is_some_and(|c| c.contains("bees")))
        .expect("the bees memory");
    let mut out = format!("{header}\n");
    for k in 0..n {
        let mut m = memory.clone();
        m["content"] = json!(format!(
            "The user's shelf {round}-{k} holds jar number {k}."
        ));
        m["slot"] = Value::Null;
        out.push_str(&m.to_string());
        out.push('\n');
    }
    let path = dir.join(format!("import-{round}.jsonl"));
    std::fs::write(&path, out).expect("write the import file");
    path
}

/// The process of one step.
enum Process {
    Cli(std::process::Child),
    Gateway(Server),
}

/// One step running: its process, whether its turn had started (its user message saved), and
/// whether its output ended.
struct Running {
    process: Process,
    started: Arc<AtomicBool>,
    ended: Arc<AtomicBool>,
    turn: Option<(String, String)>,
}

impl Running {
    /// Whether the step finished by itself (for the gateway: its turn's stream ended).
    fn finished(&mut self) -> bool {
        match &mut self.process {
            Process::Cli(child) => matches!(child.try_wait(), Ok(Some(_))),
            Process::Gateway(_) => self.ended.load(Ordering::SeqCst),
        }
    }

    /// SIGKILL; whether the process was still running (a kill that came too late is no kill).
    fn kill(mut self) -> (bool, bool, Option<(String, String)>) {
        let child = match &mut self.process {
            Process::Cli(child) => child,
            Process::Gateway(server) => &mut server.child,
        };
        let alive = matches!(child.try_wait(), Ok(None));
        let _ = child.kill();
        let _ = child.wait();
        (alive, self.started.load(Ordering::SeqCst), self.turn)
    }
}

/// Starts `op` as step `i`.
fn start(w: &World, op: Op, i: usize, work: &std::path::Path) -> Running {
    let started = Arc::new(AtomicBool::new(false));
    let ended = Arc::new(AtomicBool::new(false));
    let watch = |reader: Box<dyn BufRead + Send>| {
        let (started, ended) = (started.clone(), ended.clone());
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                if line.contains("\"type\":\"turn_started\"") {
                    started.store(true, Ordering::SeqCst);
                }
            }
            ended.store(true, Ordering::SeqCst);
        });
    };
    let session = format!("s{}", i % 3);
    let text = message(i);
    w.mock.set_script(harness_script(op)).expect("script");
    let (process, turn) = match op {
        Op::Stream | Op::Tool => {
            let mut child = w
                .command(&["ask", "--events", "--session", &session, &text])
                .current_dir(work)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn echod ask");
            watch(Box::new(BufReader::new(
                child.stdout.take().expect("stdout"),
            )));
            (Process::Cli(child), Some((session, text)))
        }
        Op::Import | Op::Sweep => {
            let file;
            let args: Vec<&str> = if op == Op::Import {
                file = import_file(w, work, 150, i).display().to_string();
                vec!["memory", "import", &file]
            } else {
                vec!["memory", "sweep"]
            };
            let child = w
                .command(&args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn echod memory");
            (Process::Cli(child), None)
        }
        Op::Serve => {
            let server = Server::start(w);
            watch(Box::new(server.stream_turn(&session, &text)));
            (Process::Gateway(server), Some((session, text)))
        }
    };
    Running {
        process,
        started,
        ended,
        turn,
    }
}

/// How long `op` takes when nothing kills it (its first run, which also warms everything
/// up). The gateway's turn goes on in the background after its stream ends (extraction), so
/// its time is counted twice.
fn calibrate(w: &World, op: Op, i: usize, work: &std::path::Path) -> Duration {
    let t = Instant::now();
    let mut running = start(w, op, i, work);
    let deadline = t + Duration::from_secs(180);
    while !running.finished() {
        assert!(Instant::now() < deadline, "{op:?} never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = t.elapsed();
    if op == Op::Serve {
        std::thread::sleep(took);
        let _ = running.kill();
        return took * 2;
    }
    let _ = running.kill();
    took
}

/// Checks what the next process finds after a kill: `echod data check` must report nothing,
/// and the message of a turn that had started must be in its history.
fn after_restart(w: &World, label: &str, turn: Option<(String, String)>) {
    let out = w.run(&["data", "check", "--json"]);
    let check: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{label}: `data check` gave no JSON ({e}); stderr: {}",
            common::stderr(&out)
        )
    });
    assert!(
        out.status.success() && check["problems"].as_array().is_some_and(Vec::is_empty),
        "{label}: {check:#}"
    );
    assert_eq!(check["integrity"], "ok", "{label}: {check:#}");
    assert_eq!(check["vectors"], check["memories"], "{label}: {check:#}");
    if let Some((session, text)) = turn {
        let history = w.history(&session);
        assert!(
            history
                .iter()
                .any(|m| m["role"] == "user" && m["content"].as_str() == Some(text.as_str())),
            "{label}: the turn had started, but its message is not in {session}'s history"
        );
    }
}

/// The problems of one request's message sequence: every tool result answers an open call,
/// and every call is answered before anything else is said.
fn unpaired_tool_calls(request: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for m in request["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("?");
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or("");
            match open.iter().position(|o| o == id) {
                Some(k) => {
                    open.remove(k);
                }
                None => problems.push(format!("a result for {id:?}, which is not an open call")),
            }
            continue;
        }
        if !open.is_empty() {
            problems.push(format!(
                "calls {open:?} have no result before a {role} message"
            ));
            open.clear();
        }
        if let Some(calls) = m["tool_calls"].as_array() {
            open.extend(
                calls
                    .iter()
                    .filter_map(|c| c["id"].as_str().map(str::to_string)),
            );
        }
    }
    if !open.is_empty() {
        problems.push(format!("calls {open:?} end the request without a result"));
    }
    problems
}

#[test]
fn processes_killed_at_random_moments_lose_nothing() {
    let kills: usize = std::env::var("ECHO_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let seed: u64 = std::env::var("ECHO_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("crash harness: {kills} kills, ECHO_CRASH_SEED={seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    let w = World::with_config(json!({"steps": []}), &harness_config());
    let work = tempfile::tempdir().expect("workspace");
    w.ok(&[
        "rules",
        "add",
        "--tool",
        "shell",
        "--pattern",
        "sleep",
        "--decision",
        "allow",
    ]);

    let t0 = Instant::now();
    let mut step = 0;
    let mut took = HashMap::new();
    for op in OPS {
        took.insert(op, calibrate(&w, op, step, work.path()));
        after_restart(&w, &format!("{op:?} run whole"), None);
        step += 1;
    }
    eprintln!("crash harness: one whole run of each step took {took:?}");

    let (mut done, mut late, mut started) = (HashMap::<Op, usize>::new(), 0, 0);
    while done.values().sum::<usize>() < kills {
        assert!(late < kills * 3, "{late} kills came after the step ended");
        let op = OPS[step % OPS.len()];
        let at = took[&op].mul_f64(rng.f64());
        let running = start(&w, op, step, work.path());
        let t = Instant::now();
        // The moment comes at `at`, or earlier if the step ends first (then it is late).
        let mut running = running;
        while t.elapsed() < at && !running.finished() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let (alive, turn_started, turn) = running.kill();
        let label =
            format!("step {step} ({op:?}, killed at {at:?}; rerun with ECHO_CRASH_SEED={seed})");
        if alive {
            *done.entry(op).or_default() += 1;
            started += usize::from(turn_started);
        } else {
            late += 1;
        }
        after_restart(&w, &label, turn.filter(|_| turn_started));
        step += 1;
    }

    // One more turn in each session: the model is sent every history as it was left.
    w.mock
        .set_script(harness_script(Op::Stream))
        .expect("script");
    for s in 0..3 {
        w.ok(&["ask", "--session", &format!("s{s}"), "And one more thing."]);
    }
    let requests = w.requests();
    for (n, request) in requests.iter().enumerate() {
        let problems = unpaired_tool_calls(request);
        assert!(problems.is_empty(), "request {n}: {problems:?}");
    }
    // Every stage the kills are meant to land in was reached.
    let offering = |tool: &str| {
        requests
            .iter()
            .filter(|r| r.to_string().contains(&format!("\"name\":\"{tool}\"")))
            .count()
    };
    for stage in [
        "extract_memories",
        "consolidate_episode",
        "summarize_history",
    ] {
        assert!(offering(stage) > 0, "no {stage} call was made");
    }
    assert!(
        requests.iter().any(|r| r["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["role"] == "tool")),
        "no tool result was sent"
    );
    eprintln!(
        "crash harness: {} kills survived, 0 lost ({done:?}; {started} mid-turn; {late} came too late) in {:?}",
        done.values().sum::<usize>(),
        t0.elapsed()
    );
}
