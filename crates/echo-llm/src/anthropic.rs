//! Anthropic messages: `POST {base_url}/v1/messages` with `x-api-key` and
//! `anthropic-version: 2023-06-01`, answered by named SSE events (`message_start`,
//! `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`).
//!
//! Mapping a conversation: leading system messages become the top-level `system`; assistant
//! tool calls become `tool_use` blocks; tool results become `tool_result` blocks in a user
//! message; consecutive messages of one role are merged so that roles alternate.

use crate::assemble::Delta;
use crate::provider::{DecodeError, Provider, StreamDecoder, error_parts, json_f32};
use crate::types::{ChatRequest, ToolChoice};
use echo_core::{Message, Role};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The `anthropic-version` header value.
const API_VERSION: &str = "2023-06-01";

/// `max_tokens` sent when the caller gave none (Anthropic requires one).
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The Anthropic protocol at one base URL.
pub(crate) struct Anthropic {
    url: String,
    api_key: Option<String>,
}

impl Anthropic {
    pub fn new(base_url: &str, api_key: Option<String>) -> Self {
        Self {
            url: format!("{base_url}/v1/messages"),
            api_key,
        }
    }
}

impl Provider for Anthropic {
    fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let request = request.header("anthropic-version", API_VERSION);
        match &self.api_key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    fn body(&self, model: &str, req: &ChatRequest) -> Value {
        request_body(model, req)
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(AnthropicDecoder::default())
    }

    fn decode_whole(&self, body: &[u8], out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        decode_whole(body, out)
    }
}

/// The JSON body of a streaming messages request.
pub(crate) fn request_body(model: &str, req: &ChatRequest) -> Value {
    let mut system = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut leading = true;
    for m in &req.messages {
        if m.role == Role::System && leading {
            if !m.content.is_empty() {
                system.push(m.content.as_str());
            }
            continue;
        }
        leading = false;
        let (role, blocks) = blocks(m);
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages = turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let max_tokens = if req.max_tokens == 0 {
        DEFAULT_MAX_TOKENS
    } else {
        req.max_tokens
    };
    body.insert("max_tokens".into(), json!(max_tokens));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json_f32(t));
    }
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let ToolChoice::Required(name) = &req.tool_choice {
        body.insert(
            "tool_choice".into(),
            json!({ "type": "tool", "name": name }),
        );
    }
    Value::Object(body)
}

/// The role and content blocks of one message. A system message after the conversation has
/// started is passed as user text, where it was said.
fn blocks(m: &Message) -> (&'static str, Vec<Value>) {
    let text = |t: &str| (!t.is_empty()).then(|| json!({ "type": "text", "text": t }));
    match m.role {
        Role::System | Role::User => ("user", text(&m.content).into_iter().collect()),
        Role::Assistant => {
            let mut blocks: Vec<Value> = text(&m.content).into_iter().collect();
            for call in &m.tool_calls {
                // `input` must be an object; arguments that are not one are sent as `{}`, so the
                // conversation goes on and the tool result says what was wrong.
                let input = match serde_json::from_str::<Value>(&call.arguments) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => json!({}),
                };
                blocks.push(
                    json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input }),
                );
            }
            ("assistant", blocks)
        }
        Role::Tool => {
            let mut block = Map::new();
            block.insert("type".into(), json!("tool_result"));
            block.insert(
                "tool_use_id".into(),
                json!(m.tool_call_id.as_deref().unwrap_or_default()),
            );
            if !m.content.is_empty() {
                block.insert("content".into(), json!(m.content));
            }
            ("user", vec![Value::Object(block)])
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Block {
    Text,
    Thinking,
    Tool { slot: usize, got_args: bool },
    Other,
}

/// Decoder for one messages stream.
#[derive(Default)]
pub(crate) struct AnthropicDecoder {
    blocks: HashMap<u64, Block>,
    next_slot: usize,
}

impl StreamDecoder for AnthropicDecoder {
    fn decode(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<bool, DecodeError> {
        let v: Value = serde_json::from_str(data)
            .map_err(|e| DecodeError::Malformed(format!("`{event}` event is not JSON ({e})")))?;
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(event);
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    out.push(usage(u));
                }
            }
            "content_block_start" => {
                let index = block_index(&v)?;
                let block = v.get("content_block").unwrap_or(&Value::Null);
                self.start_block(index, block, out);
            }
            "content_block_delta" => {
                let index = block_index(&v)?;
                let delta = v.get("delta").unwrap_or(&Value::Null);
                self.block_delta(index, delta, out);
            }
            "content_block_stop" => {
                let index = block_index(&v)?;
                if let Some(Block::Tool {
                    slot,
                    got_args: false,
                }) = self.blocks.get(&index).copied()
                {
                    // A tool called without arguments still gets an object.
                    out.push(Delta::Tool {
                        slot,
                        id: None,
                        name: None,
                        args: "{}".into(),
                    });
                }
                self.blocks.remove(&index);
            }
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    out.push(Delta::Finish(reason.to_string()));
                }
                if let Some(u) = v.get("usage") {
                    out.push(usage(u));
                }
            }
            "message_stop" => return Ok(true),
            "error" => {
                let (kind, message) = error_parts(&v).unwrap_or((None, data.to_string()));
                return Err(DecodeError::Remote { kind, message });
            }
            _ => {} // ping and event types added later
        }
        Ok(false)
    }

    fn end_marker(&self) -> &'static str {
        "message_stop"
    }
}

