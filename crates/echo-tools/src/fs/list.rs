//! `list_dir`: the entries of a directory with their type and size, optionally recursive
//! (honouring .gitignore/.ignore files), capped with a marker.

use super::{blocking, io_failure, read_action, resolve_path};
use crate::TypedTool;
use crate::registry::{Action, Risk, ToolContext, ToolError};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most entries `list_dir` shows.
pub(super) const LIST_DIR_MAX_ENTRIES: usize = 500;
/// Default and largest `max_depth` of a recursive `list_dir`.
const LIST_DIR_DEFAULT_DEPTH: u32 = 3;
/// Beyond this many hidden entries `list_dir` stops counting them.
const LIST_DIR_COUNT_LIMIT: usize = 100_000;

/// `list_dir`: the entries of a directory, optionally recursive.
#[derive(Debug)]
pub struct ListDir;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list, absolute or relative to the working directory (default: the working
    /// directory).
    path: Option<String>,
    /// Also list subdirectories, skipping what .gitignore/.ignore files exclude and `.git`.
    recursive: Option<bool>,
    /// With `recursive`: how many levels to descend; 1 lists only the directory's own entries
    /// (default 3).
    #[schemars(range(min = 1, max = 20))]
    max_depth: Option<u32>,
}

#[async_trait]
impl TypedTool for ListDir {
    type Args = ListDirArgs;
    const NAME: &'static str = "list_dir";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::texts::LIST_DIR.text()
    }
    async fn action(
        &self,
        args: ListDirArgs,
        ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        Ok(Some(read_action(resolve_path(
            &ctx.workdir,
            args.path.as_deref().unwrap_or("."),
        ))))
    }
    async fn call(&self, args: ListDirArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let raw = args.path.unwrap_or_else(|| ".".into());
        let path = resolve_path(&ctx.workdir, &raw);
        let meta = tokio::fs::metadata(&path)
            .await
            .map_err(|e| io_failure(&e, &raw, "directory"))?;
        if !meta.is_dir() {
            return Err(ToolError::Failed(format!(
                "{raw} is a file, not a directory; use read_file to read it"
            )));
        }
        let depth = if args.recursive.unwrap_or(false) {
            args.max_depth.unwrap_or(LIST_DIR_DEFAULT_DEPTH).max(1) as usize
        } else {
            1
        };
        blocking(move |stop| list(&path, depth, LIST_DIR_MAX_ENTRIES, stop)).await
    }
}

/// One line of `list_dir` output for an entry at `rel`.
fn entry_line(rel: &str, path: &Path, meta: Option<&std::fs::Metadata>) -> String {
    let Some(meta) = meta else {
        return format!("{rel}  (unreadable)");
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        format!("{rel} -> {target}  (symlink)")
    } else if ft.is_dir() {
        format!("{rel}/")
    } else if ft.is_file() {
        format!("{rel}  ({} bytes)", meta.len())
    } else {
        format!("{rel}  (special file)")
    }
}

/// Lists `root` down to `depth` levels (1 = its own entries), at most `cap` lines.
fn list(root: &Path, depth: usize, cap: usize, stop: &AtomicBool) -> Result<String, ToolError> {
    let mut lines = Vec::new();
    let mut more = 0usize;
    let mut unreadable = 0usize;
    if depth <= 1 {
        // Plain listing: every entry, hidden and ignored ones included, like `ls -A`.
        let read = std::fs::read_dir(root)
            .map_err(|e| io_failure(&e, &root.display().to_string(), "directory"))?;
        let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if lines.len() >= cap {
                more += 1;
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let meta = std::fs::symlink_metadata(&path).ok();
            lines.push(entry_line(&name, &path, meta.as_ref()));
        }
    } else {
        let walk = ignore::WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .max_depth(Some(depth))
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walk {
            if stop.load(Ordering::Relaxed) {
                return Err(ToolError::Failed("cancelled".into()));
            }
            let entry = match entry {
                Ok(e) => e,
                Err(_) => {
                    unreadable += 1;
                    continue;
                }
            };
            if entry.depth() == 0 {
                continue;
            }
            if lines.len() >= cap {
                more += 1;
                if more >= LIST_DIR_COUNT_LIMIT {
                    break;
                }
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(entry.path()).ok();
            lines.push(entry_line(&rel, entry.path(), meta.as_ref()));
        }
    }
    if lines.is_empty() {
        lines.push("(empty directory)".into());
    }
    if more >= LIST_DIR_COUNT_LIMIT {
        lines.push(format!(
            "[… more than {more} more entries not shown; list a subdirectory or lower max_depth]"
        ));
    } else if more > 0 {
        lines.push(format!(
            "[… {more} more entries not shown; list a subdirectory or lower max_depth]"
        ));
    }
    if unreadable > 0 {
        lines.push(format!("[{unreadable} entries could not be read]"));
    }
    Ok(lines.join("\n"))
}
