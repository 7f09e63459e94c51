//! `Api` operations on projects: add, list, rename or change, remove (its memories become
//! global or are deleted, as the person says), and moving a memory between a project and
//! the global memories. Which memories a project's conversation recalls is echo-memory's
//! scope filter (`project:<id>`); this file keeps names and folders honest.

use crate::api::Api;
use crate::api::memory::mem_err;
use crate::error::ApiError;
use crate::wire::{Memory, Project, ProjectMemories, ProjectRemoved};
use echo_core::MemoryId;
use echo_core::store::{self, ProjectEdit};
use echo_memory::project_scope;

/// The longest project name.
const MAX_NAME: usize = 80;
/// The longest standing instructions, in characters.
const MAX_INSTRUCTIONS: usize = 8_000;

impl Api {
    /// Every project, by name, with its conversation and memory counts.
    pub async fn projects(&self) -> Result<Vec<Project>, ApiError> {
        let counts = self.memory().counts_by_scope().await.map_err(mem_err)?;
        let projects = self.inner.store.projects().await?;
        Ok(projects
            .into_iter()
            .map(|p| {
                let memories = counts.get(&project_scope(p.id.as_str())).copied();
                Project::new(p, memories.unwrap_or(0))
            })
            .collect())
    }

    /// Adds a project.
    pub async fn add_project(
        &self,
        name: &str,
        instructions: Option<&str>,
        folders: &[String],
    ) -> Result<Project, ApiError> {
        let name = project_name(name)?;
        let instructions = instructions_text(instructions)?;
        let folders = checked_folders(folders)?;
        match self
            .inner
            .store
            .add_project(name, instructions.as_deref(), &folders)
            .await?
        {
            Some(p) => self.project_view(p).await,
            None => Err(name_taken(name)),
        }
    }

    /// Renames a project or changes its instructions (empty: none) or folders.
    pub async fn edit_project(
        &self,
        name: &str,
        new_name: Option<&str>,
        instructions: Option<&str>,
        folders: Option<&[String]>,
    ) -> Result<Project, ApiError> {
        let project = self.project_named(name).await?;
        let edit = ProjectEdit {
            name: new_name.map(project_name).transpose()?.map(String::from),
            instructions: instructions
                .map(|i| instructions_text(Some(i)))
                .transpose()?,
            folders: folders.map(checked_folders).transpose()?,
        };
        if !self.inner.store.edit_project(&project.id, &edit).await? {
            return Err(name_taken(edit.name.as_deref().unwrap_or(name)));
        }
        let changed = self.inner.store.project(&project.id).await?;
        let changed = changed.ok_or_else(|| not_found(name))?;
        self.project_view(changed).await
    }

    /// Removes a project. Its conversations stay, in no project; its memories become global
    /// or are deleted, as `memories` says (required when it has any).
    pub async fn remove_project(
        &self,
        name: &str,
        memories: Option<ProjectMemories>,
    ) -> Result<ProjectRemoved, ApiError> {
        let project = self.project_named(name).await?;
        let scope = project_scope(project.id.as_str());
        let ids = self.memory().in_scope(&scope).await.map_err(mem_err)?;
        let (mut moved, mut deleted) = (0, 0);
        match (memories, ids.is_empty()) {
            (_, true) => {}
            (None, false) => {
                return Err(ApiError::InvalidInput {
                    what: "memories",
                    message: format!(
                        "project {name:?} has {} memories: say whether they become global \
                         memories or are deleted",
                        ids.len()
                    ),
                });
            }
            (Some(ProjectMemories::Global), false) => {
                for id in &ids {
                    self.memory().move_to(id, "global").await.map_err(mem_err)?;
                    moved += 1;
                }
            }
            (Some(ProjectMemories::Delete), false) => {
                let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                let report = self.memory().purge(&ids).await.map_err(mem_err)?;
                self.after_purge(&report).await?;
                deleted = ids.len() as u64;
            }
        }
        let view = self.project_view(project.clone()).await?;
        self.inner.store.remove_project(&project.id).await?;
        Ok(ProjectRemoved {
            project: view,
            moved,
            deleted,
        })
    }

