//! File-system tools — `list_dir`, `search_files`, `write_file`, `edit_file`, one file each —
//! the files that hold the most of some words (`terms.rs`, research's files source), and the
//! helpers every tool shares: the cut that keeps an approval `detail` short, argument
//! parsing, unified diffs, reading a file before it is changed, and running blocking work off
//! the async threads. Resolving and showing the paths the model gives is in `paths.rs`.

mod edit;
mod list;
mod paths;
mod search;
mod terms;
#[cfg(test)]
mod tests;
mod write;

pub use edit::EditFile;
pub use list::ListDir;
pub use paths::resolve_path;
pub use search::SearchFiles;
pub use terms::{FileHit, files_with_words};
pub use write::WriteFile;

use crate::registry::{Action, ToolError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Longest `Action::detail`, in characters; longer ones are cut with a marker.
pub(crate) const DETAIL_MAX_CHARS: usize = 20_000;

/// Cuts `text` to `max` characters with a marker saying how much is missing.
pub(crate) fn cut_chars(text: String, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(&format!(
        "\n[… {} more characters not shown …]",
        total - max
    ));
    out
}

/// Unified diff from `old` to `new` with `--- a/path` / `+++ b/path` headers (`/dev/null` as
/// the old side of a new file); empty when nothing changes.
pub(crate) fn unified_diff(old: &str, new: &str, shown: &str, created: bool) -> String {
    if old == new && !created {
        return String::new();
    }
    let sep = if shown.starts_with('/') { "" } else { "/" };
    let a = if created {
        "/dev/null".to_string()
    } else {
        format!("a{sep}{shown}")
    };
    let b = format!("b{sep}{shown}");
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}

/// Maps an I/O error on `shown` to a message for the model.
pub(super) fn io_failure(e: &std::io::Error, shown: &str, what: &str) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::Failed(format!("no such {what}: {shown}")),
        std::io::ErrorKind::PermissionDenied => {
            ToolError::Failed(format!("permission denied: {shown}"))
        }
        _ => ToolError::Failed(format!("cannot access {shown}: {e}")),
    }
}

/// A file's current content as `write_file` and `edit_file` see it.
pub(super) enum Existing {
    /// No file yet.
    Missing,
    /// UTF-8 text.
    Text(String),
    /// Binary or not UTF-8, with its size.
    Binary(usize),
}

pub(super) async fn read_existing(path: &Path, shown: &str) -> Result<Existing, ToolError> {
    let meta = match tokio::fs::metadata(path).await {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Missing),
        Err(e) => return Err(io_failure(&e, shown, "file")),
    };
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{shown} is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::Failed(format!("{shown} is not a regular file")));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| io_failure(&e, shown, "file"))?;
    if bytes.contains(&0) {
        return Ok(Existing::Binary(bytes.len()));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Existing::Text(text)),
        Err(e) => Ok(Existing::Binary(e.as_bytes().len())),
    }
}

/// Sets a flag when dropped, so blocking work stops when its call is abandoned.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs blocking file-system work off the async threads; it stops early (through `stop`)
/// when the call future is dropped.
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce(&AtomicBool) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let stop = Arc::new(AtomicBool::new(false));
    let _guard = StopOnDrop(stop.clone());
    tokio::task::spawn_blocking(move || work(&stop))
        .await
        .map_err(|e| ToolError::Failed(format!("the search stopped unexpectedly: {e}")))?
}

/// Action of a read-only tool on one path.
pub(super) fn read_action(path: PathBuf) -> Action {
    Action {
        detail: cut_chars(path.display().to_string(), DETAIL_MAX_CHARS),
        reads: vec![path],
        ..Action::default()
    }
}
