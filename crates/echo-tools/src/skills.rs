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

use crate::registry::{Action, Risk, Tool, ToolContext, ToolError, schema_of};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_yaml_ng::{Mapping, Value};
use std::collections::HashSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The file in a skill folder that holds its front matter and instructions.
const SKILL_FILE: &str = "SKILL.md";
/// Longest skill name, in characters.
const MAX_NAME_CHARS: usize = 64;
/// Longest description, in characters (it is shown in every prompt's skill index).
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Largest SKILL.md the store reads or writes.
const MAX_SKILL_FILE_BYTES: usize = 1024 * 1024;
/// Prefix and suffix of the temporary files atomic writes go through.
const TEMP_PREFIX: &str = ".SKILL.md.";
const TEMP_SUFFIX: &str = ".tmp";

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

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> SkillError + use<> {
    let path = path.to_path_buf();
    move |source| SkillError::Io {
        action,
        path,
        source,
    }
}

/// The skills in one folder (the data directory's `skills/`). Safe to share between threads;
/// writes made through one store are serialised.
#[derive(Debug)]
pub struct SkillStore {
    dir: PathBuf,
    write_lock: Mutex<()>,
    /// Problems already logged, so each is warned about once rather than on every listing.
    warned: Mutex<HashSet<SkillProblem>>,
}

/// What `skill_manage create` would write.
#[derive(Debug)]
pub(crate) struct CreatePlan {
    folder: PathBuf,
    path: PathBuf,
    content: String,
}

/// What `skill_manage edit` would write.
#[derive(Debug)]
pub(crate) struct EditPlan {
    path: PathBuf,
    old: String,
    new: String,
}

/// What `skill_manage delete` would remove.
#[derive(Debug)]
pub(crate) struct DeletePlan {
    folder: PathBuf,
    /// Every file in the folder, SKILL.md included, relative to it.
    files: Vec<String>,
    /// The folder is a symbolic link; only the link is removed.
    symlink: bool,
}

impl SkillStore {
    /// A store over `dir`, which holds one folder per skill. The folder need not exist yet;
    /// it is created by the first [`SkillStore::create`].
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            write_lock: Mutex::new(()),
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// The folder the skills live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every usable skill, sorted by name. Broken folders are skipped (see
    /// [`SkillStore::problems`]) and logged once each.
    pub fn list(&self) -> Vec<SkillSummary> {
        self.scan().0
    }

    /// The skill folders [`SkillStore::list`] skips, and why, sorted by path.
    pub fn problems(&self) -> Vec<SkillProblem> {
        self.scan().1
    }

    /// One skill with its instructions and the list of its other files.
    pub fn view(&self, name: &str) -> Result<Skill, SkillError> {
        check_name(name)?;
        let folder = self.existing_folder(name)?;
        let (path, _, parsed) = self.read_parsed(name, &folder)?;
        let files = list_files(&folder)?
            .into_iter()
            .filter(|f| f != SKILL_FILE)
            .collect();
        Ok(Skill {
            name: parsed.name,
            description: parsed.description,
            body: parsed.body,
            path,
            files,
        })
    }

