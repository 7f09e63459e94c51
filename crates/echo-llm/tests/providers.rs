//! The providers end to end against the scripted mock model server (docs/mock-model.md):
//! streaming, tool calls, reasoning, retries, fallback, timeouts, stream cuts, Anthropic and
//! cancellation. Needs the `mock-model` binary: `cargo build -p echo-mock-model`.

use echo_core::config::{LlmConfig, ProviderKind, RetryConfig, TimeoutConfig};
use echo_core::{Message, ToolCall, ToolSpec, Usage};
use echo_llm::{
    AttemptKind, ChatEvent, ChatFailure, ChatRequest, ChatResponse, LlmClient, LlmError,
    TimeoutPhase,
};
use echo_mock_model::MockServer;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Short limits so that failure scenarios take well under a second each.
fn config(mock: &MockServer, kind: ProviderKind, model: &str, fallbacks: &[&str]) -> LlmConfig {
    let base_url = match kind {
        ProviderKind::Anthropic => mock.root_url(),
        ProviderKind::Openai | ProviderKind::Ollama | ProviderKind::Local => mock.base_url(),
    };
    LlmConfig {
        kind,
        base_url: Some(base_url.to_string()),
        model: model.into(),
        fallback_models: fallbacks.iter().map(|m| m.to_string()).collect(),
        max_tokens: 256,
        temperature: None,
        timeouts: TimeoutConfig {
            connect_secs: 2.0,
            first_byte_secs: 2.0,
            idle_secs: 2.0,
        },
        retry: RetryConfig {
            max_retries: 2,
            initial_backoff_ms: 10,
            max_backoff_ms: 40,
        },
        api_key: Some("sk-test".into()),
        ..LlmConfig::default()
    }
}

fn start(script: Value) -> MockServer {
    match MockServer::start(script) {
        Ok(mock) => mock,
        Err(e) => panic!("{e}"),
    }
}

fn client(cfg: &LlmConfig) -> LlmClient {
    match LlmClient::from_config(cfg) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

fn requests(mock: &MockServer) -> Vec<Value> {
    match mock.requests() {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("You are a test."), Message::user(text)],
        tools: Vec::new(),
        max_tokens: 256,
        temperature: None,
        tool_choice: Default::default(),
    }
}

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

struct Run {
    result: Result<ChatResponse, ChatFailure>,
    events: Vec<ChatEvent>,
    elapsed: Duration,
}

impl Run {
    fn ok(&self) -> &ChatResponse {
        match &self.result {
            Ok(r) => r,
            Err(f) => panic!("call failed: {f} (attempts: {:?})", f.attempts),
        }
    }

    fn err(&self) -> &ChatFailure {
        match &self.result {
            Ok(r) => panic!("call succeeded unexpectedly: {r:?}"),
            Err(f) => f,
        }
    }

    fn text_deltas(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::TextDelta(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    fn retrying(&self) -> Vec<(String, u32, Duration)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::Retrying {
                    model,
                    attempt,
                    delay,
                    ..
                } => Some((model.clone(), *attempt, *delay)),
                _ => None,
            })
            .collect()
    }
}

async fn chat(client: &LlmClient, req: &ChatRequest) -> Run {
    chat_with(client, req, &CancellationToken::new(), |_, _| {}).await
}

/// Runs a call; `hook` sees each event (and the token, to cancel from inside the stream).
async fn chat_with(
    client: &LlmClient,
    req: &ChatRequest,
    cancel: &CancellationToken,
    mut hook: impl FnMut(&ChatEvent, &CancellationToken) + Send,
) -> Run {
    let mut events = Vec::new();
    let start = Instant::now();
    let token = cancel.clone();
    let mut on_event = |e: ChatEvent| {
        hook(&e, &token);
        events.push(e);
    };
    let result = client.chat(req, cancel, &mut on_event).await;
    Run {
        result,
        events,
        elapsed: start.elapsed(),
    }
}

fn kinds(attempts: &[echo_llm::Attempt]) -> Vec<(String, AttemptKind, bool)> {
    attempts
        .iter()
        .map(|a| (a.model.clone(), a.kind, a.error.is_none()))
        .collect()
}

