//! `search_files`: a ripgrep-like regex or literal search over the files under a path,
//! honouring ignore files and skipping binary and very large files.

use super::paths::shown_path;
use super::{blocking, io_failure, read_action, resolve_path};
use crate::TypedTool;
use crate::registry::{Action, Risk, ToolContext, ToolError};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Default number of matching lines `search_files` returns.
const SEARCH_DEFAULT_RESULTS: u32 = 200;
/// Files larger than this are skipped by `search_files`.
const SEARCH_MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// A matching line longer than this many characters is cut.
const SEARCH_MAX_LINE_CHARS: usize = 400;

/// `search_files`: a ripgrep-like search over the files under a path.
#[derive(Debug)]
pub struct SearchFiles;

/// Arguments of `search_files`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilesArgs {
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
impl TypedTool for SearchFiles {
    type Args = SearchFilesArgs;
    const NAME: &'static str = "search_files";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::texts::SEARCH_FILES.text()
    }
    async fn action(
        &self,
        args: SearchFilesArgs,
        ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        args.compile()?;
        Ok(Some(read_action(resolve_path(
            &ctx.workdir,
            args.path.as_deref().unwrap_or("."),
        ))))
    }
    async fn call(&self, args: SearchFilesArgs, ctx: &ToolContext) -> Result<String, ToolError> {
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
