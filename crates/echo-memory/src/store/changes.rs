//! Changes to an existing memory by the person or a tool: edit, pin, move between a project
//! and the global memories, expiry, forget (one memory or all learned in a session) and
//! restore.

use super::{MemoryActor, MemoryStore, new_change_id, now_text};
use crate::error::{Db, MemoryError};
use crate::model::{Memory, MemorySource, MemoryStatus, MemoryTier};
use chrono::{DateTime, Utc};
use echo_core::MemoryAction;
use echo_core::time::to_rfc3339;
use sqlx::{Sqlite, Transaction};

impl MemoryStore {
    /// Replaces a memory's text (the person's edit: the memory becomes `manual`, the
    /// highest source).
    pub async fn edit(
        &self,
        id: &str,
        content: &str,
        actor: MemoryActor,
    ) -> Result<Memory, MemoryError> {
        crate::write::check_content(content)?;
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        if before.status == MemoryStatus::Deleted {
            return Err(MemoryError::NotApplicable(format!(
                "memory {id} is deleted; restore it first"
            )));
        }
        let mut after = before.clone();
        after.content = content.trim().to_string();
        if actor == MemoryActor::User {
            after.source = MemorySource::Manual;
        }
        let change = new_change_id();
        self.update_tx(
            &mut tx,
            &change,
            &before,
            &mut after,
            MemoryAction::Edited,
            actor,
            None,
        )
        .await?;
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("editing a memory")?;
        Ok(after)
    }

    /// Pins or unpins a memory (pinned memories never decay).
    pub async fn set_pinned(&self, id: &str, pinned: bool) -> Result<Memory, MemoryError> {
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        let mut after = before.clone();
        after.pinned = pinned;
        let action = if pinned {
            MemoryAction::Pinned
        } else {
            MemoryAction::Unpinned
        };
        self.update_tx(
            &mut tx,
            &new_change_id(),
            &before,
            &mut after,
            action,
            MemoryActor::User,
            None,
        )
        .await?;
        tx.commit().await.db("pinning a memory")?;
        Ok(after)
    }

    /// Moves a memory to `scope`: `global`, or a project's (`project:<id>`). One change, so
    /// one undo puts it back. A working memory belongs to its session and stays there.
    pub async fn move_to(&self, id: &str, scope: &str) -> Result<Memory, MemoryError> {
        if scope != "global" && !scope.starts_with("project:") {
            return Err(MemoryError::Invalid {
                field: "scope",
                message: format!("{scope:?}: a memory moves to global or to a project"),
            });
        }
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        if before.status == MemoryStatus::Deleted || before.tier == MemoryTier::Working {
            return Err(MemoryError::NotApplicable(format!(
                "memory {id} is {}; only kept memories move",
                if before.status == MemoryStatus::Deleted {
                    "deleted"
                } else {
                    "this conversation's working memory"
                }
            )));
        }
        if before.scope == scope {
            return Ok(before);
        }
        let mut after = before.clone();
        after.scope = scope.to_string();
        self.update_tx(
            &mut tx,
            &new_change_id(),
            &before,
            &mut after,
            MemoryAction::Moved,
            MemoryActor::User,
            None,
        )
        .await?;
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("moving a memory")?;
        Ok(after)
    }