    /// Makes a new skill folder with its SKILL.md.
    pub fn create(
        &self,
        name: &str,
        description: &str,
        body: &str,
    ) -> Result<SkillSummary, SkillError> {
        let _guard = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let plan = self.plan_create(name, description, body)?;
        fs::create_dir_all(&self.dir).map_err(io_error("create", &self.dir))?;
        fs::create_dir(&plan.folder).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => SkillError::AlreadyExists {
                name: name.into(),
                path: plan.folder.clone(),
            },
            _ => io_error("create", &plan.folder)(e),
        })?;
        if let Err(e) = write_atomic(&plan.path, &plan.content, None) {
            // The folder was made just now and holds nothing else.
            let _ = fs::remove_dir_all(&plan.folder);
            return Err(e);
        }
        tracing::info!(skill = %name, path = %plan.path.display(), "skill created");
        Ok(SkillSummary {
            name: name.into(),
            description: description.into(),
            path: plan.path,
        })
    }

    /// Changes a skill's description, its instructions, or both; what is `None` stays.
    /// Other front matter keys are kept (comments in the front matter are kept only when the
    /// description stays).
    pub fn edit(
        &self,
        name: &str,
        description: Option<&str>,
        body: Option<&str>,
    ) -> Result<SkillSummary, SkillError> {
        let _guard = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let plan = self.plan_edit(name, description, body)?;
        let permissions = fs::metadata(&plan.path).ok().map(|m| m.permissions());
        write_atomic(&plan.path, &plan.new, permissions)?;
        tracing::info!(skill = %name, path = %plan.path.display(), "skill edited");
        let parsed = parse(&plan.new).map_err(|problem| SkillError::Broken {
            name: name.into(),
            path: plan.path.clone(),
            problem,
        })?;
        Ok(SkillSummary {
            name: name.into(),
            description: parsed.description,
            path: plan.path,
        })
    }

    /// Removes a skill's folder with everything in it; returns the files that were in it
    /// (relative, SKILL.md included). A folder that is a symbolic link loses only the link.
    pub fn delete(&self, name: &str) -> Result<Vec<String>, SkillError> {
        let _guard = self.write_lock.lock().unwrap_or_else(|p| p.into_inner());
        let plan = self.plan_delete(name)?;
        if plan.symlink {
            fs::remove_file(&plan.folder).map_err(io_error("remove", &plan.folder))?;
        } else {
            // Move it aside first so listings never see a half-removed skill.
            let doomed = self
                .dir
                .join(format!(".deleting-{name}-{}", unique_suffix()));
            fs::rename(&plan.folder, &doomed).map_err(io_error("remove", &plan.folder))?;
            fs::remove_dir_all(&doomed).map_err(io_error("remove", &doomed))?;
        }
        tracing::info!(skill = %name, folder = %plan.folder.display(), "skill deleted");
        Ok(plan.files)
    }

    pub(crate) fn plan_create(
        &self,
        name: &str,
        description: &str,
        body: &str,
    ) -> Result<CreatePlan, SkillError> {
        check_name(name)?;
        check_description(description)?;
        check_body(body)?;
        let folder = self.dir.join(name);
        if fs::symlink_metadata(&folder).is_ok() {
            return Err(SkillError::AlreadyExists {
                name: name.into(),
                path: folder,
            });
        }
        let mut front = Mapping::new();
        front.insert("name".into(), name.into());
        front.insert("description".into(), description.into());
        let content = format!(
            "---\n{}---\n\n{}",
            to_yaml(&front)?,
            with_final_newline(body.trim_start_matches(['\r', '\n']))
        );
        check_size(&content)?;
        Ok(CreatePlan {
            path: folder.join(SKILL_FILE),
            folder,
            content,
        })
    }

    pub(crate) fn plan_edit(
        &self,
        name: &str,
        description: Option<&str>,
        body: Option<&str>,
    ) -> Result<EditPlan, SkillError> {
        check_name(name)?;
        if description.is_none() && body.is_none() {
            return Err(SkillError::Invalid(
                "nothing to change: give a new description, a new body or both".into(),
            ));
        }
        if let Some(d) = description {
            check_description(d)?;
        }
        if let Some(b) = body {
            check_body(b)?;
        }
        let folder = self.existing_folder(name)?;
        let (path, old, parsed) = self.read_parsed(name, &folder)?;
        let head = match description {
            Some(d) if d != parsed.description => {
                let mut front = parsed.front.clone();
                front.insert("description".into(), d.into());
                format!("---\n{}---\n", to_yaml(&front)?)
            }
            _ => with_final_newline(&parsed.head),
        };
        let body = match body {
            Some(b) => with_final_newline(b.trim_start_matches(['\r', '\n'])),
            None => parsed.body,
        };
        let gap = if parsed.gap.is_empty() && !body.is_empty() {
            "\n"
        } else {
            parsed.gap.as_str()
        };
        let new = format!("{head}{gap}{body}");
        if new == old {
            return Err(SkillError::Unchanged { name: name.into() });
        }
        check_size(&new)?;
        Ok(EditPlan { path, old, new })
    }

    pub(crate) fn plan_delete(&self, name: &str) -> Result<DeletePlan, SkillError> {
        check_name(name)?;
        let folder = self.existing_folder(name)?;
        let symlink = fs::symlink_metadata(&folder)
            .map(|m| m.file_type().is_symlink())
            .unwrap_or(false);
        let files = list_files(&folder)?;
        Ok(DeletePlan {
            folder,
            files,
            symlink,
        })
    }

    /// The folder of an existing skill, or `NotFound` listing the skills there are.
    fn existing_folder(&self, name: &str) -> Result<PathBuf, SkillError> {
        let folder = self.dir.join(name);
        if folder.is_dir() {
            Ok(folder)
        } else {
            Err(SkillError::NotFound {
                name: name.into(),
                available: self.list().into_iter().map(|s| s.name).collect(),
            })
        }
    }

    fn read_parsed(
        &self,
        name: &str,
        folder: &Path,
    ) -> Result<(PathBuf, String, Parsed), SkillError> {
        let path = folder.join(SKILL_FILE);
        match read_skill_file(&path, name) {
            Ok((text, parsed)) => Ok((path, text, parsed)),
            Err(problem) => Err(SkillError::Broken {
                name: name.into(),
                path,
                problem,
            }),
        }
    }

    /// Reads every skill folder once: the usable skills and the skipped ones.
    fn scan(&self) -> (Vec<SkillSummary>, Vec<SkillProblem>) {
        let mut skills = Vec::new();
        let mut problems = Vec::new();
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return (skills, problems),
            Err(e) => {
                problems.push(SkillProblem {
                    path: self.dir.clone(),
                    problem: format!("cannot read the skills folder: {e}"),
                });
                self.warn_new(&problems);
                return (skills, problems);
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    problems.push(SkillProblem {
                        path: self.dir.clone(),
                        problem: format!("cannot read the skills folder: {e}"),
                    });
                    continue;
                }
            };
            let path = entry.path();
            // Stray files next to the skill folders are not skills; hidden entries are the
            // store's own leftovers or the user's business.
            if !path.is_dir() || entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                problems.push(SkillProblem {
                    path,
                    problem: "the folder name is not valid UTF-8".into(),
                });
                continue;
            };
            if let Err(e) = check_name(&name) {
                problems.push(SkillProblem {
                    path,
                    problem: format!("the folder name is not a valid skill name ({e})"),
                });
                continue;
            }
            let file = path.join(SKILL_FILE);
            match read_skill_file(&file, &name) {
                Ok((_, parsed)) => skills.push(SkillSummary {
                    name,
                    description: parsed.description,
                    path: file,
                }),
                Err(problem) => problems.push(SkillProblem {
                    path: file,
                    problem,
                }),
            }
        }
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        self.warn_new(&problems);
        (skills, problems)
    }

    fn warn_new(&self, problems: &[SkillProblem]) {
        let mut warned = self.warned.lock().unwrap_or_else(|p| p.into_inner());
        for p in problems {
            if warned.insert(p.clone()) {
                tracing::warn!(path = %p.path.display(), problem = %p.problem, "skipping broken skill");
            }
        }
    }
}

