//! What can go wrong with a model call, said in one line that names the server and the model.
//!
//! Every variant knows whether trying again could help ([`LlmError::is_retryable`]) and has a
//! stable machine code ([`LlmError::code`]) for front ends that map errors to statuses.

use echo_core::TurnErrorCode;
use std::fmt;
use std::time::Duration;

/// Which server and model an error is about: shown as `model server HOST:PORT (model NAME)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerRef {
    /// `host:port` of the base URL.
    pub host: String,
    /// The model that was asked.
    pub model: String,
}

impl fmt::Display for ServerRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model server {} (model {})", self.host, self.model)
    }
}

/// The stage of a request whose time limit ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Opening the TCP/TLS connection.
    Connect,
    /// From sending the request to the first byte of the response body.
    FirstByte,
    /// Silence between two chunks of a streamed response.
    Idle,
}

impl TimeoutPhase {
    /// `connect`, `first_byte` or `idle`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::FirstByte => "first_byte",
            Self::Idle => "idle",
        }
    }
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed model call (one HTTP attempt, or the whole call once retries and fallbacks are spent).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The server could not be reached (refused, reset, DNS, TLS).
    Connect {
        /// Server and model.
        server: ServerRef,
        /// What the network stack said.
        detail: String,
    },
    /// A time limit ran out.
    Timeout {
        /// Server and model.
        server: ServerRef,
        /// Which limit.
        phase: TimeoutPhase,
        /// The limit in force.
        limit: Duration,
        /// Stream events received before the silence.
        chunks: usize,
        /// Whether text, reasoning or tool-call deltas had already been passed to the caller.
        after_output: bool,
    },
    /// The server answered with an HTTP error status (other than 401/403).
    Status {
        /// Server and model.
        server: ServerRef,
        /// HTTP status code.
        status: u16,
        /// The server's error message (one line, shortened).
        message: String,
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
    },
    /// The server refused the credentials (HTTP 401 or 403).
    Auth {
        /// Server and model.
        server: ServerRef,
        /// 401 or 403.
        status: u16,
        /// The server's error message.
        message: String,
    },
    /// The response stream ended before the answer was complete.
    StreamCut {
        /// Server and model.
        server: ServerRef,
        /// Stream events received before the cut.
        chunks: usize,
        /// How it ended.
        detail: String,
        /// Whether text, reasoning or tool-call deltas had already been passed to the caller.
        after_output: bool,
    },
    /// The server reported an error inside an otherwise successful response (an SSE `error`
    /// event, or an `error` object in the body).
    Remote {
        /// Server and model.
        server: ServerRef,
        /// The error type the server named (`overloaded_error`, …), if any.
        kind: Option<String>,
        /// The server's message.
        message: String,
        /// Whether text, reasoning or tool-call deltas had already been passed to the caller.
        after_output: bool,
    },
    /// The response could not be understood.
    Protocol {
        /// Server and model.
        server: ServerRef,
        /// What was wrong with it.
        detail: String,
    },
    /// The caller cancelled the call.
    Cancelled {
        /// Server and model that were being asked.
        server: ServerRef,
    },
    /// The model configuration is unusable.
    Config {
        /// What is wrong.
        detail: String,
    },
    /// The built-in model failed (its file, the grammar of a forced call, a computation).
    Local {
        /// `built-in` and the model.
        server: ServerRef,
        /// What went wrong.
        detail: String,
    },
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect { server, detail } => write!(f, "{server} is unreachable: {detail}"),
            Self::Timeout {
                server,
                phase,
                limit,
                chunks,
                ..
            } => {
                let secs = limit.as_secs_f64();
                match phase {
                    TimeoutPhase::Connect => {
                        write!(
                            f,
                            "{server} did not accept a connection within {secs} s (connect timeout)"
                        )
                    }
                    TimeoutPhase::FirstByte => {
                        write!(
                            f,
                            "{server} did not start answering within {secs} s (first-byte timeout)"
                        )
                    }
                    TimeoutPhase::Idle => write!(
                        f,
                        "{server} went silent for {secs} s after {} (idle timeout)",
                        plural(*chunks, "chunk")
                    ),
                }
            }
            Self::Status {
                server,
                status,
                message,
                ..
            } => {
                write!(f, "{server} answered HTTP {status}: {message}")
            }
            Self::Auth {
                server,
                status,
                message,
            } => {
                write!(
                    f,
                    "{server} refused the credentials (HTTP {status}): {message}"
                )
            }
            Self::StreamCut {
                server,
                chunks,
                detail,
                ..
            } => {
                write!(
                    f,
                    "{server} cut the stream after {}: {detail}",
                    plural(*chunks, "chunk")
                )
            }
            Self::Remote {
                server,
                kind,
                message,
                ..
            } => match kind {
                Some(kind) => write!(f, "{server} reported an error ({kind}): {message}"),
                None => write!(f, "{server} reported an error: {message}"),
            },
            Self::Protocol { server, detail } => {
                write!(
                    f,
                    "{server} sent a response that could not be understood: {detail}"
                )
            }
            Self::Cancelled { server } => write!(f, "the call to {server} was cancelled"),
            Self::Config { detail } => write!(f, "model configuration: {detail}"),
            Self::Local { detail, .. } => write!(f, "built-in model: {detail}"),
        }
    }
}

