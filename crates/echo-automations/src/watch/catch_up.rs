//! What changed while nothing watched: when a watch rule is taken up again (after a quit or
//! a crash, an edit, a folder that came back), the files of its folders that changed after
//! its watermark (`watched_until`) are handed over as if the watcher had seen them.
//!
//! A file counts as changed when its mtime or, on Unix, its ctime is later: a file moved in
//! keeps its old mtime, but the move sets its ctime. It is reported as `created` when the
//! rule only wants creations or its birth time is later too, else as `modified`. Deletions
//! while nothing watched cannot be known and are not reported.

use super::{Settled, file_stat};
use crate::filter::FileFilter;
use chrono::{DateTime, Utc};
use echo_core::FileEvent;
use std::path::Path;
use std::time::SystemTime;

/// Most directory entries one catch-up looks at (a rule over a huge tree stays bounded).
pub const CATCH_UP_MAX: usize = 200_000;

/// Files of `filter`'s folders changed at or after `since`, oldest change first (then by
/// path).
pub fn changed_since(filter: &FileFilter, since: DateTime<Utc>) -> Vec<Settled> {
    let since = SystemTime::from(since);
    let depth = if filter.recursive { usize::MAX } else { 1 };
    let mut found: Vec<(SystemTime, Settled)> = Vec::new();
    let mut looked = 0usize;
    for folder in &filter.folders {
        for entry in walkdir::WalkDir::new(folder)
            .min_depth(1)
            .max_depth(depth)
            .into_iter()
            .flatten()
        {
            looked += 1;
            if looked > CATCH_UP_MAX {
                tracing::warn!(
                    folder = %folder.display(),
                    "catch-up stopped after {CATCH_UP_MAX} entries"
                );
                break;
            }
            if !entry.file_type().is_file() || !filter.matches(entry.path()) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            let changed = changed_at(&meta);
            if changed < since {
                continue;
            }
            let born_after = meta.created().is_ok_and(|b| b >= since);
            let Some(kind) = kind_for(filter, entry.path(), born_after) else {
                continue;
            };
            let Some((size, mtime)) = file_stat(entry.path()) else {
                continue;
            };
            found.push((
                changed,
                Settled {
                    kind,
                    path: entry.path().to_path_buf(),
                    old_path: None,
                    size: Some(size),
                    mtime_ns: Some(mtime),
                    at: DateTime::<Utc>::from(changed),
                },
            ));
        }
    }
    found.sort_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.path.cmp(&y.path)));
    found.into_iter().map(|(_, s)| s).collect()
}

/// The later of a file's mtime and (Unix) ctime.
fn changed_at(meta: &std::fs::Metadata) -> SystemTime {
    let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ctime = u64::try_from(meta.ctime())
            .ok()
            .and_then(|secs| {
                SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(
                    secs,
                    u32::try_from(meta.ctime_nsec()).unwrap_or(0),
                ))
            })
            .unwrap_or(SystemTime::UNIX_EPOCH);
        mtime.max(ctime)
    }
    #[cfg(not(unix))]
    mtime
}

/// How a change found by the catch-up is reported, if the rule wants it.
fn kind_for(filter: &FileFilter, path: &Path, born_after: bool) -> Option<FileEvent> {
    let created = filter.wants(FileEvent::Created, path);
    let modified = filter.wants(FileEvent::Modified, path);
    match (created, modified) {
        (true, true) if born_after => Some(FileEvent::Created),
        (true, true) | (false, true) => Some(FileEvent::Modified),
        (true, false) => Some(FileEvent::Created),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Watch;
    use std::time::Duration;

    fn filter(dir: &Path, events: &[FileEvent]) -> FileFilter {
        let mut watch: Watch = serde_json::from_value(serde_json::json!({
            "folders": [dir.to_string_lossy()],
        }))
        .expect("watch");
        watch.events = events.to_vec();
        FileFilter::new(&watch).expect("filter")
    }

    #[test]
    fn files_changed_or_moved_in_after_the_watermark_are_found_and_others_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let away = tempfile::tempdir_in(dir.path().parent().expect("parent")).expect("away");
        std::fs::write(dir.path().join("old.pdf"), "old").expect("write");
        // Written before the watermark, moved in after it: its mtime is old, its ctime new.
        std::fs::write(away.path().join("moved.pdf"), "moved").expect("write");
        // The watermark is a file time (the kernel's clock for them is coarse): later
        // writes are at or after it, earlier ones (a tick away) before it.
        std::thread::sleep(Duration::from_millis(50));
        let marker = away.path().join("marker");
        std::fs::write(&marker, "").expect("marker");
        let since = DateTime::<Utc>::from(
            std::fs::metadata(&marker)
                .and_then(|m| m.modified())
                .expect("mtime"),
        );
        std::fs::rename(away.path().join("moved.pdf"), dir.path().join("moved.pdf"))
            .expect("move in");
        std::fs::write(dir.path().join("new.pdf"), "new").expect("write");
        std::fs::write(dir.path().join("new.pdf~"), "an editor's backup").expect("write");
        std::fs::write(dir.path().join(".hidden.pdf"), "hidden").expect("write");

        let found = changed_since(&filter(dir.path(), &[FileEvent::Created]), since);
        let mut names: Vec<_> = found
            .iter()
            .map(|s| {
                s.path
                    .file_name()
                    .expect("a name")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        assert_eq!(names, ["moved.pdf", "new.pdf"]);
        assert!(found.iter().all(|s| s.kind == FileEvent::Created));
        let new = found
            .iter()
            .find(|s| s.path.ends_with("new.pdf"))
            .expect("new.pdf");
        assert_eq!(new.size, Some(3));

        // A rule that wants only deletions has nothing to catch up on.
        assert!(changed_since(&filter(dir.path(), &[FileEvent::Deleted]), since).is_empty());
        // A rule that wants modifications gets them as such.
        let found = changed_since(&filter(dir.path(), &[FileEvent::Modified]), since);
        assert!(found.iter().all(|s| s.kind == FileEvent::Modified));
        assert_eq!(found.len(), 2);
    }
}
