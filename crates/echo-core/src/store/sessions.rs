//! Sessions: creating and finding them by name (a temporary chat is a session its process
//! owns, migration 0020; a session may belong to a project, 0021), titles, the consolidation boundary, listing, renaming and deleting.

use super::Store;
use crate::error::{QueryContext, StoreError};
use crate::ids::{ProjectId, SessionId};
use crate::time::now_rfc3339;
use crate::vocab::TemporaryChat;
use serde::Serialize;
use sqlx::{FromRow, Row};

/// A session with its activity counts.
#[derive(Clone, Debug, Serialize, FromRow)]
pub struct SessionSummary {
    /// Id.
    pub id: String,
    /// Unique name (what `--session` takes).
    pub name: String,
    /// Title, from the first message.
    pub title: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last activity.
    pub updated_at: String,
    /// Number of stored messages.
    pub message_count: i64,
    /// Number of turns.
    pub turn_count: i64,
    /// Messages up to this `seq` are consolidated into long-term memory.
    pub consolidated_seq: i64,
    /// The automation this session is a run of (its runs each get a session of their own).
    pub automation: Option<String>,
    /// The name of the project it belongs to, if any.
    pub project: Option<String>,
}

/// A session as a turn opens it.
#[derive(Clone, Debug)]
pub struct OpenedSession {
    /// Id.
    pub id: SessionId,
    /// `Some` for a temporary chat (as it was created; a later request cannot change it).
    pub temporary: Option<TemporaryChat>,
    /// The project it belongs to (set when it was created; a later request cannot change it).
    pub project: Option<ProjectId>,
}

impl Store {
    /// The session with this name, created if missing.
    pub async fn session_by_name_or_create(&self, name: &str) -> Result<SessionId, StoreError> {
        Ok(self.open_session(name, None, None).await?.id)
    }

