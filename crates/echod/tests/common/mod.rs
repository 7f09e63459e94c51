//! Shared by the scenario tests: one isolated world (a data directory and the scripted mock
//! model server) and helpers to run the real `echod` binary in it.
#![allow(dead_code)]

#[path = "../../../echo-core/tests/support/any_json.rs"]
pub mod any_json;
pub mod gateway;
pub mod scan;

use echo_mock_model::MockServer;
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// One isolated world: a data directory and a mock model server.
pub struct World {
    pub home: tempfile::TempDir,
    pub mock: MockServer,
}

impl World {
    /// A world whose turns are not followed by memory extraction or side jobs (so scripts
    /// only answer the turns themselves); memory and side-model tests opt in with their own
    /// `[memory]` or `[side]` section.
    pub fn new(script: Value) -> World {
        World::with_config(script, "")
    }

    pub fn with_config(script: Value, config: &str) -> World {
        let mock = MockServer::start(script).unwrap_or_else(|e| panic!("mock: {e}"));
        let home = tempfile::tempdir().expect("tempdir");
        let mut config = config.to_string();
        if !config.contains("[memory]") {
            config.push_str("\n[memory]\nextraction = false\nembedder = \"none\"\n");
        }
        if !config.contains("[side]") {
            config.push_str("\n[side]\nmodel = \"none\"\n");
        }
        std::fs::write(home.path().join("config.toml"), config).expect("config");
        World { home, mock }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_echod"));
        cmd.args(args)
            .env("ECHO_DESK_HOME", self.home.path())
            .env("ECHO_LLM_KIND", "openai")
            .env("ECHO_LLM_BASE_URL", self.mock.base_url())
            .env("ECHO_LLM_MODEL", "primary")
            .env_remove("ECHO_LLM_FALLBACK_MODELS")
            .env_remove("ECHO_LLM_API_KEY")
            .env_remove("ECHO_LOG")
            .env_remove("ECHO_SEARCH_KIND")
            .env_remove("ECHO_SEARCH_URL")
            .env_remove("ECHO_SEARCH_API_KEY")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run echod")
    }

    /// Runs a command that must succeed; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "echod {args:?} failed ({:?}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8 stdout")
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let text = self.ok(args);
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("echod {args:?}: not JSON ({e}): {text}"))
    }

    pub fn history(&self, session: &str) -> Vec<Value> {
        match self.json(&["history", session, "--json"]) {
            Value::Array(a) => a,
            other => panic!("history is not an array: {other}"),
        }
    }

    pub fn turns(&self) -> Vec<Value> {
        match self.json(&["trace", "list", "--json"]) {
            Value::Array(a) => a,
            other => panic!("trace list is not an array: {other}"),
        }
    }

    pub fn trace(&self, turn_id: &str) -> Value {
        self.json(&["trace", "show", turn_id, "--json"])
    }

    /// Bodies of the chat requests the model server received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.mock
            .requests()
            .expect("mock requests")
            .into_iter()
            .filter(|r| r["path"] == "/v1/chat/completions")
            .map(|r| r["body"].clone())
            .collect()
    }
}

/// The names of the tools a model request offered.
pub fn offered(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn roles(history: &[Value]) -> Vec<String> {
    history
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or("?");
            match m["tool_calls"].as_array() {
                Some(calls) if !calls.is_empty() => format!("{role}+calls"),
                _ => role.to_string(),
            }
        })
        .collect()
}

pub fn spans_named<'a>(trace: &'a Value, prefix: &str) -> Vec<&'a Value> {
    trace["spans"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter(|s| s["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
                .collect()
        })
        .unwrap_or_default()
}

pub fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("event line is not JSON ({e}): {l}"))
        })
        .collect()
}

/// The target (`/path?query`) of the HTTP request arriving on `stream`, once its head is
/// read; `None` when the connection ends first.
pub fn request_target(stream: &mut std::net::TcpStream) -> Option<String> {
    let head = request_head(stream)?;
    Some(
        head.split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string(),
    )
}

/// The request line and headers of the request on `stream`.
pub fn request_head(stream: &mut std::net::TcpStream) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

pub fn wait_for(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The MCP test server binary (`tests/mcp-server`), next to this test's build output.
pub fn mcp_test_server() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let bin = exe
        .parent()
        .and_then(std::path::Path::parent)
        .map(|dir| dir.join("mcp-test-server"))
        .expect("target dir");
    assert!(
        bin.is_file(),
        "{} is missing; build it with `cargo build -p echo-mcp-test-server` (the workspace test run does)",
        bin.display()
    );
    bin
}

/// The estimate ContextStage uses, computed from a request as it went over the wire.
pub fn wire_tokens(request: &Value) -> usize {
    use echo_llm::tokens::count_text;
    let messages: usize = request["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    let calls: usize = m["tool_calls"]
                        .as_array()
                        .map(|cs| {
                            cs.iter()
                                .map(|c| {
                                    let f = &c["function"];
                                    4 + count_text(f["name"].as_str().unwrap_or_default())
                                        + count_text(f["arguments"].as_str().unwrap_or_default())
                                })
                                .sum()
                        })
                        .unwrap_or(0);
                    4 + count_text(m["content"].as_str().unwrap_or_default()) + calls
                })
                .sum()
        })
        .unwrap_or(0);
    let tools: usize = request["tools"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    let f = &t["function"];
                    4 + count_text(f["name"].as_str().unwrap_or_default())
                        + count_text(f["description"].as_str().unwrap_or_default())
                        + count_text(&f["parameters"].to_string())
                })
                .sum()
        })
        .unwrap_or(0);
    messages + tools
}

