//! Echo Desk's model providers: OpenAI-compatible chat completions (also used for Ollama) and
//! Anthropic messages, streamed over SSE, with tool-call delta assembly, connect / first-byte /
//! idle timeouts, retries with exponential backoff, fallback models and cancellation.
//!
//! The one entry point is [`LlmClient::chat`]: it streams [`ChatEvent`]s to the caller as they
//! arrive and returns the assembled [`ChatResponse`] (or a [`ChatFailure`]) together with a
//! record of every HTTP [`Attempt`].
//!
//! Invariants: nothing here assembles prompts (callers pass finished [`echo_core::Message`]s);
//! API keys and prompt text never reach `info`-level logs.
#![deny(missing_docs)]

mod anthropic;
mod assemble;
#[cfg(any(test, fuzzing))]
mod checks;
mod client;
mod error;
#[cfg(test)]
mod hostile;
mod local;
mod ollama;
mod openai;
mod provider;
pub mod tokens;
/// Entry points for the fuzz targets (`fuzz/`); built only by cargo-fuzz.
#[cfg(fuzzing)]
pub mod fuzzing {
    /// Any bytes as a streamed answer's body, through SSE parsing and both protocols'
    /// decoders; panics when a promise of [`crate::checks`] is broken.
    pub fn stream(bytes: &[u8]) {
        crate::checks::feed_sse(bytes);
    }

    /// Any bytes as a whole answer's body, through both protocols' decoders.
    pub fn whole(bytes: &[u8]) {
        crate::checks::decode_whole(bytes);
    }
}
mod transport;
mod types;

pub use client::LlmClient;
pub use error::{LlmError, ServerRef, TimeoutPhase};
pub use ollama::{OLLAMA_DEFAULT_HOST, ollama_models, ollama_root};
pub use types::{
    Attempt, AttemptKind, ChatEvent, ChatFailure, ChatRequest, ChatResponse, ToolChoice,
};