    /// Moves a memory into the project named `project`, or out to the global memories.
    pub async fn memory_move(
        &self,
        id: &MemoryId,
        project: Option<&str>,
    ) -> Result<Memory, ApiError> {
        let scope = self.memory_scope(project).await?;
        let moved = self
            .memory()
            .move_to(id.as_str(), &scope)
            .await
            .map_err(mem_err)?;
        Ok(moved.into())
    }

    /// The scope of memories written for the project named `project` (`None`: global).
    pub(crate) async fn memory_scope(&self, project: Option<&str>) -> Result<String, ApiError> {
        match project {
            None => Ok("global".into()),
            Some(name) => Ok(project_scope(self.project_named(name).await?.id.as_str())),
        }
    }

    /// An automation's project must exist when it is saved (a run whose project was removed
    /// since fails, saying so).
    pub(crate) async fn check_project(
        &self,
        spec: &echo_automations::Spec,
    ) -> Result<(), ApiError> {
        match &spec.project {
            Some(name) => self.project_named(name).await.map(|_| ()),
            None => Ok(()),
        }
    }

    /// The project named `name`, which must exist.
    pub(super) async fn project_named(&self, name: &str) -> Result<store::Project, ApiError> {
        let found = self.inner.store.project_by_name(name).await?;
        found.ok_or_else(|| not_found(name))
    }

    async fn project_view(&self, p: store::Project) -> Result<Project, ApiError> {
        let scope = project_scope(p.id.as_str());
        let memories = self.memory().in_scope(&scope).await.map_err(mem_err)?.len();
        Ok(Project::new(p, memories as u64))
    }
}

fn not_found(name: &str) -> ApiError {
    ApiError::NotFound {
        what: "project",
        id: name.to_string(),
    }
}

fn name_taken(name: &str) -> ApiError {
    ApiError::InvalidInput {
        what: "name",
        message: format!("a project named {name:?} exists already"),
    }
}

/// A project's name: not empty, one line, at most [`MAX_NAME`] characters.
fn project_name(name: &str) -> Result<&str, ApiError> {
    let name = name.trim();
    let invalid = |message: &str| ApiError::InvalidInput {
        what: "name",
        message: message.to_string(),
    };
    if name.is_empty() {
        return Err(invalid("a project needs a name"));
    }
    if name.chars().count() > MAX_NAME {
        return Err(invalid("a project's name is at most 80 characters"));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid("a project's name is one line of text"));
    }
    Ok(name)
}

/// Standing instructions: trimmed, `None` when empty, at most [`MAX_INSTRUCTIONS`] characters.
fn instructions_text(text: Option<&str>) -> Result<Option<String>, ApiError> {
    let text = text.map(str::trim).filter(|t| !t.is_empty());
    if text.is_some_and(|t| t.chars().count() > MAX_INSTRUCTIONS) {
        return Err(ApiError::InvalidInput {
            what: "instructions",
            message: format!("a project's instructions are at most {MAX_INSTRUCTIONS} characters"),
        });
    }
    Ok(text.map(String::from))
}

/// Folders: absolute paths of existing directories, resolved (links followed), each once.
fn checked_folders(folders: &[String]) -> Result<Vec<String>, ApiError> {
    let mut out: Vec<String> = Vec::new();
    for folder in folders {
        let path = std::path::Path::new(folder.trim());
        let invalid = |why: &str| ApiError::InvalidInput {
            what: "folders",
            message: format!("{}: {why}", path.display()),
        };
        if !path.is_absolute() {
            return Err(invalid("give the folder's absolute path"));
        }
        let resolved = path
            .canonicalize()
            .map_err(|e| invalid(&format!("cannot be opened ({e})")))?;
        if !resolved.is_dir() {
            return Err(invalid("is not a folder"));
        }
        let text = resolved.to_string_lossy().into_owned();
        if !out.contains(&text) {
            out.push(text);
        }
    }
    Ok(out)
}