/// The local embedding model's directory (`ECHO_EMBED_MODEL_DIR`, else the fetch script's
/// cache); a missing model fails the test with how to get it.
pub fn embed_model_dir() -> String {
    let dir = std::env::var("ECHO_EMBED_MODEL_DIR").unwrap_or_else(|_| {
        format!(
            "{}/.cache/echo-desk-models/all-MiniLM-L6-v2",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    assert!(
        std::path::Path::new(&dir)
            .join("model.safetensors")
            .is_file(),
        "the local embedding model is missing at {dir}: run `bash scripts/fetch-embed-model.sh`"
    );
    dir
}

/// `[memory]` with extraction on the `extractor` model and no embedder.
pub const EXTRACTION_CONFIG: &str =
    "[memory]\nextraction = true\nextraction_model = \"extractor\"\nembedder = \"none\"\n";

/// A mock script for one turn whose statement ("I am vegetarian and I love a good steak")
/// the extractor turns into two memories of the `diet` slot that the judge calls a
/// contradiction: the turn leaves one open conflict.
pub fn diet_conflict_script() -> Value {
    let memory = |content: &str, value: &str, evidence: &str| {
        serde_json::json!({"kind": "preference", "subject": "user", "slot": "diet",
            "content": content, "value": value, "source": "user_stated", "confidence": 0.8,
            "valid_until": null, "evidence": evidence})
    };
    serde_json::json!({"steps": [
        {"model": "primary", "text": "Noted."},
        {"model": "extractor", "when_tool": "extract_memories", "tool_calls": [{
            "id": "x", "name": "extract_memories", "arguments": serde_json::json!({"memories": [
                memory("The user is vegetarian.", "vegetarian", "I am vegetarian"),
                memory("The user loves steak.", "eats steak", "I love a good steak"),
            ]}).to_string()}]},
        {"model": "extractor", "when_tool": "judge_memory_conflict", "tool_calls": [{
            "id": "j", "name": "judge_memory_conflict",
            "arguments": "{\"verdict\": \"contradiction\", \"explanation\": \"A vegetarian does not eat steak.\"}"}]},
    ]})
}

/// `echod serve` running in a world (automations run in it); killed when dropped.
pub struct Serving {
    pub child: std::process::Child,
    _stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Serving {
    /// Starts `echod serve` and waits until it listens.
    pub fn start(w: &World, cwd: &std::path::Path) -> Serving {
        Serving::spawn(
            w.command(&["serve"])
                .current_dir(cwd)
                .stderr(Stdio::inherit()),
        )
    }

    /// Starts `serve`, a command set up by the caller, and waits until it listens.
    pub fn spawn(serve: &mut Command) -> Serving {
        use std::io::BufRead;
        let mut child = serve
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn echod serve");
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("first line");
        assert!(first.starts_with("echod serve listening on"), "{first}");
        Serving {
            child,
            _stdout: stdout,
        }
    }

    /// Ends the process at once (SIGKILL: no clean shutdown).
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a data directory folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

/// Files under `dir` (recursively) whose bytes contain `needle`.
pub fn files_containing(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    files_under(dir)
        .into_iter()
        .filter(|path| {
            // A file the scan cannot read could hide the canary: that fails the test.
            let bytes = std::fs::read(path)
                .unwrap_or_else(|e| panic!("cannot scan {}: {e}", path.display()));
            bytes.windows(needle.len()).any(|w| w == needle)
        })
        .map(|path| path.display().to_string())
        .collect()
}

/// A memory figure of a running process from `/proc/PID/status`, in KiB (`VmRSS`, `VmHWM`).
pub fn proc_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Runs `cmd` to its end, killing it (and failing) after `limit`: for hostile input, where a
/// hang is a failure like any other.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    while matches!(child.try_wait(), Ok(None)) {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("wait");
            panic!(
                "still running after {limit:?}; it said: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("wait")
}

/// `command` run under `strace` with `args` (its program, arguments, environment and
/// directory carried over), to record or refuse the system calls it makes.
pub fn under_strace(command: &Command, args: &[&str]) -> Command {
    run_by("strace", args, command)
}

/// `command` run by `program` with `args` before it (`strace …`, `setpriv …`), its program,
/// arguments, environment and directory carried over.
pub fn run_by(program: &str, args: &[&str], command: &Command) -> Command {
    let mut wrapped = Command::new(program);
    wrapped
        .args(args)
        .arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// Runs `cmd` with `line` (and a newline) on its standard input, to its end.
pub fn output_with_line(cmd: &mut Command, line: &str) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {:?}: {e}", cmd.get_program()));
    writeln!(child.stdin.take().expect("stdin"), "{line}").expect("write stdin");
    child.wait_with_output().expect("wait")
}

/// The environment `echod` runs with in `w`, for a config loaded in this process.
pub struct WorldEnv(std::collections::HashMap<String, String>);

impl echo_core::config::Env for WorldEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).filter(|v| !v.is_empty()).cloned()
    }
}

/// The engine as the desktop app holds it: an `Api` opened in this process on `w`'s data
/// directory, with the same settings `echod` gets, and a runtime to drive it.
pub fn desktop_app(w: &World) -> (tokio::runtime::Runtime, echo_agent::Api) {
    let command = w.command(&[]);
    let env = WorldEnv(
        command
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string())))
            .collect(),
    );
    let config = echo_agent::Config::load(&echo_agent::Overrides::default(), &env).expect("config");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let api = runtime
        .block_on(echo_agent::Api::open(config))
        .expect("open the engine in process");
    (runtime, api)
}

/// The `kind` of each entry of a sign-in log (`devices log --json`, `GET /api/devices/events`),
/// in its order.
pub fn access_kinds(log: &Value) -> Vec<&str> {
    log.as_array()
        .expect("the sign-in log is a list")
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect()
}
