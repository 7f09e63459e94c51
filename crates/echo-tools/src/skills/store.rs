//! [`SkillStore`]: the skill folders on disk — discovery (broken folders skipped and reported
//! once), reading one skill, and the planned, serialised create, edit and delete.

use super::disk::{list_files, unique_suffix, write_atomic};
use super::error::{SkillError, io_error};
use super::skill_md::{
    Parsed, check_body, check_description, check_name, check_size, parse, read_skill_file, to_yaml,
    with_final_newline,
};
use super::{SKILL_FILE, Skill, SkillProblem, SkillSummary};
use serde_yaml_ng::Mapping;
use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    pub(super) folder: PathBuf,
    pub(super) path: PathBuf,
    pub(super) content: String,
}

/// What `skill_manage edit` would write.
#[derive(Debug)]
pub(crate) struct EditPlan {
    pub(super) path: PathBuf,
    pub(super) old: String,
    pub(super) new: String,
}

/// What `skill_manage delete` would remove.
#[derive(Debug)]
pub(crate) struct DeletePlan {
    pub(super) folder: PathBuf,
    /// Every file in the folder, SKILL.md included, relative to it.
    pub(super) files: Vec<String>,
    /// The folder is a symbolic link; only the link is removed.
    pub(super) symlink: bool,
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
    pub(super) fn scan(&self) -> (Vec<SkillSummary>, Vec<SkillProblem>) {
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
