//! The model in a child process of its own. llama.cpp ends the process on an internal
//! assertion; in a child, that ends one answer, not the app. The child is the app's own
//! binary started with [`WORKER_ARG`] (the front ends route that argument to [`main`]); it
//! speaks JSON lines over its stdin and stdout, one [`ToWorker`] or [`FromWorker`] a line,
//! and runs the same worker as the in-process thread.
//!
//! The parent's [`Supervisor`] starts the child on the first request and whenever the last
//! one is gone. A child that dies fails the requests it held with [`LocalError::WorkerDied`];
//! the next request starts a new one. After its quiet period the child lets go of the
//! weights and says so; the parent, if no request is on its way, closes the child's stdin
//! and the child exits, so an idle app holds no model at all. Deciding that in the parent,
//! under the lock requests are sent under, leaves no moment where a request reaches a child
//! that is leaving.

use crate::error::LocalError;
use crate::worker::{self, Job, Message};
use crate::{Event, Outcome, Request};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc;

/// The first argument that makes the app's binary a model worker.
pub const WORKER_ARG: &str = "--echo-local-worker";

/// How many times a worker's thread spins at an OpenMP barrier before it sleeps (libgomp's
/// `GOMP_SPINCOUNT`; its default is 300,000).
const SPIN_COUNT: &str = "10000";

/// The program workers are started from; `None`: models run on a thread of this process.
static PROGRAM: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Makes every model opened from now on run in a child process started from `program`
/// (which must route [`WORKER_ARG`] to [`main`]): the front ends call it with their own
/// binary. Without it, models run on a thread of this process.
pub fn run_workers_in(program: PathBuf) {
    *PROGRAM.lock().unwrap_or_else(PoisonError::into_inner) = Some(program);
}

