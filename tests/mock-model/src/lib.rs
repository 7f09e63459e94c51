//! Test-side handle on the scripted mock model server (docs/mock-model.md):
//! [`MockServer::start`] runs the `mock-model` binary on a script as a child process,
//! [`MockServer::requests`] reads back what it received, and dropping the handle ends it.
//!
//! ```ignore
//! let mock = echo_mock_model::MockServer::start(serde_json::json!({"steps": [{"text": "hi"}]}))?;
//! let client = OpenAiClient::new(mock.base_url());
//! // ... drive the engine ...
//! assert_eq!(mock.requests()?.len(), 1);
//! ```
#![deny(missing_docs)]

mod http_client;
/// The server itself, for running it in process (`echod replay`): [`server::router`] plays a
/// [`server::Script`].
#[allow(missing_docs)]
pub mod server;

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;
use tempfile::NamedTempFile;

/// How long the binary may take to print its address.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variable that overrides where the `mock-model` binary is.
pub const BINARY_ENV: &str = "ECHO_MOCK_MODEL_BIN";

/// The line prefix the binary prints once it accepts connections.
const LISTENING: &str = "mock-model listening on http://";

/// How much of the child's stderr is kept for error messages.
const STDERR_KEPT: usize = 16 * 1024;

/// Why the mock server could not be started or asked something.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MockError {
    /// The `mock-model` binary is not where it was looked for.
    #[error(
        "mock-model binary not found at {}; build it with `cargo build -p echo-mock-model` \
         (or set {BINARY_ENV} to its path)",
        .path.display()
    )]
    BinaryMissing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The script could not be written to its temp file.
    #[error("could not write the mock script to a temp file: {0}")]
    WriteScript(#[source] io::Error),
    /// The binary could not be run.
    #[error("could not run {}: {source}", .path.display())]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The binary ran but did not report its address in time.
    #[error("mock-model ({}) did not start: {reason}{}", .path.display(), stderr_note(.stderr))]
    Startup {
        /// The binary.
        path: PathBuf,
        /// What went wrong.
        reason: String,
        /// What it wrote to stderr, for the message.
        stderr: String,
    },
    /// A request to the running server failed or was refused.
    #[error("mock-model request {what} failed: {reason}")]
    Request {
        /// The request, e.g. `GET /_mock/requests`.
        what: &'static str,
        /// What went wrong.
        reason: String,
    },
}

fn stderr_note(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr:\n{stderr}")
    }
}

/// A running `mock-model` process playing a script; dropping it kills the process.
#[derive(Debug)]
pub struct MockServer {
    child: Child,
    stdin: Option<ChildStdin>,
    address: SocketAddr,
    root_url: String,
    base_url: String,
    _script: NamedTempFile,
}

impl MockServer {
    /// Writes `script` to a temp file and starts the `mock-model` binary on it, waiting
    /// (up to 10 s) until it prints its address. The binary is `$ECHO_MOCK_MODEL_BIN`, or
    /// `mock-model` in the directory of the running executable (its parent when that
    /// directory is `deps`, as for tests).
    pub fn start(script: Value) -> Result<MockServer, MockError> {
        let binary = locate_binary()?;
        let mut file = NamedTempFile::new().map_err(MockError::WriteScript)?;
        file.write_all(script.to_string().as_bytes())
            .map_err(MockError::WriteScript)?;
        file.flush().map_err(MockError::WriteScript)?;

        let mut child = Command::new(&binary)
            .arg("--script")
            .arg(file.path())
            .arg("--exit-on-stdin-eof")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| MockError::Spawn {
                path: binary.clone(),
                source,
            })?;
        let stderr = child.stderr.take().map(keep_stderr);
        let first_line = child.stdout.take().map(first_line);

        let line = match first_line.map(|lines| lines.recv_timeout(STARTUP_TIMEOUT)) {
            Some(Ok(line)) => line,
            Some(Err(mpsc::RecvTimeoutError::Timeout)) => {
                let reason = format!("it printed no address within {STARTUP_TIMEOUT:?}");
                return Err(give_up(child, stderr, &binary, reason));
            }
            Some(Err(mpsc::RecvTimeoutError::Disconnected)) | None => {
                let reason = "its stdout could not be read".to_owned();
                return Err(give_up(child, stderr, &binary, reason));
            }
        };
        let address = line
            .trim()
            .strip_prefix(LISTENING)
            .and_then(|a| a.parse::<SocketAddr>().ok());
        let Some(address) = address else {
            let reason = if line.is_empty() {
                "it exited before printing its address".to_owned()
            } else {
                format!("unexpected first line {line:?}")
            };
            return Err(give_up(child, stderr, &binary, reason));
        };
        let root_url = format!("http://{address}");
        Ok(MockServer {
            stdin: child.stdin.take(),
            child,
            address,
            base_url: format!("{root_url}/v1"),
            root_url,
            _script: file,
        })
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL for OpenAI-compatible clients.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `http://127.0.0.1:PORT`, the base URL for Anthropic clients.
    pub fn root_url(&self) -> &str {
        &self.root_url
    }

