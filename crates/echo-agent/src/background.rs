//! Background jobs started by ResponseStage after the answer is saved (session title, memory
//! extraction). They may fail or lag; they never change the answer the user already has.
//! Each is traced as a node of its turn.

use echo_core::TurnId;
use echo_core::trace::{Span, SpanKind, SpanStatus, Tracer};
use std::future::Future;
use std::time::Duration;
use tokio_util::task::TaskTracker;

/// Longest session title taken from the first message.
const TITLE_CHARS: usize = 60;

/// Tracks background jobs so one-shot front ends can wait for them before exiting.
#[derive(Clone, Debug, Default)]
pub(crate) struct Background {
    tasks: TaskTracker,
}

impl Background {
    /// Runs `job` in the background under a node span `background:<name>` (of `kind`) of the
    /// turn's trace. The job gets the span (to record calls and attributes); its error is
    /// logged and traced.
    pub(crate) fn spawn<F, Fut>(
        &self,
        tracer: Tracer,
        turn: TurnId,
        root_span: String,
        (kind, name): (SpanKind, &'static str),
        job: F,
    ) where
        F: FnOnce(Span) -> Fut + Send + 'static,
        Fut: Future<Output = (Span, Result<(), String>)> + Send + 'static,
    {
        self.tasks.spawn(async move {
            let span = tracer
                .start_detached(&turn, &root_span, kind, &format!("background:{name}"))
                .await;
            let (mut span, result) = job(span).await;
            match result {
                Ok(()) => span.finish(SpanStatus::Ok).await,
                Err(e) => {
                    tracing::warn!(error = %e, turn = %turn, job = name, "background job failed");
                    span.set_error(&e);
                    span.finish(SpanStatus::Error).await;
                }
            }
        });
    }

    /// Runs an untraced background task (it may start traced work itself), tracked like jobs.
    pub(crate) fn track<Fut>(&self, task: Fut)
    where
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.tasks.spawn(task);
    }

    /// Waits until every job started so far has ended, or `limit` passes. Returns whether
    /// all ended.
    pub(crate) async fn wait(&self, limit: Duration) -> bool {
        self.tasks.close();
        let done = tokio::time::timeout(limit, self.tasks.wait()).await.is_ok();
        self.tasks.reopen();
        done
    }
}

/// A one-line title: the first line of the first message, cut at a word boundary.
pub(crate) fn title_of(input: &str) -> String {
    let line = input
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= TITLE_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(TITLE_CHARS).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > TITLE_CHARS / 2 => cut[..i].to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::title_of;

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(title_of("\n  hello there\nsecond"), "hello there");
        let long = "word ".repeat(30);
        let t = title_of(&long);
        assert!(t.ends_with('…') && t.chars().count() <= 61, "{t}");
        assert_eq!(title_of(&"\u{4f60}".repeat(100)).chars().count(), 61);
    }
}
