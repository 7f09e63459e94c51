//! Projects (migration 0021): a name, standing instructions and workspace folders that
//! conversations share. Which memories belong to a project is echo-memory's (`scope`); this
//! file keeps the rows and which conversation belongs to which project.

use super::Store;
use crate::error::{QueryContext, StoreError};
use crate::ids::{ProjectId, SessionId};
use crate::time::now_rfc3339;
use serde::Serialize;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;

/// A project as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Project {
    /// Id (memories name it in their scope, `project:<id>`).
    pub id: ProjectId,
    /// Unique name (what `--project` takes).
    pub name: String,
    /// Standing instructions for every request of its conversations.
    pub instructions: Option<String>,
    /// Absolute paths: the tools' workspace roots in its conversations (empty: the
    /// settings' roots).
    pub folders: Vec<String>,
    /// Creation time.
    pub created_at: String,
    /// Conversations in it (temporary chats aside).
    pub sessions: i64,
}

/// What an edit changes; `None` leaves a field as it is.
#[derive(Clone, Debug, Default)]
pub struct ProjectEdit {
    /// A new name.
    pub name: Option<String>,
    /// New instructions (`Some(None)`: none).
    pub instructions: Option<Option<String>>,
    /// New folders.
    pub folders: Option<Vec<String>>,
}

const COLUMNS: &str = "p.id, p.name, p.instructions, p.folders, p.created_at,
    (SELECT COUNT(*) FROM sessions s WHERE s.project_id = p.id AND s.temporary_owner IS NULL)
    AS sessions";

fn project(row: &SqliteRow) -> Result<Project, StoreError> {
    let folders: String = row.get("folders");
    let folders = serde_json::from_str(&folders).map_err(|e| StoreError::Corrupt {
        table: "projects",
        detail: format!("folders: {e}"),
    })?;
    Ok(Project {
        id: ProjectId::from_string(row.get::<String, _>("id")),
        name: row.get("name"),
        instructions: row.get("instructions"),
        folders,
        created_at: row.get("created_at"),
        sessions: row.get("sessions"),
    })
}

/// A query over projects: `COLUMNS` and a fixed tail (no value is ever formatted in).
fn select(tail: &str) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM projects p {tail}"))
}

fn folders_json(folders: &[String]) -> String {
    serde_json::Value::from(folders.to_vec()).to_string()
}

impl Store {
    /// Adds a project. `Ok(None)` when another project already has the name.
    pub async fn add_project(
        &self,
        name: &str,
        instructions: Option<&str>,
        folders: &[String],
    ) -> Result<Option<Project>, StoreError> {
        let id = ProjectId::new();
        let done = sqlx::query(
            "INSERT INTO projects (id, name, instructions, folders, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id.as_str())
        .bind(name)
        .bind(instructions)
        .bind(folders_json(folders))
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await;
        match done {
            Ok(_) => self.project(&id).await,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(None),
            Err(e) => Err(e).during("adding a project"),
        }
    }

    /// Every project, by name.
    pub async fn projects(&self) -> Result<Vec<Project>, StoreError> {
        let rows = sqlx::query(select("ORDER BY p.name COLLATE NOCASE, p.name"))
            .fetch_all(&self.pool)
            .await
            .during("listing projects")?;
        rows.iter().map(project).collect()
    }

    /// The project with this id, if any.
    pub async fn project(&self, id: &ProjectId) -> Result<Option<Project>, StoreError> {
        let row = sqlx::query(select("WHERE p.id = ?"))
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .during("reading a project")?;
        row.as_ref().map(project).transpose()
    }

    /// The project with this name, if any.
    pub async fn project_by_name(&self, name: &str) -> Result<Option<Project>, StoreError> {
        let row = sqlx::query(select("WHERE p.name = ?"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .during("finding a project")?;
        row.as_ref().map(project).transpose()
    }

    /// The project a session belongs to, if any.
    pub async fn session_project(
        &self,
        session: &SessionId,
    ) -> Result<Option<Project>, StoreError> {
        let row = sqlx::query(select(
            "JOIN sessions s2 ON s2.project_id = p.id WHERE s2.id = ?",
        ))
        .bind(session.as_str())
        .fetch_optional(&self.pool)
        .await
        .during("finding a session's project")?;
        row.as_ref().map(project).transpose()
    }

    /// Changes a project. `Ok(false)` (nothing changed) when the new name is taken.
    pub async fn edit_project(
        &self,
        id: &ProjectId,
        edit: &ProjectEdit,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE projects SET name = COALESCE(?, name),
                    instructions = CASE WHEN ? THEN ? ELSE instructions END,
                    folders = COALESCE(?, folders)
             WHERE id = ?",
        )
        .bind(edit.name.as_deref())
        .bind(edit.instructions.is_some())
        .bind(edit.instructions.clone().flatten())
        .bind(edit.folders.as_deref().map(folders_json))
        .bind(id.as_str())
        .execute(&self.pool)
        .await;
        match done {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e).during("changing a project"),
        }
    }

    /// Removes a project; its conversations stay, in no project. (What becomes of its
    /// memories is the caller's to decide first.)
    pub async fn remove_project(&self, id: &ProjectId) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM projects WHERE id = ?")
            .bind(id.as_str())
            .execute(&self.pool)
            .await
            .during("removing a project")?;
        Ok(())
    }
}
