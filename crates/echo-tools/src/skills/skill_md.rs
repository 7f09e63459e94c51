//! What a SKILL.md is: the front matter taken apart and checked, and the rules a skill's name,
//! description, body and size follow.

use super::SKILL_FILE;
use super::error::SkillError;
use serde_yaml_ng::{Mapping, Value};
use std::fs;
use std::io;
use std::path::Path;

/// Longest skill name, in characters.
const MAX_NAME_CHARS: usize = 64;
/// Longest description, in characters (it is shown in every prompt's skill index).
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Largest SKILL.md the store reads or writes.
const MAX_SKILL_FILE_BYTES: usize = 1024 * 1024;

/// A SKILL.md taken apart.
#[derive(Debug)]
pub(super) struct Parsed {
    pub(super) name: String,
    pub(super) description: String,
    /// All front matter keys, in file order.
    pub(super) front: Mapping,
    /// The text up to and including the closing `---` line, verbatim.
    pub(super) head: String,
    /// The blank lines between the front matter and the body, verbatim.
    pub(super) gap: String,
    /// The instructions, verbatim.
    pub(super) body: String,
}

/// Reads and checks one SKILL.md; the error is a problem description for the user.
pub(super) fn read_skill_file(path: &Path, folder_name: &str) -> Result<(String, Parsed), String> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("the skill folder has no {SKILL_FILE}"));
        }
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() > MAX_SKILL_FILE_BYTES as u64 {
        return Err(format!(
            "it is {} bytes; the limit is {MAX_SKILL_FILE_BYTES}",
            meta.len()
        ));
    }
    let bytes = fs::read(path).map_err(|e| format!("cannot read it: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "it is not valid UTF-8 text".to_string())?;
    let parsed = parse(&text)?;
    if parsed.name != folder_name {
        return Err(format!(
            "the front matter name {:?} does not match the folder name {folder_name:?}",
            parsed.name
        ));
    }
    Ok((text, parsed))
}

/// Splits a SKILL.md into front matter and body and checks `name` and `description`.
pub(super) fn parse(text: &str) -> Result<Parsed, String> {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut lines = text[start..].split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(
            "it has no front matter: it must start with a `---` line, then `name:` and `description:`, then another `---` line"
                .into(),
        );
    }
    let mut end = start + first.len();
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        end += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("its front matter is not closed by a `---` line".into());
    }
    let rest = &text[end..];
    let body = rest.trim_start_matches(['\r', '\n']);
    let value: Value = serde_yaml_ng::from_str(&yaml)
        .map_err(|e| format!("its front matter is not valid YAML: {e}"))?;
    let front = match value {
        Value::Mapping(m) => m,
        Value::Null => Mapping::new(),
        _ => return Err("its front matter is not a YAML mapping of keys to values".into()),
    };
    Ok(Parsed {
        name: text_field(&front, "name")?,
        description: text_field(&front, "description")?,
        head: text[..end].to_string(),
        gap: rest[..rest.len() - body.len()].to_string(),
        body: body.to_string(),
        front,
    })
}

/// What [`parse`] promises for any text, checked by the property test and the fuzz target
/// (`fuzz/`): a skill only with a `---` first line, a name and a description, and all of the
/// text kept; otherwise a reason that names the part of the front matter at fault. Panics
/// with the broken promise.
#[cfg(any(test, fuzzing))]
pub(super) fn check(text: &str) {
    let opens = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .next()
        .map(str::trim_end)
        == Some("---");
    match parse(text) {
        Ok(parsed) => {
            assert!(opens, "a skill without a `---` first line: {text:?}");
            assert!(
                !parsed.name.trim().is_empty() && !parsed.description.trim().is_empty(),
                "a skill without a name or description: {text:?}"
            );
            assert_eq!(
                parsed.head.len() + parsed.gap.len() + parsed.body.len(),
                text.len(),
                "text lost or added: {text:?}"
            );
        }
        Err(reason) => {
            assert!(reason.starts_with("it") && reason.len() > 20, "{reason}");
            let part = if opens {
                "front matter"
            } else {
                "no front matter"
            };
            assert!(reason.contains(part), "{reason}");
        }
    }
}

fn text_field(front: &Mapping, key: &str) -> Result<String, String> {
    match front.get(key) {
        None => Err(format!("its front matter has no `{key}`")),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("its front matter `{key}` is empty")),
        Some(_) => Err(format!("its front matter `{key}` is not a string")),
    }
}

pub(super) fn to_yaml(front: &Mapping) -> Result<String, SkillError> {
    serde_yaml_ng::to_string(front)
        .map_err(|e| SkillError::Invalid(format!("cannot write the front matter: {e}")))
}

pub(super) fn with_final_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// Checks the naming rule: 1-64 of `a-z`, `0-9` and `-`.
pub(super) fn check_name(name: &str) -> Result<(), SkillError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.chars().count() > MAX_NAME_CHARS {
        "it is longer than 64 characters"
    } else if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        "it contains other characters"
    } else {
        return Ok(());
    };
    Err(SkillError::InvalidName {
        name: name.into(),
        reason,
    })
}

pub(super) fn check_description(description: &str) -> Result<(), SkillError> {
    let problem = if description.trim().is_empty() {
        "the description is empty".to_string()
    } else if description.contains(['\n', '\r']) {
        "the description must be one line".to_string()
    } else if description.chars().count() > MAX_DESCRIPTION_CHARS {
        format!("the description is longer than {MAX_DESCRIPTION_CHARS} characters")
    } else {
        return Ok(());
    };
    Err(SkillError::Invalid(problem))
}

pub(super) fn check_body(body: &str) -> Result<(), SkillError> {
    if body.trim().is_empty() {
        Err(SkillError::Invalid(
            "the body (the skill's instructions) is empty".into(),
        ))
    } else {
        Ok(())
    }
}

pub(super) fn check_size(content: &str) -> Result<(), SkillError> {
    if content.len() > MAX_SKILL_FILE_BYTES {
        Err(SkillError::Invalid(format!(
            "the SKILL.md would be {} bytes; the limit is {MAX_SKILL_FILE_BYTES}",
            content.len()
        )))
    } else {
        Ok(())
    }
}
