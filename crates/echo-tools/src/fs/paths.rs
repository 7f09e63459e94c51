//! Paths the model gives: resolving them against the working directory (and `~`) without
//! touching the disk, and showing them back relative to the working directory.

use std::path::{Component, Path, PathBuf};

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
pub(super) fn normalize(path: &Path) -> PathBuf {
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
