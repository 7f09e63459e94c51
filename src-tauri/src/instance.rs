//! One app per data directory. The first `echo-desk` on a data directory listens on a Unix
//! socket inside it (`desk.sock`); a second start on the same directory (the launcher's icon
//! clicked again, its "Quick ask" action, `echo-desk --quick-ask` from a keyboard shortcut of
//! the desktop's own) hands its request to the first one and exits, instead of opening the
//! engine a second time. The request is one line, answered with `ok`.
//!
//! Scoped to the data directory rather than to the user's D-Bus session (as Tauri's
//! single-instance plugin is): two data directories are two independent assistants, and
//! tests and benchmarks run apps side by side on their own directories. A socket file left by
//! a killed app refuses connections; it is then replaced.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Duration;

/// What a start asks of the app already running on its data directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Bring the main window up.
    Show,
    /// Open the quick-ask window.
    QuickAsk,
}

impl Request {
    fn line(self) -> &'static str {
        match self {
            Request::Show => "show",
            Request::QuickAsk => "quick-ask",
        }
    }

    fn parse(line: &str) -> Option<Request> {
        match line.trim() {
            "show" => Some(Request::Show),
            "quick-ask" => Some(Request::QuickAsk),
            _ => None,
        }
    }
}

/// The outcome of [`claim`].
pub enum Claim {
    /// This process is the app for the directory; serve the listener with [`serve`].
    First(Listener),
    /// Another app has the directory and took the request; this process should exit.
    Forwarded,
}

/// The socket the first app listens on. Its file stays when the app ends (the thread that
/// serves it ends with the process); the next start replaces it.
pub struct Listener(UnixListener);

/// How long a second start waits for the first app's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// Becomes the app for `home`, or hands `request` to the app that already is.
pub fn claim(home: &Path, request: Request) -> std::io::Result<Claim> {
    std::fs::create_dir_all(home)?;
    let path = home.join("desk.sock");
    for _ in 0..2 {
        match UnixListener::bind(&path) {
            Ok(socket) => return Ok(Claim::First(Listener(socket))),
            Err(e) if e.kind() == ErrorKind::AddrInUse => {}
            Err(e) => return Err(e),
        }
        match UnixStream::connect(&path) {
            Ok(stream) => {
                forward(stream, request)?;
                return Ok(Claim::Forwarded);
            }
            // A socket file nobody listens on: left by an app that was killed.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                std::fs::remove_file(&path)?;
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(format!(
        "{} is taken and cannot be replaced",
        path.display()
    )))
}

fn forward(mut stream: UnixStream, request: Request) -> std::io::Result<()> {
    stream.set_read_timeout(Some(ANSWER_WAIT))?;
    stream.write_all(format!("{}\n", request.line()).as_bytes())?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    if answer.trim() == "ok" {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "the Echo Desk already running on this data directory did not answer",
        ))
    }
}

/// Answers later starts on a thread of its own for as long as the app runs; `on_request`
/// carries each request out.
pub fn serve(listener: Listener, on_request: impl Fn(Request) + Send + 'static) {
    let spawned = std::thread::Builder::new()
        .name("desk-instance".into())
        .spawn(move || {
            for stream in listener.0.incoming() {
                let Ok(stream) = stream else { continue };
                if let Some(request) = read_request(&stream) {
                    on_request(request);
                    let _ = (&stream).write_all(b"ok\n");
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "a second start cannot reach this app");
    }
}

fn read_request(stream: &UnixStream) -> Option<Request> {
    stream.set_read_timeout(Some(ANSWER_WAIT)).ok()?;
    let mut line = String::new();
    // A request is one short line; read no more than that from whatever connects.
    BufReader::new(Read::take(stream, 64))
        .read_line(&mut line)
        .ok()?;
    Request::parse(&line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_start_hands_its_request_to_the_first_and_a_stale_socket_is_replaced() {
        let home = tempfile::tempdir().expect("tempdir");
        let Claim::First(listener) = claim(home.path(), Request::Show).expect("first claim") else {
            panic!("the first start must own the directory");
        };
        let (tx, rx) = mpsc::channel();
        serve(listener, move |request| {
            let _ = tx.send(request);
        });
        assert!(matches!(
            claim(home.path(), Request::QuickAsk).expect("second claim"),
            Claim::Forwarded
        ));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)).expect("request"),
            Request::QuickAsk
        );

        // A socket file that nobody listens on (a killed app's) does not block a start.
        let other = tempfile::tempdir().expect("tempdir");
        drop(UnixListener::bind(other.path().join("desk.sock")).expect("bind"));
        assert!(other.path().join("desk.sock").exists());
        assert!(matches!(
            claim(other.path(), Request::Show).expect("claim over a stale socket"),
            Claim::First(_)
        ));
    }
}