impl AnthropicDecoder {
    fn start_block(&mut self, index: u64, block: &Value, out: &mut Vec<Delta>) {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).map(String::from);
        let kind = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                out.push(Delta::Text(str_of("text").unwrap_or_default()));
                Block::Text
            }
            Some("thinking") => {
                out.push(Delta::Reasoning(str_of("thinking").unwrap_or_default()));
                Block::Thinking
            }
            Some("tool_use") => {
                let slot = self.next_slot;
                self.next_slot += 1;
                // Streams start with `input: {}` and send the arguments as deltas; an input
                // given up front is the whole of the arguments.
                let args = match block.get("input") {
                    Some(Value::Object(o)) if !o.is_empty() => Value::Object(o.clone()).to_string(),
                    _ => String::new(),
                };
                let got_args = !args.is_empty();
                out.push(Delta::Tool {
                    slot,
                    id: str_of("id"),
                    name: str_of("name"),
                    args,
                });
                Block::Tool { slot, got_args }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, kind);
    }

    fn block_delta(&mut self, index: u64, delta: &Value, out: &mut Vec<Delta>) {
        let str_of = |key: &str| {
            delta
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        match (
            self.blocks.get_mut(&index),
            delta.get("type").and_then(Value::as_str),
        ) {
            (_, Some("text_delta")) => out.push(Delta::Text(str_of("text"))),
            (_, Some("thinking_delta")) => out.push(Delta::Reasoning(str_of("thinking"))),
            (Some(Block::Tool { slot, got_args }), Some("input_json_delta")) => {
                let args = str_of("partial_json");
                *got_args |= !args.is_empty();
                out.push(Delta::Tool {
                    slot: *slot,
                    id: None,
                    name: None,
                    args,
                });
            }
            _ => {} // signature deltas, deltas for unknown blocks
        }
    }
}

fn block_index(v: &Value) -> Result<u64, DecodeError> {
    v.get("index")
        .and_then(Value::as_u64)
        .ok_or_else(|| DecodeError::Malformed("content block event without `index`".into()))
}

/// Usage counts; input tokens include cache writes and reads, which Anthropic counts apart.
fn usage(u: &Value) -> Delta {
    let count = |key: &str| u.get(key).and_then(Value::as_u64);
    let parts = [
        count("input_tokens"),
        count("cache_creation_input_tokens"),
        count("cache_read_input_tokens"),
    ];
    let input = parts
        .iter()
        .any(Option::is_some)
        .then(|| parts.iter().flatten().sum());
    Delta::Usage {
        input,
        output: count("output_tokens"),
        cached: None,
    }
}

