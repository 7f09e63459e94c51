//! File-system tools — `list_dir`, `search_files`, `write_file`, `edit_file` — and the helpers
//! every tool shares: resolving the paths the model gives, showing them, unified diffs and the
//! cut that keeps an approval `detail` short.

use crate::registry::{Action, Risk, Tool, ToolContext, ToolError, schema_of};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Longest `Action::detail`, in characters; longer ones are cut with a marker.
pub(crate) const DETAIL_MAX_CHARS: usize = 20_000;
/// Most entries `list_dir` shows.
const LIST_DIR_MAX_ENTRIES: usize = 500;
/// Default and largest `max_depth` of a recursive `list_dir`.
const LIST_DIR_DEFAULT_DEPTH: u32 = 3;
/// Beyond this many hidden entries `list_dir` stops counting them.
const LIST_DIR_COUNT_LIMIT: usize = 100_000;
/// Default number of matching lines `search_files` returns.
const SEARCH_DEFAULT_RESULTS: u32 = 200;
/// Files larger than this are skipped by `search_files`.
const SEARCH_MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// A matching line longer than this many characters is cut.
const SEARCH_MAX_LINE_CHARS: usize = 400;

/// Resolves a path the model gave: a leading `~` becomes the home directory, a relative path
/// is taken relative to `workdir`, and `.`/`..` are removed lexically. The file system is not
/// consulted (symlinks are left for the approval gate to judge).
pub fn resolve_path(workdir: &Path, raw: &str) -> PathBuf {
    let joined = expand_home(raw).unwrap_or_else(|| workdir.join(raw));
    normalize(&joined)
}

fn expand_home(raw: &str) -> Option<PathBuf> {
    let rest = if raw == "~" {
        ""
    } else {
        raw.strip_prefix("~/")?
    };
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(rest))
}

