//! Decoded session histories kept between turns.
//!
//! Re-reading and decoding a long session on every turn was most of ContextStage's time
//! (about 6 µs a message: 1,000 messages cost 6 ms). Stored messages are only ever appended,
//! set aside by an edit, or deleted with their session, and migration 0009 bumps the
//! session's `history_version` on the last two. So a cached history stays right while the
//! version is unchanged, and only the rows after its last sequence number are read; a changed
//! version reads everything again. Another process's writes are seen the same way.

use super::StoredMessage;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

/// Sessions whose history is kept (most recently read first).
const SESSIONS_KEPT: usize = 4;

/// One session's cached history.
#[derive(Debug)]
pub(super) struct Cached {
    /// `sessions.history_version` when it was read.
    pub version: i64,
    /// The highest sequence number read.
    pub last_seq: i64,
    pub messages: Vec<StoredMessage>,
}

/// The cache (shared by clones of a `Store`).
#[derive(Debug, Default)]
pub(super) struct HistoryCache {
    entries: Mutex<VecDeque<(String, Cached)>>,
}

impl HistoryCache {
    /// Takes out the cached history of `session` if it was read at `version` (the caller
    /// puts the updated one back, so it is not copied twice).
    pub(super) fn take(&self, session: &str, version: i64) -> Option<Cached> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let at = entries
            .iter()
            .position(|(s, c)| s == session && c.version == version)?;
        entries.remove(at).map(|(_, c)| c)
    }

    /// Keeps `cached` for `session`, dropping the least recently kept session when full.
    pub(super) fn put(&self, session: &str, cached: Cached) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.retain(|(s, _)| s != session);
        entries.push_front((session.to_string(), cached));
        entries.truncate(SESSIONS_KEPT);
    }

    /// Forgets every cached history (after all data was deleted).
    pub(super) fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}
