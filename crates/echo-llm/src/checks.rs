//! What decoding promises whatever a model server sends, as checks shared by the property tests
//! (`hostile.rs`) and the fuzz targets (`fuzz/`, through [`crate::fuzzing`]): nothing that is
//! not JSON is taken as an answer, and a refusal names the problem.

use crate::anthropic::Anthropic;
use crate::assemble::Assembler;
use crate::openai::OpenAi;
use crate::provider::{DecodeError, Provider};
use eventsource_stream::Eventsource;
use futures::StreamExt;

/// Both protocols, pointed at a port nothing listens on (nothing here sends a request).
pub(crate) fn providers() -> [Box<dyn Provider>; 2] {
    [
        Box::new(OpenAi::new("http://127.0.0.1:9/v1", None)),
        Box::new(Anthropic::new("http://127.0.0.1:9", None)),
    ]
}

/// Whether `data` is one JSON value by its syntax. Bytes that are not UTF-8 inside a string
/// still count: a decoder that skips a field it does not read never looks at them.
pub(crate) fn is_json(data: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok()
}

/// What a decoder said of one event or body: `Ok` when it took the input, or an error that
/// names the problem. Input that is not JSON is refused as malformed, saying so (or, on an
/// `error` event, passed on as the server's own message); only the stream's end marker and an
/// empty keep-alive are taken without being JSON.
pub(crate) fn check_result(result: &Result<bool, DecodeError>, event: &str, data: &str) {
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
pub(crate) fn feed(provider: &dyn Provider, events: &[(String, String)]) -> usize {
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

/// Splits `bytes` into server-sent events the way a response body is read, and feeds them to
/// each protocol's decoder with [`feed`]'s checks. Bytes that are not UTF-8 or not SSE end the
/// stream, as they end a real response.
pub(crate) fn feed_sse(bytes: &[u8]) {
    let body = futures::stream::iter([Ok::<_, std::convert::Infallible>(bytes.to_vec())]);
    let events: Vec<(String, String)> = futures::executor::block_on(
        body.eventsource()
            .take_while(|e| std::future::ready(e.is_ok()))
            .filter_map(|e| std::future::ready(e.ok().map(|e| (e.event, e.data))))
            .collect(),
    );
    for provider in providers() {
        feed(provider.as_ref(), &events);
    }
}

/// Decodes `body` as a whole (non-streamed) answer of each protocol: taken only when it is
/// JSON, refused as malformed saying so when it is not.
pub(crate) fn decode_whole(body: &[u8]) {
    for provider in providers() {
        match provider.decode_whole(body, &mut Vec::new()) {
            Ok(()) => assert!(is_json(body), "a body that is not JSON was taken"),
            Err(DecodeError::Malformed(why)) => assert!(
                is_json(body) || why.contains("is not") && why.contains("JSON"),
                "a body that is not JSON was refused without saying so: {why}"
            ),
            Err(DecodeError::Remote { message, .. }) => assert!(
                is_json(body),
                "a body that is not JSON became a server error: {message}"
            ),
        }
    }
}
