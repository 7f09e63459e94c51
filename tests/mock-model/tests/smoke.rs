//! End-to-end checks of the mock model server through `MockServer` and a real HTTP client:
//! each scripted behaviour of docs/mock-model.md, seen from the wire.

use std::time::{Duration, Instant};

use echo_mock_model::MockServer;
use futures::StreamExt;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn start(script: Value) -> MockServer {
    match MockServer::start(script) {
        Ok(mock) => mock,
        Err(e) => panic!("{e}"),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

async fn post(mock: &MockServer, path: &str, body: &Value) -> reqwest::Result<reqwest::Response> {
    client()
        .post(format!("{}{path}", mock.root_url()))
        .json(body)
        .send()
        .await
}

/// An OpenAI request for `model` with one user message.
fn openai(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": "What is up?"}]})
}

/// An Anthropic request for `model` with one user message.
fn anthropic(model: &str, stream: bool) -> Value {
    json!({"model": model, "max_tokens": 100, "stream": stream,
           "messages": [{"role": "user", "content": "What is up?"}]})
}

/// Splits an SSE body into `(event name, data)` pairs.
fn sse(body: &str) -> Vec<(Option<String>, String)> {
    body.split("\n\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| {
            let mut name = None;
            let mut data = String::new();
            for line in event.lines() {
                if let Some(rest) = line.strip_prefix("event: ") {
                    name = Some(rest.to_owned());
                } else if let Some(rest) = line.strip_prefix("data: ") {
                    data.push_str(rest);
                }
            }
            (name, data)
        })
        .collect()
}

/// The JSON chunks of an OpenAI stream, and whether it ended with `[DONE]`.
fn openai_chunks(body: &str) -> Result<(Vec<Value>, bool), serde_json::Error> {
    let events = sse(body);
    let done = events.last().is_some_and(|(_, data)| data == "[DONE]");
    let chunks = events
        .iter()
        .filter(|(_, data)| data != "[DONE]")
        .map(|(_, data)| serde_json::from_str(data))
        .collect::<Result<_, _>>()?;
    Ok((chunks, done))
}

fn deltas(chunks: &[Value]) -> Vec<&Value> {
    chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta"))
        .collect()
}

#[tokio::test]
async fn openai_stream_splits_text_into_chunks_and_ends_with_usage_and_done() -> TestResult {
    let text = "The quick brown fox jumps";
    let mock = start(json!({"steps": [{"text": text, "reasoning": "think", "chunks": 4}]}));
    let mut request = openai("gpt", true);
    request["stream_options"] = json!({"include_usage": true});
    let response = post(&mock, "/v1/chat/completions", &request).await?;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let (chunks, done) = openai_chunks(&response.text().await?)?;
    assert!(done, "stream must end with [DONE]");

    let deltas = deltas(&chunks);
    assert_eq!(deltas[0]["role"], "assistant");
    let content: Vec<&str> = deltas
        .iter()
        .filter_map(|d| d["content"].as_str())
        .collect();
    assert_eq!(content.len(), 4);
    assert_eq!(content.concat(), text);
    let reasoning: Vec<&str> = deltas
        .iter()
        .filter_map(|d| d["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning.concat(), "think");
    let first_content = deltas.iter().position(|d| d.get("content").is_some());
    let last_reasoning = deltas
        .iter()
        .rposition(|d| d.get("reasoning_content").is_some());
    assert!(
        last_reasoning < first_content,
        "reasoning comes before the text"
    );

    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert!(finish.get("usage").is_none());
    let usage_chunk = &chunks[chunks.len() - 1];
    assert_eq!(usage_chunk["choices"], json!([]));
    // "What is up?" is 11 characters; the answer 25 + 5.
    let usage = json!({"prompt_tokens": 2, "completion_tokens": 7, "total_tokens": 9});
    assert_eq!(usage_chunk["usage"], usage);
    Ok(())
}

#[tokio::test]
async fn openai_stream_without_include_usage_puts_usage_on_the_finish_chunk() -> TestResult {
    let mock = start(
        json!({"steps": [{"text": "hi", "usage": {"input_tokens": 10, "output_tokens": 3}}]}),
    );
    let response = post(&mock, "/v1/chat/completions", &openai("gpt", true)).await?;
    let (chunks, done) = openai_chunks(&response.text().await?)?;
    assert!(done);
    let last = chunks.last().ok_or("no chunks")?;
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["usage"]["prompt_tokens"], 10);
    assert_eq!(last["usage"]["completion_tokens"], 3);
    Ok(())
}

#[tokio::test]
async fn openai_non_streamed_answer_is_one_completion() -> TestResult {
    let mock =
        start(json!({"steps": [{"text": "<think>x</think>Done.", "finish_reason": "length"}]}));
    let response = post(&mock, "/v1/chat/completions", &openai("gpt", false)).await?;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await?;
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "gpt");
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "<think>x</think>Done."
    );
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    assert_eq!(body["usage"]["prompt_tokens"], 2);
    Ok(())
}