#[tokio::test]
async fn streamed_text_with_usage() {
    let mock = start(json!({"steps": [
        {"text": "Hello there, friend", "chunks": 3, "usage": {"input_tokens": 11, "output_tokens": 7}}
    ]}));
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &[]));
    let run = chat(&c, &ask("hi")).await;
    let r = run.ok();
    assert_eq!(r.text, "Hello there, friend");
    assert_eq!(
        run.text_deltas().len(),
        3,
        "one event per streamed piece: {:?}",
        run.events
    );
    assert_eq!(run.text_deltas().concat(), r.text);
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 11,
            output_tokens: 7,
            cached_input_tokens: 0,
        }
    );
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!(r.model, "gpt-x");
    assert!(r.tool_calls.is_empty());
    assert_eq!(
        kinds(&r.attempts),
        vec![("gpt-x".into(), AttemptKind::First, true)]
    );
    assert_eq!(r.attempts[0].usage, r.usage);

    let reqs = requests(&mock);
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0]["path"], "/v1/chat/completions");
    let body = &reqs[0]["body"];
    assert_eq!(body["model"], "gpt-x");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["max_tokens"], 256);
    assert!(
        body.get("tools").is_none(),
        "no tools offered, so no `tools` field: {body}"
    );
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are a test."})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
}

#[tokio::test]
async fn ollama_uses_the_openai_compatible_endpoint() {
    let mock = start(json!({"steps": [{"echo": true}]}));
    let c = client(&config(&mock, ProviderKind::Ollama, "llama3.2", &[]));
    let run = chat(&c, &ask("ping")).await;
    assert_eq!(run.ok().text, "echo: ping");
    assert_eq!(requests(&mock)[0]["path"], "/v1/chat/completions");
}

#[tokio::test]
async fn tool_call_split_across_chunks_is_assembled() {
    let args = r#"{"path": "notes/today.txt"}"#;
    let mock = start(json!({"steps": [
        {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": args}], "chunks": 4}
    ]}));
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &[]));
    let mut req = ask("read my notes");
    req.tools = vec![read_file_tool()];
    let run = chat(&c, &req).await;
    let r = run.ok();
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: args.into()
        }]
    );
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    let started: Vec<_> = run
        .events
        .iter()
        .filter(|e| matches!(e, ChatEvent::ToolCallStarted { .. }))
        .collect();
    assert_eq!(
        started,
        vec![&ChatEvent::ToolCallStarted {
            index: 0,
            id: "call_1".into(),
            name: "read_file".into()
        }]
    );
    let fragments: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolCallArgsDelta {
                index: 0,
                id,
                delta,
            } if id == "call_1" => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(fragments.len(), 4, "{:?}", run.events);
    assert_eq!(fragments.concat(), args);

    let body = &requests(&mock)[0]["body"];
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "read_file",
            "description": "Reads a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }}])
    );
}

#[tokio::test]
async fn reasoning_content_is_streamed_separately() {
    let mock = start(
        json!({"steps": [{"reasoning": "The user greets me.", "text": "<think>x</think>Hi!"}]}),
    );
    let c = client(&config(&mock, ProviderKind::Openai, "deepseek", &[]));
    let run = chat(&c, &ask("hello")).await;
    let r = run.ok();
    assert_eq!(r.reasoning, "The user greets me.");
    assert_eq!(
        r.text, "<think>x</think>Hi!",
        "text is passed through unstripped"
    );
    let first_text = run
        .events
        .iter()
        .position(|e| matches!(e, ChatEvent::TextDelta(_)));
    let last_reasoning = run
        .events
        .iter()
        .rposition(|e| matches!(e, ChatEvent::ReasoningDelta(_)));
    assert!(
        last_reasoning.is_some() && last_reasoning < first_text,
        "{:?}",
        run.events
    );
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    let mock = start(json!({"steps": [{"status": 500, "times": 2}, {"text": "third time lucky"}]}));
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &[]));
    let run = chat(&c, &ask("hi")).await;
    let r = run.ok();
    assert_eq!(r.text, "third time lucky");
    assert_eq!(
        kinds(&r.attempts),
        vec![
            ("gpt-x".into(), AttemptKind::First, false),
            ("gpt-x".into(), AttemptKind::Retry, false),
            ("gpt-x".into(), AttemptKind::Retry, true),
        ]
    );
    let first_error = r.attempts[0].error.clone().unwrap_or_default();
    assert!(first_error.contains("answered HTTP 500"), "{first_error}");
    assert!(first_error.contains("(model gpt-x)"), "{first_error}");
    assert_eq!(
        run.retrying(),
        vec![
            ("gpt-x".into(), 2, Duration::from_millis(10)),
            ("gpt-x".into(), 3, Duration::from_millis(20))
        ],
        "exponential backoff from 10 ms"
    );
    assert_eq!(requests(&mock).len(), 3);
}

