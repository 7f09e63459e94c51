//! What can go wrong while loading, downloading or running an embedder, said in one line that
//! names the file, URL or server concerned.

use std::path::PathBuf;

/// A failed embedder operation. `Display` is one line for people: it names the model file, the
/// URL or the server (`embedding server HOST:PORT (model NAME)`) and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file the model needs is not in the model directory.
    #[error("embedding model file {file} is missing from {}", dir.display())]
    ModelFileMissing {
        /// The model directory that was searched.
        dir: PathBuf,
        /// The missing file, relative to `dir`.
        file: String,
    },
    /// A model file exists but could not be read or written.
    #[error("embedding model file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// A model file could not be understood (bad JSON, unsupported settings, bad weights).
    #[error("embedding model file {} is unusable: {detail}", path.display())]
    InvalidModel {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// Tokenising the input failed.
    #[error("tokenizer of {model}: {detail}")]
    Tokenizer {
        /// Model id.
        model: String,
        /// What the tokenizer said.
        detail: String,
    },
    /// The local forward pass failed (tensor shapes, out of memory, a panicked worker).
    #[error("{model} forward pass failed: {detail}")]
    Inference {
        /// Model id.
        model: String,
        /// What went wrong.
        detail: String,
    },
    /// Downloading a model file failed.
    #[error("download of {url} failed: {detail}")]
    Download {
        /// The URL of the file.
        url: String,
        /// What went wrong (status, network error, short body).
        detail: String,
    },
    /// A base URL could not be used.
    #[error("invalid URL {url:?}: {detail}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it is unusable.
        detail: String,
    },
    /// An embedding server could not be reached or did not answer in time.
    #[error("{server} is unreachable: {detail}")]
    Unreachable {
        /// `embedding server HOST:PORT (model NAME)`.
        server: String,
        /// What the network stack said.
        detail: String,
    },
    /// An embedding server answered with an HTTP error status.
    #[error("{server} answered HTTP {status}: {message}")]
    Status {
        /// `embedding server HOST:PORT (model NAME)`.
        server: String,
        /// HTTP status code.
        status: u16,
        /// The server's error message (one line, shortened).
        message: String,
    },
    /// An embedding server's answer could not be used.
    #[error("{server} sent an unusable response: {detail}")]
    BadResponse {
        /// `embedding server HOST:PORT (model NAME)`.
        server: String,
        /// What was wrong with it.
        detail: String,
    },
    /// An embedding had another length than the embedder promises.
    #[error("{source_name} returned {got}-dimensional embeddings, expected {expected}")]
    DimensionMismatch {
        /// The model or server that produced it.
        source_name: String,
        /// [`crate::Embedder::dim`].
        expected: usize,
        /// What came back.
        got: usize,
    },
}

impl EmbedError {
    /// A stable machine-readable code, e.g. `embed_model_missing`, `embed_status`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ModelFileMissing { .. } => "embed_model_missing",
            Self::Io { .. } => "embed_io",
            Self::InvalidModel { .. } => "embed_invalid_model",
            Self::Tokenizer { .. } => "embed_tokenizer",
            Self::Inference { .. } => "embed_inference",
            Self::Download { .. } => "embed_download",
            Self::InvalidUrl { .. } => "embed_invalid_url",
            Self::Unreachable { .. } => "embed_unreachable",
            Self::Status { .. } => "embed_status",
            Self::BadResponse { .. } => "embed_bad_response",
            Self::DimensionMismatch { .. } => "embed_dimension_mismatch",
        }
    }
}

pub(crate) use echo_core::text::one_line;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_and_where() {
        let missing = EmbedError::ModelFileMissing {
            dir: PathBuf::from("/m"),
            file: "model.safetensors".into(),
        };
        assert_eq!(
            missing.to_string(),
            "embedding model file model.safetensors is missing from /m"
        );
        assert_eq!(missing.code(), "embed_model_missing");
        let status = EmbedError::Status {
            server: "embedding server 127.0.0.1:9 (model m)".into(),
            status: 401,
            message: "bad key".into(),
        };
        assert_eq!(
            status.to_string(),
            "embedding server 127.0.0.1:9 (model m) answered HTTP 401: bad key"
        );
    }
}
