//! OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, …):
//! `POST {base_url}/chat/completions` with `stream: true`, answered by `data: {chunk}` events
//! and `data: [DONE]`.
//!
//! Servers differ in small ways, all accepted here: `reasoning_content` or `reasoning` deltas,
//! tool-call deltas without `index` (matched by id, else to the latest call), arguments sent as
//! a JSON object instead of text, and a whole JSON body instead of a stream.

use crate::assemble::Delta;
use crate::provider::{DecodeError, Provider, StreamDecoder, error_parts, json_f32, raw_text};
use crate::types::{ChatRequest, ToolChoice};
use echo_core::{Message, Role};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The OpenAI-compatible protocol at one base URL.
pub(crate) struct OpenAi {
    url: String,
    api_key: Option<String>,
}

impl OpenAi {
    pub fn new(base_url: &str, api_key: Option<String>) -> Self {
        Self {
            url: format!("{base_url}/chat/completions"),
            api_key,
        }
    }
}

impl Provider for OpenAi {
    fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    fn body(&self, model: &str, req: &ChatRequest) -> Value {
        request_body(model, req)
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Box::new(OpenAiDecoder::default())
    }

    fn decode_whole(&self, body: &[u8], out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        decode_whole(body, out)
    }
}

/// The JSON body of a streaming chat-completions request.
pub(crate) fn request_body(model: &str, req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "messages".into(),
        Value::Array(req.messages.iter().map(message).collect()),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    if req.max_tokens > 0 {
        body.insert("max_tokens".into(), json!(req.max_tokens));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json_f32(t));
    }
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": { "name": t.name, "description": t.description, "parameters": t.parameters },
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let ToolChoice::Required(name) = &req.tool_choice {
        body.insert(
            "tool_choice".into(),
            json!({ "type": "function", "function": { "name": name } }),
        );
    }
    Value::Object(body)
}

fn message(m: &Message) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), json!(m.role.as_str()));
    match m.role {
        Role::System | Role::User => {
            out.insert("content".into(), json!(m.content));
        }
        Role::Assistant => {
            if m.content.is_empty() && !m.tool_calls.is_empty() {
                out.insert("content".into(), Value::Null);
            } else {
                out.insert("content".into(), json!(m.content));
            }
            if !m.tool_calls.is_empty() {
                let calls = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": { "name": c.name, "arguments": c.arguments },
                        })
                    })
                    .collect();
                out.insert("tool_calls".into(), Value::Array(calls));
            }
        }
        Role::Tool => {
            out.insert("content".into(), json!(m.content));
            out.insert(
                "tool_call_id".into(),
                json!(m.tool_call_id.as_deref().unwrap_or_default()),
            );
            if let Some(name) = &m.name {
                out.insert("name".into(), json!(name));
            }
        }
    }
    Value::Object(out)
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<ChoiceDelta>,
    /// Non-streamed bodies carry `message` instead of `delta`.
    #[serde(default)]
    message: Option<ChoiceDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceDelta {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolDelta>>,
}

#[derive(Deserialize)]
struct ToolDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

/// Maps the server's tool-call `index`/`id` pairs to dense slots.
#[derive(Default)]
struct ToolSlots {
    keys: Vec<(Option<u64>, Option<String>)>,
}

impl ToolSlots {
    /// The slot a fragment belongs to: the call with the same id; else the latest call with the
    /// same index (unless it has a different id: some servers reuse index 0 for every call);
    /// a fragment with neither index nor id continues the latest call.
    fn resolve(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let id = id.filter(|s| !s.is_empty());
        if let Some(id) = id
            && let Some(slot) = self.keys.iter().position(|(_, k)| k.as_deref() == Some(id))
        {
            return slot;
        }
        match index {
            Some(i) => {
                if let Some(slot) = self.keys.iter().rposition(|(k, _)| *k == Some(i)) {
                    // Two ids here always differ: equal ids were matched above.
                    let same = !(self.keys[slot].1.is_some() && id.is_some());
                    if same {
                        if let Some(id) = id {
                            self.keys[slot].1 = Some(id.to_string());
                        }
                        return slot;
                    }
                }
                self.push(Some(i), id)
            }
            None if id.is_some() => self.push(None, id),
            None => match self.keys.len() {
                0 => self.push(None, None),
                n => n - 1,
            },
        }
    }

