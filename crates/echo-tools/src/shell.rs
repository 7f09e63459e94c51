//! The `shell` tool: runs a command line with `sh -c` in its own process group, under a time
//! limit and an output cap, and kills the whole group when the command finishes, times out or
//! the call is abandoned (cancelled turn, registry timeout), so nothing it started lives on.

use crate::TypedTool;
use crate::fs::{DETAIL_MAX_CHARS, cut_chars, resolve_path};
use crate::registry::{Action, Risk, ToolContext, ToolError};
use async_trait::async_trait;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Time limit when the call gives none.
const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// Longest time limit a call may ask for.
const MAX_TIMEOUT_SECS: u64 = 600;
/// Bytes kept from the start of the output.
const OUTPUT_HEAD_BYTES: usize = 64 * 1024;
/// Bytes kept from the end of the output.
const OUTPUT_TAIL_BYTES: usize = 64 * 1024;
/// How long output is still read after the command exited or was killed.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// `shell`: runs a command line with `sh -c`.
#[derive(Debug)]
pub struct Shell;

/// Arguments of `shell`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// The command line, run by `sh -c` (pipes, redirections and `&&` work); stdin is empty.
    command: String,
    /// Directory to run in, absolute or relative to the working directory (default: the
    /// working directory).
    cwd: Option<String>,
    /// Seconds after which the command and everything it started are killed (default 60,
    /// at most 600).
    #[schemars(range(min = 1, max = 600))]
    timeout_secs: Option<u64>,
}

impl ShellArgs {
    fn timeout_secs(&self) -> u64 {
        self.timeout_secs
            .unwrap_or(DEFAULT_TIMEOUT_SECS)
            .clamp(1, MAX_TIMEOUT_SECS)
    }
}

#[async_trait]
impl TypedTool for Shell {
    type Args = ShellArgs;
    const NAME: &'static str = "shell";
    const RISK: Risk = Risk::Exec;

    fn description(&self) -> &str {
        crate::texts::SHELL.text()
    }
    fn timeout(&self) -> Option<Duration> {
        // Above the tool's own limit, which it enforces itself to return the partial output.
        Some(Duration::from_secs(MAX_TIMEOUT_SECS + 10))
    }
    async fn action(
        &self,
        args: ShellArgs,
        ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        let cwd = resolve_path(&ctx.workdir, args.cwd.as_deref().unwrap_or("."));
        let detail = format!(
            "$ {}\n(cwd: {}, timeout {}s)",
            args.command,
            cwd.display(),
            args.timeout_secs()
        );
        Ok(Some(Action {
            detail: cut_chars(detail, DETAIL_MAX_CHARS),
            command: Some(args.command),
            ..Action::default()
        }))
    }
    async fn call(&self, args: ShellArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let raw_cwd = args.cwd.as_deref().unwrap_or(".");
        let cwd = resolve_path(&ctx.workdir, raw_cwd);
        match tokio::fs::metadata(&cwd).await {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(ToolError::Failed(format!(
                    "cwd {raw_cwd} is not a directory"
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ToolError::Failed(format!("no such directory: {raw_cwd}")));
            }
            Err(e) => return Err(ToolError::Failed(format!("cannot use cwd {raw_cwd}: {e}"))),
        }
        run(&args.command, &cwd, args.timeout_secs(), &ctx.cancel).await
    }
}

/// Kills a process group with SIGKILL when asked and when dropped — also when the call future
/// is dropped half-way.
struct GroupKiller(Option<Pid>);

impl GroupKiller {
    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // ESRCH (the group is already gone) is the usual, harmless answer.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

fn io_error(what: &str) -> impl FnOnce(std::io::Error) -> ToolError + '_ {
    move |e| ToolError::Failed(format!("{what}: {e}"))
}

async fn run(
    command: &str,
    cwd: &Path,
    timeout_secs: u64,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    // stdout and stderr share one pipe, so the output interleaves as in a terminal.
    let (reader, writer) = std::io::pipe().map_err(io_error("cannot create a pipe"))?;
    let mut child = {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(
                writer
                    .try_clone()
                    .map_err(io_error("cannot create a pipe"))?,
            )
            .stderr(writer)
            .process_group(0)
            .kill_on_drop(true);
        // The assistant's own credentials (model and embedding API keys) are not the
        // command's business.
        for (name, _) in std::env::vars_os() {
            if let Some(name) = name.to_str().filter(|n| own_secret(n)) {
                cmd.env_remove(name);
            }
        }
        cmd.spawn().map_err(io_error("cannot start sh"))?
        // `cmd` and its copies of the write end are dropped here, so the pipe ends (EOF)
        // once the command's processes are gone.
    };
    let group = GroupKiller(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let mut pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))
        .map_err(io_error("cannot read the command's output"))?;

