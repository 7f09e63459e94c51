//! Background jobs started by ResponseStage after the answer is saved. They may fail or lag;
//! they never change the answer the user already has. Each is traced as a node of its turn.

use echo_core::store::Store;
use echo_core::trace::{SpanStatus, Tracer};
use echo_core::{SessionId, TurnId};
use std::time::Duration;
use tokio_util::task::TaskTracker;

/// Longest session title taken from the first message.
const TITLE_CHARS: usize = 60;

/// Tracks background jobs so one-shot front ends can wait for them before exiting.
#[derive(Clone, Debug, Default)]
pub(crate) struct Background {
    tasks: TaskTracker,
}

/// What a finished turn hands to its background jobs.
pub(crate) struct JobInput {
    pub store: Store,
    pub tracer: Tracer,
    pub session: SessionId,
    pub turn: TurnId,
    pub root_span: String,
    pub input: String,
}

impl Background {
    /// Starts every post-turn job.
    pub(crate) fn after_turn(&self, job: JobInput) {
        self.tasks.spawn(async move {
            let mut span = job
                .tracer
                .start_detached(&job.turn, &job.root_span, "background:session_title")
                .await;
            let title = title_of(&job.input);
            match job
                .store
                .set_session_title_if_empty(&job.session, &title)
                .await
            {
                Ok(()) => span.finish(SpanStatus::Ok).await,
                Err(e) => {
                    tracing::warn!(error = %e, session = %job.session, "session title job failed");
                    span.set_error(&e.to_string());
                    span.finish(SpanStatus::Error).await;
                }
            }
        });
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