/// Decodes a non-streamed messages body.
pub(crate) fn decode_whole(body: &[u8], out: &mut Vec<Delta>) -> Result<(), DecodeError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| DecodeError::Malformed(format!("body is not messages JSON ({e})")))?;
    if v.get("type").and_then(Value::as_str) == Some("error") || v.get("error").is_some() {
        let (kind, message) = error_parts(&v).unwrap_or((None, v.to_string()));
        return Err(DecodeError::Remote { kind, message });
    }
    let Some(content) = v.get("content").and_then(Value::as_array) else {
        return Err(DecodeError::Malformed("body has no `content` array".into()));
    };
    let mut slot = 0;
    for block in content {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).map(String::from);
        match block.get("type").and_then(Value::as_str) {
            Some("text") => out.push(Delta::Text(str_of("text").unwrap_or_default())),
            Some("thinking") => out.push(Delta::Reasoning(str_of("thinking").unwrap_or_default())),
            Some("tool_use") => {
                let args = block
                    .get("input")
                    .map_or_else(|| "{}".to_string(), Value::to_string);
                out.push(Delta::Tool {
                    slot,
                    id: str_of("id"),
                    name: str_of("name"),
                    args,
                });
                slot += 1;
            }
            _ => {}
        }
    }
    if let Some(reason) = v.get("stop_reason").and_then(Value::as_str) {
        out.push(Delta::Finish(reason.to_string()));
    }
    if let Some(u) = v.get("usage") {
        out.push(usage(u));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::tests::run;
    use crate::types::ChatEvent;
    use echo_core::{ToolCall, ToolSpec, Usage};

    /// Decodes literal SSE text (`event:`/`data:` blocks) into deltas.
    fn decode_sse(text: &str) -> (Vec<Delta>, bool) {
        let mut dec = AnthropicDecoder::default();
        let mut out = Vec::new();
        for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
            let event = block
                .lines()
                .find_map(|l| l.strip_prefix("event:"))
                .map_or("message", str::trim);
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if dec
                .decode(event, &data.join("\n"), &mut out)
                .expect("event decodes")
            {
                return (out, true);
            }
        }
        (out, false)
    }

    #[test]
    fn text_thinking_and_tool_use_stream() {
        let sse = r#"
event: message_start
data: {"type":"message_start","message":{"id":"m1","role":"assistant","content":[],"usage":{"input_tokens":25,"cache_read_input_tokens":5,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: ping
data: {"type":"ping"}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me "}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"look."}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: content_block_start
data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"now","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":3}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}

event: message_stop
data: {"type":"message_stop"}
"#;
        let (deltas, done) = decode_sse(sse);
        assert!(done);
        let (events, out) = run(deltas);
        assert_eq!(out.text, "Let me look.");
        assert_eq!(out.reasoning, "hmm");
        assert_eq!(
            out.tool_calls,
            vec![
                ToolCall {
                    id: "toolu_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path": "a.txt"}"#.into()
                },
                ToolCall {
                    id: "toolu_2".into(),
                    name: "now".into(),
                    arguments: "{}".into()
                },
            ]
        );
        assert_eq!(
            out.usage,
            Usage {
                input_tokens: 30,
                output_tokens: 42,
                cached_input_tokens: 0,
            }
        );
        assert_eq!(out.finish_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            events,
            vec![
                ChatEvent::ReasoningDelta("hmm".into()),
                ChatEvent::TextDelta("Let me ".into()),
                ChatEvent::TextDelta("look.".into()),
                ChatEvent::ToolCallStarted {
                    index: 0,
                    id: "toolu_1".into(),
                    name: "read_file".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "toolu_1".into(),
                    delta: "{\"path\": ".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "toolu_1".into(),
                    delta: "\"a.txt\"}".into()
                },
                ChatEvent::ToolCallStarted {
                    index: 1,
                    id: "toolu_2".into(),
                    name: "now".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 1,
                    id: "toolu_2".into(),
                    delta: "{}".into()
                },
            ]
        );
    }

    #[test]
    fn error_events_and_bad_json_are_errors() {
        let mut dec = AnthropicDecoder::default();
        let mut out = Vec::new();
        let err = dec.decode(
            "error",
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            &mut out,
        );
        assert_eq!(
            err,
            Err(DecodeError::Remote {
                kind: Some("overloaded_error".into()),
                message: "Overloaded".into()
            })
        );
        assert!(matches!(
            dec.decode("message_start", "nope", &mut out),
            Err(DecodeError::Malformed(_))
        ));
        assert!(matches!(
            dec.decode(
                "content_block_delta",
                r#"{"type":"content_block_delta"}"#,
                &mut out
            ),
            Err(DecodeError::Malformed(_))
        ));
        // Deltas for blocks never started are ignored rather than fatal.
        assert_eq!(
            dec.decode(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":9,"delta":{"type":"input_json_delta","partial_json":"x"}}"#,
                &mut out
            ),
            Ok(false)
        );
    }

    #[test]
    fn whole_body() {
        let body = br#"{"type":"message","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"hi"},
            {"type":"tool_use","id":"toolu_1","name":"x","input":{"a":1}}],"stop_reason":"tool_use",
            "usage":{"input_tokens":3,"output_tokens":4}}"#;
        let mut deltas = Vec::new();
        decode_whole(body, &mut deltas).expect("decodes");
        let (_, out) = run(deltas);
        assert_eq!(out.text, "hi");
        assert_eq!(out.reasoning, "t");
        assert_eq!(
            out.tool_calls,
            vec![ToolCall {
                id: "toolu_1".into(),
                name: "x".into(),
                arguments: "{\"a\":1}".into()
            }]
        );
        assert_eq!(
            out.usage,
            Usage {
                input_tokens: 3,
                output_tokens: 4,
                cached_input_tokens: 0,
            }
        );
        let err = decode_whole(
            br#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#,
            &mut Vec::new(),
        );
        assert_eq!(
            err,
            Err(DecodeError::Remote {
                kind: Some("api_error".into()),
                message: "boom".into()
            })
        );
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    fn assistant_calling(text: &str, calls: &[ToolCall]) -> Message {
        let mut m = Message::assistant(text);
        m.tool_calls = calls.to_vec();
        m
    }

    #[test]
    fn request_mapping_extracts_system_merges_tool_results_and_alternates_roles() {
        let a = call("toolu_a", "read", r#"{"path":"x"}"#);
        let b = call("toolu_b", "bad", "{not json");
        let req = ChatRequest {
            messages: vec![
                Message::system("You are Echo."),
                Message::system("Be brief."),
                Message::user("hi"),
                Message::user("again"),
                assistant_calling("Looking.", &[a.clone(), b.clone()]),
                Message::tool_result(&a, "contents"),
                Message::tool_result(&b, ""),
                Message::user("thanks"),
                Message::system("late note"),
                Message::assistant("done"),
                Message::assistant(""),
            ],
            tools: vec![ToolSpec {
                name: "read".into(),
                description: "Reads".into(),
                parameters: json!({"type":"object"}),
            }],
            max_tokens: 0,
            temperature: Some(0.7),
            tool_choice: ToolChoice::Required("read".into()),
        };
        let body = request_body("claude-x", &req);
        assert_eq!(
            body,
            json!({
                "model": "claude-x",
                "max_tokens": 4096,
                "system": "You are Echo.\n\nBe brief.",
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "hi"},
                        {"type": "text", "text": "again"},
                    ]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "x"}},
                        {"type": "tool_use", "id": "toolu_b", "name": "bad", "input": {}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "contents"},
                        {"type": "tool_result", "tool_use_id": "toolu_b"},
                        {"type": "text", "text": "thanks"},
                        {"type": "text", "text": "late note"},
                    ]},
                    {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
                ],
                "stream": true,
                "temperature": 0.7,
                "tools": [{"name": "read", "description": "Reads", "input_schema": {"type": "object"}}],
                "tool_choice": {"type": "tool", "name": "read"},
            })
        );
    }

    #[test]
    fn request_without_system_or_tools_sends_neither() {
        let req = ChatRequest {
            messages: vec![Message::user("hi")],
            tools: Vec::new(),
            max_tokens: 50,
            temperature: None,
            tool_choice: Default::default(),
        };
        let body = request_body("c", &req);
        assert!(body.get("system").is_none());
        assert!(body.get("tools").is_none());
        assert!(body.get("temperature").is_none());
        assert_eq!(body["max_tokens"], json!(50));
    }
}
