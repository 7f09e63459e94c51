//! `[llm]`: the default model, how to reach it, and how its window is shared between the
//! request and the answer.

use super::{ConfigError, ProviderKind, RetryConfig, TimeoutConfig};
use serde::Deserialize;
use std::num::NonZeroUsize;

/// The default model and how to reach it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Server base URL; the kind's default when unset.
    pub base_url: Option<String>,
    /// Model name.
    pub model: String,
    /// Models to try, in order, on the same server when the main one keeps failing.
    pub fallback_models: Vec<String>,
    /// Upper bound on answer tokens (required by Anthropic; optional elsewhere).
    pub max_tokens: u32,
    /// The model's context window in tokens: no request is sent that, with `reserve_output`,
    /// would not fit (`ECHO_LLM_CONTEXT_WINDOW` overrides it).
    pub context_window: u32,
    /// Tokens kept free for the answer; when unset, `max_tokens` but at most a quarter of
    /// the window (a 4k model keeps 1k for the answer, not all of it).
    pub reserve_output: Option<u32>,
    /// Sampling temperature; the server's default when unset.
    pub temperature: Option<f32>,
    /// Threads the built-in chat model computes with; the machine's physical cores when
    /// unset. Read when the process starts, so a change applies at the next start.
    pub threads: Option<NonZeroUsize>,
    /// Seconds without a request after which the built-in model lets go of its weights and
    /// attention caches (the next request loads them again); 0 keeps them until the process
    /// ends.
    pub release_after_secs: u64,
    /// Network time limits.
    pub timeouts: TimeoutConfig,
    /// Retry policy.
    pub retry: RetryConfig,
    /// API key: never read from the file (see [`Config::load`]); set from the environment.
    #[serde(skip)]
    pub api_key: Option<String>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            kind: ProviderKind::Ollama,
            base_url: None,
            model: "llama3.2".into(),
            fallback_models: Vec::new(),
            max_tokens: 4096,
            context_window: 32_768,
            reserve_output: None,
            temperature: None,
            threads: None,
            release_after_secs: 600,
            timeouts: TimeoutConfig::default(),
            retry: RetryConfig::default(),
            api_key: None,
        }
    }
}

/// The fewest tokens a request must be allowed (system block, the message, some history).
pub const MIN_INPUT_TOKENS: usize = 512;

impl LlmConfig {
    /// Tokens kept free for the answer: `reserve_output`, or `max_tokens` up to a quarter of
    /// the window.
    pub fn answer_reserve(&self) -> u32 {
        self.reserve_output
            .unwrap_or_else(|| self.max_tokens.min(self.context_window / 4))
    }

    /// Tokens a request may take: the window minus what is kept free for the answer.
    pub fn input_budget(&self) -> usize {
        self.context_window.saturating_sub(self.answer_reserve()) as usize
    }

    /// The most answer tokens a request asks for: `max_tokens`, but never more than the
    /// reserve, so a request that fits its budget fits the window with its answer.
    pub fn answer_limit(&self) -> u32 {
        self.max_tokens.min(self.answer_reserve())
    }

    /// A window that leaves a request less than [`MIN_INPUT_TOKENS`] is refused at load, in
    /// one line naming both settings.
    pub(super) fn check_window(&self) -> Result<(), ConfigError> {
        let left = self.input_budget();
        if left >= MIN_INPUT_TOKENS {
            return Ok(());
        }
        let reserve = match self.reserve_output {
            Some(r) => format!("llm.reserve_output ({r})"),
            None => format!("the answer's reserve ({})", self.answer_reserve()),
        };
        Err(ConfigError::Override {
            source_name: "llm.context_window".into(),
            message: format!(
                "{} minus {reserve} leaves {left} tokens for a request, fewer than the \
                 {MIN_INPUT_TOKENS} it needs; raise llm.context_window or lower \
                 llm.reserve_output",
                self.context_window
            ),
        })
    }

    /// The base URL in force: the configured one or the kind's default, without a trailing `/`.
    pub fn effective_base_url(&self) -> String {
        self.base_url
            .as_deref()
            .unwrap_or(self.kind.default_base_url())
            .trim_end_matches('/')
            .to_string()
    }
}
