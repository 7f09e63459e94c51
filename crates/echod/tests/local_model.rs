//! The built-in model end to end: the real `echod` binary with the real SmolLM2-135M-Instruct
//! weights (`scripts/fetch-local-model.sh`; `scripts/test.sh` sets `ECHO_LOCAL_MODEL`), no
//! model server at all.

use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

#[path = "../../echo-local/tests/support/ci_model.rs"]
mod ci_model;
mod common;
use ci_model::model_path;

/// A data directory and a cache directory of its own; no model server anywhere.
struct World {
    home: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl World {
    /// A world with `config`; without a `[side]` section of its own no side jobs run, so
    /// a turn asks the model for its answer only.
    fn new(config: &str) -> World {
        let home = tempfile::tempdir().expect("tempdir");
        let mut config = config.to_string();
        if !config.contains("[side]") {
            config.push_str("[side]\nmodel = \"none\"\n");
        }
        std::fs::write(home.path().join("config.toml"), config).expect("config");
        World {
            home,
            cache: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// `echod` with nothing chosen: no `ECHO_LLM_*`, an Ollama address where nothing
    /// listens, and this world's cache directory.
    fn bare(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_echod"));
        cmd.args(args)
            .env("ECHO_DESK_HOME", self.home.path())
            .env("XDG_CACHE_HOME", self.cache.path())
            .env("OLLAMA_HOST", "127.0.0.1:9")
            .env("ECHO_EMBED_MODEL_DIR", "/nonexistent")
            .stdin(Stdio::null());
        for name in [
            "ECHO_LLM_KIND",
            "ECHO_LLM_BASE_URL",
            "ECHO_LLM_MODEL",
            "ECHO_LLM_FALLBACK_MODELS",
            "ECHO_LLM_API_KEY",
            "ECHO_LLM_CONTEXT_WINDOW",
            "ECHO_LOCAL_MODEL",
            "ECHO_LOG",
        ] {
            cmd.env_remove(name);
        }
        cmd
    }

    /// `echod` on the built-in model with this file.
    fn local(&self, model: &Path, args: &[&str]) -> Command {
        let mut cmd = self.bare(args);
        cmd.env("ECHO_LLM_KIND", "local")
            .env("ECHO_LOCAL_MODEL", model);
        cmd
    }

    /// Puts the CI model where `scripts/fetch-local-model.sh` puts it, in this world's cache.
    fn install_default(&self) {
        let dir = self.cache.path().join("echo-desk-models");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::os::unix::fs::symlink(model_path(), dir.join("SmolLM2-135M-Instruct.Q4_1.gguf"))
            .expect("symlink");
    }
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn json(out: Output, what: &str) -> Value {
    let text = ok(out, what);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"))
}

/// The longest a turn of these tests may take, start to end (a few seconds on an idle
/// machine; a busy one is allowed many times that).
const TURN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(300);

/// Short answers (a tiny model rambles), no memory extraction.
const NO_MEMORY: &str =
    "[llm]\nmax_tokens = 48\n[memory]\nextraction = false\nembedder = \"none\"\n";

#[test]
fn a_turn_on_the_built_in_model_streams_its_answer() {
    let world = World::new(NO_MEMORY);
    let out = world
        .local(
            &model_path(),
            &["ask", "--events", "What is the capital of France?"],
        )
        .output()
        .expect("run");
    let text = ok(out, "ask");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("event line"))
        .collect();
    let tokens: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "token")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(tokens.len() > 3, "the answer streams in pieces: {text}");
    let last = events
        .iter()
        .find(|e| e["type"] == "final")
        .expect("final event");
    assert!(
        last["text"].as_str().is_some_and(|t| !t.trim().is_empty()),
        "{text}"
    );
}

#[test]
fn with_nothing_configured_the_installed_built_in_model_answers() {
    let world = World::new(NO_MEMORY);
    world.install_default();
    let out = world.bare(&["ask", "Say hello."]).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let answer = ok(out, "ask");
    assert!(!answer.trim().is_empty());
    assert!(
        stderr.contains("using the built-in model SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("built-in model").count(),
        1,
        "one line: {stderr}"
    );

    let list = json(
        world
            .bare(&["model", "list", "--json"])
            .output()
            .expect("run"),
        "model list",
    );
    let default = list["models"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["id"] == "smollm2-135m"))
        .cloned()
        .expect("catalog entry");
    assert!(default["path"].as_str().is_some(), "{default}");
    // Each entry says what its download is checked against: the CI model's SHA-256 is
    // pinned in the catalog; the others' come from the download host.
    for m in list["models"].as_array().expect("models") {
        let pinned = m["id"] == "smollm2-135m";
        assert_eq!(
            m["checksum"],
            if pinned {
                "pinned"
            } else {
                "published_by_host"
            },
            "{m}"
        );
    }
}

/// With no side model named, the installed built-in model is the side model: beside a
/// remote provider (the mock model) it writes the session's title and offers follow-ups
/// after the answer, and the provider is asked for the answer only.
#[test]
fn with_no_side_model_named_the_installed_built_in_model_does_the_side_jobs() {
    let world = World::new(&format!("{NO_MEMORY}[side]\nfollow_ups_wait_secs = 30\n"));
    world.install_default();
    let said = "Kyoto is lovely in spring; the gardens are at their best in April.";
    let mock = echo_mock_model::MockServer::start(serde_json::json!({
        "steps": [{ "model": "primary", "text": said }]
    }))
    .expect("mock");
    let out = world
        .bare(&["ask", "--events", "Tell me about Kyoto for a family trip"])
        .env("ECHO_LLM_KIND", "openai")
        .env("ECHO_LLM_BASE_URL", mock.base_url())
        .env("ECHO_LLM_MODEL", "primary")
        .output()
        .expect("run");
    let events: Vec<Value> = ok(out, "ask")
        .lines()
        .map(|l| serde_json::from_str(l).expect("event line"))
        .collect();
    let final_event = events.iter().find(|e| e["type"] == "final").expect("final");
    assert_eq!(final_event["text"], said, "the answer is the provider's");
    let asked = mock.requests().expect("mock requests");
    let chats = asked
        .iter()
        .filter(|r| r["path"] == "/v1/chat/completions")
        .count();
    assert_eq!(
        chats, 1,
        "the provider answers and does nothing else: {asked:?}"
    );

    let turn = events[0]["turn_id"].as_str().expect("turn id");
    let trace = json(
        world
            .bare(&["trace", "show", turn, "--json"])
            .output()
            .expect("run"),
        "trace show",
    );
    let spans = trace["spans"].as_array().expect("spans");
    for job in ["background:session_title", "background:follow_ups"] {
        let job_span = spans
            .iter()
            .find(|s| s["name"] == job)
            .unwrap_or_else(|| panic!("no {job} span: {trace}"));
        let calls: Vec<&Value> = spans
            .iter()
            .filter(|s| s["parent_id"] == job_span["id"] && s["kind"] == "model")
            .collect();
        assert!(!calls.is_empty(), "{job} asked no model: {trace}");
        for call in calls {
            let model = call["model"].as_str().unwrap_or_default();
            assert!(
                model.contains("SmolLM2-135M-Instruct"),
                "{job} ran on {model:?}, not the built-in model"
            );
        }
    }
}

#[test]
fn with_nothing_configured_and_no_model_the_first_line_says_how_to_get_one() {
    let world = World::new(NO_MEMORY);
    let out = world.bare(&["ask", "Say hello."]).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no built-in model is installed: run `echod model fetch`"),
        "{stderr}"
    );
}

#[test]
fn model_use_makes_the_built_in_model_the_saved_provider() {
    let world = World::new(NO_MEMORY);
    world.install_default();
    ok(
        world
            .bare(&["model", "use", "smollm2-135m"])
            .output()
            .expect("run"),
        "model use",
    );
    let config = std::fs::read_to_string(world.home.path().join("config.toml")).expect("config");
    assert!(config.contains("kind = \"local\""), "{config}");
    assert!(
        config.contains("SmolLM2-135M-Instruct.Q4_1.gguf"),
        "{config}"
    );
    let list = json(
        world
            .bare(&["model", "list", "--json"])
            .output()
            .expect("run"),
        "model list",
    );
    assert!(
        list["in_use"]
            .as_str()
            .is_some_and(|p| p.ends_with(".gguf")),
        "{list}"
    );

    let e = world
        .bare(&["model", "use", "no-such-model"])
        .output()
        .expect("run");
    assert!(!e.status.success());
    assert!(
        String::from_utf8_lossy(&e.stderr).contains("neither a GGUF file nor a catalog model"),
        "{}",
        String::from_utf8_lossy(&e.stderr)
    );
}

/// `llm.threads` is the thread count the built-in model computes with (asked of the runtime
/// in the `echod` process); unset, it is the machine's physical cores.
#[test]
fn the_thread_count_setting_sizes_the_model_s_threads() {
    // More than this machine's logical CPUs, so not what the runtime would choose by itself.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) + 1;
    let world = World::new(&NO_MEMORY.replace("[llm]\n", &format!("[llm]\nthreads = {threads}\n")));
    let in_use = |world: &World| {
        let list = json(
            world
                .bare(&["model", "list", "--json"])
                .output()
                .expect("run"),
            "model list",
        );
        list["threads"].as_u64().expect("threads") as usize
    };
    assert_eq!(in_use(&world), threads);
    let unset = World::new(NO_MEMORY);
    assert!(in_use(&unset) < threads, "unset, the physical cores");
}

#[test]
fn a_missing_or_damaged_model_file_is_a_clear_error() {
    let world = World::new(NO_MEMORY);
    let missing = world.home.path().join("missing.gguf");
    let out = world.local(&missing, &["ask", "hi"]).output().expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot open the model file"), "{stderr}");

    let damaged = world.home.path().join("damaged.gguf");
    std::fs::write(&damaged, b"GGUF but not really").expect("write");
    let out = world.local(&damaged, &["ask", "hi"]).output().expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is damaged"), "{stderr}");
}

#[test]
fn a_follow_up_turn_reuses_the_prefix_cache_as_the_trace_shows() {
    let world = World::new(NO_MEMORY);
    let mut child = world
        .local(&model_path(), &["chat", "--session", "cache"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "Name a colour.").expect("write");
        writeln!(stdin, "And another one?").expect("write");
    }
    ok(child.wait_with_output().expect("wait"), "chat");
    let turns = json(
        world
            .local(&model_path(), &["trace", "list", "--json"])
            .output()
            .expect("run"),
        "trace list",
    );
    let turns = turns.as_array().cloned().unwrap_or_default();
    assert_eq!(turns.len(), 2, "{turns:?}");
    // Per turn, newest first: the prompt tokens of its first model call, and the most any
    // of its calls reused from the prefix cache.
    let per_turn: Vec<(u64, u64)> = turns
        .iter()
        .map(|t| {
            let id = t["id"].as_str().expect("turn id");
            let trace = json(
                world
                    .local(&model_path(), &["trace", "show", id, "--json"])
                    .output()
                    .expect("run"),
                "trace show",
            );
            let text = trace.to_string();
            let numbers = |key: &str| -> Vec<u64> {
                text.match_indices(key)
                    .filter_map(|(i, m)| {
                        text[i + m.len()..]
                            .split(|c: char| !c.is_ascii_digit())
                            .next()
                            .and_then(|n| n.parse::<u64>().ok())
                    })
                    .collect()
            };
            let input = numbers("\"input_tokens\":").first().copied().unwrap_or(0);
            let cached = numbers("\"cached_input_tokens\":")
                .into_iter()
                .max()
                .unwrap_or(0);
            (input, cached)
        })
        .collect();
    eprintln!("(prompt tokens, reused) per turn, newest first: {per_turn:?}");
    // The first turn had nothing to reuse. The follow-up reused everything before the first
    // message (the system block and the tool list, which stayed the same) and processed
    // only the conversation: the two messages, the answer and this turn's runtime block.
    // (Before the tool list moved ahead of the conversation, and the session kept its
    // list, it reused 333 of 2,238 tokens.) How much it processed depends on how long the
    // sampled first answer was (up to the answer limit), so the check is on what it reused:
    // at least four fifths of the first request.
    let [
        (follow_up_input, follow_up_cached),
        (first_input, first_cached),
    ] = per_turn[..]
    else {
        panic!("two turns expected: {per_turn:?}");
    };
    assert_eq!(first_cached, 0, "{per_turn:?}");
    assert!(
        first_input > 1_000 && follow_up_cached * 5 >= first_input * 4,
        "the follow-up should reuse the first request's prompt; (prompt tokens, reused) per \
         turn, newest first: {per_turn:?}"
    );
    assert!(follow_up_input > follow_up_cached, "{per_turn:?}");
}

/// The memory story on the built-in model alone: a fact stated in a turn is kept (in the
/// quoted style, the built-in model's default: the model chooses which of the person's
/// statements to keep) and `echod memory list` shows it; the question beside it is not
/// offered.
#[test]
fn a_fact_stated_to_the_built_in_model_is_remembered() {
    let world = World::new(
        "[llm]\nmax_tokens = 48\n[agent]\nbackground_wait_secs = 900\n\
         [memory]\nembedder = \"none\"\n",
    );
    let said = "My sister Ana lives in Porto.";
    ok(
        world
            .local(
                &model_path(),
                &["ask", &format!("{said} Can you suggest a gift for her?")],
            )
            .output()
            .expect("run"),
        "ask",
    );
    let list = json(
        world
            .local(&model_path(), &["memory", "list", "--json"])
            .output()
            .expect("run"),
        "memory list",
    );
    let memories = list.as_array().cloned().unwrap_or_default();
    let kept = memories
        .iter()
        .find(|m| m["content"].as_str().is_some_and(|c| c.contains(said)))
        .unwrap_or_else(|| panic!("the fact is not remembered: {list:#}"));
    assert_eq!(kept["source"], "user_stated", "{kept:#}");
    assert!(
        !list.to_string().contains("gift"),
        "the question is not a memory: {list:#}"
    );
}

/// The quoted style as a model server receives it (the scripted mock, the style chosen in
/// the configuration): the extraction call fixes the person's statement about themselves
/// and leaves out the request beside it, and consolidation asks for its summary only.
#[test]
fn the_quoted_style_sends_fixed_statements_and_a_summary_only_consolidation() {
    let w = common::World::with_config(
        serde_json::json!({"steps": [], "default": {"text": "Noted."}}),
        "[memory]\nextraction_style = \"quoted\"\nembedder = \"none\"\nconsolidate_after = 2\n\
         [agent]\nbackground_wait_secs = 60\n",
    );
    w.ok(&["ask", "I keep bees on the roof. Translate this for me."]);
    let requests = w.requests();
    let parameters = |name: &str| -> Value {
        requests
            .iter()
            .filter_map(|r| r["tools"].as_array())
            .flatten()
            .find(|t| t["function"]["name"] == name)
            .map(|t| t["function"]["parameters"].clone())
            .unwrap_or_else(|| panic!("no {name} request among {requests:#?}"))
    };
    let decisions = &parameters("keep_statements")["properties"]["decisions"];
    assert_eq!(decisions["maxItems"], 1, "{decisions:#}");
    assert_eq!(
        decisions["prefixItems"][0]["properties"]["statement"]["const"], "I keep bees on the roof.",
        "{decisions:#}"
    );
    let episode = parameters("consolidate_episode");
    assert_eq!(
        episode["properties"]["memories"]["maxItems"], 0,
        "{episode:#}"
    );
}

/// `echod serve` on the built-in model, with the address and token to reach it.
struct Served {
    child: std::process::Child,
    port: u16,
    token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start(world: &World) -> Served {
        use std::io::BufRead;
        let mut child = world
            .local(&model_path(), &["serve"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn echod serve");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("first line");
        let port = first
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        // Keep reading, so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in stdout.lines() {});
        let token = std::fs::read_to_string(world.home.path().join("serve-token"))
            .expect("token file")
            .trim()
            .to_string();
        Served { child, port, token }
    }

    /// Runs a turn; `during` sees each event as it arrives. Returns every event.
    fn turn(&self, session: &str, input: &str, mut during: impl FnMut(&Value)) -> Vec<Value> {
        use std::io::BufRead;
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(120)))
            .expect("timeout");
        let body = serde_json::json!({ "session": session, "input": input }).to_string();
        write!(
            stream,
            "POST /api/turns HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            self.token,
            body.len()
        )
        .expect("send");
        // The server sends a keep-alive line every 15 s, so the read timeout alone would
        // never end a turn that stalls: the whole turn gets a deadline.
        let deadline = std::time::Instant::now() + TURN_DEADLINE;
        let mut events = Vec::new();
        for line in std::io::BufReader::new(stream).lines() {
            let line = line.expect("line");
            assert!(
                std::time::Instant::now() < deadline,
                "turn {session:?} did not finish within {TURN_DEADLINE:?}; its events so far: {events:?}"
            );
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let event: Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {data}"));
            during(&event);
            let last = event["type"] == "turn_finished";
            events.push(event);
            if last {
                break;
            }
        }
        events
    }