#[tokio::test]
async fn exhausted_retries_fall_back_to_the_next_model() {
    let mock = start(json!({"steps": [
        {"model": "primary", "status": 500, "times": 100},
        {"model": "backup", "text": "from backup"}
    ]}));
    let mut cfg = config(&mock, ProviderKind::Openai, "primary", &["backup"]);
    cfg.retry.max_retries = 1;
    let c = client(&cfg);
    let run = chat(&c, &ask("hi")).await;
    let r = run.ok();
    assert_eq!(r.text, "from backup");
    assert_eq!(r.model, "backup");
    assert_eq!(
        kinds(&r.attempts),
        vec![
            ("primary".into(), AttemptKind::First, false),
            ("primary".into(), AttemptKind::Retry, false),
            ("backup".into(), AttemptKind::Fallback, true),
        ]
    );
    let falling: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::FallingBack { from, to, error } => {
                Some((from.clone(), to.clone(), error.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(falling.len(), 1, "{:?}", run.events);
    assert_eq!(
        (falling[0].0.as_str(), falling[0].1.as_str()),
        ("primary", "backup")
    );
    assert!(falling[0].2.contains("HTTP 500"), "{}", falling[0].2);
    let models: Vec<Value> = requests(&mock)
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect();
    assert_eq!(
        models,
        vec![json!("primary"), json!("primary"), json!("backup")]
    );
}

#[tokio::test]
async fn all_models_failing_returns_the_last_error_with_every_attempt() {
    let mock = start(json!({"steps": [{"status": 503, "times": 100}]}));
    let mut cfg = config(&mock, ProviderKind::Openai, "a", &["b"]);
    cfg.retry.max_retries = 1;
    let run = chat(&client(&cfg), &ask("hi")).await;
    let f = run.err();
    assert!(
        matches!(&f.error, LlmError::Status { status: 503, server, .. } if server.model == "b"),
        "{}",
        f.error
    );
    assert_eq!(f.attempts.len(), 4);
    assert!(f.attempts.iter().all(|a| a.error.is_some()));
}

#[tokio::test]
async fn model_not_found_falls_back_without_retrying() {
    let mock = start(json!({"steps": [
        {"model": "gone", "status": 404, "error_message": "model 'gone' not found", "times": 100},
        {"model": "backup", "text": "here"}
    ]}));
    let c = client(&config(&mock, ProviderKind::Openai, "gone", &["backup"]));
    let run = chat(&c, &ask("hi")).await;
    let r = run.ok();
    assert_eq!(r.text, "here");
    assert_eq!(
        kinds(&r.attempts),
        vec![
            ("gone".into(), AttemptKind::First, false),
            ("backup".into(), AttemptKind::Fallback, true)
        ]
    );
    assert!(run.retrying().is_empty());
    let error = r.attempts[0].error.clone().unwrap_or_default();
    assert!(
        error.contains("model 'gone' not found"),
        "the server's message is kept: {error}"
    );
}

#[tokio::test]
async fn unauthorized_is_neither_retried_nor_falls_back() {
    let mock = start(json!({"steps": [{"status": 401, "error_message": "bad key", "times": 100}]}));
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &["backup"]));
    let run = chat(&c, &ask("hi")).await;
    let f = run.err();
    assert!(
        matches!(f.error, LlmError::Auth { status: 401, .. }),
        "{}",
        f.error
    );
    assert_eq!(f.error.code().as_str(), "llm_auth");
    assert!(f.error.to_string().contains("bad key"), "{}", f.error);
    assert_eq!(f.attempts.len(), 1);
    assert_eq!(requests(&mock).len(), 1);
    assert!(run.events.is_empty(), "{:?}", run.events);
}

#[tokio::test]
async fn retry_after_is_honoured_up_to_the_backoff_cap() {
    let mock = start(json!({"steps": [{"status": 429, "retry_after": 5}, {"text": "ok"}]}));
    let mut cfg = config(&mock, ProviderKind::Openai, "gpt-x", &[]);
    cfg.retry.max_backoff_ms = 300;
    let run = chat(&client(&cfg), &ask("hi")).await;
    assert_eq!(run.ok().text, "ok");
    // The server asked for 5 s; the initial backoff is 10 ms; the cap of 300 ms wins.
    assert_eq!(
        run.retrying(),
        vec![("gpt-x".into(), 2, Duration::from_millis(300))]
    );
    assert!(
        run.elapsed >= Duration::from_millis(300),
        "{:?}",
        run.elapsed
    );
    // An order, not a speed: the call ended before the 5 s the server asked for were up.
    assert!(
        run.elapsed < Duration::from_secs(5),
        "waited the server's 5 s: {:?}",
        run.elapsed
    );
    let first_error = run.ok().attempts[0].error.clone().unwrap_or_default();
    assert!(first_error.contains("HTTP 429"), "{first_error}");
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_first_byte_timeout() {
    let mock = start(json!({"steps": [{"hang": true, "times": 100}]}));
    let mut cfg = config(&mock, ProviderKind::Openai, "gpt-x", &[]);
    cfg.timeouts.first_byte_secs = 0.5;
    cfg.retry.max_retries = 1;
    let run = chat(&client(&cfg), &ask("hi")).await;
    let f = run.err();
    assert!(
        matches!(f.error, LlmError::Timeout { phase: TimeoutPhase::FirstByte, limit, .. } if limit == Duration::from_millis(500)),
        "{}",
        f.error
    );
    assert_eq!(
        f.attempts.len(),
        2,
        "a timeout before any output is retried"
    );
    assert!(run.elapsed >= Duration::from_secs(1), "{:?}", run.elapsed);
    // The server never answers: only the two 0.5 s limits can have ended the call. The bound
    // is far above them so that a loaded machine cannot fail it.
    assert!(run.elapsed < Duration::from_secs(30), "{:?}", run.elapsed);
    assert!(
        f.error.to_string().contains("first-byte timeout"),
        "{}",
        f.error
    );
}

#[tokio::test]
async fn silence_mid_stream_is_an_idle_timeout_with_partial_text() {
    let mock = start(
        json!({"steps": [{"text": "partial answer here", "chunks": 3, "hang_after_chunks": 2}]}),
    );
    let mut cfg = config(&mock, ProviderKind::Openai, "gpt-x", &[]);
    cfg.timeouts.idle_secs = 0.5;
    let run = chat(&client(&cfg), &ask("hi")).await;
    let f = run.err();
    assert!(
        matches!(
            f.error,
            LlmError::Timeout {
                phase: TimeoutPhase::Idle,
                after_output: true,
                chunks: 2,
                ..
            }
        ),
        "{}",
        f.error
    );
    assert!(
        !f.partial_text.is_empty() && "partial answer here".starts_with(&f.partial_text),
        "{:?}",
        f.partial_text
    );
    assert_ne!(f.partial_text, "partial answer here");
    assert_eq!(
        f.partial_text,
        run.text_deltas().concat(),
        "partial text is what the caller saw"
    );
    assert_eq!(f.attempts.len(), 1, "not retried after output");
    assert_eq!(requests(&mock).len(), 1);
}

#[tokio::test]
async fn a_stream_cut_after_text_fails_without_retry() {
    let mock = start(
        json!({"steps": [{"text": "one two three four", "chunks": 4, "cut_after_chunks": 2}], "default": {"text": "again"}}),
    );
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &["backup"]));
    let run = chat(&c, &ask("hi")).await;
    let f = run.err();
    assert!(
        matches!(
            f.error,
            LlmError::StreamCut {
                chunks: 2,
                after_output: true,
                ..
            }
        ),
        "{}",
        f.error
    );
    assert!(
        f.error
            .to_string()
            .contains("cut the stream after 2 chunks"),
        "{}",
        f.error
    );
    assert_eq!(f.partial_text, run.text_deltas().concat());
    assert!(!f.partial_text.is_empty());
    assert_eq!(f.attempts.len(), 1);
    assert_eq!(
        requests(&mock).len(),
        1,
        "neither retried nor sent to the fallback"
    );
}

