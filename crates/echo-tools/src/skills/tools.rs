//! The skill tools the model calls: `skills_list`, `skill_view` and `skill_manage` (which
//! shows the exact file, diff or folder in its approval request before anything changes).

use super::error::SkillError;
use super::store::SkillStore;
use crate::TypedTool;
use crate::registry::{Action, Risk, Tool, ToolContext, ToolError};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

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
pub struct SkillsListArgs {}

#[async_trait]
impl TypedTool for SkillsList {
    type Args = SkillsListArgs;
    const NAME: &'static str = "skills_list";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        "List the saved skills (reusable instructions for recurring tasks), one `name — description` line each. Read one with skill_view before following it."
    }
    async fn call(&self, args: SkillsListArgs, _: &ToolContext) -> Result<String, ToolError> {
        let SkillsListArgs {} = args;
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
pub struct SkillViewArgs {
    /// Name of the skill, as `skills_list` shows it.
    name: String,
}

#[async_trait]
impl TypedTool for SkillView {
    type Args = SkillViewArgs;
    const NAME: &'static str = "skill_view";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        "Read a saved skill: its description, its full instructions and the other files in its folder (read those with read_file)."
    }
    async fn call(&self, args: SkillViewArgs, _: &ToolContext) -> Result<String, ToolError> {
        let SkillViewArgs { name } = args;
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
pub struct SkillManageArgs {
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
    fn from_args(args: SkillManageArgs) -> Result<Self, ToolError> {
        let SkillManageArgs {
            op,
            name,
            description,
            body,
        } = args;
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
impl TypedTool for SkillManage {
    type Args = SkillManageArgs;
    const NAME: &'static str = "skill_manage";
    const RISK: Risk = Risk::Dangerous;

    fn description(&self) -> &str {
        "Create, edit or delete a saved skill (a folder with a SKILL.md: a one-line description and Markdown instructions). Save a skill when the user asks you to remember how to do a recurring task."
    }
    async fn action(
        &self,
        args: SkillManageArgs,
        _: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
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
        .map(Some)
    }
    async fn call(&self, args: SkillManageArgs, _: &ToolContext) -> Result<String, ToolError> {
        let change = Change::from_args(args)?;
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
