//! The built-in runtime against the real SmolLM2-135M-Instruct weights
//! (`scripts/fetch-local-model.sh`; `scripts/test.sh` sets `ECHO_LOCAL_MODEL`).

use echo_local::{ChatMessage, ChatRole, Event, Finish, LocalModel, Next, Request, ToolDef};
use std::sync::Arc;

#[path = "support/ci_model.rs"]
mod ci_model;
use ci_model::model_path;

fn model() -> Arc<LocalModel> {
    LocalModel::open(&model_path(), None).expect("the CI model opens")
}

async fn run(model: &LocalModel, request: Request) -> (Vec<Event>, echo_local::Outcome) {
    let mut generation = model.start(request);
    let mut events = Vec::new();
    loop {
        match generation.next().await {
            Next::Event(e) => events.push(e),
            Next::Done(result) => return (events, result.expect("generation succeeds")),
        }
    }
}

/// The forced call a generation made, with its arguments parsed (a failure names what came
/// instead).
fn the_call(
    events: &[Event],
    outcome: &echo_local::Outcome,
) -> (echo_local::CallText, serde_json::Value) {
    let call = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCall(c) => Some(c.clone()),
            Event::Text(_) => None,
        })
        .unwrap_or_else(|| panic!("no call: {events:?} {outcome:?}"));
    let value =
        serde_json::from_str(&call.arguments).unwrap_or_else(|e| panic!("{e}: {}", call.arguments));
    (call, value)
}

fn chat(text: &str) -> Request {
    Request {
        messages: vec![
            ChatMessage::new(ChatRole::System, "You are a helpful assistant."),
            ChatMessage::new(ChatRole::User, text),
        ],
        tools: Vec::new(),
        forced: None,
        max_tokens: 48,
        temperature: None,
        seed: None,
    }
}

#[test]
fn the_header_says_what_the_file_is() {
    let model = model();
    let info = model.info();
    assert_eq!(info.arch, echo_local::Arch::Llama);
    assert_eq!(info.window, 4096);
    assert!(info.size_bytes > 50_000_000, "{info:?}");
}

#[tokio::test]
async fn a_chat_turn_streams_text_and_completes() {
    let model = model();
    let (events, outcome) = run(&model, chat("What is the capital of France?")).await;
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.as_str()),
            Event::ToolCall(_) => None,
        })
        .collect();
    assert!(texts.len() > 3, "streamed in pieces: {texts:?}");
    let answer = texts.concat();
    assert!(!answer.trim().is_empty());
    assert!(!answer.contains("<|im_end|>"), "{answer}");
    assert!(
        matches!(outcome.finish, Finish::Stop | Finish::Length),
        "{outcome:?}"
    );
    assert!(
        outcome.output_tokens > 0 && outcome.prompt_tokens > 10,
        "{outcome:?}"
    );
}

#[tokio::test]
async fn stop_ends_generation_within_a_token() {
    let model = model();
    let mut request = chat("Write a long story about a dragon.");
    request.max_tokens = 400;
    let mut generation = model.start(request);
    let mut seen = 0;
    let outcome = loop {
        match generation.next().await {
            Next::Event(_) => {
                seen += 1;
                if seen == 3 {
                    generation.stop();
                }
            }
            Next::Done(result) => break result.expect("a stopped generation still ends cleanly"),
        }
    };
    assert_eq!(outcome.finish, Finish::Cancelled);
    assert!(outcome.output_tokens <= 5, "{outcome:?}");
}

#[tokio::test]
async fn a_forced_call_always_follows_its_schema() {
    let model = model();
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": 120},
                        "kind": {"enum": ["preference", "fact", "plan"]}
                    },
                    "required": ["text", "kind"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["facts"],
        "additionalProperties": false
    });
    let validator = jsonschema::validator_for(&schema).expect("schema");
    // The last runs out of tokens mid-way and must be steered shut.
    for (i, (line, max_tokens)) in [
        ("I live in Lisbon and I love green tea.", 400),
        ("My sister's birthday is on May 3rd.", 400),
        ("I'm allergic to peanuts.", 400),
        (
            "I have two cats, Miso and Tofu, and I run every morning.",
            40,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let request = Request {
            messages: vec![
                ChatMessage::new(ChatRole::System, "Extract facts about the user."),
                ChatMessage::new(ChatRole::User, line),
            ],
            tools: vec![ToolDef {
                name: "extract".into(),
                description: "Record facts".into(),
                parameters: schema.clone(),
            }],
            forced: Some("extract".into()),
            max_tokens,
            temperature: if i == 0 { None } else { Some(0.9) },
            // Its own seed: what this test draws does not depend on the tests before it.
            seed: Some(i as u64 + 1),
        };
        let (events, outcome) = run(&model, request).await;
        let (call, value) = the_call(&events, &outcome);
        assert_eq!(call.name, "extract");
        assert!(validator.is_valid(&value), "{}", call.arguments);
        assert_eq!(outcome.finish, Finish::ToolCalls);
    }
}

/// A forced literal in a script whose characters span several tokens: the grammar makes
/// the model write it out, and the rest of it after a token that ends inside a character
/// must be tokenized as bytes (read as text, it became U+FFFD and broke the grammar).
#[tokio::test]
async fn a_forced_call_writes_a_chinese_choice_whole() {
    let model = model();
    let choice = "我住在上海，喜欢喝茶。";
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"statement": {"enum": [choice]}},
        "required": ["statement"],
        "additionalProperties": false
    });
    let request = Request {
        messages: vec![ChatMessage::new(ChatRole::User, choice)],
        tools: vec![ToolDef {
            name: "keep".into(),
            description: "Keep a statement".into(),
            parameters: schema,
        }],
        forced: Some("keep".into()),
        max_tokens: 100,
        temperature: None,
        seed: None,
    };
    let (events, outcome) = run(&model, request).await;
    let (_, value) = the_call(&events, &outcome);
    assert_eq!(value["statement"], choice);
}

