//! The local embedder: all-MiniLM-L6-v2 (a 6-layer BERT) run with candle on the CPU.
//!
//! What sentence-transformers does for this model (`modules.json`: Transformer → Pooling →
//! Normalize): tokenise with truncation at `max_seq_length` word pieces (256, from
//! `sentence_bert_config.json`), pad each batch to its longest input, take the last hidden
//! state, average it over the real tokens (mask-aware mean pooling, `1_Pooling/config.json`)
//! and divide by its L2 norm.

use crate::Embedder;
use crate::error::{EmbedError, one_line};
use crate::model_dir::{MODEL_ID, REQUIRED_FILES};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokenizers::{Tokenizer, TruncationParams};

/// Inputs per forward pass unless [`MiniLmEmbedder::with_batch_size`] says otherwise.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// Word pieces kept per input when the model folder has no `sentence_bert_config.json`
/// (the value all-MiniLM-L6-v2 ships with).
pub const DEFAULT_MAX_SEQ_LENGTH: usize = 256;

/// all-MiniLM-L6-v2 on the CPU. Cheap to clone (the weights are shared).
#[derive(Clone)]
pub struct MiniLmEmbedder {
    inner: Arc<Inner>,
    batch_size: usize,
}

struct Inner {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    max_seq_length: usize,
    pad_id: u32,
}

/// `sentence_bert_config.json`.
#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

/// `1_Pooling/config.json`: only plain mean pooling is implemented.
#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default = "yes")]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

fn yes() -> bool {
    true
}

