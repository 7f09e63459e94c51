//! Echo Desk's text embedders for long-term memory: text in, L2-normalised vectors out.
//!
//! - [`MiniLmEmbedder`]: the local default, all-MiniLM-L6-v2 (384 dimensions) run with candle
//!   on the CPU, exactly as sentence-transformers runs it (truncation at 256 word pieces,
//!   mask-aware mean pooling, L2 normalisation). Its files come from a model directory found by
//!   [`resolve_model_dir`] (explicit path → `$ECHO_EMBED_MODEL_DIR` →
//!   `<data dir>/models/all-MiniLM-L6-v2`) and, on first use, from [`download_model`].
//! - [`OpenAiEmbedder`]: any OpenAI-compatible `POST {base_url}/embeddings` server.
//!
//! Both implement [`Embedder`]. Errors are [`EmbedError`]s whose message is one line naming the
//! file, URL or server concerned.
//!
//! Invariants: nothing here knows about memories, prompts or storage; the forward pass never
//! runs on an async worker thread (it goes to `spawn_blocking`); API keys never reach logs.
#![deny(missing_docs)]

mod error;
mod minilm;
mod model_dir;
mod openai;

pub use error::EmbedError;
pub use minilm::{DEFAULT_BATCH_SIZE, DEFAULT_MAX_SEQ_LENGTH, MiniLmEmbedder};
pub use model_dir::{
    CONFIG_FILES, DEFAULT_BASE_URL, MODEL_DIR_ENV, MODEL_ID, PINNED_SHA256, REQUIRED_FILES,
    default_model_dir, download_model, is_model_dir, model_dir_candidates, resolve_model_dir,
};
pub use openai::{MAX_INPUTS_PER_REQUEST, OpenAiEmbedder};

/// Turns texts into vectors for similarity search.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// The model's id, stored beside each vector (e.g. `all-MiniLM-L6-v2`), so that vectors of
    /// different models are never compared.
    fn model_id(&self) -> &str;

    /// The length of every vector (384 for all-MiniLM-L6-v2).
    fn dim(&self) -> usize;

    /// One L2-normalised vector of [`Self::dim`] floats per text, in input order. An empty
    /// slice gives an empty result; an empty string gives a valid vector.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}
