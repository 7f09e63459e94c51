//! Echo Desk's memory benchmarks, run by `echod bench locomo`, `echod bench memory` and
//! `echod bench embed` (see `docs/benchmarks.md`), and the built-in model's speed (`echod
//! bench local-model`). They drive the real memory store, write path and vector index
//! through echo-memory's public API on throw-away stores in temporary folders; nothing here is
//! part of the engine a front end talks to.
#![deny(missing_docs)]

pub mod embed;
pub mod local_model;
pub mod locomo;
pub mod memory;

use echo_core::config::Config;
use echo_memory::echo_embed::{self, Embedder, MiniLmEmbedder};
use std::sync::Arc;

/// The configured local embedder (`memory.embed_model_dir`, the model environment variable or
/// the default model folder), loaded now. The error says where the model was looked for.
pub fn local_embedder(config: &Config) -> Result<Arc<dyn Embedder>, String> {
    let embedder = MiniLmEmbedder::load(&local_embedder_dir(config)?).map_err(|e| e.to_string())?;
    Ok(Arc::new(embedder))
}

/// The configured local embedder's folder, or where it was looked for.
pub fn local_embedder_dir(config: &Config) -> Result<std::path::PathBuf, String> {
    echo_embed::resolve_model_dir(config.memory.embed_model_dir.as_deref(), &config.home)
        .ok_or_else(|| {
            format!(
                "no all-MiniLM-L6-v2 model folder found (set memory.embed_model_dir or {} or put it in {})",
                echo_embed::MODEL_DIR_ENV,
                echo_embed::default_model_dir(&config.home).display()
            )
        })
}
