//! The error body every front end receives: a stable code and a message.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// The closed set of error codes front ends see (`{"error": {"code", "message"}}`), one per
/// kind of failure; HTTP statuses and CLI exit codes are chosen from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request was malformed or not allowed as given.
    InvalidInput,
    /// Something named does not exist.
    NotFound,
    /// In use (a running turn); try again later.
    Busy,
    /// The store failed.
    Store,
    /// The model client could not be set up.
    ModelConfig,
    /// A model call the operation needs failed (unreachable, refused, or a malformed answer).
    ModelCall,
    /// A memory operation failed.
    Memory,
    /// The data directory could not be read or written.
    DataDir,
    /// The keychain refused or is unavailable.
    Keychain,
    /// The gateway only: no or a wrong bearer token.
    Unauthorized,
    /// The gateway only: the `Host` header is not the server's loopback address.
    ForeignHost,
    /// The gateway only: the request came from another site (`Origin`).
    ForeignOrigin,
    /// The gateway only: too many requests with this device's token, or too many wrong
    /// pairing codes; try again shortly.
    RateLimited,
    /// A front end could not encode its answer (a bug; the message says what).
    Internal,
}

/// An error as every front end sends it: `{"error": {"code", "message"}}`.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct ErrorDetail {
    /// The kind of failure.
    pub code: ErrorCode,
    /// One line for people.
    pub message: String,
}
