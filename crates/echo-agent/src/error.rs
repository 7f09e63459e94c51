//! Errors the `Api` returns before or outside a turn. A turn that runs and fails is not an
//! `ApiError`: it ends with status `failed` in its [`crate::TurnOutcome`].

use crate::wire::{ErrorBody, ErrorCode, ErrorDetail};
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
    /// The thing is in use: a turn of the session is running.
    #[error("{message}")]
    Busy {
        /// What is busy, for people.
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
    /// A model call the operation needs failed.
    #[error("{what}: {message}")]
    ModelCall {
        /// What the call was for.
        what: &'static str,
        /// Why it failed.
        message: String,
    },
    /// The keychain refused or is unavailable.
    #[error(transparent)]
    Keychain(#[from] echo_secrets::SecretError),
    /// Settings could not be applied or saved.
    #[error(transparent)]
    Settings(#[from] echo_core::config::ConfigError),
    /// A bootstrap file could not be read or saved.
    #[error(transparent)]
    Bootstrap(#[from] crate::bootstrap::BootstrapError),
    /// An automation could not be saved, found or run.
    #[error(transparent)]
    Automation(#[from] echo_automations::AutomationError),
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

impl ErrorCode {
    /// The code as it travels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid_input",
            Self::NotFound => "not_found",
            Self::Busy => "busy",
            Self::Store => "store",
            Self::ModelConfig => "model_config",
            Self::ModelCall => "model_call",
            Self::Memory => "memory",
            Self::DataDir => "data_dir",
            Self::Keychain => "keychain",
            Self::Unauthorized => "unauthorized",
            Self::ForeignHost => "foreign_host",
            Self::ForeignOrigin => "foreign_origin",
            Self::RateLimited => "rate_limited",
            Self::Internal => "internal",
        }
    }
}

impl ApiError {
    /// The kind of failure, for front ends (HTTP status mapping, CLI exit codes).
    pub fn kind(&self) -> ErrorCode {
        match self {
            Self::InvalidInput { .. } | Self::Settings(_) => ErrorCode::InvalidInput,
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::Busy { .. } => ErrorCode::Busy,
            Self::Store(_) => ErrorCode::Store,
            Self::Llm(_) => ErrorCode::ModelConfig,
            Self::ModelCall { .. } => ErrorCode::ModelCall,
            Self::Memory(_) => ErrorCode::Memory,
            Self::DataDir { .. } | Self::Bootstrap(crate::bootstrap::BootstrapError::Io { .. }) => {
                ErrorCode::DataDir
            }
            Self::Keychain(_) => ErrorCode::Keychain,
            Self::Bootstrap(_) => ErrorCode::InvalidInput,
            Self::Automation(e) => match e {
                echo_automations::AutomationError::Invalid { .. }
                | echo_automations::AutomationError::NameTaken(_) => ErrorCode::InvalidInput,
                echo_automations::AutomationError::NotFound { .. } => ErrorCode::NotFound,
                echo_automations::AutomationError::Store(_)
                | echo_automations::AutomationError::Corrupt { .. } => ErrorCode::Store,
            },
        }
    }

    /// Machine-readable code for front ends (see [`ErrorCode`]).
    pub fn code(&self) -> &'static str {
        self.kind().as_str()
    }
}

impl ErrorBody {
    /// A body with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody {
            error: ErrorDetail {
                code,
                message: message.into(),
            },
        }
    }
}

impl From<&ApiError> for ErrorBody {
    fn from(e: &ApiError) -> Self {
        ErrorBody {
            error: ErrorDetail {
                code: e.kind(),
                message: e.to_string(),
            },
        }
    }
}
