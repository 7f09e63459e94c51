//! One session's turn lock: a turn holds it from its start to its last event, consolidation
//! holds it while it rewrites the session. It also knows how many turns wait for it, so a
//! finished answer's follow-up questions give way to the next message instead of holding it
//! back.

use tokio::sync::{MutexGuard, watch};

#[derive(Default)]
pub(crate) struct SessionLock {
    held: tokio::sync::Mutex<()>,
    /// Turns waiting for `held`.
    waiting: watch::Sender<usize>,
}

impl SessionLock {
    /// The lock, for a job that should not hurry whoever holds it.
    pub(crate) async fn lock(&self) -> MutexGuard<'_, ()> {
        self.held.lock().await
    }

    /// The lock, for a turn: while it waits, [`SessionLock::next_turn_waits`] resolves for
    /// the holder.
    pub(crate) async fn lock_for_turn(&self) -> MutexGuard<'_, ()> {
        if let Ok(guard) = self.held.try_lock() {
            return guard;
        }
        let _waiting = Waiting::new(&self.waiting);
        self.held.lock().await
    }

    /// Resolves once a turn waits for this lock (at once if one already does).
    pub(crate) async fn next_turn_waits(&self) {
        let mut waiting = self.waiting.subscribe();
        if waiting.wait_for(|n| *n > 0).await.is_err() {
            // The sender lives as long as `self`: never reached while it does.
            std::future::pending::<()>().await;
        }
    }
}

/// Counts one waiting turn for as long as it lives (the wait may end by cancellation).
struct Waiting<'a>(&'a watch::Sender<usize>);

impl<'a> Waiting<'a> {
    fn new(count: &'a watch::Sender<usize>) -> Waiting<'a> {
        count.send_modify(|n| *n += 1);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn the_holder_hears_when_a_turn_waits_and_not_before() {
        let lock = Arc::new(SessionLock::default());
        let held = lock.lock_for_turn().await;
        // Nobody waits yet: the holder is not told to hurry.
        let early = tokio::time::timeout(Duration::from_millis(50), lock.next_turn_waits()).await;
        assert!(early.is_err(), "no turn waits yet");

        // A consolidation job waiting does not count; a turn does.
        let job = tokio::spawn({
            let lock = lock.clone();
            async move {
                let _g = lock.lock().await;
            }
        });
        let still = tokio::time::timeout(Duration::from_millis(50), lock.next_turn_waits()).await;
        assert!(still.is_err(), "a background job is not a turn");

        let next = tokio::spawn({
            let lock = lock.clone();
            async move {
                let _g = lock.lock_for_turn().await;
            }
        });
        tokio::time::timeout(Duration::from_secs(10), lock.next_turn_waits())
            .await
            .expect("the waiting turn is heard");
        drop(held);
        next.await.expect("the next turn gets the lock");
        job.await.expect("the job gets the lock");
        assert_eq!(*lock.waiting.borrow(), 0, "nobody waits any more");
    }

    #[tokio::test]
    async fn a_turn_cancelled_while_it_waits_stops_counting() {
        let lock = Arc::new(SessionLock::default());
        let held = lock.lock_for_turn().await;
        let waiting = tokio::time::timeout(Duration::from_millis(50), lock.lock_for_turn()).await;
        assert!(waiting.is_err(), "the lock is held");
        assert_eq!(*lock.waiting.borrow(), 0);
        drop(held);
    }
}