    /// The session with this name, created if missing: a temporary chat owned by the process
    /// `owner` when `temporary` says so, in `project` if one is named. An existing session
    /// keeps what it is.
    pub async fn open_session(
        &self,
        name: &str,
        temporary: Option<(TemporaryChat, &str)>,
        project: Option<&ProjectId>,
    ) -> Result<OpenedSession, StoreError> {
        let now = now_rfc3339();
        sqlx::query(
            "INSERT INTO sessions (id, name, created_at, updated_at, temporary, temporary_owner,
                                   project_id)
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
        )
        .bind(SessionId::new().as_str())
        .bind(name)
        .bind(&now)
        .bind(&now)
        .bind(temporary.map(|(kind, _)| kind))
        .bind(temporary.map(|(_, owner)| owner))
        .bind(project.map(ProjectId::as_str))
        .execute(&self.pool)
        .await
        .during("creating a session")?;
        self.find_session(name)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: "session",
                id: name.into(),
            })
    }

    /// The session with this name, if any, whether it is a temporary chat and its project.
    pub async fn find_session(&self, name: &str) -> Result<Option<OpenedSession>, StoreError> {
        let row: Option<(String, Option<TemporaryChat>, Option<String>)> =
            sqlx::query_as("SELECT id, temporary, project_id FROM sessions WHERE name = ?")
                .bind(name)
                .fetch_optional(&self.pool)
                .await
                .during("finding a session")?;
        Ok(row.map(|(id, temporary, project)| OpenedSession {
            id: SessionId::from_string(id),
            temporary,
            project: project.map(ProjectId::from_string),
        }))
    }

    /// The temporary chats whose owning process `gone` says is gone (or is this one,
    /// closing): what [`Store::delete_session`] must remove.
    pub async fn temporary_sessions(
        &self,
        gone: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<SessionId>, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT id, temporary_owner FROM sessions WHERE temporary_owner IS NOT NULL",
        )
        .fetch_all(&self.pool)
        .await
        .during("finding temporary chats")?;
        Ok(rows
            .into_iter()
            .filter(|(_, owner)| gone(owner))
            .map(|(id, _)| SessionId::from_string(id))
            .collect())
    }

    /// The session with this name, if any.
    pub async fn session_by_name(&self, name: &str) -> Result<Option<SessionId>, StoreError> {
        Ok(self.find_session(name).await?.map(|s| s.id))
    }

    /// Whether a session with this id is here.
    pub async fn session_exists(&self, id: &str) -> Result<bool, StoreError> {
        let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM sessions WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .during("finding a session")?;
        Ok(found.is_some())
    }

    /// Sets the title if the session has none yet.
    /// Returns whether it did.
    pub async fn set_session_title_if_empty(
        &self,
        session: &SessionId,
        title: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL")
            .bind(title)
            .bind(session.as_str())
            .execute(&self.pool)
            .await
            .during("setting a session title")?;
        Ok(done.rows_affected() > 0)
    }

    /// Replaces the title if it is still `expected` (a name the person gave meanwhile
    /// stays). Returns whether it did.
    pub async fn replace_session_title(
        &self,
        session: &SessionId,
        expected: &str,
        title: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE sessions SET title = ? WHERE id = ? AND title = ?")
            .bind(title)
            .bind(session.as_str())
            .bind(expected)
            .execute(&self.pool)
            .await
            .during("setting a session title")?;
        Ok(done.rows_affected() > 0)
    }

    /// The consolidation boundary of a session: messages with a higher `seq` are not yet
    /// consolidated into long-term memory.
    pub async fn consolidated_seq(&self, session: &SessionId) -> Result<i64, StoreError> {
        sqlx::query_scalar("SELECT consolidated_seq FROM sessions WHERE id = ?")
            .bind(session.as_str())
            .fetch_one(&self.pool)
            .await
            .during("reading the consolidation boundary")
    }

    /// Claims the messages after `from` up to `to` for consolidation by `owner` (this
    /// process's instance): moves the boundary to `to` if it still is at `from`, and records
    /// the claim until [`Store::finish_consolidation`]. `false`: another process was faster.
    pub async fn claim_consolidation(
        &self,
        session: &SessionId,
        from: i64,
        to: i64,
        owner: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE sessions SET consolidated_seq = ?, consolidation_owner = ?, consolidation_from = ?
             WHERE id = ? AND consolidated_seq = ?",
        )
        .bind(to)
        .bind(owner)
        .bind(from)
        .bind(session.as_str())
        .bind(from)
        .execute(&self.pool)
        .await
        .during("claiming messages for consolidation")?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks a claimed consolidation as written.
    pub async fn finish_consolidation(
        &self,
        session: &SessionId,
        to: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE sessions SET consolidation_owner = NULL, consolidation_from = NULL
             WHERE id = ? AND consolidated_seq = ?",
        )
        .bind(session.as_str())
        .bind(to)
        .execute(&self.pool)
        .await
        .during("finishing a consolidation")?;
        Ok(())
    }

    /// Gives back a claim whose consolidation failed, so a later turn tries again.
    pub async fn release_consolidation(
        &self,
        session: &SessionId,
        from: i64,
        to: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE sessions SET consolidated_seq = ?, consolidation_owner = NULL,
                    consolidation_from = NULL
             WHERE id = ? AND consolidated_seq = ?",
        )
        .bind(from)
        .bind(session.as_str())
        .bind(to)
        .execute(&self.pool)
        .await
        .during("releasing a consolidation claim")?;
        Ok(())
    }

    /// Gives back every consolidation claim whose owner is gone (a process that crashed or
    /// was killed mid-consolidation), so the stretch is consolidated again. Returns how many.
    pub async fn recover_consolidations(
        &self,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<usize, StoreError> {
        let rows = sqlx::query(
            "SELECT id, consolidation_owner FROM sessions WHERE consolidation_owner IS NOT NULL",
        )
        .fetch_all(&self.pool)
        .await
        .during("finding unfinished consolidations")?;
        let mut recovered = 0;
        for row in rows {
            let (id, owner): (String, String) = (row.get(0), row.get(1));
            if owner_alive(&owner) {
                continue;
            }
            let done = sqlx::query(
                "UPDATE sessions SET consolidated_seq = consolidation_from,
                        consolidation_owner = NULL, consolidation_from = NULL
                 WHERE id = ? AND consolidation_owner = ?",
            )
            .bind(&id)
            .bind(&owner)
            .execute(&self.pool)
            .await
            .during("giving back an unfinished consolidation")?;
            recovered += done.rows_affected() as usize;
        }
        Ok(recovered)
    }

    /// All kept sessions (a temporary chat is never listed), most recently active first.
    pub async fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        sqlx::query_as::<_, SessionSummary>(
            "SELECT s.id, s.name, s.title, s.created_at, s.updated_at, s.consolidated_seq,
                    (SELECT COUNT(*) FROM messages m
                      WHERE m.session_id = s.id AND m.replaced_by IS NULL) AS message_count,
                    (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
                    (SELECT a.name FROM automation_runs r JOIN automations a
                       ON a.id = r.automation_id WHERE r.session = s.name LIMIT 1) AS automation,
                    (SELECT p.name FROM projects p WHERE p.id = s.project_id) AS project
             FROM sessions s WHERE s.temporary_owner IS NULL
             ORDER BY s.updated_at DESC, s.name",
        )
        .fetch_all(&self.pool)
        .await
        .during("listing sessions")
    }

    /// Renames a session. `Ok(false)` when another session already has the name.
    /// The name the person gave also becomes the title shown in lists (it replaces the one
    /// made from the first message).
    pub async fn rename_session(&self, id: &SessionId, name: &str) -> Result<bool, StoreError> {
        let result =
            sqlx::query("UPDATE sessions SET name = ?, title = ?, updated_at = ? WHERE id = ?")
                .bind(name)
                .bind(name)
                .bind(crate::time::now_rfc3339())
                .bind(id.as_str())
                .execute(&self.pool)
                .await;
        match result {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(false),
            Err(e) => Err(e).during("renaming a session"),
        }
    }

    /// Puts a session in project `project` (by id), or in none. `Ok(false)` when there is no
    /// such session.
    pub async fn set_session_project(
        &self,
        id: &SessionId,
        project: Option<&ProjectId>,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE sessions SET project_id = ?, updated_at = ? WHERE id = ?")
            .bind(project.map(ProjectId::as_str))
            .bind(crate::time::now_rfc3339())
            .bind(id.as_str())
            .execute(&self.pool)
            .await
            .during("moving a session")?;
        Ok(done.rows_affected() > 0)
    }

    /// Deletes a session with its turns, messages, summaries, trace spans and session rules, in one
    /// transaction. `Ok(false)` (and nothing deleted) while one of its turns is accepted or
    /// running.
    pub async fn delete_session(&self, id: &SessionId) -> Result<bool, StoreError> {
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .during("deleting a session")?;
        let busy: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM turns WHERE session_id = ? AND status IN ('accepted', 'running')",
        )
        .bind(id.as_str())
        .fetch_one(&mut *tx)
        .await
        .during("deleting a session")?;
        if busy > 0 {
            return Ok(false);
        }
        // Spans name their turn without a foreign key (they are written while it runs).
        sqlx::query(
            "DELETE FROM spans WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)",
        )
        .bind(id.as_str())
        .execute(&mut *tx)
        .await
        .during("deleting a session's traces")?;
        // Captured model requests name their turn without a foreign key too, and their
        // messages are blobs shared between calls: the calls go, then every blob that no
        // remaining call refers to.
        sqlx::query(
            "DELETE FROM model_calls WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)",
        )
        .bind(id.as_str())
        .execute(&mut *tx)
        .await
        .during("deleting a session's captured model requests")?;
        super::captures::drop_unshared_blobs(&mut tx).await?;
        sqlx::query("DELETE FROM history_archive_fts WHERE session_id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .during("deleting a session's archived history")?;
        // A full-text index keeps deleted words in its segments until they are merged.
        sqlx::query("INSERT INTO history_archive_fts(history_archive_fts) VALUES ('optimize')")
            .execute(&mut *tx)
            .await
            .during("deleting a session's archived history")?;
        sqlx::query("DELETE FROM sessions WHERE id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .during("deleting a session")?;
        tx.commit().await.during("deleting a session")?;
        // Old log frames must not keep the conversation either.
        self.truncate_log().await;
        Ok(true)
    }
}
