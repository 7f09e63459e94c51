//! Bootstrap files: `AGENTS.md`, `SOUL.md`, `USER.md` and `TOOLS.md` in the data directory,
//! the user's standing instructions and notes. Each starts as the default in
//! `prompts/bootstrap/` (embedded) until the user saves their own; they are read on every
//! turn, so an edit takes effect on the next one. They sit in the system block after the
//! engine's own rules and cannot lift them (seed 001: a context contract, not the highest
//! authority).

use crate::wire::BootstrapFile;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The bootstrap files, in the order they appear in the system block.
pub const BOOTSTRAP_FILES: [&str; 4] = ["AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md"];

/// Characters of one file that reach the prompt; the rest is cut with a marker (and the trace
/// says so), so one pasted log cannot take over the window.
pub(crate) const MAX_INJECTED_CHARS: usize = 12_000;

/// Largest file the settings page may save.
const MAX_SAVED_BYTES: usize = 256 * 1024;

/// What goes into a prompt from one file.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Injected {
    pub name: &'static str,
    pub content: String,
    /// Characters cut to [`MAX_INJECTED_CHARS`].
    #[serde(skip)]
    pub cut: usize,
}

/// A bootstrap file could not be read or saved.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// Not one of [`BOOTSTRAP_FILES`].
    #[error(
        "{0:?} is not a bootstrap file (expected one of AGENTS.md, SOUL.md, USER.md, TOOLS.md)"
    )]
    UnknownFile(String),
    /// Too large to be useful in a prompt.
    #[error("{name} is {bytes} bytes; the limit is {MAX_SAVED_BYTES}")]
    TooLarge {
        /// The file.
        name: String,
        /// Its size.
        bytes: usize,
    },
    /// A file-system error, with the path.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// The bootstrap files of one data directory.
#[derive(Clone, Debug)]
pub(crate) struct Bootstrap {
    dir: PathBuf,
}

fn embedded(name: &str) -> Option<&'static str> {
    Some(match name {
        "AGENTS.md" => include_str!("../../../prompts/bootstrap/AGENTS.md"),
        "SOUL.md" => include_str!("../../../prompts/bootstrap/SOUL.md"),
        "USER.md" => include_str!("../../../prompts/bootstrap/USER.md"),
        "TOOLS.md" => include_str!("../../../prompts/bootstrap/TOOLS.md"),
        _ => return None,
    })
}

fn known(name: &str) -> Result<&'static str, BootstrapError> {
    BOOTSTRAP_FILES
        .iter()
        .copied()
        .find(|f| *f == name)
        .ok_or_else(|| BootstrapError::UnknownFile(name.to_string()))
}