#[tokio::test]
async fn a_stream_cut_before_any_content_is_retried() {
    let mock =
        start(json!({"steps": [{"text": "lost", "cut_after_chunks": 0}, {"text": "second try"}]}));
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &[]));
    let run = chat(&c, &ask("hi")).await;
    let r = run.ok();
    assert_eq!(r.text, "second try");
    assert_eq!(r.attempts.len(), 2);
    let first_error = r.attempts[0].error.clone().unwrap_or_default();
    assert!(
        first_error.contains("cut the stream after 0 chunks"),
        "{first_error}"
    );
    assert_eq!(
        run.text_deltas().concat(),
        "second try",
        "the caller saw only the good attempt"
    );
    assert_eq!(requests(&mock).len(), 2);
}

#[tokio::test]
async fn anthropic_streams_text_and_tool_use() {
    let args = r#"{"path":"a.txt"}"#;
    let mock = start(json!({"steps": [{
        "text": "Let me check.",
        "reasoning": "Need the file.",
        "tool_calls": [{"id": "toolu_1", "name": "read_file", "arguments": args}],
        "usage": {"input_tokens": 40, "output_tokens": 12}
    }]}));
    let c = client(&config(&mock, ProviderKind::Anthropic, "claude-x", &[]));
    let mut req = ask("what is in a.txt?");
    req.tools = vec![read_file_tool()];
    let run = chat(&c, &req).await;
    let r = run.ok();
    assert_eq!(r.text, "Let me check.");
    assert_eq!(r.reasoning, "Need the file.");
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "toolu_1".into(),
            name: "read_file".into(),
            arguments: args.into()
        }]
    );
    assert_eq!(r.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 40,
            output_tokens: 12,
            cached_input_tokens: 0,
        }
    );
    assert!(run.events.contains(&ChatEvent::ToolCallStarted {
        index: 0,
        id: "toolu_1".into(),
        name: "read_file".into()
    }));

    let reqs = requests(&mock);
    assert_eq!(reqs[0]["path"], "/v1/messages");
    let body = &reqs[0]["body"];
    assert_eq!(body["system"], "You are a test.");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "what is in a.txt?"}]}])
    );
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["stream"], true);
    assert_eq!(body["tools"][0]["name"], "read_file");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}

