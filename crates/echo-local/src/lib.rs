//! Echo Desk's built-in model: a GGUF chat model run on the CPU by llama.cpp.
//!
//! [`LocalModel::open`] reads a GGUF file's header (architecture, window, tokenizer, chat
//! template) and prepares the model's worker: a child process ([`process`]) when the front
//! end chose one, else a thread; the weights are loaded there on the first request.
//! [`LocalModel::start`] sends one request to the worker and returns a [`Generation`] that
//! streams [`Event`]s and ends with an [`Outcome`]. Generation runs in the worker and
//! llama.cpp's own threads, never on the async runtime; dropping the `Generation` (or
//! calling [`Generation::stop`]) stops it before the next token.
//!
//! The worker keeps the attention cache of recent prompts, so a request that starts with a
//! prompt it already processed (the next turn of the same session) only processes the new
//! tokens. Prompts are tokenized and answers decoded here, with the GGUF's own vocabulary;
//! llama.cpp computes the logits, and sampling and the grammar masks run in Rust. Forced
//! tool calls are decoded under their JSON schema (llguidance), and a tool call
//! the model starts on its own (after `<tool_call>`, or as an untagged `{"name": …}` answer)
//! is constrained to one of the offered tools; either is steered
//! to its shortest end when its tokens run low, so it still parses.
//!
//! Invariant: this crate knows nothing of the engine; `echo-llm` turns its requests into
//! [`Request`]s and the events back into the common stream.
//!
//! # Files
//!
//! `llama.rs` (`llama-cpp-2` built from its vendored source for the workspace's CPU target: one
//! context per model whose attention cache holds four sequences; a prompt continues the one it
//! shares the longest start with, and a sequence that would be cut is copied first), `vocab.rs`
//! (the GGUF's own tokenizer, tokenizers' BPE), `template.rs` (its chat template, minijinja),
//! `worker.rs` (one worker per model: generation off the async runtime, stop checked every
//! token, sampling in Rust), `process.rs` (the worker as a child process of the front end's own
//! binary, `--echo-local-worker`, JSON lines over stdin/stdout: a dead worker fails its
//! requests and the next one starts another, a quiet one ends and lets its memory go),
//! `output.rs` (text and tool calls out of the tokens), `constrain.rs` (llguidance masks on
//! llama.cpp's logits), `catalog.rs` and `download.rs` (recommended models, checked and
//! resumable downloads), `threads.rs` (`llm.threads`, else the physical cores).
//! `src/bin/echo-local-worker.rs` is a worker on its own for the crate's process tests.
#![deny(missing_docs)]

pub mod catalog;
#[cfg(test)]
#[path = "../tests/support/ci_model.rs"]
mod ci_model;
mod constrain;
pub mod download;
mod error;
mod gguf;
mod gguf_alignment;
mod llama;
mod output;
pub mod process;
mod template;
pub mod threads;
mod vocab;
mod worker;

pub use error::LocalError;
pub use gguf::{Arch, MAX_WINDOW};
pub use vocab::Vocab;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::mpsc;
use worker::Job;
use worker::Message;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChatRole {
    /// Instructions.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl ChatRole {
    /// The role's name in chat templates.
    pub fn as_str(self) -> &'static str {
        match self {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
            ChatRole::Tool => "tool",
        }
    }
}

/// A tool call: the tool's name and its JSON arguments as text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallText {
    /// Tool name.
    pub name: String,
    /// JSON arguments.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: ChatRole,
    /// Its text.
    pub content: String,
    /// The calls an assistant message made.
    pub tool_calls: Vec<CallText>,
}

impl ChatMessage {
    /// A message with text only.
    pub fn new(role: ChatRole, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
}

/// One generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Tools offered.
    pub tools: Vec<ToolDef>,
    /// A tool the answer must be a call of (its arguments are decoded under its schema).
    pub forced: Option<String>,
    /// Most tokens to generate; 0 = what the window leaves.
    pub max_tokens: usize,
    /// Sampling temperature; `None` = 0.7 for text, greedy for a forced call.
    pub temperature: Option<f32>,
    /// Seeds the sampler for this generation alone, so the same request draws the same tokens
    /// whatever ran before it; `None` continues the worker's own sequence.
    #[serde(default)]
    pub seed: Option<u64>,
}

/// Something the model produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// Answer text (`<think>` blocks included, as the model wrote them).
    Text(String),
    /// A complete tool call.
    ToolCall(CallText),
}

/// Why generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Finish {
    /// The model ended its answer.
    Stop,
    /// The token limit was reached.
    Length,
    /// The answer ended with tool calls.
    ToolCalls,
    /// [`Generation::stop`] was called.
    Cancelled,
}

impl Finish {
    /// The name OpenAI-compatible servers use for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::Length => "length",
            Finish::ToolCalls => "tool_calls",
            Finish::Cancelled => "cancelled",
        }
    }
}