    fn push(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        self.keys.push((index, id.map(String::from)));
        self.keys.len() - 1
    }
}

/// Decoder for one chat-completions stream.
#[derive(Default)]
pub(crate) struct OpenAiDecoder {
    slots: ToolSlots,
}

impl StreamDecoder for OpenAiDecoder {
    fn decode(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<Delta>,
    ) -> Result<bool, DecodeError> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        if event == "error" {
            let (kind, message) = serde_json::from_str::<Value>(data)
                .ok()
                .and_then(|v| error_parts(&v))
                .unwrap_or((None, data.to_string()));
            return Err(DecodeError::Remote { kind, message });
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            DecodeError::Malformed(format!("chunk is not chat-completion JSON ({e})"))
        })?;
        self.chunk(chunk, out)?;
        Ok(false)
    }

    fn end_marker(&self) -> &'static str {
        "[DONE]"
    }
}

impl OpenAiDecoder {
    fn chunk(&mut self, chunk: Chunk, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            let wrapped = json!({ "error": error });
            let (kind, message) = error_parts(&wrapped).unwrap_or((None, error.to_string()));
            return Err(DecodeError::Remote { kind, message });
        }
        // Only the first choice is the answer (n > 1 is never requested).
        for choice in chunk
            .choices
            .unwrap_or_default()
            .into_iter()
            .filter(|c| c.index.unwrap_or(0) == 0)
        {
            if let Some(delta) = choice.delta.or(choice.message) {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                out.push(Delta::Finish(reason));
            }
        }
        if let Some(u) = chunk.usage {
            out.push(Delta::Usage {
                input: u.prompt_tokens,
                output: u.completion_tokens,
                cached: None,
            });
        }
        Ok(())
    }

    fn delta(&mut self, delta: ChoiceDelta, out: &mut Vec<Delta>) {
        let reasoning = delta
            .reasoning_content
            .filter(|r| !r.is_empty())
            .or(delta.reasoning);
        if let Some(r) = reasoning {
            out.push(Delta::Reasoning(r));
        }
        if let Some(content) = delta.content {
            out.push(Delta::Text(content_text(&content)));
        }
        for call in delta.tool_calls.unwrap_or_default() {
            let slot = self.slots.resolve(call.index, call.id.as_deref());
            let (name, args) = match call.function {
                Some(f) => (
                    f.name,
                    f.arguments.as_ref().map(raw_text).unwrap_or_default(),
                ),
                None => (None, String::new()),
            };
            out.push(Delta::Tool {
                slot,
                id: call.id,
                name,
                args,
            });
        }
    }
}

/// Message content as text: a string, or the text parts of a content-part array.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Decodes a non-streamed chat-completions body.
pub(crate) fn decode_whole(body: &[u8], out: &mut Vec<Delta>) -> Result<(), DecodeError> {
    let chunk: Chunk = serde_json::from_slice(body)
        .map_err(|e| DecodeError::Malformed(format!("body is not chat-completion JSON ({e})")))?;
    if chunk.choices.is_none() && chunk.error.is_none() {
        return Err(DecodeError::Malformed("body has no `choices`".into()));
    }
    OpenAiDecoder::default().chunk(chunk, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::tests::run;
    use crate::types::ChatEvent;
    use echo_core::{ToolCall, ToolSpec, Usage};

    /// Decodes literal SSE text (`data:` lines separated by blank lines) into deltas.
    fn decode_sse(text: &str) -> (Vec<Delta>, bool) {
        let mut dec = OpenAiDecoder::default();
        let mut out = Vec::new();
        let mut done = false;
        for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            let data = data.join("\n");
            done = dec
                .decode("message", &data, &mut out)
                .expect("chunk decodes");
            if done {
                break;
            }
        }
        (out, done)
    }

    #[test]
    fn text_reasoning_usage_and_finish() {
        let sse = r#"
data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}

data: {"choices":[{"index":0,"delta":{"reasoning_content":"let me "}}]}

data: {"choices":[{"index":0,"delta":{"reasoning":"think"}}]}

data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}