/// A SKILL.md taken apart.
#[derive(Debug)]
struct Parsed {
    name: String,
    description: String,
    /// All front matter keys, in file order.
    front: Mapping,
    /// The text up to and including the closing `---` line, verbatim.
    head: String,
    /// The blank lines between the front matter and the body, verbatim.
    gap: String,
    /// The instructions, verbatim.
    body: String,
}

/// Reads and checks one SKILL.md; the error is a problem description for the user.
fn read_skill_file(path: &Path, folder_name: &str) -> Result<(String, Parsed), String> {
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
fn parse(text: &str) -> Result<Parsed, String> {
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

fn text_field(front: &Mapping, key: &str) -> Result<String, String> {
    match front.get(key) {
        None => Err(format!("its front matter has no `{key}`")),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("its front matter `{key}` is empty")),
        Some(_) => Err(format!("its front matter `{key}` is not a string")),
    }
}

fn to_yaml(front: &Mapping) -> Result<String, SkillError> {
    serde_yaml_ng::to_string(front)
        .map_err(|e| SkillError::Invalid(format!("cannot write the front matter: {e}")))
}

fn with_final_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// Checks the naming rule: 1-64 of `a-z`, `0-9` and `-`.
fn check_name(name: &str) -> Result<(), SkillError> {
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

fn check_description(description: &str) -> Result<(), SkillError> {
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

fn check_body(body: &str) -> Result<(), SkillError> {
    if body.trim().is_empty() {
        Err(SkillError::Invalid(
            "the body (the skill's instructions) is empty".into(),
        ))
    } else {
        Ok(())
    }
}

fn check_size(content: &str) -> Result<(), SkillError> {
    if content.len() > MAX_SKILL_FILE_BYTES {
        Err(SkillError::Invalid(format!(
            "the SKILL.md would be {} bytes; the limit is {MAX_SKILL_FILE_BYTES}",
            content.len()
        )))
    } else {
        Ok(())
    }
}

/// The files under `folder`, relative with `/` separators, sorted. Symbolic links are listed,
/// not followed; the store's temporary files are left out.
fn list_files(folder: &Path) -> Result<Vec<String>, SkillError> {
    let mut files = Vec::new();
    let mut pending = vec![(folder.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        for entry in fs::read_dir(&dir).map_err(io_error("read", &dir))? {
            let entry = entry.map_err(io_error("read", &dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if prefix.is_empty() && name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX) {
                continue;
            }
            let relative = format!("{prefix}{name}");
            let is_dir = entry
                .file_type()
                .map_err(io_error("read", &entry.path()))?
                .is_dir();
            if is_dir {
                pending.push((entry.path(), format!("{relative}/")));
            } else {
                files.push(relative);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Replaces `path` with `content` atomically: a temporary file in the same folder, synced,
/// then renamed over it. `permissions` (the old file's) are carried over when given.
fn write_atomic(
    path: &Path,
    content: &str,
    permissions: Option<fs::Permissions>,
) -> Result<(), SkillError> {
    let folder = path.parent().unwrap_or(Path::new("."));
    let temp = folder.join(format!("{TEMP_PREFIX}{}{TEMP_SUFFIX}", unique_suffix()));
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(content.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    written.map_err(|e| {
        let _ = fs::remove_file(&temp);
        io_error("write", path)(e)
    })
}

/// The skill tools over one store: `skills_list`, `skill_view` and `skill_manage`.
pub fn skill_tools(store: Arc<SkillStore>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SkillsList {
            store: store.clone(),
        }),
        Arc::new(SkillView {
            store: store.clone(),
        }),
        Arc::new(SkillManage { store }),
    ]
}

fn tool_error(e: SkillError) -> ToolError {
    match e {
        SkillError::InvalidName { .. } | SkillError::Invalid(_) => {
            ToolError::InvalidArguments(e.to_string())
        }
        _ => ToolError::Failed(e.to_string()),
    }
}

fn parse_args<T: serde::de::DeserializeOwned>(args: serde_json::Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}

/// Runs blocking store work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SkillError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::Failed(format!("the skill store task failed: {e}")))?
        .map_err(tool_error)
}

/// `skills_list`: the saved skills, one `name — description` line each.
struct SkillsList {
    store: Arc<SkillStore>,
}

/// Arguments of `skills_list` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkillsListArgs {}

#[async_trait]
impl Tool for SkillsList {
    fn name(&self) -> &str {
        "skills_list"
    }
    fn description(&self) -> &str {
        "List the saved skills (reusable instructions for recurring tasks), one `name — description` line each. Read one with skill_view before following it."
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<SkillsListArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    async fn call(&self, args: serde_json::Value, _: &ToolContext) -> Result<String, ToolError> {
        let SkillsListArgs {} = parse_args(args)?;
        let store = self.store.clone();
        let (skills, problems) = blocking(move || Ok(store.scan())).await?;
        let mut out = if skills.is_empty() {
            format!(
                "There are no skills yet. Skills live in {}/<name>/SKILL.md; skill_manage creates them.",
                self.store.dir().display()
            )
        } else {
            skills
                .iter()
                .map(|s| format!("{} — {}", s.name, s.description))
                .collect::<Vec<_>>()
                .join("\n")
        };
        if !problems.is_empty() {
            out.push_str("\n\nSkipped because they are broken:");
            for p in &problems {
                out.push_str(&format!("\n- {}: {}", p.path.display(), p.problem));
            }
        }
        Ok(out)
    }
}

/// `skill_view`: one skill's instructions and the other files in its folder.
struct SkillView {
    store: Arc<SkillStore>,
}

/// Arguments of `skill_view`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkillViewArgs {
    /// Name of the skill, as `skills_list` shows it.
    name: String,
}

#[async_trait]
impl Tool for SkillView {
    fn name(&self) -> &str {
        "skill_view"
    }
    fn description(&self) -> &str {
        "Read a saved skill: its description, its full instructions and the other files in its folder (read those with read_file)."
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<SkillViewArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    async fn call(&self, args: serde_json::Value, _: &ToolContext) -> Result<String, ToolError> {
        let SkillViewArgs { name } = parse_args(args)?;
        let store = self.store.clone();
        let skill = blocking(move || store.view(&name)).await?;
        let folder = skill.path.parent().unwrap_or(Path::new("."));
        let files = if skill.files.is_empty() {
            "Other files: none.".to_string()
        } else {
            format!(
                "Other files in {}:\n{}",
                folder.display(),
                skill
                    .files
                    .iter()
                    .map(|f| format!("- {f}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        };
        Ok(format!(
            "# Skill: {}\nDescription: {}\nFile: {}\n\n{}\n\n{files}",
            skill.name,
            skill.description,
            skill.path.display(),
            skill.body.trim_end()
        ))
    }
}

/// `skill_manage`: creates, edits or deletes a skill.
struct SkillManage {
    store: Arc<SkillStore>,
}

/// What `skill_manage` does.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum SkillOp {
    Create,
    Edit,
    Delete,
}

/// Arguments of `skill_manage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkillManageArgs {
    /// `create` a new skill (needs `description` and `body`), `edit` one (give `description`,
    /// `body` or both; what you leave out stays as it is), or `delete` one with its whole folder
    /// (give only `name`).
    op: SkillOp,
    /// The skill's name: 1-64 lowercase letters a-z, digits and '-', e.g. `weekly-report`.
    name: String,
    /// One line saying what the skill does and when to use it; it is shown in the skill index.
    description: Option<String>,
    /// The instructions in Markdown (everything after the front matter); on `edit` it replaces
    /// the old instructions whole.
    body: Option<String>,
}

/// A `skill_manage` call whose fields fit its `op`.
enum Change {
    Create {
        name: String,
        description: String,
        body: String,
    },
    Edit {
        name: String,
        description: Option<String>,
        body: Option<String>,
    },
    Delete {
        name: String,
    },
}

impl Change {
    fn from_args(args: &serde_json::Value) -> Result<Self, ToolError> {
        let SkillManageArgs {
            op,
            name,
            description,
            body,
        } = parse_args(args.clone())?;
        let invalid = |msg: &str| Err(ToolError::InvalidArguments(msg.into()));
        match (op, description, body) {
            (SkillOp::Create, Some(description), Some(body)) => Ok(Change::Create {
                name,
                description,
                body,
            }),
            (SkillOp::Create, _, _) => invalid("create needs both `description` and `body`"),
            (SkillOp::Edit, None, None) => {
                invalid("edit needs a new `description`, a new `body` or both")
            }
            (SkillOp::Edit, description, body) => Ok(Change::Edit {
                name,
                description,
                body,
            }),
            (SkillOp::Delete, None, None) => Ok(Change::Delete { name }),
            (SkillOp::Delete, _, _) => {
                invalid("delete takes only `name`; leave out `description` and `body`")
            }
        }
    }
}

#[async_trait]
impl Tool for SkillManage {
    fn name(&self) -> &str {
        "skill_manage"
    }
    fn description(&self) -> &str {
        "Create, edit or delete a saved skill (a folder with a SKILL.md: a one-line description and Markdown instructions). Save a skill when the user asks you to remember how to do a recurring task."
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<SkillManageArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::Dangerous
    }
    async fn action(&self, args: &serde_json::Value, _: &ToolContext) -> Result<Action, ToolError> {
        let change = Change::from_args(args)?;
        let store = self.store.clone();
        blocking(move || {
            Ok(match change {
                Change::Create {
                    name,
                    description,
                    body,
                } => {
                    let plan = store.plan_create(&name, &description, &body)?;
                    Action {
                        detail: format!(
                            "Create skill {name}: write {}\n\n{}",
                            plan.path.display(),
                            plan.content
                        ),
                        writes: vec![plan.path],
                        ..Action::default()
                    }
                }
                Change::Edit {
                    name,
                    description,
                    body,
                } => {
                    let plan = store.plan_edit(&name, description.as_deref(), body.as_deref())?;
                    let shown = plan.path.display().to_string();
                    let diff = similar::udiff::unified_diff(
                        similar::Algorithm::Myers,
                        &plan.old,
                        &plan.new,
                        3,
                        Some((&shown, &shown)),
                    );
                    Action {
                        detail: format!("Edit skill {name}: change {shown}\n\n{diff}"),
                        reads: vec![plan.path.clone()],
                        writes: vec![plan.path],
                        ..Action::default()
                    }
                }
                Change::Delete { name } => {
                    let plan = store.plan_delete(&name)?;
                    let what = if plan.symlink {
                        format!(
                            "remove the symbolic link {} (the folder it points to stays), which shows these files:",
                            plan.folder.display()
                        )
                    } else {
                        format!(
                            "remove the folder {} and the {} file(s) in it:",
                            plan.folder.display(),
                            plan.files.len()
                        )
                    };
                    let files: String = plan.files.iter().map(|f| format!("\n  {f}")).collect();
                    Action {
                        detail: format!("Delete skill {name}: {what}{files}"),
                        writes: vec![plan.folder],
                        ..Action::default()
                    }
                }
            })
        })
        .await
    }
    async fn call(&self, args: serde_json::Value, _: &ToolContext) -> Result<String, ToolError> {
        let change = Change::from_args(&args)?;
        let store = self.store.clone();
        blocking(move || {
            Ok(match change {
                Change::Create {
                    name,
                    description,
                    body,
                } => {
                    let skill = store.create(&name, &description, &body)?;
                    format!("Created skill {name} at {}.", skill.path.display())
                }
                Change::Edit {
                    name,
                    description,
                    body,
                } => {
                    let skill = store.edit(&name, description.as_deref(), body.as_deref())?;
                    let changed = match (description.is_some(), body.is_some()) {
                        (true, true) => "description and instructions",
                        (true, false) => "description",
                        _ => "instructions",
                    };
                    format!(
                        "Updated the {changed} of skill {name} ({}).",
                        skill.path.display()
                    )
                }
                Change::Delete { name } => {
                    let files = store.delete(&name)?;
                    format!(
                        "Deleted skill {name} and its folder ({} file(s)).",
                        files.len()
                    )
                }
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolOutcome, ToolRegistry};
    use echo_core::ToolCall;
    use serde_json::json;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    const GOOD: &str = "---\nname: deploy\ndescription: Ship the app\nowner: ops # kept\n---\n\n# Deploy\n\n1. Build.\n2. Ship.\n";

    fn store() -> (tempfile::TempDir, SkillStore) {
        let home = tempfile::tempdir().expect("tempdir");
        let store = SkillStore::new(home.path().join("skills"));
        (home, store)
    }

    fn put(store: &SkillStore, folder: &str, skill_md: Option<&str>) {
        let dir = store.dir().join(folder);
        fs::create_dir_all(&dir).expect("mkdir");
        if let Some(text) = skill_md {
            fs::write(dir.join(SKILL_FILE), text).expect("write");
        }
    }

    fn read(store: &SkillStore, name: &str) -> String {
        fs::read_to_string(store.dir().join(name).join(SKILL_FILE)).expect("read SKILL.md")
    }

    /// Every entry under the skills folder, for "nothing changed" checks.
    fn snapshot(store: &SkillStore) -> Vec<(String, String)> {
        let mut all = Vec::new();
        if let Ok(entries) = fs::read_dir(store.dir()) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                for file in list_files(&entry.path()).expect("list") {
                    let text = fs::read_to_string(entry.path().join(&file)).unwrap_or_default();
                    all.push((format!("{name}/{file}"), text));
                }
            }
        }
        all.sort();
        all
    }

    #[test]
    fn create_list_view_edit_delete_round_trip() {
        let (_home, store) = store();
        assert_eq!(store.list(), vec![]);
        let made = store
            .create("zeta", "Last one", "Do Z.")
            .expect("create zeta");
        assert_eq!(made.path, store.dir().join("zeta/SKILL.md"));
        store
            .create(
                "alpha-2",
                "Use when: \"quoted\" # not a comment",
                "\n\n# Alpha\nStep one.",
            )
            .expect("create alpha");
        assert_eq!(
            read(&store, "zeta"),
            "---\nname: zeta\ndescription: Last one\n---\n\nDo Z.\n"
        );

        let listed: Vec<(String, String)> = store
            .list()
            .into_iter()
            .map(|s| (s.name, s.description))
            .collect();
        assert_eq!(
            listed,
            vec![
                (
                    "alpha-2".to_string(),
                    "Use when: \"quoted\" # not a comment".to_string()
                ),
                ("zeta".to_string(), "Last one".to_string()),
            ]
        );

        fs::create_dir_all(store.dir().join("alpha-2/scripts")).expect("mkdir");
        fs::write(store.dir().join("alpha-2/scripts/run.sh"), "echo hi").expect("write");
        fs::write(store.dir().join("alpha-2/notes.txt"), "n").expect("write");
        let alpha = store.view("alpha-2").expect("view");
        assert_eq!(alpha.name, "alpha-2");
        assert_eq!(alpha.description, "Use when: \"quoted\" # not a comment");
        assert_eq!(alpha.body, "# Alpha\nStep one.\n");
        assert_eq!(alpha.files, vec!["notes.txt", "scripts/run.sh"]);
        assert_eq!(alpha.path, store.dir().join("alpha-2/SKILL.md"));

        // A body-only edit keeps the front matter byte for byte, comments and unknown keys too.
        put(&store, "deploy", Some(GOOD));
        store
            .edit("deploy", None, Some("# Deploy\n\nUse the script."))
            .expect("edit body");
        assert_eq!(
            read(&store, "deploy"),
            "---\nname: deploy\ndescription: Ship the app\nowner: ops # kept\n---\n\n# Deploy\n\nUse the script.\n"
        );
        // A description edit keeps the other keys (in order) and the body.
        let edited = store
            .edit("deploy", Some("Ship the app to production"), None)
            .expect("edit description");
        assert_eq!(edited.description, "Ship the app to production");
        assert_eq!(
            read(&store, "deploy"),
            "---\nname: deploy\ndescription: Ship the app to production\nowner: ops\n---\n\n# Deploy\n\nUse the script.\n"
        );
        let err = store
            .edit("deploy", Some("Ship the app to production"), None)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(
            err,
            Err("the edit would not change skill \"deploy\": the description and body are already as given".into())
        );

        // Writes go through a temporary file that does not stay behind.
        assert_eq!(
            list_files(&store.dir().join("deploy")).expect("list"),
            vec!["SKILL.md"]
        );

        let removed = store.delete("alpha-2").expect("delete");
        assert_eq!(removed, vec!["SKILL.md", "notes.txt", "scripts/run.sh"]);
        assert!(!store.dir().join("alpha-2").exists());
        let names: Vec<String> = store.list().into_iter().map(|s| s.name).collect();
        assert_eq!(names, vec!["deploy", "zeta"]);
        assert_eq!(
            fs::read_dir(store.dir()).expect("read").count(),
            2,
            "no leftovers of the deletion"
        );
    }

    #[test]
    fn broken_skill_folders_are_skipped_and_reported() {
        let (_home, store) = store();
        put(&store, "deploy", Some(GOOD));
        // (folder, SKILL.md, reported file, problem)
        let cases: &[(&str, Option<&str>, &str, &str)] = &[
            (
                "no-file",
                None,
                "no-file/SKILL.md",
                "the skill folder has no SKILL.md",
            ),
            (
                "no-front",
                Some("# Just markdown\n"),
                "no-front/SKILL.md",
                "it has no front matter",
            ),
            (
                "unclosed",
                Some("---\nname: unclosed\ndescription: x\n# body\n"),
                "unclosed/SKILL.md",
                "its front matter is not closed",
            ),
            (
                "bad-yaml",
                Some("---\nname: bad-yaml\ndescription: [unclosed\n---\nbody\n"),
                "bad-yaml/SKILL.md",
                "its front matter is not valid YAML",
            ),
            (
                "a-list",
                Some("---\n- name\n- description\n---\nbody\n"),
                "a-list/SKILL.md",
                "its front matter is not a YAML mapping",
            ),
            (
                "no-desc",
                Some("---\nname: no-desc\n---\nbody\n"),
                "no-desc/SKILL.md",
                "its front matter has no `description`",
            ),
            (
                "number-name",
                Some("---\nname: 12\ndescription: x\n---\nbody\n"),
                "number-name/SKILL.md",
                "its front matter `name` is not a string",
            ),
            (
                "mismatch",
                Some("---\nname: other\ndescription: x\n---\nbody\n"),
                "mismatch/SKILL.md",
                "the front matter name \"other\" does not match the folder name \"mismatch\"",
            ),
            (
                "Upper",
                Some("---\nname: Upper\ndescription: x\n---\nbody\n"),
                "Upper",
                "the folder name is not a valid skill name",
            ),
        ];
        for (folder, text, _, _) in cases {
            put(&store, folder, *text);
        }
        fs::write(store.dir().join("README.md"), "not a skill").expect("write");
        put(&store, ".hidden", None);

        let names: Vec<String> = store.list().into_iter().map(|s| s.name).collect();
        assert_eq!(names, vec!["deploy"]);
        let problems = store.problems();
        for (_, _, file, problem) in cases {
            let found = problems
                .iter()
                .find(|p| p.path == store.dir().join(file))
                .unwrap_or_else(|| panic!("no problem reported for {file}: {problems:?}"));
            assert!(
                found.problem.starts_with(problem),
                "{file}: {}",
                found.problem
            );
        }
        assert_eq!(problems.len(), cases.len(), "{problems:?}");

        let err = store
            .view("mismatch")
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(
            err,
            Err(format!(
                "skill \"mismatch\" is broken: {}: the front matter name \"other\" does not match the folder name \"mismatch\"",
                store.dir().join("mismatch/SKILL.md").display()
            ))
        );
        assert!(matches!(
            store.edit("bad-yaml", Some("fixed"), None),
            Err(SkillError::Broken { .. })
        ));
        // A broken skill can still be deleted.
        assert_eq!(store.delete("bad-yaml").expect("delete"), vec!["SKILL.md"]);
    }

    #[test]
    fn bad_names_are_rejected_everywhere() {
        let (_home, store) = store();
        put(
            &store,
            "ok",
            Some("---\nname: ok\ndescription: x\n---\nbody\n"),
        );
        let long = "a".repeat(65);
        let cases: &[(&str, &str)] = &[
            ("../x", "it contains other characters"),
            ("..", "it contains other characters"),
            ("a/b", "it contains other characters"),
            ("A", "it contains other characters"),
            ("a b", "it contains other characters"),
            ("é", "it contains other characters"),
            ("", "it is empty"),
            (&long, "it is longer than 64 characters"),
        ];
        for (name, reason) in cases {
            let expect = format!(
                "invalid skill name {name:?}: {reason}; use 1-64 lowercase letters a-z, digits and '-'"
            );
            let results = [
                store.create(name, "d", "b").map(|_| ()),
                store.view(name).map(|_| ()),
                store.edit(name, Some("d"), None).map(|_| ()),
                store.delete(name).map(|_| ()),
            ];
            for result in results {
                assert_eq!(result.map_err(|e| e.to_string()), Err(expect.clone()));
            }
        }
        assert!(!store.dir().parent().expect("home").join("x").exists());
        assert_eq!(store.list().len(), 1);
        store
            .create(&"a".repeat(64), "d", "b")
            .expect("64 characters are fine");
        store.create("0-9-a", "d", "b").expect("digits and dashes");
    }

    #[test]
    fn existing_and_missing_skills_are_errors() {
        let (_home, store) = store();
        let err = |r: Result<(), SkillError>| r.map_err(|e| e.to_string());
        assert_eq!(
            err(store.view("nope").map(|_| ())),
            Err("no skill named \"nope\"; there are no skills yet".into())
        );
        store.create("one", "First", "Do one.").expect("create");
        store.create("two", "Second", "Do two.").expect("create");
        assert_eq!(
            err(store.create("one", "Again", "Do it again.").map(|_| ())),
            Err(format!(
                "a skill named \"one\" already exists at {}",
                store.dir().join("one").display()
            ))
        );
        assert_eq!(
            read(&store, "one"),
            "---\nname: one\ndescription: First\n---\n\nDo one.\n"
        );
        assert_eq!(
            err(store.edit("three", Some("x"), None).map(|_| ())),
            Err("no skill named \"three\"; available skills: one, two".into())
        );
        assert_eq!(
            err(store.delete("three").map(|_| ())),
            Err("no skill named \"three\"; available skills: one, two".into())
        );
        let invalid: &[(Result<(), SkillError>, &str)] = &[
            (
                store.create("x", " ", "b").map(|_| ()),
                "the description is empty",
            ),
            (
                store.create("x", "two\nlines", "b").map(|_| ()),
                "the description must be one line",
            ),
            (
                store.create("x", &"d".repeat(1025), "b").map(|_| ()),
                "the description is longer than 1024 characters",
            ),
            (
                store.create("x", "d", "\n").map(|_| ()),
                "the body (the skill's instructions) is empty",
            ),
            (
                store.edit("one", None, None).map(|_| ()),
                "nothing to change: give a new description, a new body or both",
            ),
        ];
        for (result, expect) in invalid {
            assert_eq!(
                result.as_ref().map_err(ToString::to_string),
                Err(expect.to_string())
            );
        }
        assert!(!store.dir().join("x").exists());
    }

    fn ctx() -> ToolContext {
        ToolContext {
            workdir: PathBuf::from("."),
            cancel: CancellationToken::new(),
            session_id: "s".into(),
        }
    }

    fn registry(store: &Arc<SkillStore>) -> ToolRegistry {
        let registry = ToolRegistry::new();
        for tool in skill_tools(store.clone()) {
            registry.register(tool).expect("register");
        }
        registry
    }

    fn call(name: &str, args: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: args.to_string(),
        }
    }

    async fn run(registry: &ToolRegistry, name: &str, args: serde_json::Value) -> ToolOutcome {
        registry
            .execute(&call(name, args), &ctx(), Duration::from_secs(10))
            .await
    }

    #[tokio::test]
    async fn tools_through_the_registry() {
        let (_home, store) = store();
        let store = Arc::new(store);
        let registry = registry(&store);
        assert_eq!(
            registry.names(),
            vec!["skill_manage", "skill_view", "skills_list"]
        );
        assert_eq!(registry.risk("skills_list"), Some(Risk::ReadOnly));
        assert_eq!(registry.risk("skill_view"), Some(Risk::ReadOnly));
        assert_eq!(registry.risk("skill_manage"), Some(Risk::Dangerous));
        let dir = store.dir().display().to_string();

        // (tool, arguments, ok, expected start of the result)
        let steps: Vec<(&str, serde_json::Value, bool, String)> = vec![
            (
                "skills_list",
                json!({}),
                true,
                format!(
                    "There are no skills yet. Skills live in {dir}/<name>/SKILL.md; skill_manage creates them."
                ),
            ),
            (
                "skill_manage",
                json!({"op": "create", "name": "weekly-report", "description": "Write the weekly report", "body": "1. Collect.\n2. Write."}),
                true,
                format!("Created skill weekly-report at {dir}/weekly-report/SKILL.md."),
            ),
            (
                "skill_manage",
                json!({"op": "create", "name": "weekly-report", "description": "d", "body": "b"}),
                false,
                format!(
                    "error: a skill named \"weekly-report\" already exists at {dir}/weekly-report"
                ),
            ),
            (
                "skill_manage",
                json!({"op": "create", "name": "x", "description": "d"}),
                false,
                "error: invalid arguments: create needs both `description` and `body`".into(),
            ),
            (
                "skill_manage",
                json!({"op": "create", "name": "../x", "description": "d", "body": "b"}),
                false,
                "error: invalid arguments: invalid skill name \"../x\"".into(),
            ),
            (
                "skill_manage",
                json!({"op": "rename", "name": "weekly-report"}),
                false,
                "error: invalid arguments for skill_manage: /op:".into(),
            ),
            (
                "skill_manage",
                json!({"op": "edit", "name": "weekly-report", "colour": "red"}),
                false,
                "error: invalid arguments for skill_manage".into(),
            ),
            (
                "skill_manage",
                json!({"op": "edit", "name": "weekly-report"}),
                false,
                "error: invalid arguments: edit needs a new `description`, a new `body` or both"
                    .into(),
            ),
            (
                "skill_manage",
                json!({"op": "edit", "name": "monthly", "body": "b"}),
                false,
                "error: no skill named \"monthly\"; available skills: weekly-report".into(),
            ),
            (
                "skill_manage",
                json!({"op": "edit", "name": "weekly-report", "body": "1. Collect.\n2. Write.\n3. Send."}),
                true,
                format!(
                    "Updated the instructions of skill weekly-report ({dir}/weekly-report/SKILL.md)."
                ),
            ),
            (
                "skills_list",
                json!({}),
                true,
                "weekly-report — Write the weekly report".into(),
            ),
            (
                "skill_view",
                json!({"name": "weekly-report"}),
                true,
                format!(
                    "# Skill: weekly-report\nDescription: Write the weekly report\nFile: {dir}/weekly-report/SKILL.md\n\n1. Collect.\n2. Write.\n3. Send.\n\nOther files: none."
                ),
            ),
            (
                "skill_view",
                json!({"name": "monthly"}),
                false,
                "error: no skill named \"monthly\"; available skills: weekly-report".into(),
            ),
            (
                "skill_view",
                json!({}),
                false,
                "error: invalid arguments for skill_view: \"name\" is a required property".into(),
            ),
            (
                "skill_manage",
                json!({"op": "delete", "name": "weekly-report", "body": "b"}),
                false,
                "error: invalid arguments: delete takes only `name`".into(),
            ),
            (
                "skill_manage",
                json!({"op": "delete", "name": "weekly-report"}),
                true,
                "Deleted skill weekly-report and its folder (1 file(s)).".into(),
            ),
            (
                "skill_manage",
                json!({"op": "delete", "name": "weekly-report"}),
                false,
                "error: no skill named \"weekly-report\"; there are no skills yet".into(),
            ),
        ];
        for (tool, args, ok, expect) in steps {
            let out = run(&registry, tool, args.clone()).await;
            assert_eq!(out.ok, ok, "{tool} {args}: {}", out.content);
            assert!(
                out.content.starts_with(&expect),
                "{tool} {args}:\n got {:?}\nwant {expect:?}",
                out.content
            );
        }
        assert!(!store.dir().join("weekly-report").exists());

        // Broken folders show up in the listing so the model can fix or delete them.
        put(&store, "broken", Some("no front matter"));
        put(
            &store,
            "fine",
            Some("---\nname: fine\ndescription: Fine\n---\nok\n"),
        );
        let out = run(&registry, "skills_list", json!({})).await;
        assert_eq!(
            out.content,
            format!(
                "fine — Fine\n\nSkipped because they are broken:\n- {dir}/broken/SKILL.md: it has no front matter: it must start with a `---` line, then `name:` and `description:`, then another `---` line"
            )
        );
    }

    async fn action(registry: &ToolRegistry, args: serde_json::Value) -> Action {
        registry
            .prepare(&call("skill_manage", args), &ctx())
            .await
            .map(|p| p.action)
            .unwrap_or_else(|out| panic!("prepare failed: {}", out.content))
    }

    #[tokio::test]
    async fn skill_manage_shows_what_it_would_do_and_changes_nothing() {
        let (_home, store) = store();
        let store = Arc::new(store);
        let registry = registry(&store);
        let dir = store.dir().display().to_string();

        let create = action(
            &registry,
            json!({"op": "create", "name": "notes", "description": "Keep notes: tidy", "body": "Write them down."}),
        )
        .await;
        assert_eq!(
            create.detail,
            format!(
                "Create skill notes: write {dir}/notes/SKILL.md\n\n---\nname: notes\ndescription: 'Keep notes: tidy'\n---\n\nWrite them down.\n"
            )
        );
        assert_eq!(create.writes, vec![store.dir().join("notes/SKILL.md")]);
        assert!(!store.dir().exists(), "create's action wrote something");

        put(&store, "deploy", Some(GOOD));
        fs::write(store.dir().join("deploy/run.sh"), "./ship").expect("write");
        let before = snapshot(&store);

        let edit = action(
            &registry,
            json!({"op": "edit", "name": "deploy", "description": "Ship it", "body": "# Deploy\n\n1. Build.\n2. Ship.\n3. Check."}),
        )
        .await;
        let path = format!("{dir}/deploy/SKILL.md");
        assert_eq!(
            edit.detail,
            format!(
                "Edit skill deploy: change {path}\n\n--- {path}\n+++ {path}\n@@ -1,10 +1,11 @@\n ---\n name: deploy\n-description: Ship the app\n-owner: ops # kept\n+description: Ship it\n+owner: ops\n ---\n \n # Deploy\n \n 1. Build.\n 2. Ship.\n+3. Check.\n"
            )
        );
        assert_eq!(edit.writes, vec![store.dir().join("deploy/SKILL.md")]);

        let delete = action(&registry, json!({"op": "delete", "name": "deploy"})).await;
        assert_eq!(
            delete.detail,
            format!(
                "Delete skill deploy: remove the folder {dir}/deploy and the 2 file(s) in it:\n  SKILL.md\n  run.sh"
            )
        );
        assert_eq!(delete.writes, vec![store.dir().join("deploy")]);

        assert_eq!(snapshot(&store), before, "an action changed the skills");

        // The same checks as the call itself, before anything is asked of the user.
        let out = registry
            .prepare(
                &call(
                    "skill_manage",
                    json!({"op": "create", "name": "deploy", "description": "d", "body": "b"}),
                ),
                &ctx(),
            )
            .await
            .map(|p| p.action);
        let Err(out) = out else {
            panic!("creating an existing skill was prepared")
        };
        assert_eq!(
            out.content,
            format!("error: a skill named \"deploy\" already exists at {dir}/deploy")
        );
    }
}
