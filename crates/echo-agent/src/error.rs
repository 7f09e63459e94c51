//! Errors the `Api` returns before or outside a turn. A turn that runs and fails is not an
//! `ApiError`: it ends with status `failed` in its [`crate::TurnOutcome`].

use echo_core::StoreError;

/// Why an `Api` call could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request was malformed (empty input, bad session name, ...).
    #[error("invalid {what}: {message}")]
    InvalidInput {
        /// Which field.
        what: &'static str,
        /// What was wrong.
        message: String,
    },
    /// Something named does not exist.
    #[error("{what} not found: {id}")]
    NotFound {
        /// Kind.
        what: &'static str,
        /// Name or id.
        id: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A memory operation failed.
    #[error(transparent)]
    Memory(#[from] echo_memory::MemoryError),
    /// The model client could not be set up.
    #[error(transparent)]
    Llm(#[from] echo_llm::LlmError),
    /// The keychain refused or is unavailable.
    #[error(transparent)]
    Keychain(#[from] echo_secrets::SecretError),
    /// Settings could not be applied or saved.
    #[error(transparent)]
    Settings(#[from] echo_core::config::ConfigError),
    /// A bootstrap file could not be read or saved.
    #[error(transparent)]
    Bootstrap(#[from] crate::bootstrap::BootstrapError),
    /// The data directory could not be prepared.
    #[error("data directory {path}: {source}")]
    DataDir {
        /// Path.
        path: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

impl ApiError {
    /// Machine-readable code for front ends (HTTP status mapping, CLI exit codes).
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput { .. } => "invalid_input",
            Self::NotFound { .. } => "not_found",
            Self::Store(_) => "store",
            Self::Llm(_) => "model_config",
            Self::Memory(_) => "memory",
            Self::DataDir { .. } => "data_dir",
            Self::Keychain(_) => "keychain",
            Self::Settings(_) => "invalid_input",
            Self::Bootstrap(crate::bootstrap::BootstrapError::Io { .. }) => "data_dir",
            Self::Bootstrap(_) => "invalid_input",
        }
    }
}