#[tokio::test]
async fn openai_tool_calls_stream_id_and_name_first_then_argument_fragments() -> TestResult {
    let calls = json!([
        {"id": "call_1", "name": "read_file", "arguments": "{\"path\": \"a.txt\"}"},
        {"id": "call_2", "name": "broken", "arguments": "{\"oops\": "},
    ]);
    let mock = start(json!({"steps": [{"tool_calls": calls, "chunks": 3}]}));
    let response = post(&mock, "/v1/chat/completions", &openai("gpt", true)).await?;
    let (chunks, done) = openai_chunks(&response.text().await?)?;
    assert!(done);
    assert_eq!(
        chunks.last().ok_or("empty")?["choices"][0]["finish_reason"],
        "tool_calls"
    );

    for (index, call) in calls.as_array().ok_or("calls")?.iter().enumerate() {
        let parts: Vec<&Value> = deltas(&chunks)
            .into_iter()
            .filter_map(|d| d.get("tool_calls"))
            .map(|calls| &calls[0])
            .filter(|c| c["index"] == index)
            .collect();
        assert_eq!(parts.len(), 4, "one opening chunk and 3 argument chunks");
        assert_eq!(parts[0]["id"], call["id"]);
        assert_eq!(parts[0]["type"], "function");
        assert_eq!(parts[0]["function"]["name"], call["name"]);
        assert_eq!(parts[0]["function"]["arguments"], "");
        for later in &parts[1..] {
            assert!(later.get("id").is_none() && later["function"].get("name").is_none());
        }
        let arguments: String = parts
            .iter()
            .filter_map(|p| p["function"]["arguments"].as_str())
            .collect();
        assert_eq!(arguments, call["arguments"].as_str().ok_or("arguments")?);
    }
    Ok(())
}

#[tokio::test]
async fn echo_answers_with_the_last_user_text_in_both_protocols() -> TestResult {
    let mock = start(json!({"steps": [{"echo": true, "times": 2}]}));
    let conversation = json!({"model": "m", "messages": [
        {"role": "system", "content": "be nice"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ]});
    let body: Value = post(&mock, "/v1/chat/completions", &conversation)
        .await?
        .json()
        .await?;
    assert_eq!(body["choices"][0]["message"]["content"], "echo: second");

    let blocks = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]});
    let body: Value = post(&mock, "/v1/messages", &blocks).await?.json().await?;
    assert_eq!(
        body["content"][0],
        json!({"type": "text", "text": "echo: a\nb"})
    );
    Ok(())
}

/// The answer text of a non-streamed OpenAI request, or the error status.
async fn answer(mock: &MockServer, model: &str) -> Result<Result<String, u16>, reqwest::Error> {
    let response = post(mock, "/v1/chat/completions", &openai(model, false)).await?;
    let status = response.status().as_u16();
    let body: Value = response.json().await?;
    Ok(
        match body
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
        {
            Some(text) if status == 200 => Ok(text.to_owned()),
            _ => Err(status),
        },
    )
}

#[tokio::test]
async fn steps_are_matched_by_model_and_used_times_times() -> TestResult {
    let mock = start(json!({"steps": [
        {"model": "big", "text": "B", "times": 2},
        {"text": "any"},
    ]}));
    assert_eq!(answer(&mock, "small").await?, Ok("any".to_owned()));
    assert_eq!(answer(&mock, "big").await?, Ok("B".to_owned()));
    assert_eq!(answer(&mock, "big").await?, Ok("B".to_owned()));
    assert_eq!(answer(&mock, "big").await?, Err(500));
    Ok(())
}

#[tokio::test]
async fn the_default_step_answers_once_steps_are_used_up() -> TestResult {
    let mock = start(json!({"steps": [{"text": "one"}], "default": {"text": "fallback"}}));
    for expected in ["one", "fallback", "fallback"] {
        assert_eq!(answer(&mock, "m").await?, Ok(expected.to_owned()));
    }
    Ok(())
}

