//! Reading a GGUF file's header: what the model is, how long its window is, and the metadata
//! its tokenizer and chat template come from. The weights are read later, by the worker
//! (llama.cpp reads the file itself).

use crate::error::LocalError;
use candle_core::quantized::gguf_file::{Content, Value};
use std::io::Seek;
use std::path::{Path, PathBuf};

/// The longest window the runtime uses: llama.cpp sets the attention cache aside for the
/// whole window when the model loads, and on a CPU a longer prompt takes minutes.
pub const MAX_WINDOW: usize = 4096;

/// The architectures the built-in runtime can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Llama and the models built like it (SmolLM2, Llama 3.x, Mistral).
    Llama,
    /// Qwen2 and Qwen2.5.
    Qwen2,
    /// Qwen3.
    Qwen3,
}

impl Arch {
    /// The name GGUF gives it (`general.architecture`).
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
            Arch::Qwen3 => "qwen3",
        }
    }
}

/// The parsed header of one GGUF file.
pub(crate) struct Header {
    pub metadata: Metadata,
}

/// A GGUF file's metadata with typed getters whose errors name the file and the key.
pub(crate) struct Metadata {
    path: PathBuf,
    values: std::collections::HashMap<String, Value>,
}

/// Reads the header of the GGUF file at `path`: a missing file, something that is not GGUF
/// and a cut-off file are each a clear error.
pub(crate) fn read_header(path: &Path) -> Result<Header, LocalError> {
    let mut file = std::fs::File::open(path).map_err(|e| LocalError::Open {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if crate::gguf_alignment::zero_alignment(&mut std::io::BufReader::new(&file), size)
        == Some(true)
    {
        return Err(LocalError::Corrupt {
            path: path.to_path_buf(),
            detail: "it is not a readable GGUF model (general.alignment is 0)".into(),
        });
    }
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| LocalError::Open {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
    let content = Content::read(&mut file).map_err(|e| LocalError::Corrupt {
        path: path.to_path_buf(),
        detail: format!("it is not a readable GGUF model ({e})"),
    })?;
    let metadata = Metadata {
        path: path.to_path_buf(),
        values: content.metadata,
    };
    Ok(Header { metadata })
}

impl Metadata {
    pub(crate) fn corrupt(&self, detail: String) -> LocalError {
        LocalError::Corrupt {
            path: self.path.clone(),
            detail,
        }
    }

    pub(crate) fn unsupported(&self, detail: String) -> LocalError {
        LocalError::Unsupported {
            path: self.path.clone(),
            detail,
        }
    }

    fn get(&self, key: &str) -> Result<&Value, LocalError> {
        self.values
            .get(key)
            .ok_or_else(|| self.corrupt(format!("its metadata has no {key}")))
    }

    fn typed<'a, T>(
        &'a self,
        key: &str,
        read: impl FnOnce(&'a Value) -> candle_core::Result<T>,
    ) -> Result<T, LocalError> {
        read(self.get(key)?).map_err(|e| self.corrupt(format!("{key}: {e}")))
    }

    pub(crate) fn string(&self, key: &str) -> Result<&str, LocalError> {
        self.typed(key, Value::to_string).map(String::as_str)
    }

    pub(crate) fn opt_string(&self, key: &str) -> Option<&str> {
        self.values
            .get(key)
            .and_then(|v| v.to_string().ok())
            .map(String::as_str)
    }

    pub(crate) fn u32(&self, key: &str) -> Result<u32, LocalError> {
        self.typed(key, Value::to_u32)
    }

    pub(crate) fn opt_u32(&self, key: &str) -> Option<u32> {
        self.values.get(key).and_then(|v| v.to_u32().ok())
    }

    pub(crate) fn opt_bool(&self, key: &str) -> Option<bool> {
        self.values.get(key).and_then(|v| v.to_bool().ok())
    }

    pub(crate) fn strings(&self, key: &str) -> Result<Vec<String>, LocalError> {
        let items = self.typed(key, Value::to_vec)?;
        items
            .iter()
            .map(|v| {
                v.to_string()
                    .cloned()
                    .map_err(|e| self.corrupt(format!("{key}: {e}")))
            })
            .collect()
    }

    pub(crate) fn i32s(&self, key: &str) -> Option<Vec<i32>> {
        let items = self.values.get(key)?.to_vec().ok()?;
        items.iter().map(|v| v.to_i32().ok()).collect()
    }

    /// The architecture, if the runtime supports it.
    pub(crate) fn arch(&self) -> Result<Arch, LocalError> {
        match self.string("general.architecture")? {
            "llama" => Ok(Arch::Llama),
            "qwen2" => Ok(Arch::Qwen2),
            "qwen3" => Ok(Arch::Qwen3),
            other => Err(self.unsupported(format!(
                "its architecture is {other:?}; the built-in runtime runs llama (SmolLM2, \
                 Llama 3), qwen2 (Qwen2.5) and qwen3"
            ))),
        }
    }

    /// The model's window in tokens: what it was trained for, at most [`MAX_WINDOW`].
    pub(crate) fn window(&self, arch: Arch) -> Result<usize, LocalError> {
        let trained = self.u32(&format!("{}.context_length", arch.as_str()))? as usize;
        Ok(trained.min(MAX_WINDOW))
    }
}
