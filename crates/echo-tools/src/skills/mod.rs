//! Skills: reusable instructions kept as folders in the data directory,
//! `<skills dir>/<name>/SKILL.md`, and the three tools that list, read and manage them.
//!
//! A SKILL.md starts with YAML front matter (`name`, `description`, any other keys, which are
//! kept) between `---` lines, followed by Markdown instructions; the folder may hold other
//! files the instructions refer to. The store never panics on what it finds on disk: a folder
//! whose SKILL.md is missing or broken is skipped, logged once and reported by
//! [`SkillStore::problems`]. Every write replaces SKILL.md atomically (temporary file, then
//! rename), and [`skill_tools`]'s `skill_manage` shows the exact file, diff or folder before
//! anything changes.

mod disk;
mod error;
mod skill_md;
mod store;
#[cfg(test)]
mod tests;
mod tools;

pub use error::SkillError;

/// Any text as a SKILL.md, for the fuzz target (`fuzz/`); panics when [`skill_md::check`]'s
/// promise is broken.
#[cfg(fuzzing)]
pub fn fuzz_skill_md(text: &str) {
    skill_md::check(text);
}
pub use store::SkillStore;
pub use tools::skill_tools;

use std::path::PathBuf;

/// The file in a skill folder that holds its front matter and instructions.
const SKILL_FILE: &str = "SKILL.md";

/// One skill as the index shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillSummary {
    /// The skill's name, equal to its folder name.
    pub name: String,
    /// One line saying what the skill does and when to use it.
    pub description: String,
    /// Path of its SKILL.md.
    pub path: PathBuf,
}

/// One skill in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// The skill's name, equal to its folder name.
    pub name: String,
    /// One line saying what the skill does and when to use it.
    pub description: String,
    /// The Markdown instructions after the front matter.
    pub body: String,
    /// Path of its SKILL.md.
    pub path: PathBuf,
    /// The other files in the skill's folder, relative to it with `/` separators, sorted.
    pub files: Vec<String>,
}

/// A skill folder that was skipped, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SkillProblem {
    /// The file (usually a SKILL.md) or folder at fault.
    pub path: PathBuf,
    /// What is wrong with it, in words the user can act on.
    pub problem: String,
}
