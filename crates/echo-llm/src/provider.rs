//! The seam between the transport (HTTP, SSE, timeouts) and a wire protocol: what to send,
//! and how to read what comes back.

use crate::assemble::Delta;
use crate::types::ChatRequest;

/// A problem found while decoding a response.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DecodeError {
    /// The bytes are not what the protocol says they should be.
    Malformed(String),
    /// The server reported an error inside the response.
    Remote {
        kind: Option<String>,
        message: String,
    },
}

/// A wire protocol: OpenAI-compatible chat completions or Anthropic messages.
pub(crate) trait Provider: Send + Sync {
    /// The URL every chat request is posted to.
    fn url(&self) -> &str;
    /// Adds the protocol's headers (authentication, version) to a request.
    fn headers(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder;
    /// The JSON body of a streaming request for `model`.
    fn body(&self, model: &str, req: &ChatRequest) -> serde_json::Value;
    /// A fresh decoder for one streamed response.
    fn decoder(&self) -> Box<dyn StreamDecoder>;
    /// Decodes a whole non-streamed JSON response body.
    fn decode_whole(&self, body: &[u8], out: &mut Vec<Delta>) -> Result<(), DecodeError>;
}

/// Reads the SSE events of one streamed response.
pub(crate) trait StreamDecoder: Send {
    /// Decodes one event (`event` is the SSE event name, `message` when none was given).
    /// Returns `true` when this event ends the response.
    fn decode(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<bool, DecodeError>;
    /// The event that should end the stream, for messages about streams that stopped early.
    fn end_marker(&self) -> &'static str;
}

/// `f32` as the JSON number a person would write (0.2, not 0.20000000298023224).
pub(crate) fn json_f32(x: f32) -> serde_json::Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// A JSON value as raw argument text: strings as they are, anything else serialized.
pub(crate) fn raw_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The error type and message in an error body, in any of the shapes servers use:
/// `{"error": {"message", "type"}}` (OpenAI, Anthropic), `{"error": "text"}` (Ollama),
/// `{"message": …}` or `{"detail": …}`.
pub(crate) fn error_parts(value: &serde_json::Value) -> Option<(Option<String>, String)> {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    };
    match value.get("error") {
        Some(serde_json::Value::Object(e)) => {
            let kind = e.get("type").or_else(|| e.get("code")).and_then(text);
            let message = e
                .get("message")
                .and_then(text)
                .unwrap_or_else(|| value.to_string());
            Some((kind, message))
        }
        Some(serde_json::Value::String(s)) => Some((None, s.clone())),
        _ => value
            .get("message")
            .or_else(|| value.get("detail"))
            .and_then(text)
            .map(|m| (None, m)),
    }
}