    let mut output = HeadTail::default();
    let mut chunk = vec![0u8; 64 * 1024];
    let deadline = Instant::now() + Duration::from_secs(timeout_secs);
    let mut status: Option<ExitStatus> = None;
    let mut eof = false;
    let mut timed_out = false;
    let mut drain_until: Option<Instant> = None;
    while !(eof && status.is_some()) {
        tokio::select! {
            read = pipe.read(&mut chunk), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => output.push(&chunk[..n]),
            },
            exited = child.wait(), if status.is_none() => {
                status = Some(exited.map_err(io_error("cannot wait for the command"))?);
                // What the command left running in the background goes with it.
                group.kill();
                drain_until.get_or_insert_with(|| Instant::now() + DRAIN_GRACE);
            }
            () = tokio::time::sleep_until(drain_until.unwrap_or(deadline)) => {
                if drain_until.is_some() {
                    // A process outside the group still holds the pipe; stop reading.
                    break;
                }
                timed_out = true;
                group.kill();
                drain_until = Some(Instant::now() + DRAIN_GRACE);
            }
            () = cancel.cancelled() => {
                group.kill();
                return Err(ToolError::Failed(
                    "cancelled; the command's process group was killed".into(),
                ));
            }
        }
    }
    drop(group);

    let (text, lossy) = output.finish();
    let text = if text.is_empty() {
        "(no output)".to_string()
    } else {
        text.strip_suffix('\n').unwrap_or(&text).to_string()
    };
    let lossy_note = if lossy {
        "; the output is not valid UTF-8, invalid bytes are shown as U+FFFD"
    } else {
        ""
    };
    if timed_out {
        return Err(ToolError::Failed(format!(
            "timed out after {timeout_secs}s; process group killed{lossy_note}. Output so far:\n{text}"
        )));
    }
    let end = match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "exit status unknown".into(),
        },
        None => "exit status unknown".into(),
    };
    Ok(format!("{text}\n[{end}{lossy_note}]"))
}

/// The start and the end of a stream of output, with a count of the bytes in between; holds
/// at most `OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES`.
#[derive(Default)]
struct HeadTail {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl HeadTail {
    fn push(&mut self, mut data: &[u8]) {
        let room = OUTPUT_HEAD_BYTES.saturating_sub(self.head.len());
        let take = room.min(data.len());
        self.head.extend_from_slice(&data[..take]);
        data = &data[take..];
        if data.len() >= OUTPUT_TAIL_BYTES {
            self.omitted += (self.tail.len() + data.len() - OUTPUT_TAIL_BYTES) as u64;
            self.tail.clear();
            data = &data[data.len() - OUTPUT_TAIL_BYTES..];
        }
        self.tail.extend(data);
        let excess = self.tail.len().saturating_sub(OUTPUT_TAIL_BYTES);
        if excess > 0 {
            self.tail.drain(..excess);
            self.omitted += excess as u64;
        }
    }