/// How a generation went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Tokens of the prompt.
    pub prompt_tokens: usize,
    /// Of those, how many came from the attention cache of an earlier request.
    pub cached_tokens: usize,
    /// Tokens generated.
    pub output_tokens: usize,
    /// Why it ended.
    pub finish: Finish,
    /// Where the time went.
    pub timings: Timings,
}

/// Where one generation's time went, measured on the worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Reading the weights, when this request had to (the first, or the first after the
    /// model was let go); zero otherwise.
    pub load: Duration,
    /// Processing the prompt's tokens that were not in the cache, up to the first token's
    /// logits.
    pub prompt: Duration,
    /// Generating the answer's tokens, grammar masks and sampling included.
    pub generate: Duration,
}

/// What a GGUF file holds, read from its header.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// The file.
    pub path: PathBuf,
    /// Its architecture.
    pub arch: Arch,
    /// `general.name`, or the file name.
    pub name: String,
    /// Tokens the runtime lets a request and its answer take.
    pub window: usize,
    /// File size in bytes.
    pub size_bytes: u64,
}

/// What opening a GGUF file gives: its facts, its tokenizer and its chat template.
pub(crate) struct Opened {
    pub info: ModelInfo,
    pub vocab: Arc<Vocab>,
    pub template: template::ChatTemplate,
}

/// Reads the header of the GGUF file at `path` and checks that it can be run.
/// Any bytes as a model file, for the fuzz target (`fuzz/`): the header, metadata, tokenizer
/// and chat template are read as [`LocalModel::open`] reads them (the weights are not
/// loaded). A file that is not a usable model must be an error that says so, never a panic.
#[cfg(fuzzing)]
pub fn fuzz_model_file(bytes: &[u8]) {
    let path = std::env::temp_dir().join(format!("echo-fuzz-model-{}.gguf", std::process::id()));
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    if let Err(e) = inspect(&path) {
        assert!(
            !e.to_string().trim().is_empty(),
            "an error without a reason"
        );
    }
}