impl MiniLmEmbedder {
    /// Loads the model from `dir`, which must hold `config.json`, `tokenizer.json` and
    /// `model.safetensors` (see [`crate::resolve_model_dir`]); `sentence_bert_config.json` and
    /// `1_Pooling/config.json` are honoured when present. Reads ~90 MB: call it once and share
    /// the embedder (it is cheap to clone).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        for file in REQUIRED_FILES {
            if !dir.join(file).is_file() {
                return Err(EmbedError::ModelFileMissing {
                    dir: dir.to_path_buf(),
                    file: file.into(),
                });
            }
        }
        let config_path = dir.join("config.json");
        let config: Config = read_json(&config_path)?;
        let max_seq_length =
            match read_optional_json::<SentenceBertConfig>(&dir.join("sentence_bert_config.json"))?
            {
                Some(SentenceBertConfig {
                    max_seq_length: Some(n),
                }) => n,
                _ => DEFAULT_MAX_SEQ_LENGTH,
            }
            .min(config.max_position_embeddings);
        let pooling_path = dir.join("1_Pooling").join("config.json");
        if let Some(p) = read_optional_json::<PoolingConfig>(&pooling_path)?
            && (!p.pooling_mode_mean_tokens
                || p.pooling_mode_cls_token
                || p.pooling_mode_max_tokens
                || p.pooling_mode_mean_sqrt_len_tokens)
        {
            return Err(EmbedError::InvalidModel {
                path: pooling_path,
                detail: "only plain mean pooling is supported".into(),
            });
        }

        let tokenizer = load_tokenizer(&dir.join("tokenizer.json"), max_seq_length)?;

        let weights_path = dir.join("model.safetensors");
        let bytes = std::fs::read(&weights_path).map_err(|source| EmbedError::Io {
            path: weights_path.clone(),
            source,
        })?;
        let invalid = |e: candle_core::Error| EmbedError::InvalidModel {
            path: weights_path.clone(),
            detail: one_line(&e.to_string(), 300),
        };
        let vb =
            VarBuilder::from_buffered_safetensors(bytes, DTYPE, &Device::Cpu).map_err(invalid)?;
        let model = BertModel::load(vb, &config).map_err(invalid)?;
        tracing::debug!(dir = %dir.display(), max_seq_length, "loaded embedding model");
        Ok(Self {
            inner: Arc::new(Inner {
                model,
                tokenizer,
                dim: config.hidden_size,
                max_seq_length,
                pad_id: u32::try_from(config.pad_token_id).unwrap_or(0),
            }),
            batch_size: DEFAULT_BATCH_SIZE,
        })
    }

    /// The same embedder running at most `batch_size` inputs (at least 1) per forward pass.
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Word pieces kept per input; longer inputs are truncated (their tail is not embedded).
    pub fn max_seq_length(&self) -> usize {
        self.inner.max_seq_length
    }

    /// The token ids the model sees for `text`: `[CLS] … [SEP]`, truncated to
    /// [`Self::max_seq_length`].
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, EmbedError> {
        let enc = self
            .inner
            .tokenizer
            .encode_fast(text, true)
            .map_err(|e| tokenizer_error(&*e))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Embeds `texts` on the calling thread (CPU-bound: from async code use
    /// [`Embedder::embed`], which moves this onto the blocking pool).
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .inner
            .tokenizer
            .encode_batch_fast(texts.to_vec(), true)
            .map_err(|e| tokenizer_error(&*e))?;
        // Sort by length so that each batch pads as little as possible; results go back to
        // the caller's order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(self.batch_size) {
            let batch: Vec<&tokenizers::Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            let vectors = self
                .inner
                .forward(&batch)
                .map_err(|e| EmbedError::Inference {
                    model: MODEL_ID.into(),
                    detail: one_line(&e.to_string(), 300),
                })?;
            for (&i, v) in chunk.iter().zip(vectors) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

impl Inner {
    /// One forward pass: pads the batch to its longest member, runs BERT, mean-pools over the
    /// attention mask and L2-normalises.
    fn forward(&self, batch: &[&tokenizers::Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch.iter().map(|e| e.get_ids().len()).max().unwrap_or(0);
        let n = batch.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut types = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for enc in batch {
            // The tokenizer does not pad: pad here, to this batch's longest input.
            ids.extend_from_slice(enc.get_ids());
            types.extend_from_slice(enc.get_type_ids());
            mask.extend_from_slice(enc.get_attention_mask());
            let pad = len - enc.get_ids().len();
            ids.extend(std::iter::repeat_n(self.pad_id, pad));
            types.extend(std::iter::repeat_n(0, pad));
            mask.extend(std::iter::repeat_n(0, pad));
        }
        let device = &self.model.device;
        let ids = Tensor::from_vec(ids, (n, len), device)?;
        let types = Tensor::from_vec(types, (n, len), device)?;
        let mask = Tensor::from_vec(mask, (n, len), device)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?; // (n, len, dim)
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (n, dim)
        // Same guards as sentence-transformers: token count ≥ 1e-9, norm ≥ 1e-12.
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (n, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

#[async_trait::async_trait]
impl Embedder for MiniLmEmbedder {
    fn model_id(&self) -> &str {
        MODEL_ID
    }

    fn dim(&self) -> usize {
        self.inner.dim
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let this = self.clone();
        let texts = texts.to_vec();
        let span = tracing::debug_span!("embed", model = MODEL_ID, inputs = texts.len());
        tokio::task::spawn_blocking(move || span.in_scope(|| this.embed_blocking(&texts)))
            .await
            .map_err(|e| EmbedError::Inference {
                model: MODEL_ID.into(),
                detail: format!("worker thread failed: {e}"),
            })?
    }
}

fn tokenizer_error(e: &(dyn std::error::Error + Send + Sync)) -> EmbedError {
    EmbedError::Tokenizer {
        model: MODEL_ID.into(),
        detail: one_line(&e.to_string(), 300),
    }
}

/// Loads `tokenizer.json` and replaces its stored truncation and padding (the file ships with
/// "truncate and pad to 128") with truncation at `max_seq_length` and no padding: batches are
/// padded by [`Inner::forward`], to the longest input of each forward pass.
fn load_tokenizer(path: &Path, max_seq_length: usize) -> Result<Tokenizer, EmbedError> {
    let invalid = |detail: String| EmbedError::InvalidModel {
        path: path.to_path_buf(),
        detail: one_line(&detail, 300),
    };
    let mut tokenizer = Tokenizer::from_file(path).map_err(|e| invalid(e.to_string()))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_seq_length,
            ..TruncationParams::default()
        }))
        .map_err(|e| invalid(e.to_string()))?;
    Ok(tokenizer)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbedError> {
    let text = std::fs::read_to_string(path).map_err(|source| EmbedError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| EmbedError::InvalidModel {
        path: PathBuf::from(path),
        detail: e.to_string(),
    })
}

fn read_optional_json<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Option<T>, EmbedError> {
    if path.is_file() {
        read_json(path).map(Some)
    } else {
        Ok(None)
    }
}