    /// The process ids of the model worker processes `echod serve` started.
    fn workers(&self) -> Vec<u32> {
        let tasks = format!("/proc/{}/task", self.child.id());
        let mut pids = Vec::new();
        for task in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for pid in children
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
            {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                if String::from_utf8_lossy(&cmdline).contains("--echo-local-worker") {
                    pids.push(pid);
                }
            }
        }
        pids
    }
}

fn final_text(events: &[Value]) -> String {
    events
        .iter()
        .find(|e| e["type"] == "final")
        .and_then(|e| e["text"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// llama.cpp ends its process on an internal assertion, so the model runs in a worker
/// process of its own: killing it mid-answer fails that turn with a clear error, `echod
/// serve` runs on, and the next turn starts a new worker and answers.
#[test]
fn killing_the_model_worker_mid_answer_fails_one_turn_and_the_next_answers() {
    let world =
        World::new("[llm]\nmax_tokens = 400\n[memory]\nextraction = false\nembedder = \"none\"\n");
    let mut served = Served::start(&world);
    let mut killed = None;
    let events = served.turn(
        "kill",
        "Tell me a long story about a lighthouse keeper and her cat.",
        |event| {
            if event["type"] == "token" && killed.is_none() {
                let workers = served.workers();
                assert_eq!(workers.len(), 1, "one worker process: {workers:?}");
                let status = Command::new("kill")
                    .args(["-KILL", &workers[0].to_string()])
                    .status()
                    .expect("kill");
                assert!(status.success());
                killed = Some(workers[0]);
            }
        },
    );
    let killed = killed.expect("the answer streamed, and its worker was killed");
    let error = events
        .iter()
        .find(|e| e["type"] == "error")
        .unwrap_or_else(|| panic!("the turn failed: {events:?}"));
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("worker process stopped")),
        "{error}"
    );
    assert_eq!(
        events.last().map(|e| e["status"].clone()),
        Some(Value::from("failed")),
        "{events:?}"
    );
    assert!(
        served.child.try_wait().expect("wait").is_none(),
        "echod serve runs on"
    );

    let again = served.turn("kill", "What is the capital of France?", |_| {});
    assert!(!final_text(&again).trim().is_empty(), "{again:?}");
    let workers = served.workers();
    assert!(
        workers.len() == 1 && workers[0] != killed,
        "a new worker answered: {workers:?} (killed {killed})"
    );
}

/// The built-in model answers one request at a time: a turn that comes while another
/// session's answer is being written says it waits for the model, then answers.
#[test]
fn a_turn_that_waits_for_the_built_in_model_says_so() {
    let world = World::new(NO_MEMORY);
    let served = std::sync::Arc::new(Served::start(&world));
    let (started, first_token) = std::sync::mpsc::channel();
    let long = {
        let served = served.clone();
        std::thread::spawn(move || {
            let mut told = false;
            served.turn(
                "first",
                "Tell me a long story about a lighthouse keeper and her cat.",
                |event| {
                    if event["type"] == "token" && !told {
                        told = true;
                        let _ = started.send(());
                    }
                },
            )
        })
    };
    first_token
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the first answer streams");
    let second = served.turn("second", "Name a colour.", |_| {});
    let waited = second
        .iter()
        .find(|e| e["type"] == "degraded" && e["reason"] == "model_busy")
        .unwrap_or_else(|| panic!("no wait was said: {second:?}"));
    assert!(
        waited["detail"]
            .as_str()
            .is_some_and(|d| d.contains("waiting for the built-in model")),
        "{waited}"
    );
    assert!(!final_text(&second).trim().is_empty(), "{second:?}");
    let first = long.join().expect("first turn");
    assert!(
        first.iter().all(|e| e["reason"] != "model_busy"),
        "the first turn did not wait: {first:?}"
    );
}

/// The `model_load_ms` figures of a turn's trace: how long the built-in model took to load
/// its weights, on each model call that had to.
fn model_loads(world: &World, events: &[Value]) -> Vec<u64> {
    let id = events
        .iter()
        .find(|e| e["type"] == "turn_finished")
        .and_then(|e| e["trace_id"].as_str())
        .unwrap_or_else(|| panic!("no trace id: {events:?}"));
    let trace = json(
        world
            .local(&model_path(), &["trace", "show", id, "--json"])
            .output()
            .expect("run"),
        "trace show",
    );
    fn walk(value: &Value, loads: &mut Vec<u64>) {
        match value {
            Value::Object(map) => {
                if let Some(ms) = map
                    .get("attrs")
                    .and_then(|a| a.get("model_load_ms"))
                    .and_then(Value::as_u64)
                {
                    loads.push(ms);
                }
                map.values().for_each(|v| walk(v, loads));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, loads)),
            _ => {}
        }
    }
    let mut loads = Vec::new();
    walk(&trace, &mut loads);
    loads
}

/// After its quiet period the worker process ends, so an idle app holds no model; the next
/// turn starts it again, and its trace says the model was loaded and how long that took.
#[test]
fn a_quiet_model_worker_ends_and_the_next_turn_starts_another() {
    let world = World::new(
        "[llm]\nmax_tokens = 16\nrelease_after_secs = 1\n[memory]\nextraction = false\nembedder = \"none\"\n",
    );
    let served = Served::start(&world);
    assert!(
        served.workers().is_empty(),
        "no worker before the first turn"
    );
    let first = served.turn("quiet", "Name a colour.", |_| {});
    assert!(!final_text(&first).trim().is_empty(), "{first:?}");
    assert_eq!(
        model_loads(&world, &first).len(),
        1,
        "the first turn loaded the model"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !served.workers().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker did not end after its quiet period"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let again = served.turn("quiet", "Name another colour.", |_| {});
    assert!(!final_text(&again).trim().is_empty(), "{again:?}");
    assert_eq!(
        model_loads(&world, &again).len(),
        1,
        "the turn after the worker ended loaded the model again"
    );
}
