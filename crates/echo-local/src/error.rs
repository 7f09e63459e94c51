//! What can go wrong with the built-in model, each in words a person can act on.

use std::path::PathBuf;

/// A built-in model that cannot be used, or a generation that failed.
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum LocalError {
    /// The model file is missing or unreadable.
    #[error("cannot open the model file {path}: {detail}", path = .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        detail: String,
    },
    /// The file is not a usable GGUF model (cut off, damaged, or something else).
    #[error("the model file {path} is damaged: {detail}", path = .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A valid GGUF model the runtime cannot run.
    #[error("the model file {path} cannot be run by the built-in runtime: {detail}", path = .path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The chat template in the file could not be used.
    #[error("the model's chat template failed: {0}")]
    Template(String),
    /// Text could not be turned into tokens.
    #[error("tokenizing failed: {0}")]
    Tokenize(String),
    /// The prompt and the answer's room do not fit the model's window.
    #[error(
        "the request takes {prompt} tokens and leaves no room in the model's {window}-token window"
    )]
    TooLong {
        /// Prompt tokens.
        prompt: usize,
        /// The model's window.
        window: usize,
    },
    /// A JSON schema or grammar the output must follow could not be compiled.
    #[error("the output constraint for {what} cannot be built: {detail}")]
    Constraint {
        /// The tool or schema.
        what: String,
        /// The grammar engine's message.
        detail: String,
    },
    /// The model's computation failed.
    #[error("the model failed while generating: {0}")]
    Compute(String),
    /// The worker thread is gone (it panicked or the process is ending).
    #[error("the built-in model's worker stopped")]
    WorkerGone,
    /// The worker process died or could not be started; the next request starts another.
    #[error("the built-in model's worker process stopped ({0}); the next request starts it again")]
    WorkerDied(String),
}
