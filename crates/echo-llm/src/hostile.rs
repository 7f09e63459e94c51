//! Hostile model servers, as property tests: whatever a server sends — any event names and
//! data, chunks with tool-call indices of any size, any body bytes — decoding and assembly
//! end in an answer or an error, never a panic, and never allocate by a number the server
//! chose. An error names the input's problem: bytes that are not JSON are refused as
//! malformed with the reason, and nothing that is not JSON is taken as an answer.
//! `PROPTEST_CASES` sets the case count (docs/reliability.md).

use crate::anthropic::Anthropic;
use crate::assemble::Assembler;
use crate::openai::OpenAi;
use crate::provider::{DecodeError, Provider};
use proptest::prelude::*;
use serde_json::json;

fn providers() -> [Box<dyn Provider>; 2] {
    [
        Box::new(OpenAi::new("http://127.0.0.1:9/v1", None)),
        Box::new(Anthropic::new("http://127.0.0.1:9", None)),
    ]
}

/// Whether `data` is one JSON value.
fn is_json(data: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(data).is_ok()
}

/// What a decoder said of one event or body: `Ok` when it took the input, or an error that
/// names the problem. Input that is not JSON is refused as malformed, saying so (or, on an
/// `error` event, passed on as the server's own message); only the stream's end marker and an
/// empty keep-alive are taken without being JSON.
fn check_result(result: &Result<bool, DecodeError>, event: &str, data: &str) {
    let bare = data.trim();
    match result {
        Ok(_) => assert!(
            is_json(bare.as_bytes()) || bare.is_empty() || bare == "[DONE]",
            "{event:?} event with {data:?} (not JSON) was taken"
        ),
        Err(DecodeError::Malformed(why)) => assert!(
            why.contains("JSON") || is_json(bare.as_bytes()),
            "{data:?} is not JSON but the error does not say so: {why}"
        ),
        Err(DecodeError::Remote { message, .. }) => assert!(
            event == "error" || is_json(bare.as_bytes()),
            "{data:?} on {event:?} became a server error: {message}"
        ),
    }
}

/// Decodes `events` as one stream and assembles what they say, checking each result with
/// [`check_result`]; returns the tool calls.
fn feed(provider: &dyn Provider, events: &[(String, String)]) -> usize {
    let mut decoder = provider.decoder();
    let mut sink = |_| {};
    let mut asm = Assembler::new(&mut sink);
    let mut deltas = Vec::new();
    for (event, data) in events {
        let result = decoder.decode(event, data, &mut deltas);
        check_result(&result, event, data);
        for d in deltas.drain(..) {
            asm.apply(d);
        }
        if !matches!(result, Ok(false)) {
            break;
        }
    }
    asm.finish().tool_calls.len()
}

/// A chunk of either protocol, with the fields a server could get wrong.
fn chunk() -> impl Strategy<Value = (String, String)> {
    let index = prop_oneof![0u64..4, Just(u64::MAX), Just(1 << 40), any::<u64>()];
    let kind = prop::sample::select(vec![
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "error",
        "ping",
        "message",
    ]);
    (index, ".{0,8}", ".{0,8}", ".{0,8}", kind, any::<bool>()).prop_map(
        |(index, text, id, name, kind, openai)| {
            let data = if openai {
                json!({"choices": [{"index": 0, "delta": {"content": text, "tool_calls": [
                    {"index": index, "id": id, "function": {"name": name, "arguments": text}}
                ]}, "finish_reason": null}], "usage": {"prompt_tokens": index}})
            } else {
                json!({"type": kind, "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}},
                    "delta": {"type": "input_json_delta", "partial_json": text, "text": text},
                    "usage": {"input_tokens": index, "output_tokens": index}})
            };
            (kind.to_string(), data.to_string())
        },
    )
}

proptest! {
    #[test]
    fn any_events_end_in_an_answer_or_an_error(
        events in prop::collection::vec((".{0,16}", ".{0,64}"), 0..12)
    ) {
        for provider in providers() {
            feed(provider.as_ref(), &events);
        }
    }

    #[test]
    fn tool_call_indices_a_server_chose_allocate_nothing(
        events in prop::collection::vec(chunk(), 0..16)
    ) {
        for provider in providers() {
            let calls = feed(provider.as_ref(), &events);
            prop_assert!(calls <= events.len(), "{calls} calls from {} events", events.len());
        }
    }

    #[test]
    fn any_whole_body_decodes_or_is_an_error(body in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        chunk().prop_map(|(_, data)| data.into_bytes()),
    ]) {
        for provider in providers() {
            match provider.decode_whole(&body, &mut Vec::new()) {
                Ok(()) => prop_assert!(is_json(&body), "a body that is not JSON was taken"),
                Err(DecodeError::Malformed(why)) => prop_assert!(
                    is_json(&body) || why.contains("is not") && why.contains("JSON"),
                    "a body that is not JSON was refused without saying so: {why}"
                ),
                Err(DecodeError::Remote { message, .. }) => prop_assert!(
                    is_json(&body),
                    "a body that is not JSON became a server error: {message}"
                ),
            }
        }
    }
}