#[tokio::test]
async fn an_exhausted_script_replies_500_in_the_protocol_format() -> TestResult {
    let mock = start(json!({"steps": []}));
    let response = post(&mock, "/v1/chat/completions", &openai("m", true)).await?;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["message"], "mock script exhausted");

    let response = post(&mock, "/v1/messages", &anthropic("m", false)).await?;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await?;
    assert_eq!(
        (&body["type"], &body["error"]["message"]),
        (&json!("error"), &json!("mock script exhausted"))
    );
    Ok(())
}

#[tokio::test]
async fn a_status_step_replies_with_the_error_and_retry_after() -> TestResult {
    let mock = start(json!({"steps": [
        {"status": 429, "retry_after": 7, "error_message": "slow down"},
        {"status": 429},
        {"status": 503},
    ]}));
    let response = post(&mock, "/v1/chat/completions", &openai("m", true)).await?;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let body: Value = response.json().await?;
    assert_eq!(body["error"]["message"], "slow down");

    let response = post(&mock, "/v1/messages", &anthropic("m", true)).await?;
    assert_eq!(response.status(), 429);
    assert!(response.headers().get("retry-after").is_none());
    let body: Value = response.json().await?;
    let error = json!({"type": "error", "error": {"type": "rate_limit_error", "message": "mock error 429"}});
    assert_eq!(body, error);

    let response = post(&mock, "/v1/chat/completions", &openai("m", false)).await?;
    assert_eq!(response.status(), 503);
    Ok(())
}

#[tokio::test]
async fn cut_after_chunks_drops_the_connection_before_done() -> TestResult {
    let mock = start(json!({"steps": [{"text": "abcdef", "chunks": 3, "cut_after_chunks": 2}]}));
    let response = post(&mock, "/v1/chat/completions", &openai("m", true)).await?;
    assert_eq!(response.status(), 200);
    let mut received = Vec::new();
    let mut body = response.bytes_stream();
    let mut failed = false;
    while let Some(piece) = body.next().await {
        match piece {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the client must see the body break off");
    let text = String::from_utf8(received)?;
    assert!(!text.contains("[DONE]"));
    let (chunks, done) = openai_chunks(&text)?;
    assert!(!done);
    assert_eq!(chunks.len(), 2);
    Ok(())
}

#[tokio::test]
async fn hangs_keep_the_connection_open_without_blocking_other_requests() -> TestResult {
    let mock = start(json!({"steps": [
        {"hang": true},
        {"text": "abc", "chunks": 3, "hang_after_chunks": 2},
        {"text": "still serving"},
    ]}));
    let short = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()?;
    let url = format!("{}/chat/completions", mock.base_url());

    // `hang`: not even headers arrive.
    let hung = short.post(&url).json(&openai("m", true)).send().await;
    assert!(hung.is_err_and(|e| e.is_timeout()));

    // `hang_after_chunks`: headers and two events arrive, then silence.
    let response = short.post(&url).json(&openai("m", true)).send().await?;
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut received = Vec::new();
    let ended = loop {
        match body.next().await {
            Some(Ok(bytes)) => received.extend_from_slice(&bytes),
            Some(Err(e)) => break Some(e),
            None => break None,
        }
    };
    assert!(
        ended.is_some_and(|e| e.is_timeout()),
        "the stream must stay open"
    );
    let (chunks, done) = openai_chunks(&String::from_utf8(received)?)?;
    assert_eq!((chunks.len(), done), (2, false));

    // The hung connections did not block the next request.
    assert_eq!(answer(&mock, "m").await?, Ok("still serving".to_owned()));
    Ok(())
}

#[tokio::test]
async fn delay_ms_holds_the_response_back() -> TestResult {
    let mock = start(json!({"steps": [{"text": "late", "delay_ms": 300}]}));
    let started = Instant::now();
    assert_eq!(answer(&mock, "m").await?, Ok("late".to_owned()));
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "answered after {:?}",
        started.elapsed()
    );
    Ok(())
}

#[tokio::test]
async fn requests_are_recorded_in_order_bad_ones_included() -> TestResult {
    let mock = start(json!({"steps": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}));
    let first = openai("one", false);
    let second = anthropic("two", true);
    post(&mock, "/v1/chat/completions", &first).await?;
    post(&mock, "/v1/messages", &second).await?.text().await?;

    let url = format!("{}/v1/chat/completions", mock.root_url());
    let bad = client().post(&url).body("{not json").send().await?;
    assert_eq!(bad.status(), 400);
    let error: Value = bad.json().await?;
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let no_max_tokens = json!({"model": "m", "messages": []});
    assert_eq!(
        post(&mock, "/v1/messages", &no_max_tokens).await?.status(),
        400
    );

    let recorded = mock.requests()?;
    let expected = [
        json!({"path": "/v1/chat/completions", "body": first, "api_key": null}),
        json!({"path": "/v1/messages", "body": second, "api_key": null}),
        json!({"path": "/v1/chat/completions", "body": "{not json", "api_key": null}),
        json!({"path": "/v1/messages", "body": no_max_tokens, "api_key": null}),
    ];
    assert_eq!(recorded, expected);
    // Bad requests took no step: "c" is still there.
    assert_eq!(answer(&mock, "m").await?, Ok("c".to_owned()));
    Ok(())
}

#[tokio::test]
async fn set_script_replaces_the_script_and_resets_counters() -> TestResult {
    let mock = start(json!({"steps": [{"text": "old", "model": "x"}]}));
    assert_eq!(answer(&mock, "x").await?, Ok("old".to_owned()));
    mock.set_script(json!({"steps": [{"text": "new", "model": "y"}]}))?;
    assert_eq!(answer(&mock, "y").await?, Ok("new".to_owned()));
    let models: Value = client()
        .get(format!("{}/models", mock.base_url()))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        models["data"],
        json!([{"id": "y", "object": "model", "created": 0, "owned_by": "mock-model"}])
    );
    assert!(
        mock.set_script(json!({"steps": [{"chunk": 2}]})).is_err(),
        "typos are refused"
    );
    Ok(())
}