#[tokio::test]
async fn anthropic_tool_round_trip_is_sent_as_tool_use_and_tool_result() {
    let mock = start(json!({"steps": [{"echo": true}]}));
    let c = client(&config(&mock, ProviderKind::Anthropic, "claude-x", &[]));
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "read_file".into(),
        arguments: "{\"path\":\"a\"}".into(),
    };
    let mut assistant = Message::assistant("");
    assistant.tool_calls = vec![call.clone()];
    let req = ChatRequest {
        messages: vec![
            Message::user("read a"),
            assistant,
            Message::tool_result(&call, "A!"),
            Message::user("thanks"),
        ],
        tools: Vec::new(),
        max_tokens: 0,
        temperature: Some(0.5),
        tool_choice: Default::default(),
    };
    let run = chat(&c, &req).await;
    assert_eq!(run.ok().text, "echo: thanks");
    let body = &requests(&mock)[0]["body"];
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "read a"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A!"},
                {"type": "text", "text": "thanks"}
            ]},
        ])
    );
    assert!(body.get("system").is_none());
    assert!(body.get("tools").is_none());
    assert_eq!(body["max_tokens"], 4096, "Anthropic always gets max_tokens");
    assert_eq!(body["temperature"], 0.5);
}

#[tokio::test]
async fn cancellation_mid_stream_returns_promptly_with_partial_text() {
    let mock = start(
        json!({"steps": [{"text": "a fairly long answer that streams slowly", "chunks": 20, "chunk_delay_ms": 1000}]}),
    );
    let c = client(&config(&mock, ProviderKind::Openai, "gpt-x", &[]));
    let cancel = CancellationToken::new();
    let run = chat_with(&c, &ask("hi"), &cancel, |e, token| {
        if matches!(e, ChatEvent::TextDelta(_)) {
            token.cancel();
        }
    })
    .await;
    let f = run.err();
    assert!(matches!(f.error, LlmError::Cancelled { .. }), "{}", f.error);
    assert_eq!(f.error.code().as_str(), "llm_cancelled");
    assert_eq!(f.partial_text, run.text_deltas().concat());
    assert!(!f.partial_text.is_empty());
    assert!(
        f.partial_text.len() < "a fairly long answer that streams slowly".len(),
        "the whole answer arrived: {}",
        f.partial_text
    );
    // The whole stream takes 20 s; half of it is far more than a loaded machine needs to
    // notice the cancellation, and far less than waiting for the stream to end.
    assert!(
        run.elapsed < Duration::from_secs(10),
        "the whole stream takes 20 s; took {:?}",
        run.elapsed
    );
    assert_eq!(f.attempts.len(), 1);
}