#[tokio::test]
async fn a_follow_up_turn_reuses_the_prompt_cache() {
    // A model of its own (a copy of the file), so no other test's requests come between.
    let dir = tempfile::tempdir().expect("tempdir");
    let own = dir.path().join("own.gguf");
    std::fs::copy(model_path(), &own).expect("copy");
    let model = LocalModel::open(&own, None).expect("opens");
    let mut first = chat("Name a colour.");
    // A system block of the size the engine sends (identity, rules, memories).
    first.messages[0].content = (0..40)
        .map(|i| format!("Rule {i}: answer briefly, kindly and truthfully.\n"))
        .collect();
    let (events, outcome1) = run(&model, first.clone()).await;
    let answer: String = events
        .iter()
        .filter_map(|e| match e {
            Event::Text(t) => Some(t.as_str()),
            Event::ToolCall(_) => None,
        })
        .collect();
    let mut second = first;
    second
        .messages
        .push(ChatMessage::new(ChatRole::Assistant, answer));
    second
        .messages
        .push(ChatMessage::new(ChatRole::User, "And another one?"));
    let (_, outcome2) = run(&model, second).await;
    assert!(
        outcome2.cached_tokens >= outcome1.prompt_tokens,
        "{outcome1:?} {outcome2:?}"
    );
    assert!(outcome2.prompt_tokens - outcome2.cached_tokens < outcome2.prompt_tokens / 2);
}

#[test]
fn a_missing_or_damaged_file_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nothing.gguf");
    let e = LocalModel::open(&missing, None).expect_err("missing");
    assert!(e.to_string().contains("cannot open the model file"), "{e}");

    let junk = dir.path().join("junk.gguf");
    std::fs::write(&junk, b"this is not a model").expect("write");
    let e = LocalModel::open(&junk, None).expect_err("junk");
    assert!(e.to_string().contains("is damaged"), "{e}");

    // A real model cut in the middle of its header.
    let bytes = std::fs::read(model_path()).expect("read");
    let cut = dir.path().join("cut.gguf");
    std::fs::write(&cut, &bytes[..4096]).expect("write");
    let e = LocalModel::open(&cut, None).expect_err("cut");
    assert!(e.to_string().contains("is damaged"), "{e}");
}

/// The token ids llama.cpp (llama-cpp-python 0.3.36, the reference implementation of GGUF
/// tokenizers) gives for these strings with this file: digits split one by one (the
/// `smollm` pre-tokenizer), CJK and emoji as byte-level pieces, special tokens parsed.
#[test]
fn the_tokenizer_matches_llama_cpp() {
    let model = model();
    let vocab = model.vocab();
    let cases: [(&str, &[u32]); 6] = [
        ("Hello, world!", &[19556, 28, 905, 17]),
        (
            "The year 2024 cost $1,234.56",
            &[
                504, 713, 216, 34, 32, 34, 36, 1708, 1885, 33, 28, 34, 35, 36, 30, 37, 38,
            ],
        ),
        (
            "你好，世界",
            &[18645, 250, 48392, 138, 12831, 7906, 240, 178, 239, 230],
        ),
        (
            "emoji 🎉👍🏽 ok",
            &[
                391, 33777, 15107, 232, 227, 10813, 235, 231, 10813, 233, 138, 10907,
            ],
        ),
        (
            "  two spaces\nnew line\n\n\tTab",
            &[216, 827, 5600, 198, 2241, 1761, 1116, 197, 30064],
        ),
        ("<|im_start|>user\nhi<|im_end|>", &[1, 4093, 198, 6004, 2]),
    ];
    for (text, ids) in cases {
        assert_eq!(vocab.encode_text(text).expect("encode"), ids, "{text:?}");
        let plain = text.replace("<|im_start|>", "").replace("<|im_end|>", "");
        assert_eq!(vocab.decode(ids), plain, "{text:?} decodes back");
    }
}

#[tokio::test]
async fn a_quiet_model_lets_go_of_its_weights_and_loads_them_again_on_the_next_request() {
    // A model of its own (a copy of the file), opened with a short quiet period.
    let dir = tempfile::tempdir().expect("tempdir");
    let own = dir.path().join("quiet.gguf");
    std::fs::copy(model_path(), &own).expect("copy");
    let quiet = std::time::Duration::from_millis(300);
    let model = LocalModel::open(&own, Some(quiet)).expect("opens");
    assert!(!model.loaded(), "the weights wait for the first request");
    let (_, first) = run(&model, chat("Name a colour.")).await;
    assert!(model.loaded(), "the first request loaded the weights");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while model.loaded() {
        assert!(
            std::time::Instant::now() < deadline,
            "the weights were not let go after {quiet:?} without a request"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // The next request loads them again and answers; its prompt is not taken from a cache
    // that was let go with them.
    let (events, again) = run(&model, chat("Name a colour.")).await;
    assert!(model.loaded());
    assert!(!events.is_empty(), "an answer after reloading");
    assert_eq!(again.cached_tokens, 0, "{first:?} {again:?}");
}