pub(crate) fn program() -> Option<PathBuf> {
    PROGRAM
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Whether this process was started as a model worker.
pub fn is_worker() -> bool {
    std::env::args_os().nth(1).is_some_and(|a| a == WORKER_ARG)
}

/// A message from the parent.
#[derive(Debug, Serialize, Deserialize)]
enum ToWorker {
    /// Run a request.
    Start { id: u64, request: Request },
    /// Stop that request before its next token.
    Stop { id: u64 },
}

/// A message from the worker.
#[derive(Debug, Serialize, Deserialize)]
enum FromWorker {
    Event {
        id: u64,
        event: Event,
    },
    Done {
        id: u64,
        result: Result<Outcome, LocalError>,
    },
    /// The weights are in memory.
    Loaded,
    /// The weights were let go after the quiet period.
    Released,
}

/// The worker's entry point: `PROGRAM --echo-local-worker MODEL THREADS QUIET_MS` (0: no
/// quiet period). Runs until its stdin closes.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(2).collect();
    let parsed = match args.as_slice() {
        [model, threads, quiet] => threads
            .to_str()
            .and_then(|t| t.parse::<usize>().ok())
            .zip(quiet.to_str().and_then(|q| q.parse::<u64>().ok()))
            .map(|(t, q)| (PathBuf::from(model), t, q)),
        _ => None,
    };
    let Some((model, threads, quiet_ms)) = parsed else {
        eprintln!("usage: {WORKER_ARG} MODEL THREADS QUIET_MS (started by Echo Desk itself)");
        return ExitCode::from(2);
    };
    if let Some(n) = std::num::NonZeroUsize::new(threads) {
        crate::threads::set(n);
    }
    let quiet = (quiet_ms > 0).then(|| Duration::from_millis(quiet_ms));
    match serve(&model, quiet) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo-local worker: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes one message a line to stdout.
#[derive(Clone)]
struct Outbox(Arc<Mutex<std::io::Stdout>>);

impl Outbox {
    fn send(&self, message: &FromWorker) {
        let Ok(mut line) = serde_json::to_vec(message) else {
            return;
        };
        line.push(b'\n');
        let out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = out.lock();
        // A parent that is gone cannot be told anything; the worker ends when stdin closes.
        let _ = out.write_all(&line).and_then(|()| out.flush());
    }
}

fn serve(model: &Path, quiet: Option<Duration>) -> Result<(), LocalError> {
    let opened = crate::inspect(model)?;
    let outbox = Outbox(Arc::new(Mutex::new(std::io::stdout())));
    let stops: Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>> = Arc::default();
    let (jobs, inbox) = std::sync::mpsc::channel::<Job>();
    {
        let outbox = outbox.clone();
        let stops = stops.clone();
        std::thread::Builder::new()
            .name("echo-local stdin".into())
            .spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    match serde_json::from_str::<ToWorker>(&line) {
                        Ok(ToWorker::Start { id, request }) => {
                            let stop = Arc::new(AtomicBool::new(false));
                            lock(&stops).insert(id, stop.clone());
                            let (outbox, stops) = (outbox.clone(), stops.clone());
                            let out = Box::new(move |message: Message| match message {
                                Message::Event(event) => {
                                    outbox.send(&FromWorker::Event { id, event });
                                }
                                Message::Done(result) => {
                                    lock(&stops).remove(&id);
                                    outbox.send(&FromWorker::Done { id, result });
                                }
                            });
                            if jobs.send(Job { request, stop, out }).is_err() {
                                break;
                            }
                        }
                        Ok(ToWorker::Stop { id }) => {
                            if let Some(stop) = lock(&stops).get(&id) {
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                        Err(e) => tracing::error!("echo-local worker: unreadable message: {e}"),
                    }
                }
                // stdin closed: dropping `jobs` ends the worker once its job is done.
            })
            .map_err(|e| LocalError::Compute(format!("cannot start the worker's reader: {e}")))?;
    }
    let state = Box::new(move |loaded: bool| {
        outbox.send(if loaded {
            &FromWorker::Loaded
        } else {
            &FromWorker::Released
        });
    });
    worker::Worker::new(opened, state)?.serve(&inbox, quiet);
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Requests sent to one child and not yet done, by id: where their messages go.
type Pending = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Message>>>>;

/// The running child, as the parent holds it.
struct Running {
    /// Tells this child from a later one.
    generation: u64,
    stdin: ChildStdin,
    pid: u32,
    pending: Pending,
}

/// The parent's side: starts the child when a request needs one, routes its messages, and
/// fails the requests of a child that died.
pub(crate) struct Supervisor {
    program: PathBuf,
    model: PathBuf,
    quiet: Option<Duration>,
    running: Arc<Mutex<Option<Running>>>,
    ids: AtomicU64,
    generations: AtomicU64,
    loaded: Arc<AtomicBool>,
}

impl Supervisor {
    pub(crate) fn new(
        program: PathBuf,
        model: PathBuf,
        quiet: Option<Duration>,
        loaded: Arc<AtomicBool>,
    ) -> Supervisor {
        Supervisor {
            program,
            model,
            quiet,
            running: Arc::default(),
            ids: AtomicU64::new(1),
            generations: AtomicU64::new(1),
            loaded,
        }
    }

    /// The worker process's id, while one runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        lock(&self.running).as_ref().map(|r| r.pid)
    }

    /// Sends `request` to the child (started first if none runs); returns its id and where
    /// its messages arrive, or why it could not be sent.
    pub(crate) fn start(
        &self,
        request: Request,
    ) -> Result<(u64, mpsc::UnboundedReceiver<Message>), LocalError> {
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut line = serde_json::to_vec(&ToWorker::Start { id, request })
            .map_err(|e| LocalError::Compute(format!("the request cannot be sent: {e}")))?;
        line.push(b'\n');
        let mut running = lock(&self.running);
        // A child that just closed (its pipe broken) is replaced once.
        for attempt in 0..2 {
            if running.is_none() {
                *running = Some(self.spawn()?);
            }
            let Some(child) = running.as_mut() else {
                break;
            };
            lock(&child.pending).insert(id, tx.clone());
            match child
                .stdin
                .write_all(&line)
                .and_then(|()| child.stdin.flush())
            {
                Ok(()) => return Ok((id, rx)),
                Err(e) => {
                    lock(&child.pending).remove(&id);
                    if attempt > 0 {
                        return Err(LocalError::WorkerDied(format!(
                            "it did not take the request: {e}"
                        )));
                    }
                    tracing::warn!(
                        "the built-in model's worker did not take a request ({e}); starting another"
                    );
                    *running = None;
                }
            }
        }
        Err(LocalError::WorkerGone)
    }

    /// Asks the child to stop request `id` before its next token.
    pub(crate) fn stop(&self, id: u64) {
        let Ok(mut line) = serde_json::to_vec(&ToWorker::Stop { id }) else {
            return;
        };
        line.push(b'\n');
        if let Some(child) = lock(&self.running).as_mut() {
            // A child that is gone has stopped everything already.
            let _ = child
                .stdin
                .write_all(&line)
                .and_then(|()| child.stdin.flush());
        }
    }

    fn spawn(&self) -> Result<Running, LocalError> {
        let quiet_ms = self.quiet.map_or(0, |q| q.as_millis().max(1) as u64);
        let mut command = Command::new(&self.program);
        command
            .arg(WORKER_ARG)
            .arg(&self.model)
            .arg(crate::threads::in_use().to_string())
            .arg(quiet_ms.to_string());
        // llama.cpp's threads meet at an OpenMP barrier after every operation, hundreds of
        // times a token. By default a waiting thread spins some 300,000 times before it
        // sleeps: on a busy machine it spins away the time slice the thread it waits for
        // needs, and generation fell from 59 to 5.6 tokens/s beside two busy processes on
        // 2 cores. A short spin kept the idle speed and gave 24.8 there (docs/benchmarks.md,
        // "The built-in model on a busy machine"). A person's own OpenMP settings win.
        if std::env::var_os("GOMP_SPINCOUNT").is_none()
            && std::env::var_os("OMP_WAIT_POLICY").is_none()
        {
            command.env("GOMP_SPINCOUNT", SPIN_COUNT);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                LocalError::WorkerDied(format!("{} cannot be started: {e}", self.program.display()))
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(LocalError::WorkerDied("its pipes cannot be opened".into()));
        };
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        let pid = child.id();
        tracing::info!(pid, "built-in model worker started");
        let pending: Pending = Arc::default();
        let (running, loaded) = (self.running.clone(), self.loaded.clone());
        let theirs = pending.clone();
        std::thread::Builder::new()
            .name("echo-local supervisor".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    match serde_json::from_str::<FromWorker>(&line) {
                        Ok(FromWorker::Event { id, event }) => {
                            if let Some(tx) = lock(&pending).get(&id) {
                                let _ = tx.send(Message::Event(event));
                            }
                        }
                        Ok(FromWorker::Done { id, result }) => {
                            if let Some(tx) = lock(&pending).remove(&id) {
                                let _ = tx.send(Message::Done(result));
                            }
                        }
                        Ok(FromWorker::Loaded) => loaded.store(true, Ordering::Release),
                        Ok(FromWorker::Released) => {
                            loaded.store(false, Ordering::Release);
                            // Nothing on its way: let the child go (closing its stdin ends it).
                            let mut running = lock(&running);
                            if lock(&pending).is_empty()
                                && running.as_ref().is_some_and(|r| r.generation == generation)
                            {
                                *running = None;
                            }
                        }
                        Err(e) => tracing::error!("unreadable message from the model worker: {e}"),
                    }
                }
                // The child closed its stdout: it exited, or is about to.
                let status = child.wait();
                loaded.store(false, Ordering::Release);
                let mut running = lock(&running);
                if running.as_ref().is_some_and(|r| r.generation == generation) {
                    *running = None;
                }
                let cause = match status {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                };
                let failed: Vec<_> = lock(&pending).drain().collect();
                drop(running);
                if !failed.is_empty() {
                    tracing::warn!(pid, %cause, requests = failed.len(), "built-in model worker died");
                }
                for (_, tx) in failed {
                    let _ = tx.send(Message::Done(Err(LocalError::WorkerDied(cause.clone()))));
                }
                tracing::info!(pid, %cause, "built-in model worker ended");
            })
            .map_err(|e| LocalError::WorkerDied(format!("cannot watch it: {e}")))?;
        Ok(Running {
            generation,
            stdin,
            pid,
            pending: theirs,
        })
    }
}