#[tokio::test]
async fn cancellation_ends_a_backoff_wait() {
    let mock = start(json!({"steps": [{"status": 503, "times": 100}]}));
    let mut cfg = config(&mock, ProviderKind::Openai, "gpt-x", &["backup"]);
    cfg.retry = RetryConfig {
        max_retries: 3,
        initial_backoff_ms: 10_000,
        max_backoff_ms: 10_000,
    };
    let cancel = CancellationToken::new();
    let run = chat_with(&client(&cfg), &ask("hi"), &cancel, |e, token| {
        if matches!(e, ChatEvent::Retrying { .. }) {
            token.cancel();
        }
    })
    .await;
    let f = run.err();
    assert!(matches!(f.error, LlmError::Cancelled { .. }), "{}", f.error);
    // Ended inside the 10 s backoff, not after it.
    assert!(
        run.elapsed < Duration::from_secs(9),
        "waited out the backoff: {:?}",
        run.elapsed
    );
    assert_eq!(f.attempts.len(), 1, "no request after the cancellation");
    assert_eq!(requests(&mock).len(), 1);
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, ChatEvent::FallingBack { .. })),
        "{:?}",
        run.events
    );
}

#[tokio::test]
async fn an_unreachable_server_is_a_connect_error_naming_it() {
    // Bind a port, then free it, so nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port());
    let port = match port {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    let cfg = LlmConfig {
        kind: ProviderKind::Openai,
        base_url: Some(format!("http://127.0.0.1:{port}/v1")),
        model: "gpt-x".into(),
        retry: RetryConfig {
            max_retries: 1,
            initial_backoff_ms: 10,
            max_backoff_ms: 10,
        },
        ..LlmConfig::default()
    };
    let run = chat(&client(&cfg), &ask("hi")).await;
    let f = run.err();
    assert!(matches!(f.error, LlmError::Connect { .. }), "{}", f.error);
    assert!(
        f.error.to_string().starts_with(&format!(
            "model server 127.0.0.1:{port} (model gpt-x) is unreachable"
        )),
        "{}",
        f.error
    );
    assert_eq!(f.attempts.len(), 2, "connect errors are retried");
}

/// Serves one connection on loopback: reads the request, answers `response` verbatim.
async fn one_shot_server(response: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let Ok(n) = socket.read(&mut buf).await else {
                return;
            };
            if n == 0 {
                return;
            }
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
    });
    format!("http://{addr}/v1")
}

#[tokio::test]
async fn a_json_body_answering_a_stream_request_is_read_whole() {
    let body = json!({
        "id": "x",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b\"}"}}]
        }}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4}
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let base_url = one_shot_server(response).await;
    let cfg = LlmConfig {
        kind: ProviderKind::Openai,
        base_url: Some(base_url),
        model: "plain".into(),
        retry: RetryConfig {
            max_retries: 0,
            initial_backoff_ms: 10,
            max_backoff_ms: 10,
        },
        ..LlmConfig::default()
    };
    let run = chat(&client(&cfg), &ask("hi")).await;
    let r = run.ok();
    assert_eq!(r.text, "Reading.");
    assert_eq!(
        r.tool_calls,
        vec![ToolCall {
            id: "c9".into(),
            name: "read_file".into(),
            arguments: "{\"path\":\"b\"}".into()
        }]
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 9,
            output_tokens: 4,
            cached_input_tokens: 0,
        }
    );
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        run.events,
        vec![
            ChatEvent::TextDelta("Reading.".into()),
            ChatEvent::ToolCallStarted {
                index: 0,
                id: "c9".into(),
                name: "read_file".into()
            },
            ChatEvent::ToolCallArgsDelta {
                index: 0,
                id: "c9".into(),
                delta: "{\"path\":\"b\"}".into()
            },
        ],
        "the caller sees the same events as for a stream"
    );
}