    /// Every model request received so far, in order, each as
    /// `{"path": "/v1/chat/completions", "body": {...}}` (a body that is not JSON is
    /// recorded as a string).
    pub fn requests(&self) -> Result<Vec<Value>, MockError> {
        const WHAT: &str = "GET /_mock/requests";
        let reply = self.send(WHAT, "GET", "/_mock/requests", None)?;
        serde_json::from_slice(&reply).map_err(|e| MockError::Request {
            what: WHAT,
            reason: e.to_string(),
        })
    }

    /// Replaces the script (same JSON shape as for [`MockServer::start`]) and resets the
    /// step counters; the recorded requests stay.
    pub fn set_script(&self, script: Value) -> Result<(), MockError> {
        const WHAT: &str = "POST /_mock/script";
        let body = script.to_string();
        self.send(WHAT, "POST", "/_mock/script", Some(body.as_bytes()))
            .map(drop)
    }

    /// Sends one request and returns the body of a 200 reply.
    fn send(
        &self,
        what: &'static str,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Vec<u8>, MockError> {
        let reply = http_client::send(self.address, method, path, body).map_err(|e| {
            MockError::Request {
                what,
                reason: e.to_string(),
            }
        })?;
        if reply.status != 200 {
            let text = String::from_utf8_lossy(&reply.body);
            let reason = format!("status {}: {text}", reply.status);
            return Err(MockError::Request { what, reason });
        }
        Ok(reply.body)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the `mock-model` binary is, or why it is not there.
fn locate_binary() -> Result<PathBuf, MockError> {
    let exe = std::env::current_exe().unwrap_or_default();
    let path = binary_path(std::env::var_os(BINARY_ENV), &exe);
    if path.is_file() {
        Ok(path)
    } else {
        Err(MockError::BinaryMissing { path })
    }
}

/// The binary's path given `$ECHO_MOCK_MODEL_BIN` and the running executable: the
/// variable when set, else `mock-model` beside the executable, one level up from `deps/`.
fn binary_path(from_env: Option<OsString>, exe: &Path) -> PathBuf {
    if let Some(path) = from_env.filter(|v| !v.is_empty()) {
        return PathBuf::from(path);
    }
    let mut dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    if dir.file_name().is_some_and(|name| name == "deps") {
        dir.pop();
    }
    dir.join(format!("mock-model{}", std::env::consts::EXE_SUFFIX))
}

/// Reads the first line of `stdout` on a thread (empty at end of file), then keeps
/// draining it so the child never blocks on a full pipe.
fn first_line(stdout: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = sender.send(line);
        let _ = io::copy(&mut reader, &mut io::sink());
    });
    receiver
}

/// Drains `stderr` on a thread, keeping its start for error messages.
fn keep_stderr(stderr: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut kept = Vec::new();
        let _ = reader
            .by_ref()
            .take(STDERR_KEPT as u64)
            .read_to_end(&mut kept);
        let _ = io::copy(&mut reader, &mut io::sink());
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// Ends a child that failed to start and says why, with its stderr.
fn give_up(
    mut child: Child,
    stderr: Option<JoinHandle<String>>,
    path: &Path,
    reason: String,
) -> MockError {
    let _ = child.kill();
    let _ = child.wait();
    let stderr = stderr
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default();
    MockError::Startup {
        path: path.to_path_buf(),
        reason,
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(from_env: Option<&str>, exe: &str, expect: &str) {
        let got = binary_path(from_env.map(OsString::from), Path::new(exe));
        assert_eq!(got, PathBuf::from(expect), "env {from_env:?}, exe {exe}");
    }

    #[test]
    fn the_binary_is_found_beside_the_test_binary_or_from_the_environment() {
        let beside = |dir: &str| format!("{dir}/mock-model{}", std::env::consts::EXE_SUFFIX);
        check(None, "/t/debug/deps/smoke-123", &beside("/t/debug"));
        check(None, "/t/debug/echod", &beside("/t/debug"));
        check(Some(""), "/t/release/deps/x", &beside("/t/release"));
        check(
            Some("/opt/mock-model"),
            "/t/debug/deps/x",
            "/opt/mock-model",
        );
    }

    #[test]
    fn a_missing_binary_is_named_with_the_command_that_builds_it() {
        let message = MockError::BinaryMissing {
            path: PathBuf::from("/t/debug/mock-model"),
        }
        .to_string();
        assert!(message.contains("/t/debug/mock-model"), "{message}");
        assert!(
            message.contains("cargo build -p echo-mock-model"),
            "{message}"
        );
    }
}