impl Bootstrap {
    /// The files in `dir` (the data directory).
    pub(crate) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// One file: the user's copy, else the default. A copy that cannot be read is an error
    /// (a prompt silently missing the user's rules would be worse).
    fn read(&self, name: &'static str) -> Result<(String, bool), BootstrapError> {
        let path = self.path(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok((text, false)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok((embedded(name).unwrap_or_default().to_string(), true))
            }
            Err(source) => Err(BootstrapError::Io {
                op: "cannot read",
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Every file, for the settings page.
    pub(crate) fn list(&self) -> Result<Vec<BootstrapFile>, BootstrapError> {
        BOOTSTRAP_FILES
            .iter()
            .map(|&name| {
                let (content, is_default) = self.read(name)?;
                Ok(BootstrapFile {
                    name: name.to_string(),
                    content,
                    is_default,
                    path: self.path(name).display().to_string(),
                })
            })
            .collect()
    }

    /// Saves the user's copy of `name` (atomically); `None` removes it, restoring the default.
    pub(crate) fn save(
        &self,
        name: &str,
        content: Option<&str>,
    ) -> Result<BootstrapFile, BootstrapError> {
        let name = known(name)?;
        let path = self.path(name);
        let io = |op, source| BootstrapError::Io {
            op,
            path: path.display().to_string(),
            source,
        };
        match content {
            Some(text) => {
                if text.len() > MAX_SAVED_BYTES {
                    return Err(BootstrapError::TooLarge {
                        name: name.to_string(),
                        bytes: text.len(),
                    });
                }
                std::fs::create_dir_all(&self.dir).map_err(|e| io("cannot create", e))?;
                let tmp = path.with_extension("md.tmp");
                std::fs::write(&tmp, text).map_err(|e| io("cannot write", e))?;
                std::fs::rename(&tmp, &path).map_err(|e| io("cannot replace", e))?;
            }
            None => match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("cannot remove", e)),
            },
        }
        let (content, is_default) = self.read(name)?;
        Ok(BootstrapFile {
            name: name.to_string(),
            content,
            is_default,
            path: path.display().to_string(),
        })
    }

    /// What goes into this turn's prompt: each file without its HTML comments, left out when
    /// nothing else is left, cut to [`MAX_INJECTED_CHARS`].
    pub(crate) fn for_prompt(&self) -> Result<Vec<Injected>, BootstrapError> {
        let mut out = Vec::new();
        for name in BOOTSTRAP_FILES {
            let (text, _) = self.read(name)?;
            let text = without_comments(&text);
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            let chars = text.chars().count();
            let (content, cut) = if chars > MAX_INJECTED_CHARS {
                let kept: String = text.chars().take(MAX_INJECTED_CHARS).collect();
                (
                    format!("{kept}\n[… {name} is cut here to fit the prompt …]"),
                    chars - MAX_INJECTED_CHARS,
                )
            } else {
                (text.to_string(), 0)
            };
            out.push(Injected { name, content, cut });
        }
        Ok(out)
    }
}

/// `text` without `<!-- … -->` comments (an unclosed one runs to the end).
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find("-->") {
            Some(end) => &rest[start + end + 3..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_until_saved_comments_left_out_and_reset_restores() {
        let dir = tempfile::tempdir().expect("tempdir");
        let b = Bootstrap::new(dir.path());
        let files = b.list().expect("list");
        assert_eq!(
            files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            BOOTSTRAP_FILES
        );
        assert!(files.iter().all(|f| f.is_default));
        // USER.md and TOOLS.md hold only a comment by default: left out.
        let injected = b.for_prompt().expect("prompt");
        let names: Vec<_> = injected.iter().map(|f| f.name).collect();
        assert_eq!(names, ["AGENTS.md", "SOUL.md"]);
        assert!(injected.iter().all(|f| !f.content.contains("<!--")));

        let saved = b
            .save(
                "USER.md",
                Some("<!-- mine -->\nMy name is Lin; I write Rust."),
            )
            .expect("save");
        assert!(!saved.is_default);
        let injected = b.for_prompt().expect("prompt");
        let user = injected
            .iter()
            .find(|f| f.name == "USER.md")
            .expect("USER.md");
        assert_eq!(user.content, "My name is Lin; I write Rust.");

        let reset = b.save("USER.md", None).expect("reset");
        assert!(reset.is_default);
        assert!(!dir.path().join("USER.md").exists());
    }

    #[test]
    fn unknown_names_and_huge_files_are_refused_and_long_files_cut() {
        let dir = tempfile::tempdir().expect("tempdir");
        let b = Bootstrap::new(dir.path());
        let e = b.save("../config.toml", Some("x")).expect_err("unknown");
        assert!(e.to_string().contains("not a bootstrap file"), "{e}");
        let e = b
            .save("AGENTS.md", Some(&"x".repeat(MAX_SAVED_BYTES + 1)))
            .expect_err("too large");
        assert!(e.to_string().contains("AGENTS.md"), "{e}");
        b.save("TOOLS.md", Some(&"y".repeat(MAX_INJECTED_CHARS + 50)))
            .expect("save");
        let tools = b
            .for_prompt()
            .expect("prompt")
            .into_iter()
            .find(|f| f.name == "TOOLS.md")
            .expect("TOOLS.md");
        assert_eq!(tools.cut, 50);
        assert!(tools.content.ends_with("cut here to fit the prompt …]"));
    }

    #[test]
    fn comments_are_removed_even_unclosed() {
        assert_eq!(without_comments("a<!-- x -->b<!-- y"), "ab");
        assert_eq!(without_comments("plain"), "plain");
    }
}
