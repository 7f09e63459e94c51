//! The OpenAI chat-completions wire format: the non-streamed `chat.completion` body and
//! the `chat.completion.chunk` SSE stream ending in `data: [DONE]`.

use serde_json::{Map, Value, json};

use super::answer::{Answer, Usage};
use super::protocol::ModelRequest;

/// Reads `stream_options.include_usage` (absent means false).
pub fn include_usage(body: &Value) -> Result<bool, String> {
    match body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
    {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(include)) => Ok(*include),
        Some(_) => Err("`stream_options.include_usage` must be a boolean".to_owned()),
    }
}

fn finish_reason(answer: &Answer) -> String {
    match &answer.finish_reason {
        Some(reason) => reason.clone(),
        None if answer.tool_calls.is_empty() => "stop".to_owned(),
        None => "tool_calls".to_owned(),
    }
}

fn usage(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    })
}

/// The non-streamed `chat.completion` body.
pub fn body(request: &ModelRequest, answer: &Answer, id: &str) -> Value {
    let mut message = Map::new();
    message.insert("role".to_owned(), json!("assistant"));
    let content = if answer.text.is_empty() && !answer.tool_calls.is_empty() {
        Value::Null
    } else {
        json!(answer.text)
    };
    message.insert("content".to_owned(), content);
    if !answer.reasoning.is_empty() {
        message.insert("reasoning_content".to_owned(), json!(answer.reasoning));
    }
    if !answer.tool_calls.is_empty() {
        let calls: Vec<Value> = answer
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
        message.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    json!({
        "id": id,
        "object": "chat.completion",
        "created": super::unix_time(),
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(answer)}],
        "usage": usage(answer.usage),
    })
}

/// The SSE stream: one chunk per piece (the first with `role`), a chunk with the finish
/// reason, a usage chunk with empty `choices` when asked for, then `[DONE]`.
pub fn events(request: &ModelRequest, answer: &Answer, id: &str) -> Vec<String> {
    let mut deltas: Vec<Value> = Vec::new();
    for piece in answer.pieces(&answer.reasoning) {
        deltas.push(json!({"reasoning_content": piece}));
    }
    for piece in answer.pieces(&answer.text) {
        deltas.push(json!({"content": piece}));
    }
    for (index, call) in answer.tool_calls.iter().enumerate() {
        deltas.push(json!({"tool_calls": [{
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]}));
        for piece in answer.pieces(&call.arguments) {
            deltas
                .push(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}));
        }
    }
    if deltas.is_empty() {
        deltas.push(json!({"content": ""}));
    }
    if let Some(first) = deltas.first_mut().and_then(Value::as_object_mut) {
        first.insert("role".to_owned(), json!("assistant"));
    }

    let created = super::unix_time();
    let chunk = |choices: Value| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": request.model,
            "choices": choices,
        })
    };
    let mut chunks: Vec<Value> = deltas
        .into_iter()
        .map(|delta| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}])))
        .collect();
    let mut last =
        chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish_reason(answer)}]));
    if request.include_usage {
        chunks.push(last);
        let mut usage_chunk = chunk(json!([]));
        usage_chunk["usage"] = usage(answer.usage);
        chunks.push(usage_chunk);
    } else {
        last["usage"] = usage(answer.usage);
        chunks.push(last);
    }
    chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .chain(["data: [DONE]\n\n".to_owned()])
        .collect()
}
