//! Why a skill operation fails: [`SkillError`], with the data a caller or the model needs to
//! act on it.

use std::io;
use std::path::{Path, PathBuf};

/// Why a skill operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// The name breaks the naming rule.
    #[error(
        "invalid skill name {name:?}: {reason}; use 1-64 lowercase letters a-z, digits and '-'"
    )]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A description, body or combination of them is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// No skill has this name.
    #[error("no skill named {name:?}; {}", available_text(.available))]
    NotFound {
        /// The name asked for.
        name: String,
        /// Names of the skills that do exist.
        available: Vec<String>,
    },
    /// A skill (or folder) with this name exists already.
    #[error("a skill named {name:?} already exists at {}", .path.display())]
    AlreadyExists {
        /// The name.
        name: String,
        /// Its folder.
        path: PathBuf,
    },
    /// The skill's SKILL.md cannot be used.
    #[error("skill {name:?} is broken: {}: {problem}", .path.display())]
    Broken {
        /// The skill's name.
        name: String,
        /// Its SKILL.md.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The edit would leave SKILL.md as it is.
    #[error(
        "the edit would not change skill {name:?}: the description and body are already as given"
    )]
    Unchanged {
        /// The skill's name.
        name: String,
    },
    /// A file system operation failed.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// What was being done (`read`, `write`, `remove`, ...).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

fn available_text(names: &[String]) -> String {
    if names.is_empty() {
        "there are no skills yet".into()
    } else {
        format!("available skills: {}", names.join(", "))
    }
}

pub(super) fn io_error(
    action: &'static str,
    path: &Path,
) -> impl FnOnce(io::Error) -> SkillError + use<> {
    let path = path.to_path_buf();
    move |source| SkillError::Io {
        action,
        path,
        source,
    }
}
