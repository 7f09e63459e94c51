//! Echo Desk's built-in model: a GGUF chat model run on the CPU by llama.cpp.
//!
//! [`LocalModel::open`] reads a GGUF file's header (architecture, window, tokenizer, chat
//! template) and starts the model's worker thread; the weights are loaded there on the first
//! request. [`LocalModel::start`] sends one request to the worker and returns a
//! [`Generation`] that streams [`Event`]s and ends with an [`Outcome`]. Generation runs on
//! the worker thread and llama.cpp's own threads, never on the async runtime; dropping the
//! `Generation` (or calling [`Generation::stop`]) stops it before the next token.
//!
//! The worker keeps the attention cache of recent prompts, so a request that starts with a
//! prompt it already processed (the next turn of the same session) only processes the new
//! tokens. Prompts are tokenized and answers decoded here, with the GGUF's own vocabulary;
//! llama.cpp computes the logits, and sampling and the grammar masks run in Rust. Forced tool calls are decoded under their JSON schema (llguidance), and a tool call
//! the model starts on its own (after `<tool_call>`, or as an untagged `{"name": …}` answer)
//! is constrained to one of the offered tools; either is steered
//! to its shortest end when its tokens run low, so it still parses.
//!
//! Invariant: this crate knows nothing of the engine; `echo-llm` turns its requests into
//! [`Request`]s and the events back into the common stream.
#![deny(missing_docs)]

pub mod catalog;
#[cfg(test)]
#[path = "../tests/support/ci_model.rs"]
mod ci_model;
mod constrain;
pub mod download;
mod error;
mod gguf;
mod llama;
mod output;
mod template;
pub mod threads;
mod vocab;
mod worker;

pub use error::LocalError;
pub use gguf::{Arch, MAX_WINDOW};
pub use vocab::Vocab;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use tokio::sync::mpsc;

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, PartialEq)]
pub struct CallText {
    /// Tool name.
    pub name: String,
    /// JSON arguments.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    /// Name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON schema of its arguments.
    pub parameters: Value,
}

/// One generation.
#[derive(Clone, Debug, PartialEq)]
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
}

/// Something the model produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// Answer text (`<think>` blocks included, as the model wrote them).
    Text(String),
    /// A complete tool call.
    ToolCall(CallText),
}

/// Why generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// A message from the worker about one generation.
enum Message {
    Event(Event),
    Done(Result<Outcome, LocalError>),
}

struct Job {
    request: Request,
    stop: Arc<AtomicBool>,
    out: mpsc::UnboundedSender<Message>,
}

/// An open model: its header facts and the worker that runs it.
pub struct LocalModel {
    info: ModelInfo,
    jobs: Mutex<std::sync::mpsc::Sender<Job>>,
    vocab: Arc<Vocab>,
    loaded: Arc<AtomicBool>,
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
    /// be run and starts its worker. The weights are read on the first request; with
    /// `release_after`, the worker lets go of them (and of its attention caches) after that
    /// long without a request, and the next request reads them again. The first opening of a
    /// file decides that for every client of it.
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
        let info = ModelInfo {
            path: canonical.clone(),
            arch,
            name,
            window,
            size_bytes: size,
        };
        let (jobs, inbox) = std::sync::mpsc::channel();
        let loaded = Arc::new(AtomicBool::new(false));
        let template = template::ChatTemplate::new(
            header.metadata.opt_string("tokenizer.chat_template"),
            "",
            "",
        )?;
        worker::spawn(
            info.clone(),
            vocab.clone(),
            template,
            inbox,
            release_after,
            loaded.clone(),
        )?;
        let model = Arc::new(LocalModel {
            info,
            jobs: Mutex::new(jobs),
            vocab,
            loaded,
        });
        open.push((canonical, size, Arc::downgrade(&model)));
        Ok(model)
    }

    /// Whether the weights are in memory (read on the first request, let go after the quiet
    /// period the model was opened with).
    pub fn loaded(&self) -> bool {
        self.loaded.load(Ordering::Acquire)
    }

    /// What the file holds.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The model's tokenizer.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// Queues `request` on the worker (one generation runs at a time per model).
    pub fn start(&self, request: Request) -> Generation {
        let (out, events) = mpsc::unbounded_channel();
        let stop = Arc::new(AtomicBool::new(false));
        let sent = self
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(Job {
                request,
                stop: stop.clone(),
                out,
            });
        Generation {
            events,
            stop,
            gone: sent.is_err(),
        }
    }
}

/// One running generation. Dropping it stops the generation.
pub struct Generation {
    events: mpsc::UnboundedReceiver<Message>,
    stop: Arc<AtomicBool>,
    gone: bool,
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
        if self.gone {
            return Next::Done(Err(LocalError::WorkerGone));
        }
        match self.events.recv().await {
            Some(Message::Event(e)) => Next::Event(e),
            Some(Message::Done(result)) => Next::Done(result),
            None => Next::Done(Err(LocalError::WorkerGone)),
        }
    }

    /// Asks the worker to stop before its next token; the generation then ends with
    /// [`Finish::Cancelled`].
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for Generation {
    fn drop(&mut self) {
        self.stop();
    }
}
