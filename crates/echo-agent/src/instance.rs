//! This process's identity in the data directory, so a crash can be told from a live turn.
//!
//! Each process that opens the engine holds an exclusive lock on `run/<instance>.lock` for its
//! whole life. A turn records its owner instance; if that lock can be taken by someone else,
//! the owner is gone and its unfinished turns were interrupted by a crash.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// The running process's instance lock.
#[derive(Debug)]
pub(crate) struct Instance {
    id: String,
    dir: PathBuf,
    _lock: File,
}

impl Instance {
    /// Creates and locks this process's instance file.
    pub(crate) fn acquire(home: &Path) -> std::io::Result<Instance> {
        let dir = home.join("run");
        std::fs::create_dir_all(&dir)?;
        let id = uuid::Uuid::now_v7().to_string();
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(dir.join(format!("{id}.lock")))?;
        file.try_lock().map_err(|e| match e {
            TryLockError::Error(e) => e,
            TryLockError::WouldBlock => std::io::Error::other("instance lock already held"),
        })?;
        Ok(Instance {
            id,
            dir,
            _lock: file,
        })
    }

    /// This instance's id (stored as the owner of its turns).
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Whether the instance `owner` still runs. Unknown or unlockable-by-us means alive only
    /// while its lock is held; a dead owner's lock file is removed.
    pub(crate) fn is_alive(&self, owner: &str) -> bool {
        if owner == self.id {
            return true;
        }
        if owner.contains(['/', '\\']) || owner.contains("..") {
            return false;
        }
        let path = self.dir.join(format!("{owner}.lock"));
        let Ok(file) = OpenOptions::new().write(true).open(&path) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                drop(file);
                let _ = std::fs::remove_file(&path);
                false
            }
            Err(TryLockError::WouldBlock) => true,
            Err(TryLockError::Error(_)) => true,
        }
    }

    /// Removes lock files of instances that are gone.
    pub(crate) fn sweep_stale(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(owner) = name.strip_suffix(".lock") {
                self.is_alive(owner);
            }
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join(format!("{}.lock", self.id)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_alive_and_a_released_one_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = Instance::acquire(dir.path()).expect("a");
        let b = Instance::acquire(dir.path()).expect("b");
        assert!(b.is_alive(a.id()));
        assert!(!b.is_alive("never-existed"));
        let a_id = a.id().to_string();
        drop(a);
        assert!(!b.is_alive(&a_id));
    }
}