data: {"choices":[{"index":0,"delta":{"content":"lo <think>x</think>"},"finish_reason":null}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}

data: [DONE]

data: {"choices":[{"index":0,"delta":{"content":"after done"}}]}
"#;
        let (deltas, done) = decode_sse(sse);
        assert!(done);
        let (events, out) = run(deltas);
        assert_eq!(out.text, "Hello <think>x</think>");
        assert_eq!(out.reasoning, "let me think");
        assert_eq!(
            out.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 3,
                cached_input_tokens: 0,
            }
        );
        assert_eq!(out.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            events,
            vec![
                ChatEvent::ReasoningDelta("let me ".into()),
                ChatEvent::ReasoningDelta("think".into()),
                ChatEvent::TextDelta("Hel".into()),
                ChatEvent::TextDelta("lo <think>x</think>".into()),
            ]
        );
    }

    #[test]
    fn tool_call_arguments_split_across_chunks() {
        let sse = r#"
data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a.txt\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]
"#;
        let (deltas, _) = decode_sse(sse);
        let (events, out) = run(deltas);
        assert_eq!(
            out.tool_calls,
            vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "a.txt"}"#.into()
            }]
        );
        assert_eq!(out.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            events,
            vec![
                ChatEvent::ToolCallStarted {
                    index: 0,
                    id: "call_1".into(),
                    name: "read_file".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "call_1".into(),
                    delta: "{\"pa".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "call_1".into(),
                    delta: "th\": \"a.txt\"}".into()
                },
            ]
        );
    }

    #[test]
    fn several_calls_interleaved_by_index() {
        let sse = r#"
data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":"{\"x\""}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"two","arguments":"{"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"}"}}]}}]}

data: [DONE]
"#;
        let (deltas, _) = decode_sse(sse);
        let (events, out) = run(deltas);
        assert_eq!(
            out.tool_calls,
            vec![
                ToolCall {
                    id: "a".into(),
                    name: "one".into(),
                    arguments: "{\"x\":1}".into()
                },
                ToolCall {
                    id: "b".into(),
                    name: "two".into(),
                    arguments: "{}".into()
                },
            ]
        );
        let started: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, ChatEvent::ToolCallStarted { .. }))
            .collect();
        assert_eq!(started.len(), 2);
    }

    #[test]
    fn tool_call_deltas_without_index_match_by_id_or_continue_the_latest_call() {
        // Some servers omit `index`: whole calls with distinct ids, or fragments without id.
        let sse = r#"
data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"one","arguments":"{\"q\":"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"hi\"}"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"two","arguments":{"n":2}}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"arguments":""}}]}}]}

