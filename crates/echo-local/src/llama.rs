//! The network itself: llama.cpp (through `llama-cpp-2`), behind one shape: feed a prompt,
//! get the next token's logits; feed one token, get the next logits.
//!
//! One llama.cpp context serves every request of a model. Its attention cache is shared by
//! [`SLOTS`] sequences, each remembering the tokens it holds: a request continues the slot
//! whose tokens it shares the longest start with, so the next turn of a conversation only
//! processes what is new, even when a background call (a memory extraction, a title) ran in
//! between. A slot that would have to be cut to fit a request is copied first (llama.cpp
//! shares the copied cells, it does not duplicate them), so the conversation it holds stays
//! for the turn after.

use crate::error::LocalError;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{DecodeError, LogOptions};
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;

/// Sequences kept in the attention cache: two points of the conversation and two of the
/// background calls that come between its turns.
pub(crate) const SLOTS: usize = 4;
/// Prompt tokens handed to llama.cpp per call (it splits them further itself).
const BATCH: usize = 512;

/// llama.cpp's process-wide state, started once (it can be started only once per process).
fn backend() -> Result<&'static LlamaBackend, LocalError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            // llama.cpp's own messages go to `tracing` (target `llama-cpp-2`), not stderr.
            llama_cpp_2::send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LocalError::Compute(format!("cannot start llama.cpp: {e}")))
}

/// Loaded weights.
pub(crate) struct Weights {
    model: LlamaModel,
}

impl Weights {
    /// Reads the weights of the GGUF file at `path` (memory-mapped: pages the model does not
    /// touch are not read).
    pub(crate) fn load(path: &Path) -> Result<Weights, LocalError> {
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| LocalError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("llama.cpp cannot load its weights ({e})"),
            })?;
        Ok(Weights { model })
    }

    /// A context over these weights with room for `window` tokens in all, computing on
    /// `threads` threads.
    pub(crate) fn session(&self, window: usize, threads: usize) -> Result<Session<'_>, LocalError> {
        let threads = i32::try_from(threads.max(1)).unwrap_or(i32::MAX);
        let window = u32::try_from(window).unwrap_or(u32::MAX);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(window))
            .with_n_batch(BATCH as u32)
            .with_n_ubatch(BATCH as u32)
            .with_n_seq_max(SLOTS as u32)
            .with_kv_unified(true)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| LocalError::Compute(format!("cannot create a llama.cpp context: {e}")))?;
        Ok(Session {
            ctx,
            batch: LlamaBatch::new(BATCH, 1),
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
            live: 0,
            clock: 0,
        })
    }
}

/// The tokens one sequence of the cache holds, and when it was last used.
#[derive(Default)]
struct Slot {
    tokens: Vec<u32>,
    used: u64,
}

/// A context: the attention cache of [`SLOTS`] sequences, one of them live.
pub(crate) struct Session<'m> {
    ctx: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    slots: Vec<Slot>,
    /// The slot the current generation appends to.
    live: usize,
    clock: u64,
}