pub(crate) fn inspect(path: &Path) -> Result<Opened, LocalError> {
    let open_error = |e: std::io::Error| LocalError::Open {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let canonical = path.canonicalize().map_err(open_error)?;
    let size = std::fs::metadata(&canonical).map_err(open_error)?.len();
    let header = gguf::read_header(&canonical)?;
    let arch = header.metadata.arch()?;
    let window = header.metadata.window(arch)?;
    let vocab = Arc::new(Vocab::from_gguf(&header.metadata)?);
    let name = header
        .metadata
        .opt_string("general.name")
        .map(str::to_string)
        .unwrap_or_else(|| {
            canonical
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let template = template::ChatTemplate::new(
        header.metadata.opt_string("tokenizer.chat_template"),
        "",
        "",
    )?;
    Ok(Opened {
        info: ModelInfo {
            path: canonical,
            arch,
            name,
            window,
            size_bytes: size,
        },
        vocab,
        template,
    })
}

/// Where a model's worker runs.
enum Runner {
    /// On a thread of this process.
    Thread(Mutex<std::sync::mpsc::Sender<Job>>),
    /// In a child process ([`process`]).
    Process(process::Supervisor),
}

/// An open model: its header facts and the worker that runs it.
pub struct LocalModel {
    info: ModelInfo,
    runner: Arc<Runner>,
    vocab: Arc<Vocab>,
    loaded: Arc<AtomicBool>,
    /// Generations started and not yet ended or dropped.
    busy: Arc<AtomicUsize>,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

/// Models already open, so every client of the same file shares one worker and one copy of
/// the weights.
static OPEN: Mutex<Vec<(PathBuf, u64, Weak<LocalModel>)>> = Mutex::new(Vec::new());

impl LocalModel {
    /// Opens the GGUF model at `path` (or returns the one already open): checks that it can
    /// be run and prepares its worker, in a child process when the front end chose that
    /// ([`process::run_workers_in`]), else on a thread. The weights are read on the first
    /// request; with `release_after`, the worker lets go of them (and of its attention
    /// cache; a worker process ends) after that long without a request, and the next
    /// request reads them again. The first opening of a file decides that for every client
    /// of it.
    pub fn open(
        path: &Path,
        release_after: Option<Duration>,
    ) -> Result<Arc<LocalModel>, LocalError> {
        let open_error = |e: std::io::Error| LocalError::Open {
            path: path.to_path_buf(),
            detail: e.to_string(),
        };
        let canonical = path.canonicalize().map_err(open_error)?;
        let size = std::fs::metadata(&canonical).map_err(open_error)?.len();
        let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|(_, _, model)| model.strong_count() > 0);
        if let Some(model) = open
            .iter()
            .find(|(p, s, _)| *p == canonical && *s == size)
            .and_then(|(_, _, model)| model.upgrade())
        {
            return Ok(model);
        }
        let opened = inspect(&canonical)?;
        let info = opened.info.clone();
        let vocab = opened.vocab.clone();
        let loaded = Arc::new(AtomicBool::new(false));
        let runner = match process::program() {
            Some(program) => Runner::Process(process::Supervisor::new(
                program,
                canonical.clone(),
                release_after,
                loaded.clone(),
            )),
            None => {
                let (jobs, inbox) = std::sync::mpsc::channel();
                worker::spawn(opened, inbox, release_after, loaded.clone())?;
                Runner::Thread(Mutex::new(jobs))
            }
        };
        let model = Arc::new(LocalModel {
            info,
            runner: Arc::new(runner),
            vocab,
            loaded,
            busy: Arc::default(),
        });
        open.push((canonical, size, Arc::downgrade(&model)));
        Ok(model)
    }

    /// Whether the weights are in memory (read on the first request, let go after the quiet
    /// period the model was opened with).
    pub fn loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// The process id of the model's worker process, while one runs (`None` for a model
    /// run on a thread).
    pub fn worker_pid(&self) -> Option<u32> {
        match self.runner.as_ref() {
            Runner::Process(supervisor) => supervisor.pid(),
            Runner::Thread(_) => None,
        }
    }

    /// What the file holds.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The model's tokenizer.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// Queues `request` on the worker (one generation runs at a time per model);
    /// [`Generation::queued`] says whether it waits behind another.
    pub fn start(&self, request: Request) -> Generation {
        let queued = self.busy.fetch_add(1, Ordering::AcqRel) > 0;
        let mut generation = self.send(request);
        generation.queued = queued;
        generation.busy = Some(self.busy.clone());
        generation
    }

    fn send(&self, request: Request) -> Generation {
        match self.runner.as_ref() {
            Runner::Thread(jobs) => {
                let (tx, events) = mpsc::unbounded_channel();
                let stop = Arc::new(AtomicBool::new(false));
                let sent = jobs
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .send(Job {
                        request,
                        stop: stop.clone(),
                        out: Box::new(move |message| {
                            let _ = tx.send(message);
                        }),
                    });
                Generation {
                    events,
                    stop: Stopper::Flag(stop),
                    failed: sent.is_err().then_some(LocalError::WorkerGone),
                    queued: false,
                    busy: None,
                }
            }
            Runner::Process(supervisor) => match supervisor.start(request) {
                Ok((id, events)) => Generation {
                    events,
                    stop: Stopper::Worker {
                        runner: Arc::downgrade(&self.runner),
                        id,
                    },
                    failed: None,
                    queued: false,
                    busy: None,
                },
                Err(e) => Generation {
                    events: mpsc::unbounded_channel().1,
                    stop: Stopper::Flag(Arc::default()),
                    failed: Some(e),
                    queued: false,
                    busy: None,
                },
            },
        }
    }
}

/// How a generation is told to stop.
enum Stopper {
    /// A flag the worker thread reads before every token.
    Flag(Arc<AtomicBool>),
    /// A message to the worker process.
    Worker { runner: Weak<Runner>, id: u64 },
}

/// One running generation. Dropping it stops the generation.
pub struct Generation {
    events: mpsc::UnboundedReceiver<Message>,
    stop: Stopper,
    /// Why the request never reached the worker.
    failed: Option<LocalError>,
    /// Whether another generation of the model was running or waiting when it started.
    queued: bool,
    /// The model's count of running generations, given back when this one ends.
    busy: Option<Arc<AtomicUsize>>,
}

/// The next thing a [`Generation`] has to say.
#[derive(Debug)]
pub enum Next {
    /// Output.
    Event(Event),
    /// The end.
    Done(Result<Outcome, LocalError>),
}

impl Generation {
    /// Waits for the next event or the end.
    pub async fn next(&mut self) -> Next {
        if let Some(e) = self.failed.take() {
            self.release();
            return Next::Done(Err(e));
        }
        let next = match self.events.recv().await {
            Some(Message::Event(e)) => return Next::Event(e),
            Some(Message::Done(result)) => Next::Done(result),
            None => Next::Done(Err(LocalError::WorkerGone)),
        };
        self.release();
        next
    }

    /// Whether it waited behind another generation of the same model when it started (the
    /// model answers one request at a time).
    pub fn queued(&self) -> bool {
        self.queued
    }

    /// Gives back this generation's place in the model's count of running ones.
    fn release(&mut self) {
        if let Some(busy) = self.busy.take() {
            busy.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Asks the worker to stop before its next token; the generation then ends with
    /// [`Finish::Cancelled`].
    pub fn stop(&self) {
        match &self.stop {
            Stopper::Flag(flag) => flag.store(true, Ordering::Relaxed),
            Stopper::Worker { runner, id } => {
                if let Some(runner) = runner.upgrade()
                    && let Runner::Process(supervisor) = runner.as_ref()
                {
                    supervisor.stop(*id);
                }
            }
        }
    }
}

impl Drop for Generation {
    fn drop(&mut self) {
        // One that already ended has nothing to stop (a worker process is not told).
        if self.busy.is_some() {
            self.stop();
        }
        self.release();
    }
}