/// Removes `.` and resolves `..` against the preceding component, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            Component::Normal(n) => out.push(n),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// How a resolved path is shown to the model: relative to the workdir when inside it.
pub(crate) fn shown_path(workdir: &Path, path: &Path) -> String {
    match path.strip_prefix(normalize(workdir)) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

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

/// Parses validated arguments into their Rust type.
pub(crate) fn parse_args<T: DeserializeOwned>(args: &serde_json::Value) -> Result<T, ToolError> {
    T::deserialize(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
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
fn io_failure(e: &std::io::Error, shown: &str, what: &str) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::Failed(format!("no such {what}: {shown}")),
        std::io::ErrorKind::PermissionDenied => {
            ToolError::Failed(format!("permission denied: {shown}"))
        }
        _ => ToolError::Failed(format!("cannot access {shown}: {e}")),
    }
}

/// A file's current content as `write_file` and `edit_file` see it.
enum Existing {
    /// No file yet.
    Missing,
    /// UTF-8 text.
    Text(String),
    /// Binary or not UTF-8, with its size.
    Binary(usize),
}

async fn read_existing(path: &Path, shown: &str) -> Result<Existing, ToolError> {
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
async fn blocking<T: Send + 'static>(
    work: impl FnOnce(&AtomicBool) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let stop = Arc::new(AtomicBool::new(false));
    let _guard = StopOnDrop(stop.clone());
    tokio::task::spawn_blocking(move || work(&stop))
        .await
        .map_err(|e| ToolError::Failed(format!("the search stopped unexpectedly: {e}")))?
}

/// Action of a read-only tool on one path.
fn read_action(path: PathBuf) -> Action {
    Action {
        detail: cut_chars(path.display().to_string(), DETAIL_MAX_CHARS),
        reads: vec![path],
        ..Action::default()
    }
}

// ---------------------------------------------------------------------------------------------
// list_dir

/// `list_dir`: the entries of a directory, optionally recursive.
#[derive(Debug)]
pub struct ListDir;

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDirArgs {
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
impl Tool for ListDir {
    fn name(&self) -> &str {
        "list_dir"
    }
    fn description(&self) -> &str {
        crate::texts::LIST_DIR.text()
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<ListDirArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    async fn action(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<Action, ToolError> {
        let args: ListDirArgs = parse_args(args)?;
        Ok(read_action(resolve_path(
            &ctx.workdir,
            args.path.as_deref().unwrap_or("."),
        )))
    }
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: ListDirArgs = parse_args(&args)?;
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

// ---------------------------------------------------------------------------------------------
// search_files

/// `search_files`: a ripgrep-like search over the files under a path.
#[derive(Debug)]
pub struct SearchFiles;

/// Arguments of `search_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchFilesArgs {
    /// What to look for: a regular expression (Rust/ripgrep syntax) matched against each line,
    /// or plain text when `literal` is true.
    pattern: String,
    /// File or directory to search, absolute or relative to the working directory (default:
    /// the working directory).
    path: Option<String>,
    /// Treat `pattern` as plain text rather than a regular expression.
    literal: Option<bool>,
    /// Ignore upper/lower case when matching.
    case_insensitive: Option<bool>,
    /// Only search files whose path (relative to `path`) or name matches this glob, e.g.
    /// `*.rs` or `src/**/*.ts`.
    glob: Option<String>,
    /// Most matching lines to return (default 200).
    #[schemars(range(min = 1, max = 2000))]
    max_results: Option<u32>,
}

/// A compiled search.
struct Search {
    regex: regex::bytes::Regex,
    glob: Option<globset::GlobMatcher>,
    max_results: usize,
}

impl SearchFilesArgs {
    fn compile(&self) -> Result<Search, ToolError> {
        let source = if self.literal.unwrap_or(false) {
            regex::escape(&self.pattern)
        } else {
            self.pattern.clone()
        };
        let regex = regex::bytes::RegexBuilder::new(&source)
            .case_insensitive(self.case_insensitive.unwrap_or(false))
            .build()
            .map_err(|e| {
                ToolError::InvalidArguments(format!(
                    "invalid regex {:?}: {e}; set literal to true to search for plain text",
                    self.pattern
                ))
            })?;
        let glob = match &self.glob {
            Some(g) => Some(
                globset::Glob::new(g)
                    .map_err(|e| ToolError::InvalidArguments(format!("invalid glob {g:?}: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        Ok(Search {
            regex,
            glob,
            max_results: self.max_results.unwrap_or(SEARCH_DEFAULT_RESULTS).max(1) as usize,
        })
    }
}

#[async_trait]
impl Tool for SearchFiles {
    fn name(&self) -> &str {
        "search_files"
    }
    fn description(&self) -> &str {
        crate::texts::SEARCH_FILES.text()
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<SearchFilesArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    async fn action(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<Action, ToolError> {
        let args: SearchFilesArgs = parse_args(args)?;
        args.compile()?;
        Ok(read_action(resolve_path(
            &ctx.workdir,
            args.path.as_deref().unwrap_or("."),
        )))
    }
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: SearchFilesArgs = parse_args(&args)?;
        let search = args.compile()?;
        let raw = args.path.clone().unwrap_or_else(|| ".".into());
        let root = resolve_path(&ctx.workdir, &raw);
        if let Err(e) = tokio::fs::metadata(&root).await {
            return Err(io_failure(&e, &raw, "file or directory"));
        }
        let workdir = ctx.workdir.clone();
        let pattern = args.pattern;
        blocking(move |stop| {
            search_tree(&search, &root, &workdir, stop).map(|found| found.render(&pattern, &raw))
        })
        .await
    }
}

/// What a search found.
#[derive(Default)]
struct Found {
    lines: Vec<String>,
    files_searched: usize,
    files_matched: usize,
    binary_skipped: usize,
    large_skipped: usize,
    unreadable: usize,
    more: bool,
    max_results: usize,
}

impl Found {
    fn render(self, pattern: &str, shown_root: &str) -> String {
        let mut notes = Vec::new();
        if self.binary_skipped > 0 {
            notes.push(format!("{} binary files skipped", self.binary_skipped));
        }
        if self.large_skipped > 0 {
            notes.push(format!(
                "{} files over {} MiB skipped",
                self.large_skipped,
                SEARCH_MAX_FILE_BYTES / (1024 * 1024)
            ));
        }
        if self.unreadable > 0 {
            notes.push(format!("{} files could not be read", self.unreadable));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("; {}", notes.join("; "))
        };
        if self.lines.is_empty() {
            return format!(
                "no matches for {pattern:?} in {shown_root} ({} files searched{notes})",
                self.files_searched
            );
        }
        let mut out = self.lines.join("\n");
        if self.more {
            out.push_str(&format!(
                "\n[… stopped after {} matching lines; there are more — narrow the pattern, path or glob, or raise max_results{notes}]",
                self.max_results
            ));
        } else {
            out.push_str(&format!(
                "\n[search_files: {} matching lines in {} files ({} files searched){notes}]",
                self.lines.len(),
                self.files_matched,
                self.files_searched
            ));
        }
        out
    }
}

fn search_tree(
    search: &Search,
    root: &Path,
    workdir: &Path,
    stop: &AtomicBool,
) -> Result<Found, ToolError> {
    let mut found = Found {
        max_results: search.max_results,
        ..Found::default()
    };
    let walk = ignore::WalkBuilder::new(root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    'files: for entry in walk {
        if stop.load(Ordering::Relaxed) {
            return Err(ToolError::Failed("cancelled".into()));
        }
        let Ok(entry) = entry else {
            found.unreadable += 1;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if let Some(glob) = &search.glob {
            let rel = path.strip_prefix(root).unwrap_or(path);
            let name_matches = path.file_name().is_some_and(|n| glob.is_match(n));
            if !glob.is_match(rel) && !name_matches {
                continue;
            }
        }
        if entry
            .metadata()
            .is_ok_and(|m| m.len() > SEARCH_MAX_FILE_BYTES)
        {
            found.large_skipped += 1;
            continue;
        }
        let Ok(bytes) = std::fs::read(path) else {
            found.unreadable += 1;
            continue;
        };
        found.files_searched += 1;
        if bytes.contains(&0) {
            found.binary_skipped += 1;
            continue;
        }
        if !search.regex.is_match(&bytes) {
            continue;
        }
        found.files_matched += 1;
        let shown = shown_path(workdir, path);
        for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !search.regex.is_match(line) {
                continue;
            }
            if found.lines.len() >= search.max_results {
                found.more = true;
                break 'files;
            }
            let text = String::from_utf8_lossy(line);
            let text = if text.chars().count() > SEARCH_MAX_LINE_CHARS {
                let cut: String = text.chars().take(SEARCH_MAX_LINE_CHARS).collect();
                format!("{cut} […]")
            } else {
                text.into_owned()
            };
            found.lines.push(format!("{shown}:{}: {text}", i + 1));
        }
    }
    Ok(found)
}

// ---------------------------------------------------------------------------------------------
// write_file

/// `write_file`: creates or overwrites a UTF-8 text file.
#[derive(Debug)]
pub struct WriteFile;

/// Arguments of `write_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    /// Path of the file, absolute or relative to the working directory; missing parent
    /// directories are created.
    path: String,
    /// The complete new content of the file.
    content: String,
}

/// What a `write_file` call would change.
struct WritePlan {
    path: PathBuf,
    shown: String,
    existing: Existing,
    diff: String,
}

async fn plan_write(args: &WriteFileArgs, ctx: &ToolContext) -> Result<WritePlan, ToolError> {
    let path = resolve_path(&ctx.workdir, &args.path);
    let shown = shown_path(&ctx.workdir, &path);
    let existing = read_existing(&path, &shown).await?;
    let diff = match &existing {
        Existing::Missing => unified_diff("", &args.content, &shown, true),
        Existing::Text(old) => unified_diff(old, &args.content, &shown, false),
        Existing::Binary(_) => String::new(),
    };
    Ok(WritePlan {
        path,
        shown,
        existing,
        diff,
    })
}

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        "write_file"
    }
    fn description(&self) -> &str {
        crate::texts::WRITE_FILE.text()
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<WriteFileArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::Write
    }
    async fn action(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<Action, ToolError> {
        let args: WriteFileArgs = parse_args(args)?;
        let plan = plan_write(&args, ctx).await?;
        let detail = match plan.existing {
            Existing::Binary(old) => format!(
                "overwrite {} (a binary or non-UTF-8 file of {old} bytes) with {} bytes of text",
                plan.shown,
                args.content.len()
            ),
            Existing::Text(_) if plan.diff.is_empty() => {
                format!("no change: {} already has this content", plan.shown)
            }
            _ => plan.diff,
        };
        Ok(Action {
            detail: cut_chars(detail, DETAIL_MAX_CHARS),
            writes: vec![plan.path],
            ..Action::default()
        })
    }
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: WriteFileArgs = parse_args(&args)?;
        let plan = plan_write(&args, ctx).await?;
        if let Some(parent) = plan.path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| {
                ToolError::Failed(format!(
                    "cannot create the directory {}: {e}",
                    parent.display()
                ))
            })?;
        }
        tokio::fs::write(&plan.path, args.content.as_bytes())
            .await
            .map_err(|e| io_failure(&e, &plan.shown, "file"))?;
        let bytes = args.content.len();
        Ok(match plan.existing {
            Existing::Missing => format!("created {} ({bytes} bytes)", plan.shown),
            Existing::Binary(old) => format!(
                "overwrote {} ({bytes} bytes; it was a binary or non-UTF-8 file of {old} bytes)",
                plan.shown
            ),
            Existing::Text(old) if plan.diff.is_empty() => format!(
                "overwrote {} ({bytes} bytes, was {} bytes; content unchanged)",
                plan.shown,
                old.len()
            ),
            Existing::Text(old) => format!(
                "overwrote {} ({bytes} bytes, was {} bytes)\n{}",
                plan.shown,
                old.len(),
                cut_chars(plan.diff, DETAIL_MAX_CHARS)
            ),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// edit_file

/// `edit_file`: replaces an exact piece of text in a file.
#[derive(Debug)]
pub struct EditFile;

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditFileArgs {
    /// Path of the file, absolute or relative to the working directory.
    path: String,
    /// The exact text to replace, including whitespace and indentation; it must occur exactly
    /// once unless `replace_all` is true.
    old_text: String,
    /// The text to put in its place.
    new_text: String,
    /// Replace every occurrence of `old_text` instead of requiring exactly one.
    replace_all: Option<bool>,
}

/// What an `edit_file` call would change.
struct EditPlan {
    path: PathBuf,
    shown: String,
    new: String,
    count: usize,
    diff: String,
}

async fn plan_edit(args: &EditFileArgs, ctx: &ToolContext) -> Result<EditPlan, ToolError> {
    if args.old_text.is_empty() {
        return Err(ToolError::InvalidArguments(
            "old_text is empty; give the exact text to replace (use write_file to create a file)"
                .into(),
        ));
    }
    if args.old_text == args.new_text {
        return Err(ToolError::InvalidArguments(
            "old_text and new_text are identical; nothing would change".into(),
        ));
    }
    let path = resolve_path(&ctx.workdir, &args.path);
    let shown = shown_path(&ctx.workdir, &path);
    let old = match read_existing(&path, &shown).await? {
        Existing::Missing => {
            return Err(ToolError::Failed(format!(
                "no such file: {shown}; use write_file to create a file"
            )));
        }
        Existing::Binary(n) => {
            return Err(ToolError::Failed(format!(
                "{shown} is a binary or non-UTF-8 file ({n} bytes); edit_file only edits UTF-8 text"
            )));
        }
        Existing::Text(t) => t,
    };
    let count = old.matches(args.old_text.as_str()).count();
    let replace_all = args.replace_all.unwrap_or(false);
    if count == 0 {
        let hint = if old.contains("\r\n") && !args.old_text.contains("\r\n") {
            " (the file has CRLF line endings)"
        } else {
            ""
        };
        return Err(ToolError::InvalidArguments(format!(
            "old_text matched 0 times in {shown}; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation{hint}"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::InvalidArguments(format!(
            "old_text matched {count} times in {shown}; nothing was changed. Include more surrounding lines so it matches exactly once, or set replace_all to true to replace all {count}"
        )));
    }
    let new = if replace_all {
        old.replace(args.old_text.as_str(), &args.new_text)
    } else {
        old.replacen(args.old_text.as_str(), &args.new_text, 1)
    };
    let diff = unified_diff(&old, &new, &shown, false);
    Ok(EditPlan {
        path,
        shown,
        new,
        count,
        diff,
    })
}

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &str {
        "edit_file"
    }
    fn description(&self) -> &str {
        crate::texts::EDIT_FILE.text()
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<EditFileArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::Write
    }
    async fn action(
        &self,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<Action, ToolError> {
        let args: EditFileArgs = parse_args(args)?;
        let plan = plan_edit(&args, ctx).await?;
        Ok(Action {
            detail: cut_chars(plan.diff, DETAIL_MAX_CHARS),
            writes: vec![plan.path],
            ..Action::default()
        })
    }
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: EditFileArgs = parse_args(&args)?;
        // Planned again: the file may have changed since the approval.
        let plan = plan_edit(&args, ctx).await?;
        tokio::fs::write(&plan.path, plan.new.as_bytes())
            .await
            .map_err(|e| io_failure(&e, &plan.shown, "file"))?;
        let what = if plan.count == 1 {
            "1 occurrence".to_string()
        } else {
            format!("{} occurrences", plan.count)
        };
        Ok(format!(
            "edited {}: replaced {what}\n{}",
            plan.shown,
            cut_chars(plan.diff, DETAIL_MAX_CHARS)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{TestDir, prepare, prepare_then_run, run};

    #[test]
    fn resolve_path_cases() {
        let wd = Path::new("/work/project");
        let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
        let cases: Vec<(&str, PathBuf)> = vec![
            ("a.txt", "/work/project/a.txt".into()),
            ("./src/../b.txt", "/work/project/b.txt".into()),
            ("", "/work/project".into()),
            (".", "/work/project".into()),
            ("../other/./x", "/work/other/x".into()),
            ("/etc/../etc/hosts", "/etc/hosts".into()),
            ("/../../x", "/x".into()),
            ("~", home.clone()),
            ("~/notes/../todo.md", normalize(&home.join("todo.md"))),
            ("~user/x", "/work/project/~user/x".into()),
        ];
        for (raw, expect) in cases {
            assert_eq!(resolve_path(wd, raw), expect, "{raw:?}");
        }
        assert_eq!(
            resolve_path(Path::new("rel"), "../../x"),
            PathBuf::from("../x")
        );
    }

    #[test]
    fn cut_chars_marks_the_cut() {
        assert_eq!(cut_chars("abc".into(), 3), "abc");
        assert_eq!(
            cut_chars("abcdé".into(), 3),
            "abc\n[… 2 more characters not shown …]"
        );
    }

    #[tokio::test]
    async fn list_dir_lists_entries_with_type_and_size() {
        let d = TestDir::new();
        d.write("b.txt", "hello");
        d.write(".hidden", "");
        d.write("sub/inner.txt", "x");
        std::os::unix::fs::symlink("b.txt", d.path().join("link")).expect("symlink");
        let out = run(d.path(), "list_dir", "{}").await;
        assert!(out.ok, "{}", out.content);
        assert_eq!(
            out.content,
            ".hidden  (0 bytes)\nb.txt  (5 bytes)\nlink -> b.txt  (symlink)\nsub/"
        );
        let out = run(d.path(), "list_dir", r#"{"path":"sub"}"#).await;
        assert_eq!(out.content, "inner.txt  (1 bytes)");
        let empty = d.mkdir("empty");
        let out = run(d.path(), "list_dir", &format!(r#"{{"path":{:?}}}"#, empty)).await;
        assert_eq!(out.content, "(empty directory)");
    }

    #[tokio::test]
    async fn list_dir_failures() {
        let d = TestDir::new();
        d.write("f.txt", "x");
        let out = run(d.path(), "list_dir", r#"{"path":"nope"}"#).await;
        assert_eq!(
            (out.ok, out.content.as_str()),
            (false, "error: no such directory: nope")
        );
        let out = run(d.path(), "list_dir", r#"{"path":"f.txt"}"#).await;
        assert_eq!(
            out.content,
            "error: f.txt is a file, not a directory; use read_file to read it"
        );
        let out = run(d.path(), "list_dir", r#"{"max_depth":0}"#).await;
        assert_eq!(out.error_kind, Some("invalid_arguments"), "{}", out.content);
    }

    #[tokio::test]
    async fn list_dir_recursive_respects_gitignore_and_depth() {
        let d = TestDir::new();
        d.write(".gitignore", "target/\n*.log\n");
        d.write("src/main.rs", "fn main() {}");
        d.write("src/deep/er/x.rs", "");
        d.write("target/debug/big", "x");
        d.write("debug.log", "x");
        d.write(".git/HEAD", "ref");
        let out = run(d.path(), "list_dir", r#"{"recursive":true}"#).await;
        assert_eq!(
            out.content,
            ".gitignore  (14 bytes)\nsrc/\nsrc/deep/\nsrc/deep/er/\nsrc/main.rs  (12 bytes)"
        );
        let out = run(d.path(), "list_dir", r#"{"recursive":true,"max_depth":4}"#).await;
        assert!(
            out.content.contains("src/deep/er/x.rs  (0 bytes)"),
            "{}",
            out.content
        );
        // Not recursive: everything, ignored or not.
        let out = run(d.path(), "list_dir", "{}").await;
        assert!(out.content.contains("debug.log") && out.content.contains(".git/"));
    }

    #[tokio::test]
    async fn list_dir_caps_entries_with_a_marker() {
        let d = TestDir::new();
        for i in 0..LIST_DIR_MAX_ENTRIES + 30 {
            d.write(&format!("dir/f{i:04}"), "");
        }
        for args in [r#"{"path":"dir"}"#, r#"{"recursive":true}"#] {
            let out = run(d.path(), "list_dir", args).await;
            let text = out.full_content.as_deref().unwrap_or(&out.content);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), LIST_DIR_MAX_ENTRIES + 1, "{args}");
            let extra = if args.contains("recursive") { 31 } else { 30 };
            assert_eq!(
                lines.last().copied(),
                Some(
                    format!(
                        "[… {extra} more entries not shown; list a subdirectory or lower max_depth]"
                    )
                    .as_str()
                ),
                "{args}"
            );
        }
    }

    fn search_tree_fixture() -> TestDir {
        let d = TestDir::new();
        d.write(".gitignore", "ignored/\n*.tmp\n");
        d.write(".ignore", "secret.txt\n");
        d.write("src/a.rs", "fn alpha() {}\nlet needle = 1;\n");
        d.write("src/b.txt", "Needle in text\nnothing\n");
        d.write("ignored/c.rs", "needle hidden by gitignore\n");
        d.write("x.tmp", "needle in tmp\n");
        d.write("secret.txt", "needle in .ignore\n");
        d.write(".hidden/d.rs", "needle in hidden dir\n");
        d.write_bytes("bin.dat", b"needle\0binary");
        d
    }

    #[tokio::test]
    async fn search_files_honours_ignore_files_hidden_and_binary() {
        let d = search_tree_fixture();
        let out = run(d.path(), "search_files", r#"{"pattern":"needle"}"#).await;
        assert!(out.ok, "{}", out.content);
        assert_eq!(
            out.content,
            "src/a.rs:2: let needle = 1;\n[search_files: 1 matching lines in 1 files (3 files searched); 1 binary files skipped]"
        );
        let out = run(
            d.path(),
            "search_files",
            r#"{"pattern":"NEEDLE","case_insensitive":true,"glob":"*.txt"}"#,
        )
        .await;
        assert_eq!(
            out.content,
            "src/b.txt:1: Needle in text\n[search_files: 1 matching lines in 1 files (1 files searched)]"
        );
        let out = run(
            d.path(),
            "search_files",
            r#"{"pattern":"needle","path":"src","glob":"src/**"}"#,
        )
        .await;
        assert!(out.content.starts_with("no matches"), "{}", out.content);
        let out = run(
            d.path(),
            "search_files",
            r#"{"pattern":"fn alpha()","literal":true,"path":"src/a.rs"}"#,
        )
        .await;
        assert!(
            out.content.starts_with("src/a.rs:1: fn alpha() {}"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn search_files_failures() {
        let d = search_tree_fixture();
        let out = run(d.path(), "search_files", r#"{"pattern":"fn ("}"#).await;
        assert_eq!(out.error_kind, Some("invalid_arguments"));
        assert!(
            out.content
                .starts_with("error: invalid arguments: invalid regex \"fn (\"")
                && out.content.contains("unclosed group"),
            "{}",
            out.content
        );
        let out = run(d.path(), "search_files", r#"{"pattern":"x","glob":"a[" }"#).await;
        assert!(
            out.content.contains("invalid glob \"a[\""),
            "{}",
            out.content
        );
        let out = run(d.path(), "search_files", r#"{"pattern":"x","path":"nope"}"#).await;
        assert_eq!(out.content, "error: no such file or directory: nope");
        let out = run(d.path(), "search_files", r#"{"pattern":"zzz"}"#).await;
        assert_eq!(
            out.content,
            "no matches for \"zzz\" in . (3 files searched; 1 binary files skipped)"
        );
    }

    #[tokio::test]
    async fn search_files_caps_matches_with_a_marker() {
        let d = TestDir::new();
        let body: String = (0..50).map(|i| format!("hit {i}\n")).collect();
        d.write("many.txt", &body);
        d.write("long.txt", &format!("hit {}", "y".repeat(1000)));
        let out = run(
            d.path(),
            "search_files",
            r#"{"pattern":"^hit","max_results":20,"path":"many.txt"}"#,
        )
        .await;
        let lines: Vec<&str> = out.content.lines().collect();
        assert_eq!(lines.len(), 21);
        assert_eq!(lines[19], "many.txt:20: hit 19");
        assert!(lines[20].starts_with("[… stopped after 20 matching lines; there are more"));
        let out = run(
            d.path(),
            "search_files",
            r#"{"pattern":"y+","path":"long.txt"}"#,
        )
        .await;
        assert!(
            out.content
                .starts_with(&format!("long.txt:1: hit {} […]\n", "y".repeat(396))),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn write_file_creates_and_overwrites_with_a_diff() {
        let d = TestDir::new();
        let out = run(
            d.path(),
            "write_file",
            r#"{"path":"new/dir/a.txt","content":"one\ntwo\n"}"#,
        )
        .await;
        assert_eq!(
            (out.ok, out.content.as_str()),
            (true, "created new/dir/a.txt (8 bytes)")
        );
        assert_eq!(d.read("new/dir/a.txt"), "one\ntwo\n");
        let out = run(
            d.path(),
            "write_file",
            r#"{"path":"new/dir/a.txt","content":"one\n2\n"}"#,
        )
        .await;
        assert_eq!(
            out.content,
            "overwrote new/dir/a.txt (6 bytes, was 8 bytes)\n--- a/new/dir/a.txt\n+++ b/new/dir/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
        );
        assert_eq!(d.read("new/dir/a.txt"), "one\n2\n");
        let out = run(
            d.path(),
            "write_file",
            r#"{"path":"new/dir/a.txt","content":"one\n2\n"}"#,
        )
        .await;
        assert_eq!(
            out.content,
            "overwrote new/dir/a.txt (6 bytes, was 6 bytes; content unchanged)"
        );
    }

    #[tokio::test]
    async fn write_file_failures() {
        let d = TestDir::new();
        d.mkdir("adir");
        d.write("plain", "x");
        let out = run(d.path(), "write_file", r#"{"path":"adir","content":"x"}"#).await;
        assert_eq!(out.content, "error: adir is a directory, not a file");
        let out = run(
            d.path(),
            "write_file",
            r#"{"path":"plain/sub.txt","content":"x"}"#,
        )
        .await;
        assert!(!out.ok, "{}", out.content);
        let out = run(d.path(), "write_file", r#"{"path":"a"}"#).await;
        assert_eq!(out.error_kind, Some("invalid_arguments"));
    }

    #[tokio::test]
    async fn edit_file_replaces_exactly_one_match() {
        let d = TestDir::new();
        d.write("f.rs", "let a = 1;\nlet b = 2;\nlet a = 1;\n");
        let out = run(
            d.path(),
            "edit_file",
            r#"{"path":"f.rs","old_text":"let b = 2;","new_text":"let b = 3;"}"#,
        )
        .await;
        assert_eq!(
            out.content,
            "edited f.rs: replaced 1 occurrence\n--- a/f.rs\n+++ b/f.rs\n@@ -1,3 +1,3 @@\n let a = 1;\n-let b = 2;\n+let b = 3;\n let a = 1;\n"
        );
        assert_eq!(d.read("f.rs"), "let a = 1;\nlet b = 3;\nlet a = 1;\n");

        let out = run(
            d.path(),
            "edit_file",
            r#"{"path":"f.rs","old_text":"let a = 1;","new_text":"let a = 0;"}"#,
        )
        .await;
        assert_eq!(
            (out.ok, out.error_kind, out.content.as_str()),
            (
                false,
                Some("invalid_arguments"),
                "error: invalid arguments: old_text matched 2 times in f.rs; nothing was changed. Include more surrounding lines so it matches exactly once, or set replace_all to true to replace all 2"
            )
        );
        let out = run(
            d.path(),
            "edit_file",
            r#"{"path":"f.rs","old_text":"let a = 1;","new_text":"let a = 0;","replace_all":true}"#,
        )
        .await;
        assert!(
            out.content
                .starts_with("edited f.rs: replaced 2 occurrences\n--- a/f.rs"),
            "{}",
            out.content
        );
        assert_eq!(d.read("f.rs"), "let a = 0;\nlet b = 3;\nlet a = 0;\n");
    }

    #[tokio::test]
    async fn an_approved_change_is_not_applied_to_a_file_that_changed_meanwhile() {
        let d = TestDir::new();
        d.write("f.txt", "alpha\nbeta\ngamma\n");
        let edit = r#"{"path":"f.txt","old_text":"beta","new_text":"BETA"}"#;
        // Someone edits the file while the question waits: the same edit would now apply
        // a different diff, so it is refused and the file is left as they left it.
        let out = prepare_then_run(d.path(), "edit_file", edit, || {
            d.write("f.txt", "alpha\nbeta\ngamma\ndelta\n");
        })
        .await;
        assert_eq!(
            out.error_kind,
            Some("changed_since_approval"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("nothing was written"),
            "{}",
            out.content
        );
        assert_eq!(d.read("f.txt"), "alpha\nbeta\ngamma\ndelta\n");
        // A whole-file write over a file that appeared meanwhile is refused the same way.
        let write = r#"{"path":"new.txt","content":"mine"}"#;
        let out = prepare_then_run(d.path(), "write_file", write, || {
            d.write("new.txt", "theirs")
        })
        .await;
        assert_eq!(
            out.error_kind,
            Some("changed_since_approval"),
            "{}",
            out.content
        );
        assert_eq!(d.read("new.txt"), "theirs");
        // Untouched in between, the approved change is applied.
        let out = prepare_then_run(d.path(), "edit_file", edit, || {}).await;
        assert!(out.ok, "{}", out.content);
        assert_eq!(d.read("f.txt"), "alpha\nBETA\ngamma\ndelta\n");
    }

    #[tokio::test]
    async fn edit_file_failures() {
        let d = TestDir::new();
        d.write("f.rs", "fn x() {}\n");
        d.write("crlf.txt", "a\r\nb\r\n");
        d.write_bytes("bin", b"\0\x01");
        d.mkdir("adir");
        let cases: &[(&str, &str)] = &[
            (
                r#"{"path":"f.rs","old_text":"fn y","new_text":"fn z"}"#,
                "error: invalid arguments: old_text matched 0 times in f.rs; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation",
            ),
            (
                r#"{"path":"crlf.txt","old_text":"a\nb","new_text":"c"}"#,
                "error: invalid arguments: old_text matched 0 times in crlf.txt; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation (the file has CRLF line endings)",
            ),
            (
                r#"{"path":"missing.rs","old_text":"a","new_text":"b"}"#,
                "error: no such file: missing.rs; use write_file to create a file",
            ),
            (
                r#"{"path":"adir","old_text":"a","new_text":"b"}"#,
                "error: adir is a directory, not a file",
            ),
            (
                r#"{"path":"bin","old_text":"a","new_text":"b"}"#,
                "error: bin is a binary or non-UTF-8 file (2 bytes); edit_file only edits UTF-8 text",
            ),
            (
                r#"{"path":"f.rs","old_text":"","new_text":"b"}"#,
                "error: invalid arguments: old_text is empty; give the exact text to replace (use write_file to create a file)",
            ),
            (
                r#"{"path":"f.rs","old_text":"x","new_text":"x"}"#,
                "error: invalid arguments: old_text and new_text are identical; nothing would change",
            ),
        ];
        for (args, expect) in cases {
            let out = run(d.path(), "edit_file", args).await;
            assert_eq!(out.content, *expect, "{args}");
        }
        assert_eq!(d.read("f.rs"), "fn x() {}\n");
    }

    #[tokio::test]
    async fn actions_describe_the_call_without_changing_anything() {
        let d = TestDir::new();
        d.write("f.txt", "old\n");
        let root = d.path();
        let abs = |p: &str| root.join(p);
        let check = |name: &'static str, args: &'static str, expect: Action| async move {
            let got = prepare(root, name, args).await;
            assert_eq!(got, Ok(expect), "{name} {args}");
        };
        check(
            "read_file",
            r#"{"path":"sub/../f.txt"}"#,
            Action {
                detail: abs("f.txt").display().to_string(),
                reads: vec![abs("f.txt")],
                ..Action::default()
            },
        )
        .await;
        check(
            "list_dir",
            "{}",
            Action {
                detail: root.display().to_string(),
                reads: vec![root.to_path_buf()],
                ..Action::default()
            },
        )
        .await;
        check(
            "search_files",
            r#"{"pattern":"x","path":"/etc/./x"}"#,
            Action {
                detail: "/etc/x".into(),
                reads: vec!["/etc/x".into()],
                ..Action::default()
            },
        )
        .await;
        check(
            "write_file",
            r#"{"path":"f.txt","content":"new\n"}"#,
            Action {
                detail: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
                writes: vec![abs("f.txt")],
                ..Action::default()
            },
        )
        .await;
        check(
            "write_file",
            r#"{"path":"d/g.txt","content":"hi"}"#,
            Action {
                detail: "--- /dev/null\n+++ b/d/g.txt\n@@ -0,0 +1 @@\n+hi\n\\ No newline at end of file\n"
                    .into(),
                writes: vec![abs("d/g.txt")],
                ..Action::default()
            },
        )
        .await;
        check(
            "edit_file",
            r#"{"path":"f.txt","old_text":"old","new_text":"edited"}"#,
            Action {
                detail: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-old\n+edited\n".into(),
                writes: vec![abs("f.txt")],
                ..Action::default()
            },
        )
        .await;
        // Nothing was written or created by preparing.
        assert_eq!(d.read("f.txt"), "old\n");
        assert!(!abs("d").exists());

        assert_eq!(
            prepare(root, "edit_file", r#"{"path":"f.txt","old_text":"nope","new_text":"x"}"#)
                .await,
            Err("error: invalid arguments: old_text matched 0 times in f.txt; nothing was changed. Read the file again and copy the exact text, including whitespace and indentation".into())
        );
        assert_eq!(
            prepare(root, "search_files", r#"{"pattern":"("}"#)
                .await
                .map_err(|e| e.lines().next().unwrap_or_default().to_string()),
            Err("error: invalid arguments: invalid regex \"(\": regex parse error:".into())
        );
        let big = format!(
            r#"{{"path":"f.txt","content":{:?}}}"#,
            "line\n".repeat(10_000)
        );
        let action = prepare(root, "write_file", &big).await;
        let detail = action.map(|a| a.detail).unwrap_or_default();
        assert!(detail.chars().count() < DETAIL_MAX_CHARS + 100);
        assert!(
            detail.ends_with("more characters not shown …]"),
            "{}",
            &detail[detail.len() - 80..]
        );
    }
}
