//! Sending an answer over the wire, including the broken ways: an SSE body paced by
//! `chunk_delay_ms`, and bodies that are cut (the connection is dropped) or hang (stay
//! open and silent) after some events.

use std::io;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures::stream::{self, BoxStream, StreamExt};

use super::script::Step;

/// How a response body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every event is sent and the body ends properly.
    Complete,
    /// This many events are sent, then the connection is dropped.
    CutAfter(usize),
    /// This many events are sent, then nothing more, without closing.
    HangAfter(usize),
}

impl Ending {
    /// The ending a step asks for.
    pub fn of(step: &Step) -> Self {
        match (step.cut_after_chunks, step.hang_after_chunks) {
            (Some(n), _) => Ending::CutAfter(n),
            (None, Some(n)) => Ending::HangAfter(n),
            (None, None) => Ending::Complete,
        }
    }

    /// The same ending after `n` chunks.
    fn with_count(self, n: usize) -> Self {
        match self {
            Ending::Complete => Ending::Complete,
            Ending::CutAfter(_) => Ending::CutAfter(n),
            Ending::HangAfter(_) => Ending::HangAfter(n),
        }
    }
}

/// How long the body waits after its last event before dropping the connection, so the
/// server flushes the events it did send before the connection goes.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(20);

type Chunks = BoxStream<'static, io::Result<Bytes>>;

/// `chunks`, then the ending: nothing, an error (hyper then drops the connection without
/// finishing the body), or a stream that never yields again.
fn with_ending(chunks: Chunks, ending: Ending) -> Body {
    match ending {
        Ending::Complete => Body::from_stream(chunks),
        Ending::CutAfter(n) => {
            let cut = stream::once(async {
                tokio::time::sleep(FLUSH_BEFORE_CUT).await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "cut_after_chunks",
                ))
            });
            Body::from_stream(chunks.take(n).chain(cut))
        }
        Ending::HangAfter(n) => Body::from_stream(chunks.take(n).chain(stream::pending())),
    }
}

/// A `text/event-stream` response sending `events` with `chunk_delay` between them.
pub fn event_stream(events: Vec<String>, chunk_delay: Duration, ending: Ending) -> Response {
    let chunks = stream::iter(events.into_iter().enumerate())
        .then(move |(i, event)| async move {
            if i > 0 && !chunk_delay.is_zero() {
                tokio::time::sleep(chunk_delay).await;
            }
            Ok(Bytes::from(event))
        })
        .boxed();
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    (headers, with_ending(chunks, ending)).into_response()
}

/// A JSON response. Cut or hung, it sends the first half of the body and then drops the
/// connection or goes silent (a non-streamed body is one chunk, so the count is ignored).
pub fn json(body: &serde_json::Value, ending: Ending) -> Response {
    let bytes = Bytes::from(body.to_string());
    let headers = [(header::CONTENT_TYPE, "application/json")];
    match ending {
        Ending::Complete => (headers, bytes).into_response(),
        Ending::CutAfter(_) | Ending::HangAfter(_) => {
            let half = bytes.slice(..bytes.len() / 2);
            let chunks = stream::iter([Ok(half)]).boxed();
            (headers, with_ending(chunks, ending.with_count(1))).into_response()
        }
    }
}
