//! Hostile model servers, as property tests: whatever a server sends — any event names and
//! data, chunks with tool-call indices of any size, any body bytes — decoding and assembly
//! end in an answer or an error, never a panic, and never allocate by a number the server
//! chose. An error names the input's problem: bytes that are not JSON are refused as
//! malformed with the reason, and nothing that is not JSON is taken as an answer.
//! `PROPTEST_CASES` sets the case count (docs/reliability.md).

use crate::checks::{feed, providers};
use proptest::prelude::*;
use serde_json::json;

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
        crate::checks::decode_whole(&body);
    }

    #[test]
    fn any_bytes_as_a_streamed_body_end_in_an_answer_or_an_error(body in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        prop::collection::vec(chunk(), 0..8).prop_map(|chunks| chunks
            .into_iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect::<String>()
            .into_bytes()),
    ]) {
        crate::checks::feed_sse(&body);
    }
}