    /// Ids of the memories of `scope` (deleted ones aside), oldest first.
    pub async fn in_scope(&self, scope: &str) -> Result<Vec<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT id FROM memories WHERE scope = ? AND status != 'deleted' ORDER BY created_at",
        )
        .bind(scope)
        .fetch_all(&self.pool)
        .await
        .db("listing a project's memories")
    }

    /// How many memories (deleted ones aside) each scope holds, in one pass over the scope
    /// index.
    pub async fn counts_by_scope(
        &self,
    ) -> Result<std::collections::HashMap<String, u64>, MemoryError> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT scope, COUNT(*) FROM memories WHERE status != 'deleted' GROUP BY scope",
        )
        .fetch_all(&self.pool)
        .await
        .db("counting memories by scope")?;
        Ok(rows
            .into_iter()
            .map(|(scope, n)| (scope, n.max(0) as u64))
            .collect())
    }

    /// Deletes a memory: gone from search, prompts, the vector index and the review queue.
    /// The row stays as a tombstone with its history, so the deletion itself can be undone.
    pub async fn forget(&self, id: &str, actor: MemoryActor) -> Result<Memory, MemoryError> {
        let mut tx = self.begin().await?;
        let after = self.forget_tx(&mut tx, &new_change_id(), id, actor).await?;
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("deleting a memory")?;
        Ok(after)
    }

    /// Ids of the memories learned in a session (deleted ones aside), oldest first.
    pub async fn learned_in(&self, session_id: &str) -> Result<Vec<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT id FROM memories WHERE source_session_id = ? AND status != 'deleted' ORDER BY created_at",
        )
        .bind(session_id)
        .fetch_all(&self.pool)
        .await
        .db("finding a session's memories")
    }

    /// The episode consolidated from the stretch of `session_id` that starts at message
    /// `first_message_id`, if one was written (by a process that may have died before it
    /// could record the stretch as done).
    pub async fn episode_from(
        &self,
        session_id: &str,
        first_message_id: &str,
    ) -> Result<Option<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT id FROM memories WHERE source_session_id = ? AND source_message_id = ?
               AND tier = 'episodic' AND source = 'consolidated' AND status != 'deleted'
             ORDER BY created_at LIMIT 1",
        )
        .bind(session_id)
        .bind(first_message_id)
        .fetch_optional(&self.pool)
        .await
        .db("finding a stretch's episode")
    }

    /// Forgets every memory learned in `session_id` (its source session) as one change, so
    /// one undo of any of them brings them all back. Returns what it forgot.
    pub async fn forget_learned_in(
        &self,
        session_id: &str,
        actor: MemoryActor,
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut tx = self.begin().await?;
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM memories WHERE source_session_id = ? AND status != 'deleted' ORDER BY created_at",
        )
        .bind(session_id)
        .fetch_all(&mut *tx)
        .await
        .db("finding a session's memories")?;
        let change = new_change_id();
        let mut forgotten = Vec::with_capacity(ids.len());
        for id in &ids {
            forgotten.push(self.forget_tx(&mut tx, &change, id, actor).await?);
        }
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("forgetting a session's memories")?;
        Ok(forgotten)
    }

    /// Sets (or, with `None`, clears) the date after which a memory no longer holds; the
    /// sweep archives it then.
    pub async fn set_expiry(
        &self,
        id: &str,
        valid_until: Option<DateTime<Utc>>,
        actor: MemoryActor,
    ) -> Result<Memory, MemoryError> {
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        let mut after = before.clone();
        after.valid_until = valid_until.map(to_rfc3339);
        let reason = match &after.valid_until {
            Some(until) => format!("valid until {until}"),
            None => "no expiry".to_string(),
        };
        self.update_tx(
            &mut tx,
            &new_change_id(),
            &before,
            &mut after,
            MemoryAction::Edited,
            actor,
            Some(&reason),
        )
        .await?;
        tx.commit().await.db("setting an expiry")?;
        Ok(after)
    }

    /// [`MemoryStore::forget`] inside a transaction, as part of `change`.
    async fn forget_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        change: &str,
        id: &str,
        actor: MemoryActor,
    ) -> Result<Memory, MemoryError> {
        let before = self.require_tx(tx, id).await?;
        if before.status == MemoryStatus::Deleted {
            return Ok(before);
        }
        let mut after = before.clone();
        after.status = MemoryStatus::Deleted;
        self.update_tx(
            tx,
            change,
            &before,
            &mut after,
            MemoryAction::Deleted,
            actor,
            None,
        )
        .await?;
        let closed = sqlx::query(
            "UPDATE memory_conflicts SET status = 'resolved', resolution = 'deleted ' || ?, resolved_at = ?
             WHERE status = 'open' AND (memory_a = ? OR memory_b = ?)",
        )
        .bind(id)
        .bind(now_text())
        .bind(id)
        .bind(id)
        .execute(&mut **tx)
        .await
        .db("closing conflicts of a deleted memory")?;
        tracing::debug!(
            memory = id,
            conflicts = closed.rows_affected(),
            "closed conflicts of a deleted memory"
        );
        Ok(after)
    }

    /// Brings an archived, superseded or deleted memory back to `active` in its old tier. A
    /// restore counts as a use, so it does not fade away again at the next sweep.
    pub async fn restore(&self, id: &str, actor: MemoryActor) -> Result<Memory, MemoryError> {
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        if before.status == MemoryStatus::Active {
            return Ok(before);
        }
        let mut after = before.clone();
        after.status = MemoryStatus::Active;
        if after.tier == MemoryTier::Archival {
            after.tier = after.archived_from.unwrap_or(MemoryTier::Semantic);
        }
        after.archived_from = None;
        after.superseded_by = None;
        after.invalid_at = None;
        after.last_accessed = Some(now_text());
        self.update_tx(
            &mut tx,
            &new_change_id(),
            &before,
            &mut after,
            MemoryAction::Restored,
            actor,
            None,
        )
        .await?;
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("restoring a memory")?;
        Ok(after)
    }
}