data: [DONE]
"#;
        let (deltas, _) = decode_sse(sse);
        let (_, out) = run(deltas);
        assert_eq!(
            out.tool_calls,
            vec![
                ToolCall {
                    id: "a".into(),
                    name: "one".into(),
                    arguments: "{\"q\":\"hi\"}".into()
                },
                ToolCall {
                    id: "b".into(),
                    name: "two".into(),
                    arguments: "{\"n\":2}".into()
                },
            ]
        );
    }

    #[test]
    fn index_reused_with_a_new_id_is_a_new_call() {
        let mut slots = ToolSlots::default();
        assert_eq!(slots.resolve(Some(0), Some("a")), 0);
        assert_eq!(slots.resolve(Some(0), None), 0);
        assert_eq!(slots.resolve(Some(0), Some("a")), 0);
        assert_eq!(slots.resolve(Some(0), Some("b")), 1);
        assert_eq!(slots.resolve(Some(0), None), 1);
        assert_eq!(slots.resolve(None, None), 1);
        assert_eq!(slots.resolve(Some(5), None), 2);
    }

    #[test]
    fn malformed_arguments_are_kept_raw() {
        let sse = r#"
data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{not json"}}]}}]}

data: [DONE]
"#;
        let (deltas, _) = decode_sse(sse);
        let (_, out) = run(deltas);
        assert_eq!(out.tool_calls[0].arguments, "{not json");
    }

    #[test]
    fn error_chunks_and_garbage_are_errors() {
        let mut dec = OpenAiDecoder::default();
        let mut out = Vec::new();
        let err = dec.decode(
            "message",
            r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
            &mut out,
        );
        assert_eq!(
            err,
            Err(DecodeError::Remote {
                kind: Some("server_error".into()),
                message: "overloaded".into()
            })
        );
        assert!(matches!(
            dec.decode("message", "{nope", &mut out),
            Err(DecodeError::Malformed(_))
        ));
        assert!(matches!(
            dec.decode("error", "boom", &mut out),
            Err(DecodeError::Remote { .. })
        ));
    }

    #[test]
    fn whole_body_is_read_like_a_stream() {
        let body = br#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"r",
            "tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}]},"finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":5,"completion_tokens":2}}"#;
        let mut deltas = Vec::new();
        decode_whole(body, &mut deltas).expect("decodes");
        let (_, out) = run(deltas);
        assert_eq!(out.text, "hi");
        assert_eq!(out.reasoning, "r");
        assert_eq!(
            out.tool_calls,
            vec![ToolCall {
                id: "c1".into(),
                name: "t".into(),
                arguments: "{}".into()
            }]
        );
        assert_eq!(
            out.usage,
            Usage {
                input_tokens: 5,
                output_tokens: 2,
                cached_input_tokens: 0,
            }
        );
        assert!(decode_whole(b"[1,2]", &mut Vec::new()).is_err());
        assert!(decode_whole(b"{}", &mut Vec::new()).is_err());
    }

    #[test]
    fn request_body_sends_tools_only_when_given() {
        let call = ToolCall {
            id: "c1".into(),
            name: "t".into(),
            arguments: "{\"a\":1}".into(),
        };
        let mut assistant = Message::assistant("");
        assistant.tool_calls = vec![call.clone()];
        let req = ChatRequest {
            messages: vec![
                Message::system("sys"),
                Message::user("hi"),
                assistant,
                Message::tool_result(&call, "ok"),
            ],
            tools: Vec::new(),
            max_tokens: 100,
            temperature: Some(0.2),
            tool_choice: Default::default(),
        };
        let body = request_body("m", &req);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{\"a\":1}"}}
                    ]},
                    {"role": "tool", "content": "ok", "tool_call_id": "c1", "name": "t"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 100,
                "temperature": 0.2,
            })
        );
        let req = ChatRequest {
            tools: vec![ToolSpec {
                name: "t".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            max_tokens: 0,
            temperature: None,
            ..req
        };
        let body = request_body("m", &req);
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "t", "description": "d", "parameters": {"type": "object"}}}])
        );
        assert!(body.get("max_tokens").is_none());
        assert!(body.get("temperature").is_none());
        assert!(body.get("tool_choice").is_none(), "auto sends nothing");
        let req = ChatRequest {
            tool_choice: ToolChoice::Required("t".into()),
            ..req
        };
        assert_eq!(
            request_body("m", &req)["tool_choice"],
            json!({"type": "function", "function": {"name": "t"}})
        );
    }
}
