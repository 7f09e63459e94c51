//! The semantic index as the engine holds it: opened on first use (the embedder's weights
//! and the LanceDB table), and let go after a quiet period (`memory.release_after_secs`) so
//! an app left open all day does not keep them; the next use opens them again. Nothing is
//! lost meanwhile: memories changed while it was closed wait in SQLite's outbox, which
//! opening flushes.

use echo_memory::SemanticIndex;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What opening the semantic index came to.
pub(crate) enum Semantic {
    /// Open: memory search ranks by meaning as well as by keywords.
    Ready(SemanticIndex),
    /// Not used, and nothing is wrong: memory is off, no embedder is configured or none could
    /// be loaded (said once in the log). Search uses keywords.
    Off,
    /// There was an embedder but the index could not be opened (no permission, a full disk):
    /// search uses keywords, and `data check` reports why.
    Unavailable(String),
}

/// The open index, kept open while this is held (a search in progress is never cut off).
#[derive(Clone)]
pub(crate) struct SemanticRef(Arc<Semantic>);

impl SemanticRef {
    /// What opening came to.
    pub(crate) fn state(&self) -> &Semantic {
        &self.0
    }

    /// The index, when it is open.
    pub(crate) fn index(&self) -> Option<&SemanticIndex> {
        match &*self.0 {
            Semantic::Ready(index) => Some(index),
            Semantic::Off | Semantic::Unavailable(_) => None,
        }
    }
}

/// Holds the semantic index between uses (one per engine).
#[derive(Default)]
pub(crate) struct SemanticSlot {
    /// One opening at a time; a second caller waits for the first's result.
    opening: tokio::sync::Mutex<()>,
    /// The open index and when it was last used.
    current: Mutex<Option<(Arc<Semantic>, Instant)>>,
}

impl SemanticSlot {
    /// The index if it is open (a use: it restarts the quiet period), without opening it.
    pub(crate) fn get(&self) -> Option<SemanticRef> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let (state, used) = current.as_mut()?;
        *used = Instant::now();
        Some(SemanticRef(state.clone()))
    }

    /// The `k` memories that best match `query` for a conversation (its session and project
    /// in scope), with vectors when the index is open; a recall does not open it.
    pub(crate) async fn recall(
        &self,
        store: &echo_memory::MemoryStore,
        query: &str,
        k: usize,
        (session, project): (&str, Option<&str>),
    ) -> Result<Vec<echo_memory::Recalled>, echo_memory::MemoryError> {
        let opts = echo_memory::RecallOptions {
            k,
            session_id: Some(session.to_string()),
            include_inactive: false,
            project_id: project.map(str::to_string),
        };
        let semantic = self.get();
        let neighbours = semantic
            .as_ref()
            .and_then(|s| s.index())
            .map(|s| s as &dyn echo_memory::Neighbours);
        Ok(store.recall(query, &opts, neighbours).await?.0)
    }

    /// Whether an index is open (not a use).
    #[cfg(test)]
    pub(crate) fn is_open(&self) -> bool {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The index, opened with `open` when it is not open.
    pub(crate) async fn get_or_open(&self, open: impl Future<Output = Semantic>) -> SemanticRef {
        if let Some(open) = self.get() {
            return open;
        }
        let _one = self.opening.lock().await;
        if let Some(open) = self.get() {
            return open;
        }
        let state = Arc::new(open.await);
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((state.clone(), Instant::now()));
        SemanticRef(state)
    }

    /// Lets go of an open index nobody has used for `quiet` and nobody holds now; says
    /// whether it did. "Off" and "unavailable" cost nothing to keep and are kept.
    pub(crate) fn release_if_quiet(&self, quiet: Duration) -> bool {
        let released = {
            let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
            let quiet_enough = matches!(
                &*current,
                Some((state, used)) if matches!(**state, Semantic::Ready(_))
                    && used.elapsed() >= quiet
                    && Arc::strong_count(state) == 1
            );
            if quiet_enough { current.take() } else { None }
        };
        // Dropped outside the lock: closing the table and freeing the weights take a while.
        released.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_open_state_is_kept_while_used_or_held_and_let_go_when_quiet() {
        let slot = SemanticSlot::default();
        assert!(
            slot.get().is_none(),
            "nothing is opened before the first use"
        );
        let opened = slot
            .get_or_open(async { Semantic::Unavailable("no disk".into()) })
            .await;
        assert!(matches!(opened.state(), Semantic::Unavailable(_)));
        assert!(
            !slot.release_if_quiet(Duration::ZERO),
            "an index that could not open is kept (it holds nothing)"
        );
        // A second opening does not run while a state is held.
        let again = slot
            .get_or_open(async { unreachable!("opened twice") })
            .await;
        assert!(matches!(again.state(), Semantic::Unavailable(_)));
    }
}
