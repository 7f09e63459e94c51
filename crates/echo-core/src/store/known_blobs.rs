//! The `trace_blobs` this process has written or found, so that capturing a call whose history
//! was captured before costs the new messages only, not the whole history again. Valid while
//! the database's capture epoch (migration 0017, bumped by every deletion from `trace_blobs`)
//! is the one it was filled under; the capturing transaction reads the epoch first.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

/// Hashes kept at most (about 2 MB; a 200-turn session's calls use some 1,000); past it, the
/// set starts again (a capture then checks every message once more, as it did before the set
/// existed).
const MAX_KNOWN: usize = 20_000;

/// Blob hashes known to be stored, under one epoch.
#[derive(Debug, Default)]
pub(crate) struct KnownBlobs {
    inner: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    epoch: i64,
    hashes: HashSet<String>,
}

impl KnownBlobs {
    /// Which of `hashes` are stored, as far as this process knows under `epoch` (the
    /// database's epoch now); an older epoch voids what it knew.
    pub(crate) fn known(&self, epoch: i64, hashes: &[&str]) -> Vec<bool> {
        let mut known = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if known.epoch != epoch {
            known.hashes.clear();
            known.epoch = epoch;
        }
        hashes.iter().map(|h| known.hashes.contains(*h)).collect()
    }

    /// Records that `hashes` are stored as of `epoch` (after the transaction committed).
    pub(crate) fn stored<'a>(&self, epoch: i64, hashes: impl IntoIterator<Item = &'a str>) {
        let mut known = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if known.epoch != epoch {
            return;
        }
        if known.hashes.len() > MAX_KNOWN {
            known.hashes.clear();
        }
        known.hashes.extend(hashes.into_iter().map(String::from));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_epoch_forgets_and_an_old_one_records_nothing() {
        let known = KnownBlobs::default();
        known.stored(0, ["a", "b"]);
        assert_eq!(known.known(0, &["a", "c"]), [true, false]);
        assert_eq!(known.known(1, &["a"]), [false], "a deletion voids it");
        known.stored(0, ["a"]);
        assert_eq!(
            known.known(1, &["a"]),
            [false],
            "a capture made under the old epoch records nothing"
        );
    }
}
