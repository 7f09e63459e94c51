//! Which files of a watched folder a watch rule looks at: its include and exclude globs over
//! the path inside the folder, never editors' temp and swap files, and no hidden files unless
//! the rule asks for them.

use crate::AutomationError;
use crate::spec::Watch;
use echo_core::FileEvent;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Component, Path, PathBuf};

/// A compiled watch rule: its folders (absolute) and the filter over their files.
#[derive(Debug, Clone)]
pub struct FileFilter {
    /// The folders, `~` expanded.
    pub folders: Vec<PathBuf>,
    /// Subfolders too.
    pub recursive: bool,
    /// Event kinds that start a run.
    pub events: Vec<FileEvent>,
    include: Option<GlobSet>,
    exclude: GlobSet,
    include_hidden: bool,
}

impl FileFilter {
    /// Compiles `watch`; a glob that does not compile is an error naming it.
    pub fn new(watch: &Watch) -> Result<FileFilter, AutomationError> {
        let mut folders = Vec::new();
        for f in &watch.folders {
            if f.trim().is_empty() {
                return Err(AutomationError::Invalid {
                    what: "folders",
                    message: "a folder is empty".into(),
                });
            }
            let path = expand_home(f);
            if !path.is_absolute() {
                return Err(AutomationError::Invalid {
                    what: "folders",
                    message: format!("{f:?} is not an absolute path (or one under ~)"),
                });
            }
            folders.push(path);
        }
        let include = if watch.include.is_empty() {
            None
        } else {
            Some(glob_set("include", &watch.include)?)
        };
        Ok(FileFilter {
            folders,
            recursive: watch.recursive,
            events: watch.events.clone(),
            include,
            exclude: glob_set("exclude", &watch.exclude)?,
            include_hidden: watch.include_hidden,
        })
    }

    /// The folder `path` lies in, if any (directly, or below it when recursive).
    pub fn folder_of(&self, path: &Path) -> Option<&Path> {
        self.folders
            .iter()
            .filter(|f| match path.strip_prefix(f) {
                Ok(rel) => self.recursive || rel.components().count() == 1,
                Err(_) => false,
            })
            .max_by_key(|f| f.as_os_str().len())
            .map(PathBuf::as_path)
    }

    /// Whether an event of `kind` on `path` is this rule's business.
    pub fn wants(&self, kind: FileEvent, path: &Path) -> bool {
        self.events.contains(&kind) && self.matches(path)
    }

    /// Whether `path` is one of the files this rule looks at.
    pub fn matches(&self, path: &Path) -> bool {
        let Some(folder) = self.folder_of(path) else {
            return false;
        };
        let Ok(rel) = path.strip_prefix(folder) else {
            return false;
        };
        let Some(name) = rel.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        if is_temp_name(name) {
            return false;
        }
        if !self.include_hidden
            && rel.components().any(|c| match c {
                Component::Normal(s) => s.to_string_lossy().starts_with('.'),
                _ => false,
            })
        {
            return false;
        }
        if self.exclude.is_match(rel) {
            return false;
        }
        self.include.as_ref().is_none_or(|set| set.is_match(rel))
    }
}

/// Editors' and browsers' temporary files: never handed to a run.
pub fn is_temp_name(name: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        ".swp",
        ".swx",
        ".swo",
        "~",
        ".crdownload",
        ".part",
        ".partial",
        ".tmp",
        ".download",
    ];
    name == "4913"
        || name.starts_with(".#")
        || name.starts_with(".~lock.")
        || (name.starts_with('#') && name.ends_with('#'))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
}

fn glob_set(what: &'static str, globs: &[String]) -> Result<GlobSet, AutomationError> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(g)
            .literal_separator(false)
            .build()
            .map_err(|e| AutomationError::Invalid {
                what,
                message: format!("{g:?}: {e}"),
            })?;
        set.add(glob);
    }
    set.build().map_err(|e| AutomationError::Invalid {
        what,
        message: e.to_string(),
    })
}

/// `~` and `~/…` to the home folder.
pub fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if path == "~" {
        return home().unwrap_or_else(|| PathBuf::from(path));
    }
    match (path.strip_prefix("~/"), home()) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str], recursive: bool) -> FileFilter {
        FileFilter::new(&Watch {
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            recursive,
            ..Watch::new(vec!["/in".into()])
        })
        .expect("valid")
    }

    #[test]
    fn globs_match_the_path_inside_the_folder() {
        let f = filter(&["*.pdf"], &["drafts/**"], true);
        assert!(f.matches(Path::new("/in/a.pdf")));
        assert!(f.matches(Path::new("/in/2026/a.pdf")));
        assert!(!f.matches(Path::new("/in/drafts/a.pdf")));
        assert!(!f.matches(Path::new("/in/a.txt")));
        assert!(!f.matches(Path::new("/elsewhere/a.pdf")));
        assert!(
            !f.matches(Path::new("/inbox/a.pdf")),
            "a sibling with the same prefix"
        );
        let flat = filter(&[], &[], false);
        assert!(flat.matches(Path::new("/in/a.txt")));
        assert!(!flat.matches(Path::new("/in/sub/a.txt")));
    }

    #[test]
    fn temp_swap_and_hidden_files_are_left_alone() {
        let f = filter(&[], &[], true);
        for p in [
            "/in/.notes.md.swp",
            "/in/notes.md~",
            "/in/.#notes.md",
            "/in/4913",
            "/in/big.iso.crdownload",
            "/in/film.part",
            "/in/x.tmp",
            "/in/.hidden",
            "/in/.git/config",
            "/in/#notes.md#",
        ] {
            assert!(!f.matches(Path::new(p)), "{p}");
        }
        assert!(f.matches(Path::new("/in/notes.md")));
        let hidden = FileFilter::new(&Watch {
            include_hidden: true,
            ..Watch::new(vec!["/in".into()])
        })
        .expect("valid");
        assert!(hidden.matches(Path::new("/in/.hidden")));
        assert!(!hidden.matches(Path::new("/in/.x.swp")), "swap files never");
    }

    #[test]
    fn relative_folders_are_refused() {
        let e = FileFilter::new(&Watch::new(vec!["Inbox".into()]))
            .expect_err("relative")
            .to_string();
        assert!(e.contains("absolute"), "{e}");
    }
}