impl LlmError {
    /// A stable machine-readable code, e.g. `llm_timeout`, `llm_rate_limited`.
    pub fn code(&self) -> TurnErrorCode {
        match self {
            Self::Connect { .. } => TurnErrorCode::LlmConnect,
            Self::Timeout { .. } => TurnErrorCode::LlmTimeout,
            Self::Status { status: 429, .. } => TurnErrorCode::LlmRateLimited,
            Self::Status { status: 404, .. } => TurnErrorCode::LlmModelNotFound,
            Self::Status { .. } => TurnErrorCode::LlmStatus,
            Self::Auth { .. } => TurnErrorCode::LlmAuth,
            Self::StreamCut { .. } => TurnErrorCode::LlmStreamCut,
            Self::Remote { .. } => TurnErrorCode::LlmServerError,
            Self::Protocol { .. } => TurnErrorCode::LlmProtocol,
            Self::Cancelled { .. } => TurnErrorCode::LlmCancelled,
            Self::Config { .. } => TurnErrorCode::LlmConfig,
            Self::Local { .. } => TurnErrorCode::LlmLocal,
        }
    }

    /// Whether the same request to the same model may succeed if sent again: connect errors,
    /// 408/429/5xx overload statuses (500, 502, 503, 504, 529), server-reported errors, and
    /// timeouts or stream cuts that happened before any output reached the caller.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Connect { .. } => true,
            Self::Timeout { after_output, .. } | Self::StreamCut { after_output, .. } => {
                !after_output
            }
            Self::Status { status, .. } => {
                matches!(status, 408 | 429 | 500 | 502 | 503 | 504 | 529)
            }
            Self::Remote {
                kind, after_output, ..
            } => {
                let permanent = kind.as_deref().is_some_and(|k| {
                    [
                        "invalid_request",
                        "authentication",
                        "permission",
                        "not_found",
                    ]
                    .iter()
                    .any(|p| k.contains(p))
                });
                !after_output && !permanent
            }
            Self::Auth { .. }
            | Self::Protocol { .. }
            | Self::Cancelled { .. }
            | Self::Config { .. }
            | Self::Local { .. } => false,
        }
    }

    /// Whether the next fallback model should be tried after this error: a retryable error, or
    /// the server saying the model does not exist (HTTP 404).
    pub fn warrants_fallback(&self) -> bool {
        self.is_retryable() || matches!(self, Self::Status { status: 404, .. })
    }

    /// The delay the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether output had already reached the caller when this error happened.
    pub fn after_output(&self) -> bool {
        match self {
            Self::Timeout { after_output, .. }
            | Self::StreamCut { after_output, .. }
            | Self::Remote { after_output, .. } => *after_output,
            _ => false,
        }
    }

    /// The server and model this error is about (`None` for configuration errors).
    pub fn server(&self) -> Option<&ServerRef> {
        match self {
            Self::Connect { server, .. }
            | Self::Timeout { server, .. }
            | Self::Status { server, .. }
            | Self::Auth { server, .. }
            | Self::StreamCut { server, .. }
            | Self::Remote { server, .. }
            | Self::Protocol { server, .. }
            | Self::Local { server, .. }
            | Self::Cancelled { server } => Some(server),
            Self::Config { .. } => None,
        }
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(crate) use echo_core::text::one_line;

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> ServerRef {
        ServerRef {
            host: "127.0.0.1:4000".into(),
            model: "gpt-x".into(),
        }
    }

    fn status(code: u16) -> LlmError {
        LlmError::Status {
            server: server(),
            status: code,
            message: "m".into(),
            retry_after: None,
        }
    }

    fn cut(after_output: bool) -> LlmError {
        LlmError::StreamCut {
            server: server(),
            chunks: 2,
            detail: "connection closed before [DONE]".into(),
            after_output,
        }
    }

    fn timeout(phase: TimeoutPhase, after_output: bool) -> LlmError {
        LlmError::Timeout {
            server: server(),
            phase,
            limit: Duration::from_millis(500),
            chunks: 0,
            after_output,
        }
    }

    fn remote(kind: Option<&str>) -> LlmError {
        LlmError::Remote {
            server: server(),
            kind: kind.map(String::from),
            message: "x".into(),
            after_output: false,
        }
    }

    fn check(err: LlmError, retryable: bool, fallback: bool, code: &str) {
        assert_eq!(err.is_retryable(), retryable, "is_retryable of {err}");
        assert_eq!(
            err.warrants_fallback(),
            fallback,
            "warrants_fallback of {err}"
        );
        assert_eq!(err.code().as_str(), code, "code of {err}");
    }

    #[test]
    fn retry_and_fallback_table() {
        check(
            LlmError::Connect {
                server: server(),
                detail: "refused".into(),
            },
            true,
            true,
            "llm_connect",
        );
        check(
            timeout(TimeoutPhase::Connect, false),
            true,
            true,
            "llm_timeout",
        );
        check(
            timeout(TimeoutPhase::FirstByte, false),
            true,
            true,
            "llm_timeout",
        );
        check(
            timeout(TimeoutPhase::Idle, false),
            true,
            true,
            "llm_timeout",
        );
        check(
            timeout(TimeoutPhase::Idle, true),
            false,
            false,
            "llm_timeout",
        );
        check(status(429), true, true, "llm_rate_limited");
        for code in [500, 502, 503, 504, 529, 408] {
            check(status(code), true, true, "llm_status");
        }
        check(status(404), false, true, "llm_model_not_found");
        for code in [400, 422, 413] {
            check(status(code), false, false, "llm_status");
        }
        for code in [401, 403] {
            check(
                LlmError::Auth {
                    server: server(),
                    status: code,
                    message: "no".into(),
                },
                false,
                false,
                "llm_auth",
            );
        }
        check(cut(false), true, true, "llm_stream_cut");
        check(cut(true), false, false, "llm_stream_cut");
        check(
            remote(Some("overloaded_error")),
            true,
            true,
            "llm_server_error",
        );
        check(remote(None), true, true, "llm_server_error");
        check(
            remote(Some("invalid_request_error")),
            false,
            false,
            "llm_server_error",
        );
        check(
            LlmError::Protocol {
                server: server(),
                detail: "x".into(),
            },
            false,
            false,
            "llm_protocol",
        );
        check(
            LlmError::Cancelled { server: server() },
            false,
            false,
            "llm_cancelled",
        );
        check(
            LlmError::Config { detail: "x".into() },
            false,
            false,
            "llm_config",
        );
    }

    #[test]
    fn messages_are_one_line_and_name_the_server() {
        assert_eq!(
            cut(true).to_string(),
            "model server 127.0.0.1:4000 (model gpt-x) cut the stream after 2 chunks: connection closed before [DONE]"
        );
        assert_eq!(
            timeout(TimeoutPhase::FirstByte, false).to_string(),
            "model server 127.0.0.1:4000 (model gpt-x) did not start answering within 0.5 s (first-byte timeout)"
        );
        let idle = LlmError::Timeout {
            server: server(),
            phase: TimeoutPhase::Idle,
            limit: Duration::from_secs(60),
            chunks: 1,
            after_output: true,
        };
        assert_eq!(
            idle.to_string(),
            "model server 127.0.0.1:4000 (model gpt-x) went silent for 60 s after 1 chunk (idle timeout)"
        );
        assert_eq!(
            status(503).to_string(),
            "model server 127.0.0.1:4000 (model gpt-x) answered HTTP 503: m"
        );
    }
}
