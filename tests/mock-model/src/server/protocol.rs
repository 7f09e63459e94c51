//! The two wire protocols the mock speaks, as one closed enum: request checking, error
//! bodies, and rendering an [`Answer`] as one JSON body or as SSE events.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::answer::Answer;
use super::{anthropic, openai};

/// A model API the mock serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `POST /v1/chat/completions`.
    OpenAi,
    /// `POST /v1/messages`.
    Anthropic,
}

/// What the mock needs from a model request, whatever the protocol.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub model: String,
    pub messages: Vec<Value>,
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`; always false for Anthropic.
    pub include_usage: bool,
    /// Names of the tools offered (OpenAI `tools[].function.name`, Anthropic `tools[].name`).
    pub tools: Vec<String>,
}

impl Protocol {
    /// The request path, as recorded in `/_mock/requests`.
    pub fn path(self) -> &'static str {
        match self {
            Protocol::OpenAi => "/v1/chat/completions",
            Protocol::Anthropic => "/v1/messages",
        }
    }

    /// Checks a request body the way the real API would reject it, loosely.
    pub fn parse_request(self, body: &Value) -> Result<ModelRequest, String> {
        let Some(object) = body.as_object() else {
            return Err("the request body must be a JSON object".to_owned());
        };
        let model = match object.get("model") {
            Some(Value::String(model)) if !model.is_empty() => model.clone(),
            _ => return Err("`model` must be a non-empty string".to_owned()),
        };
        let Some(Value::Array(messages)) = object.get("messages") else {
            return Err("`messages` must be an array".to_owned());
        };
        let stream = match object.get("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(stream)) => *stream,
            Some(_) => return Err("`stream` must be a boolean".to_owned()),
        };
        let include_usage = match self {
            Protocol::OpenAi => openai::include_usage(body)?,
            Protocol::Anthropic => {
                anthropic::check_request(body)?;
                false
            }
        };
        let tools = object
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| {
                        t.pointer("/function/name")
                            .or_else(|| t.get("name"))
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(ModelRequest {
            model,
            messages: messages.clone(),
            stream,
            include_usage,
            tools,
        })
    }

    /// An error reply in this protocol's format, with `Retry-After` when given.
    pub fn error_response(
        self,
        status: StatusCode,
        message: &str,
        retry_after: Option<u64>,
    ) -> Response {
        let kind = error_type(status);
        let body = match self {
            Protocol::OpenAi => json!({
                "error": {"message": message, "type": kind, "param": null, "code": null}
            }),
            Protocol::Anthropic => json!({
                "type": "error",
                "error": {"type": kind, "message": message}
            }),
        };
        let mut response = (status, Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }

    /// The prefix of response ids (`chatcmpl-mock-1`, `msg_mock_1`).
    pub fn id_prefix(self) -> &'static str {
        match self {
            Protocol::OpenAi => "chatcmpl-mock-",
            Protocol::Anthropic => "msg_mock_",
        }
    }

    /// The whole answer as one JSON body.
    pub fn body(self, request: &ModelRequest, answer: &Answer, id: &str) -> Value {
        match self {
            Protocol::OpenAi => openai::body(request, answer, id),
            Protocol::Anthropic => anthropic::body(request, answer, id),
        }
    }

    /// The answer as SSE events, each one complete text ending in a blank line.
    pub fn events(self, request: &ModelRequest, answer: &Answer, id: &str) -> Vec<String> {
        match self {
            Protocol::OpenAi => openai::events(request, answer, id),
            Protocol::Anthropic => anthropic::events(request, answer, id),
        }
    }
}

/// The error `type` both APIs use for a status.
fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        503 | 529 => "overloaded_error",
        _ => "api_error",
    }
}