#[tokio::test]
async fn anthropic_stream_has_thinking_text_and_tool_use_blocks() -> TestResult {
    let mock = start(json!({"steps": [{
        "reasoning": "let me see",
        "text": "Reading.",
        "tool_calls": [{"id": "toolu_1", "name": "read_file", "arguments": "{\"path\":\"a\"}"}],
        "chunks": 2,
    }]}));
    let response = post(&mock, "/v1/messages", &anthropic("claude", true)).await?;
    assert_eq!(response.status(), 200);
    let events = sse(&response.text().await?);
    let names: Vec<&str> = events
        .iter()
        .filter_map(|(name, _)| name.as_deref())
        .collect();
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d))
        .collect::<Result<_, _>>()?;
    for (name, data) in names.iter().zip(&data) {
        assert_eq!(data["type"], *name, "event name matches data type");
    }
    let expected = [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ];
    assert_eq!(names, expected);

    assert_eq!(data[0]["message"]["usage"]["input_tokens"], 2);
    assert_eq!(
        data[1]["content_block"],
        json!({"type": "thinking", "thinking": ""})
    );
    let thinking: String = data[2..4]
        .iter()
        .filter_map(|d| d["delta"]["thinking"].as_str())
        .collect();
    assert_eq!(thinking, "let me see");
    assert_eq!(data[4]["delta"]["type"], "signature_delta");
    assert_eq!(data[6]["content_block"]["type"], "text");
    let tool = &data[10];
    assert_eq!(tool["index"], 2);
    assert_eq!(
        tool["content_block"],
        json!({"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}})
    );
    let json_parts: String = data[11..13]
        .iter()
        .inspect(|d| assert_eq!(d["delta"]["type"], "input_json_delta"))
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(json_parts, "{\"path\":\"a\"}");
    assert_eq!(data[14]["delta"]["stop_reason"], "tool_use");
    // 10 + 8 + 12 characters of answer.
    assert_eq!(data[14]["usage"]["output_tokens"], 7);
    Ok(())
}

#[tokio::test]
async fn anthropic_non_streamed_answer_parses_tool_input() -> TestResult {
    let mock = start(json!({"steps": [{
        "text": "ok",
        "tool_calls": [{"id": "t1", "name": "run", "arguments": "{\"cmd\": \"ls\"}"}],
    }]}));
    let body: Value = post(&mock, "/v1/messages", &anthropic("claude", false))
        .await?
        .json()
        .await?;
    assert_eq!(body["type"], "message");
    assert_eq!(body["stop_reason"], "tool_use");
    let content = json!([
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "id": "t1", "name": "run", "input": {"cmd": "ls"}},
    ]);
    assert_eq!(body["content"], content);
    Ok(())
}

#[test]
fn a_bad_script_fails_to_start_with_the_reason() {
    let error = MockServer::start(json!({"steps": [{"tool_calls": [{"name": "no id"}]}]}));
    let message = error
        .map(drop)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.contains("did not start") && message.contains("missing field `id`"),
        "{message}"
    );
}
