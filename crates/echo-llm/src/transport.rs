//! One HTTP attempt: send the request, enforce the connect / first-byte / idle limits, turn
//! error statuses into [`LlmError`]s, and feed the response (SSE stream or whole JSON body)
//! through the protocol's decoder into the [`Assembler`].

use crate::assemble::Assembler;
use crate::error::{LlmError, ServerRef, TimeoutPhase, one_line};
use crate::provider::{DecodeError, Provider, error_parts};
use crate::types::ChatRequest;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::time::Duration;
use tokio::time::Instant;

/// Largest error body read to find the server's message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Largest answer accepted, as one body or as the data of a stream's events: far beyond
/// any token limit (128k tokens of text are about half a megabyte), so only a server that
/// never stops reaches it, and the turn fails instead of storing it.
const MAX_WHOLE_BODY: usize = 8 * 1024 * 1024;
/// Longest server message kept in an error.
const MAX_MESSAGE_CHARS: usize = 300;

/// The three network time limits of one attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Limits {
    pub connect: Duration,
    pub first_byte: Duration,
    pub idle: Duration,
}

/// Why reading a body stopped early.
#[derive(Debug)]
enum ReadError {
    Timeout(TimeoutPhase),
    Body(String),
}

/// What is needed to make one attempt.
pub(crate) struct Exchange<'a> {
    pub http: &'a reqwest::Client,
    pub provider: &'a dyn Provider,
    pub limits: Limits,
    pub server: &'a ServerRef,
}

