//! The network itself: candle's quantized implementations of the supported architectures,
//! behind one shape (feed tokens at a position, get the next token's logits).

use crate::error::LocalError;
use crate::gguf::{Arch, Header};
use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::{quantized_llama, quantized_qwen2, quantized_qwen3};
use std::io::{Cursor, Read, Seek};
use std::path::Path;

/// Loaded weights with their attention cache.
pub(crate) enum Weights {
    Llama(quantized_llama::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
}

impl Weights {
    /// Reads the tensors of the file whose header is `header`. Tensors in a format candle
    /// has no SIMD kernel for (Q4_1, Q5_0, Q5_1) are converted to Q8_0 on the way in: they
    /// would otherwise run through scalar code, about ten times slower.
    pub(crate) fn load(path: &Path, header: Header, arch: Arch) -> Result<Weights, LocalError> {
        let corrupt = |e: candle_core::Error| LocalError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("its weights cannot be read ({e})"),
        };
        let mut file = std::fs::File::open(path).map_err(|e| LocalError::Open {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        let content = header.content;
        let slow = content
            .tensor_infos
            .values()
            .any(|t| without_kernel(t.ggml_dtype));
        if slow {
            let mut converted = with_fast_kernels(&content, &mut file).map_err(corrupt)?;
            let content = Content::read(&mut converted).map_err(corrupt)?;
            return Self::from_content(arch, content, &mut converted).map_err(corrupt);
        }
        Self::from_content(arch, content, &mut file).map_err(corrupt)
    }

    fn from_content<R: Read + Seek>(
        arch: Arch,
        content: Content,
        reader: &mut R,
    ) -> candle_core::Result<Weights> {
        let device = Device::Cpu;
        Ok(match arch {
            Arch::Llama => Weights::Llama(quantized_llama::ModelWeights::from_gguf(
                content, reader, &device,
            )?),
            Arch::Qwen2 => Weights::Qwen2(quantized_qwen2::ModelWeights::from_gguf(
                content, reader, &device,
            )?),
            Arch::Qwen3 => Weights::Qwen3(quantized_qwen3::ModelWeights::from_gguf(
                content, reader, &device,
            )?),
        })
    }

    /// Feeds `tokens`, the first at position `pos`, and returns the logits of the token after
    /// the last one.
    pub(crate) fn forward(&mut self, tokens: &[u32], pos: usize) -> Result<Vec<f32>, LocalError> {
        let input = Tensor::new(tokens, &Device::Cpu)?.unsqueeze(0)?;
        let logits = match self {
            Weights::Llama(m) => m.forward(&input, pos)?,
            Weights::Qwen2(m) => m.forward(&input, pos)?,
            Weights::Qwen3(m) => m.forward(&input, pos)?,
        };
        Ok(logits
            .squeeze(0)?
            .to_dtype(candle_core::DType::F32)?
            .to_vec1()?)
    }

    /// Drops the attention cache.
    pub(crate) fn clear(&mut self) {
        match self {
            Weights::Llama(m) => m.clear_kv_cache(),
            Weights::Qwen2(m) => m.clear_kv_cache(),
            Weights::Qwen3(m) => m.clear_kv_cache(),
        }
    }

    /// A copy of the weights and their cache. Llama's cache is immutable tensors, so the
    /// copy shares them; Qwen3's CPU cache is a buffer the copy duplicates (still far cheaper
    /// than processing the prompt again); candle's Qwen2 cannot be copied.
    pub(crate) fn fork(&self) -> Option<Weights> {
        match self {
            Weights::Llama(m) => Some(Weights::Llama(m.clone())),
            Weights::Qwen3(m) => Some(Weights::Qwen3(m.clone())),
            Weights::Qwen2(_) => None,
        }
    }
}

/// Formats candle runs through scalar code on every CPU.
fn without_kernel(dtype: GgmlDType) -> bool {
    matches!(dtype, GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1)
}

/// The model rewritten in memory with every tensor in a [`without_kernel`] format converted
/// to Q8_0 (which holds such values at least as precisely).
fn with_fast_kernels<R: Read + Seek>(
    content: &Content,
    reader: &mut R,
) -> candle_core::Result<Cursor<Vec<u8>>> {
    let mut tensors = Vec::with_capacity(content.tensor_infos.len());
    for (name, info) in &content.tensor_infos {
        let tensor = content.tensor(reader, name, &Device::Cpu)?;
        let tensor = if without_kernel(info.ggml_dtype) {
            QTensor::quantize(&tensor.dequantize(&Device::Cpu)?, GgmlDType::Q8_0)?
        } else {
            tensor
        };
        tensors.push((name.as_str(), tensor));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let mut out = Cursor::new(Vec::new());
    gguf_file::write(&mut out, &metadata, &refs)?;
    out.set_position(0);
    Ok(out)
}