    /// The text, with a marker where bytes were left out, and whether it had to be decoded
    /// lossily.
    fn finish(self) -> (String, bool) {
        let tail: Vec<u8> = self.tail.into_iter().collect();
        if self.omitted == 0 {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            return decode(&all);
        }
        // A character cut in two at either side of the gap is not an encoding error.
        let (head, head_lossy) = decode(trim_incomplete_end(&self.head));
        let (tail, tail_lossy) = decode(trim_partial_start(&tail));
        (
            format!(
                "{head}\n[… {} bytes of output omitted …]\n{tail}",
                self.omitted
            ),
            head_lossy || tail_lossy,
        )
    }
}

fn decode(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

/// Drops the first bytes of a UTF-8 sequence that the cut left unfinished at the end.
fn trim_incomplete_end(bytes: &[u8]) -> &[u8] {
    for back in 1..=3.min(bytes.len()) {
        let start = bytes.len() - back;
        if bytes[start] & 0xC0 != 0x80 {
            return match std::str::from_utf8(&bytes[start..]) {
                Err(e) if e.error_len().is_none() => &bytes[..start],
                _ => bytes,
            };
        }
    }
    bytes
}

/// Drops continuation bytes of a UTF-8 sequence whose start was cut off.
fn trim_partial_start(bytes: &[u8]) -> &[u8] {
    let n = bytes
        .iter()
        .take(3)
        .take_while(|b| **b & 0xC0 == 0x80)
        .count();
    &bytes[n..]
}

/// Environment variables holding Echo Desk's own secrets (`ECHO_*KEY*`, `ECHO_*TOKEN*`).
fn own_secret(name: &str) -> bool {
    name.starts_with("ECHO_")
        && (name.contains("KEY") || name.contains("TOKEN") || name.contains("SECRET"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Tool;
    use crate::test_support::{TestDir, ctx, prepare, run as run_tool, run_in};

    /// Whether `pid` has exited (a zombie nobody reaped yet counts as gone).
    fn is_gone(pid: i32) -> bool {
        match nix::sys::signal::kill(Pid::from_raw(pid), None) {
            Err(nix::errno::Errno::ESRCH) => true,
            Err(_) => false,
            Ok(()) => std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true),
        }
    }

    async fn wait_gone(pid: i32) -> bool {
        for _ in 0..50 {
            if is_gone(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    /// The pid a command wrote to `file`, once it is there.
    async fn pid_in(file: &Path) -> i32 {
        for _ in 0..100 {
            if let Some(pid) = std::fs::read_to_string(file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no pid in {}", file.display());
    }

    fn args(command: &str, timeout: u64) -> String {
        serde_json::json!({ "command": command, "timeout_secs": timeout }).to_string()
    }

    #[tokio::test]
    async fn output_and_exit_codes() {
        let d = TestDir::new();
        let sub = d.mkdir("sub");
        let cases: &[(&str, &str)] = &[
            (
                r#"{"command":"echo out; echo err >&2; exit 3"}"#,
                "out\nerr\n[exit code 3]",
            ),
            (r#"{"command":"true"}"#, "(no output)\n[exit code 0]"),
            (
                r#"{"command":"kill -9 $$"}"#,
                "(no output)\n[killed by signal 9]",
            ),
            (
                r#"{"command":"printf 'caf\\351\\n'"}"#,
                "caf\u{fffd}\n[exit code 0; the output is not valid UTF-8, invalid bytes are shown as U+FFFD]",
            ),
            (r#"{"command":"cat; echo done"}"#, "done\n[exit code 0]"),
        ];
        for (a, expect) in cases {
            let out = run_tool(d.path(), "shell", a).await;
            assert_eq!((out.ok, out.content.as_str()), (true, *expect), "{a}");
        }
        let out = run_tool(d.path(), "shell", r#"{"command":"pwd -P","cwd":"sub"}"#).await;
        let real = sub.canonicalize().expect("canonicalize");
        assert_eq!(out.content, format!("{}\n[exit code 0]", real.display()));
    }

    #[tokio::test]
    async fn bad_cwd_and_timeout_arguments() {
        let d = TestDir::new();
        d.write("file", "");
        let out = run_tool(d.path(), "shell", r#"{"command":"true","cwd":"nope"}"#).await;
        assert_eq!(out.content, "error: no such directory: nope");
        let out = run_tool(d.path(), "shell", r#"{"command":"true","cwd":"file"}"#).await;
        assert_eq!(out.content, "error: cwd file is not a directory");
        let out = run_tool(d.path(), "shell", &args("true", 601)).await;
        assert_eq!(out.error_kind, Some("invalid_arguments"), "{}", out.content);
    }

    #[tokio::test]
    async fn huge_output_keeps_head_and_tail() {
        let d = TestDir::new();
        let ctx = ctx(d.path());
        let text = Tool::call(
            &Shell,
            serde_json::json!({"command": "seq 1 300000; echo tail-end >&2"}),
            &ctx,
        )
        .await
        .expect("runs");
        assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..20]);
        assert!(text.ends_with("299999\n300000\ntail-end\n[exit code 0]"));
        assert!(text.contains(" bytes of output omitted …]\n"), "no marker");
        assert!(text.len() < OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES + 200);
    }

    #[test]
    fn head_tail_counts_what_it_drops_and_respects_utf8() {
        let mut ht = HeadTail::default();
        ht.push(&vec![b'a'; OUTPUT_HEAD_BYTES - 1]);
        ht.push("é".as_bytes()); // split across the head's end
        ht.push(&[b'b'; 10]);
        ht.push(&vec![b'c'; OUTPUT_TAIL_BYTES * 2]);
        ht.push("ü".as_bytes());
        assert_eq!(ht.head.len(), OUTPUT_HEAD_BYTES);
        assert_eq!(ht.tail.len(), OUTPUT_TAIL_BYTES);
        let total = OUTPUT_HEAD_BYTES - 1 + 2 + 10 + OUTPUT_TAIL_BYTES * 2 + 2;
        assert_eq!(
            ht.omitted as usize,
            total - OUTPUT_HEAD_BYTES - OUTPUT_TAIL_BYTES
        );
        let (text, lossy) = ht.finish();
        assert!(!lossy);
        assert!(text.starts_with("aaa"));
        assert!(text.contains("a\n[… "), "the cut half of é is dropped");
        assert!(text.ends_with("ccü"));
    }

    #[tokio::test]
    async fn timeout_returns_partial_output_and_kills_the_group() {
        let d = TestDir::new();
        let started = std::time::Instant::now();
        let out = run_tool(
            d.path(),
            "shell",
            &args("sleep 30 & echo $! > pidfile; echo started; wait", 1),
        )
        .await;
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(
            (out.ok, out.error_kind, out.content.as_str()),
            (
                false,
                Some("failed"),
                "error: timed out after 1s; process group killed. Output so far:\nstarted"
            )
        );
        let pid = pid_in(&d.path().join("pidfile")).await;
        assert!(wait_gone(pid).await, "background sleep {pid} survived");
    }

    #[tokio::test]
    async fn background_processes_die_when_the_command_exits() {
        let d = TestDir::new();
        let started = std::time::Instant::now();
        let out = run_tool(
            d.path(),
            "shell",
            &args("sleep 30 & echo $! > pidfile; echo bye", 60),
        )
        .await;
        assert_eq!(out.content, "bye\n[exit code 0]");
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid = pid_in(&d.path().join("pidfile")).await;
        assert!(wait_gone(pid).await, "background sleep {pid} survived");
    }

    #[tokio::test]
    async fn cancelling_the_turn_kills_the_group() {
        let d = TestDir::new();
        let ctx = ctx(d.path());
        let pidfile = d.path().join("pidfile");
        let cancel = ctx.cancel.clone();
        let watcher = {
            let pidfile = pidfile.clone();
            tokio::spawn(async move {
                let pid = pid_in(&pidfile).await;
                cancel.cancel();
                pid
            })
        };
        let out = run_in(
            &ctx,
            "shell",
            &args("sleep 30 & echo $! > pidfile; wait", 60),
        )
        .await;
        assert_eq!(out.error_kind, Some("cancelled"), "{}", out.content);
        let pid = watcher.await.expect("watcher");
        assert!(wait_gone(pid).await, "background sleep {pid} survived");
    }

    #[tokio::test]
    async fn dropping_the_call_kills_the_group() {
        let d = TestDir::new();
        let ctx = ctx(d.path());
        let call = Tool::call(
            &Shell,
            serde_json::json!({"command": "sleep 30 & echo $! > pidfile; wait"}),
            &ctx,
        );
        let pidfile = d.path().join("pidfile");
        let abandoned = tokio::time::timeout(Duration::from_secs(20), async {
            tokio::select! {
                _ = call => unreachable!("the command sleeps 30 s"),
                pid = pid_in(&pidfile) => pid,
            }
        })
        .await
        .expect("pid written");
        assert!(
            wait_gone(abandoned).await,
            "background sleep {abandoned} survived"
        );
    }

    #[tokio::test]
    async fn action_shows_command_cwd_and_timeout() {
        let d = TestDir::new();
        let action = prepare(
            d.path(),
            "shell",
            r#"{"command":"ls -la | wc -l","cwd":"a/../b"}"#,
        )
        .await;
        assert_eq!(
            action,
            Ok(Action {
                detail: format!(
                    "$ ls -la | wc -l\n(cwd: {}, timeout 60s)",
                    d.path().join("b").display()
                ),
                command: Some("ls -la | wc -l".into()),
                ..Action::default()
            })
        );
        let action = prepare(d.path(), "shell", &args("make", 5)).await;
        assert_eq!(
            action.map(|a| a.detail),
            Ok(format!("$ make\n(cwd: {}, timeout 5s)", d.path().display()))
        );
        assert!(!d.path().join("b").exists());
    }
}