impl Exchange<'_> {
    /// Sends `req` and reads the whole answer into `asm`.
    pub async fn run(&self, req: &ChatRequest, asm: &mut Assembler<'_>) -> Result<(), LlmError> {
        let body = self.provider.body(&self.server.model, req);
        let request = self
            .provider
            .headers(self.http.post(self.provider.url()))
            .header(
                reqwest::header::ACCEPT,
                "text/event-stream, application/json",
            )
            .json(&body);
        let first_byte_deadline = Instant::now() + self.limits.first_byte;
        let response = match tokio::time::timeout_at(first_byte_deadline, request.send()).await {
            Err(_) => return Err(self.timeout(TimeoutPhase::FirstByte, 0, false)),
            Ok(Err(e)) => return Err(self.send_error(&e)),
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        tracing::debug!(status = status.as_u16(), "model server answered");
        if !status.is_success() {
            return Err(self.status_error(response).await);
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let mut body = timed_body(response, first_byte_deadline, self.limits.idle);
        let first = match body.next().await {
            None => Vec::new(),
            Some(Ok(bytes)) => bytes,
            Some(Err(e)) => return Err(self.read_error(e, 0, asm)),
        };
        let looks_json = first.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let whole =
            !content_type.contains("event-stream") && (content_type.contains("json") || looks_json);
        // What the body starts with, to name a reply that is no event stream at all (an
        // HTML error page from a proxy) instead of calling it a cut stream.
        let preview = String::from_utf8_lossy(&first[..first.len().min(120)]).into_owned();
        let body = futures::stream::iter([Ok(first)]).chain(body).boxed();
        if whole {
            self.read_whole(body, asm).await
        } else {
            self.read_sse(body, asm, &content_type, &preview).await
        }
    }

    async fn read_sse(
        &self,
        body: BoxStream<'static, Result<Vec<u8>, ReadError>>,
        asm: &mut Assembler<'_>,
        content_type: &str,
        preview: &str,
    ) -> Result<(), LlmError> {
        let mut events = body.eventsource();
        let mut decoder = self.provider.decoder();
        let mut deltas = Vec::new();
        let mut chunks = 0usize;
        let mut received = 0usize;
        while let Some(item) = events.next().await {
            let event = match item {
                Ok(event) => event,
                Err(EventStreamError::Transport(e)) => return Err(self.read_error(e, chunks, asm)),
                Err(EventStreamError::Utf8(e)) => {
                    return Err(self.protocol(format!("stream is not UTF-8 ({e})")));
                }
                Err(EventStreamError::Parser(e)) => {
                    return Err(self.protocol(format!("stream is not SSE ({e})")));
                }
            };
            chunks += 1;
            received += event.data.len();
            if received > MAX_WHOLE_BODY {
                return Err(self.protocol(format!(
                    "the answer grew past {} MB; it was stopped",
                    MAX_WHOLE_BODY / (1024 * 1024)
                )));
            }
            let result = decoder.decode(&event.event, &event.data, &mut deltas);
            for delta in deltas.drain(..) {
                asm.apply(delta);
            }
            match result {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => return Err(self.decode_error(e, asm)),
            }
        }
        if asm.finished() {
            // Some servers close right after the finish reason without the end marker; the
            // answer is complete, so accept it.
            tracing::debug!(chunks, "stream closed without {}", decoder.end_marker());
            return Ok(());
        }
        if chunks == 0 && !preview.trim().is_empty() {
            let kind = if content_type.is_empty() {
                "no content type"
            } else {
                content_type
            };
            return Err(self.protocol(format!(
                "answered with {kind} that is neither JSON nor an event stream: {preview}"
            )));
        }
        Err(LlmError::StreamCut {
            server: self.server.clone(),
            chunks,
            detail: format!("connection closed before {}", decoder.end_marker()),
            after_output: asm.delivered(),
        })
    }

    async fn read_whole(
        &self,
        mut body: BoxStream<'static, Result<Vec<u8>, ReadError>>,
        asm: &mut Assembler<'_>,
    ) -> Result<(), LlmError> {
        let mut buf = Vec::new();
        while let Some(item) = body.next().await {
            match item {
                Ok(bytes) => buf.extend_from_slice(&bytes),
                Err(e) => return Err(self.read_error(e, 0, asm)),
            }
            if buf.len() > MAX_WHOLE_BODY {
                return Err(
                    self.protocol(format!("answer body larger than {MAX_WHOLE_BODY} bytes"))
                );
            }
        }
        let mut deltas = Vec::new();
        let result = self.provider.decode_whole(&buf, &mut deltas);
        for delta in deltas {
            asm.apply(delta);
        }
        result.map_err(|e| self.decode_error(e, asm))
    }

    fn timeout(&self, phase: TimeoutPhase, chunks: usize, after_output: bool) -> LlmError {
        let limit = match phase {
            TimeoutPhase::Connect => self.limits.connect,
            TimeoutPhase::FirstByte => self.limits.first_byte,
            TimeoutPhase::Idle => self.limits.idle,
        };
        LlmError::Timeout {
            server: self.server.clone(),
            phase,
            limit,
            chunks,
            after_output,
        }
    }

    fn protocol(&self, detail: String) -> LlmError {
        LlmError::Protocol {
            server: self.server.clone(),
            detail: one_line(&detail, MAX_MESSAGE_CHARS),
        }
    }

    fn read_error(&self, e: ReadError, chunks: usize, asm: &Assembler<'_>) -> LlmError {
        match e {
            ReadError::Timeout(phase) => self.timeout(phase, chunks, asm.delivered()),
            ReadError::Body(detail) => LlmError::StreamCut {
                server: self.server.clone(),
                chunks,
                detail: format!(
                    "the connection broke ({})",
                    one_line(&detail, MAX_MESSAGE_CHARS)
                ),
                after_output: asm.delivered(),
            },
        }
    }

    fn decode_error(&self, e: DecodeError, asm: &Assembler<'_>) -> LlmError {
        match e {
            DecodeError::Malformed(detail) => self.protocol(detail),
            DecodeError::Remote { kind, message } => LlmError::Remote {
                server: self.server.clone(),
                kind,
                message: one_line(&message, MAX_MESSAGE_CHARS),
                after_output: asm.delivered(),
            },
        }
    }

    fn send_error(&self, e: &reqwest::Error) -> LlmError {
        let detail = one_line(&error_chain(e), MAX_MESSAGE_CHARS);
        if e.is_builder() {
            LlmError::Config {
                detail: format!("cannot build a request to {}: {detail}", self.server),
            }
        } else if e.is_timeout() {
            // No overall request timeout is set, so the only timer inside reqwest is connect.
            self.timeout(TimeoutPhase::Connect, 0, false)
        } else {
            LlmError::Connect {
                server: self.server.clone(),
                detail,
            }
        }
    }

    async fn status_error(&self, response: reqwest::Response) -> LlmError {
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let mut body = timed_body(
            response,
            Instant::now() + self.limits.idle,
            self.limits.idle,
        );
        let mut buf = Vec::new();
        while let Some(Ok(bytes)) = body.next().await {
            buf.extend_from_slice(&bytes);
            if buf.len() >= MAX_ERROR_BODY {
                break;
            }
        }
        let message = match serde_json::from_slice::<serde_json::Value>(&buf)
            .ok()
            .as_ref()
            .and_then(error_parts)
        {
            Some((_, message)) => message,
            None => String::from_utf8_lossy(&buf).into_owned(),
        };
        let mut message = one_line(&message, MAX_MESSAGE_CHARS);
        if message.is_empty() {
            message = status
                .canonical_reason()
                .unwrap_or("no message")
                .to_string();
        }
        let server = self.server.clone();
        match status.as_u16() {
            code @ (401 | 403) => LlmError::Auth {
                server,
                status: code,
                message,
            },
            code => LlmError::Status {
                server,
                status: code,
                message,
                retry_after,
            },
        }
    }
}

/// The response body as a stream of chunks that fails with [`ReadError::Timeout`] when the
/// first chunk does not arrive by `first_deadline` or a later one not within `idle`.
fn timed_body(
    response: reqwest::Response,
    first_deadline: Instant,
    idle: Duration,
) -> BoxStream<'static, Result<Vec<u8>, ReadError>> {
    struct State {
        bytes: BoxStream<'static, reqwest::Result<Vec<u8>>>,
        got_any: bool,
        over: bool,
    }
    let bytes = response
        .bytes_stream()
        .map(|r| r.map(|b| b.to_vec()))
        .boxed();
    let state = State {
        bytes,
        got_any: false,
        over: false,
    };
    futures::stream::unfold(state, move |mut st| async move {
        if st.over {
            return None;
        }
        let deadline = if st.got_any {
            Instant::now() + idle
        } else {
            first_deadline
        };
        match tokio::time::timeout_at(deadline, st.bytes.next()).await {
            Err(_) => {
                st.over = true;
                let phase = if st.got_any {
                    TimeoutPhase::Idle
                } else {
                    TimeoutPhase::FirstByte
                };
                Some((Err(ReadError::Timeout(phase)), st))
            }
            Ok(None) => None,
            Ok(Some(Ok(bytes))) => {
                st.got_any |= !bytes.is_empty();
                Some((Ok(bytes), st))
            }
            Ok(Some(Err(e))) => {
                st.over = true;
                Some((Err(ReadError::Body(error_chain(&e))), st))
            }
        }
    })
    .boxed()
}

/// An error and its causes, joined with `: ` (reqwest's own message alone says little).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// `Retry-After` as seconds (`"2"`, `"1.5"`) or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_values() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 0.25 "),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::Duration::seconds(30)).to_rfc2822();
        let wait = parse_retry_after(&later).unwrap_or_default();
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
    }
}
