//! The repository as the tree checks read it (`tidy.rs`, `module_graph.rs`,
//! `function_length.rs`, `architecture.rs` include this file with `#[path]`): its root, paths
//! relative to it, the files below a folder, and one report of every problem found.

use std::fs;
use std::path::{Path, PathBuf};

/// Fails with every problem, one per line, after a count and `what` they are.
pub fn report(what: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} {what}:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// `path` relative to the workspace root, with `/` separators.
pub fn rel(path: &Path) -> String {
    let path = path.strip_prefix(root()).unwrap_or(path);
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// A file's text; a file that cannot be read fails the check, naming it.
pub fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", rel(path)))
}

/// Every file below `dir` with one of `extensions`, sorted, not going into the folders whose
/// name `skip` accepts; a folder that cannot be read fails the check, naming it.
pub fn files_under(dir: &Path, skip: &dyn Fn(&str) -> bool, extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", rel(&dir)));
        for entry in entries {
            let entry = entry.expect("directory entry");
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                if !skip(&entry.file_name().to_string_lossy()) {
                    stack.push(entry.path());
                }
            } else if kind.is_file()
                && entry
                    .path()
                    .extension()
                    .is_some_and(|e| extensions.iter().any(|x| e == *x))
            {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}
