//! The Anthropic messages wire format: the non-streamed `message` body and the named SSE
//! events (`message_start`, `content_block_*`, `message_delta`, `message_stop`).

use serde_json::{Value, json};

use super::answer::Answer;
use super::protocol::ModelRequest;

/// The `signature` sent with every thinking block.
const SIGNATURE: &str = "mock-signature";

/// The Anthropic-only request check: `max_tokens` is required, as in the real API.
pub fn check_request(body: &Value) -> Result<(), String> {
    match body.get("max_tokens") {
        Some(Value::Number(n)) if n.is_u64() => Ok(()),
        _ => Err("`max_tokens` must be a non-negative integer".to_owned()),
    }
}

fn stop_reason(answer: &Answer) -> String {
    match &answer.finish_reason {
        Some(reason) => reason.clone(),
        None if answer.tool_calls.is_empty() => "end_turn".to_owned(),
        None => "tool_use".to_owned(),
    }
}

/// Whether the answer has a text block: when it has text, or nothing but text to give.
fn has_text_block(answer: &Answer) -> bool {
    !answer.text.is_empty() || answer.tool_calls.is_empty()
}

/// The non-streamed `message` body. A tool call's `input` is its arguments parsed as
/// JSON, or the raw string when they do not parse.
pub fn body(request: &ModelRequest, answer: &Answer, id: &str) -> Value {
    let mut content = Vec::new();
    if !answer.reasoning.is_empty() {
        content.push(
            json!({"type": "thinking", "thinking": answer.reasoning, "signature": SIGNATURE}),
        );
    }
    if has_text_block(answer) {
        content.push(json!({"type": "text", "text": answer.text}));
    }
    for call in &answer.tool_calls {
        let input = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": content,
        "stop_reason": stop_reason(answer),
        "stop_sequence": null,
        "usage": {
            "input_tokens": answer.usage.input_tokens,
            "output_tokens": answer.usage.output_tokens,
        },
    })
}

/// Collects SSE events, numbering content blocks as they start.
struct Events {
    out: Vec<String>,
    next_block: usize,
}

impl Events {
    fn push(&mut self, data: Value) {
        let name = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        self.out.push(format!("event: {name}\ndata: {data}\n\n"));
    }

    /// One content block: its start, one delta per item of `deltas`, its stop.
    fn block(&mut self, start: Value, deltas: impl IntoIterator<Item = Value>) {
        let index = self.next_block;
        self.next_block += 1;
        self.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            self.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        self.push(json!({"type": "content_block_stop", "index": index}));
    }
}

/// The SSE stream: `message_start` with the input tokens, a thinking block, a text block,
/// one `tool_use` block per call, `message_delta` with the stop reason and output tokens,
/// then `message_stop`.
pub fn events(request: &ModelRequest, answer: &Answer, id: &str) -> Vec<String> {
    let mut events = Events {
        out: Vec::new(),
        next_block: 0,
    };
    events.push(json!({
        "type": "message_start",
        "message": {
            "id": id,
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": answer.usage.input_tokens, "output_tokens": 0},
        },
    }));
    if !answer.reasoning.is_empty() {
        let thinking = answer.pieces(&answer.reasoning).into_iter();
        let deltas = thinking
            .map(|piece| json!({"type": "thinking_delta", "thinking": piece}))
            .chain([json!({"type": "signature_delta", "signature": SIGNATURE})]);
        events.block(json!({"type": "thinking", "thinking": ""}), deltas);
    }
    if has_text_block(answer) {
        let deltas = answer.pieces(&answer.text).into_iter();
        events.block(
            json!({"type": "text", "text": ""}),
            deltas.map(|piece| json!({"type": "text_delta", "text": piece})),
        );
    }
    for call in &answer.tool_calls {
        let deltas = answer.pieces(&call.arguments).into_iter();
        events.block(
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
            deltas.map(|piece| json!({"type": "input_json_delta", "partial_json": piece})),
        );
    }
    events.push(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(answer), "stop_sequence": null},
        "usage": {"output_tokens": answer.usage.output_tokens},
    }));
    events.push(json!({"type": "message_stop"}));
    events.out
}