impl Session<'_> {
    /// Runs `prompt` through the network, continuing the slot that shares the longest start
    /// with it, and returns the next token's logits and how many prompt tokens came from the
    /// cache.
    pub(crate) fn prefill(&mut self, prompt: &[u32]) -> Result<(Vec<f32>, usize), LocalError> {
        if prompt.is_empty() {
            return Err(LocalError::Tokenize("the prompt is empty".into()));
        }
        let shared = |slot: &Slot| {
            slot.tokens
                .iter()
                .zip(prompt)
                .take_while(|(a, b)| a == b)
                .count()
        };
        // The longest shared start; among equals, the most recently used slot.
        let (best, common) = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| (i, shared(s), s.used))
            .max_by_key(|&(_, n, used)| (n, used))
            .map(|(i, n, _)| (i, n))
            .unwrap_or((0, 0));
        // At least the last prompt token is processed again: its logits are the answer's start.
        let reuse = common.min(prompt.len() - 1);
        let live = if reuse == self.slots[best].tokens.len() {
            best
        } else {
            // Keep the best slot as it is; continue in the least recently used other one.
            let spare = self.least_recent(best);
            self.drop_slot(spare)?;
            if reuse > 0 {
                self.ctx
                    .copy_kv_cache_seq(seq(best), seq(spare), Some(0), Some(reuse as u32))
                    .map_err(compute)?;
                self.slots[spare].tokens = prompt[..reuse].to_vec();
            }
            spare
        };
        self.live = live;
        self.touch(live);
        tracing::debug!(
            prompt = prompt.len(),
            reused = reuse,
            slot = live,
            held = ?self.slots.iter().map(|s| s.tokens.len()).collect::<Vec<_>>(),
            "prompt cache"
        );
        let mut logits = Vec::new();
        let rest = &prompt[reuse..];
        for (i, chunk) in rest.chunks(BATCH).enumerate() {
            let last = (i + 1) * BATCH >= rest.len();
            self.feed(chunk, last)?;
            if last {
                logits = self.ctx.get_logits_ith(self.batch.n_tokens() - 1).to_vec();
            }
        }
        Ok((logits, reuse))
    }

    /// Appends one generated token to the live slot and puts the next token's logits in
    /// `logits` (reused from token to token: a vocabulary's worth of floats each time).
    pub(crate) fn step(&mut self, token: u32, logits: &mut Vec<f32>) -> Result<(), LocalError> {
        self.feed(&[token], true)?;
        logits.clear();
        logits.extend_from_slice(self.ctx.get_logits_ith(self.batch.n_tokens() - 1));
        Ok(())
    }

    /// Decodes `tokens` at the end of the live slot; with `logits`, the last one's logits can
    /// be read afterwards. When the cache is full, other slots are let go, least recently
    /// used first, and the tokens are tried again.
    fn feed(&mut self, tokens: &[u32], logits: bool) -> Result<(), LocalError> {
        loop {
            let live = self.live;
            let start = self.slots[live].tokens.len();
            self.batch.clear();
            for (i, &token) in tokens.iter().enumerate() {
                let pos = i32::try_from(start + i).map_err(|_| too_long(start + i))?;
                let last = logits && i + 1 == tokens.len();
                self.batch
                    .add(LlamaToken::new(token as i32), pos, &[seq(live)], last)
                    .map_err(compute)?;
            }
            match self.ctx.decode(&mut self.batch) {
                Ok(()) => {
                    self.slots[live].tokens.extend_from_slice(tokens);
                    return Ok(());
                }
                Err(DecodeError::NoKvCacheSlot) => {
                    let others = self
                        .slots
                        .iter()
                        .enumerate()
                        .any(|(i, s)| i != live && !s.tokens.is_empty());
                    if !others {
                        return Err(too_long(start + tokens.len()));
                    }
                    let victim = self.least_recent(live);
                    self.drop_slot(victim)?;
                }
                Err(e) => return Err(compute(e)),
            }
        }
    }

    /// The least recently used slot other than `keep` (empty slots first).
    fn least_recent(&self, keep: usize) -> usize {
        self.slots
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != keep)
            .min_by_key(|(_, s)| (!s.tokens.is_empty(), s.used))
            .map(|(i, _)| i)
            .unwrap_or(keep)
    }

    fn drop_slot(&mut self, slot: usize) -> Result<(), LocalError> {
        self.ctx
            .clear_kv_cache_seq(Some(slot as u32), None, None)
            .map_err(compute)?;
        self.slots[slot].tokens.clear();
        Ok(())
    }

    fn touch(&mut self, slot: usize) {
        self.clock += 1;
        self.slots[slot].used = self.clock;
    }
}

fn seq(slot: usize) -> i32 {
    slot as i32
}

fn compute(e: impl std::fmt::Display) -> LocalError {
    LocalError::Compute(e.to_string())
}

fn too_long(tokens: usize) -> LocalError {
    LocalError::Compute(format!(
        "the model's attention cache has no room for {tokens} tokens"
    ))
}
