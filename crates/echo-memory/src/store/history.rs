//! A memory's recorded history, and undo (reverting the last change that touched it).

use super::{Actor, MemoryStore, new_change_id};
use crate::error::{Db, MemoryError};
use crate::model::{Memory, Status};
use echo_core::MemoryAction;
use serde::Serialize;
use sqlx::Row;

/// One recorded change.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct HistoryEntry {
    /// Row id.
    pub id: i64,
    /// Rows of one change share this id.
    pub change_id: String,
    /// Memory.
    pub memory_id: String,
    /// `created`, `edited`, `superseded`, `reinforced`, `archived`, `restored`, `deleted`, `pinned`, `unpinned`, `undo`, `conflict`, `resolved`.
    pub action: echo_core::MemoryAction,
    /// Who.
    pub actor: Actor,
    /// Why.
    pub reason: Option<String>,
    /// The row before (`None` for a creation).
    #[ts(type = "unknown")]
    pub before: Option<serde_json::Value>,
    /// The row after.
    #[ts(type = "unknown")]
    pub after: Option<serde_json::Value>,
    /// When.
    pub at: String,
}

impl MemoryStore {
    /// A memory's recorded changes, oldest first.
    pub async fn history(&self, id: &str) -> Result<Vec<HistoryEntry>, MemoryError> {
        let rows = sqlx::query(
            "SELECT id, change_id, memory_id, action, actor, reason, before, after, at
             FROM memory_history WHERE memory_id = ? ORDER BY id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .db("reading memory history")?;
        rows.iter()
            .map(|r| {
                let json = |col: &str| -> Result<Option<serde_json::Value>, MemoryError> {
                    let text: Option<String> = r.get(col);
                    text.map(|t| {
                        serde_json::from_str(&t).map_err(|e| MemoryError::Corrupt {
                            id: id.to_string(),
                            detail: format!("history {col}: {e}"),
                        })
                    })
                    .transpose()
                };
                let corrupt = |col: &str, e: sqlx::Error| MemoryError::Corrupt {
                    id: id.to_string(),
                    detail: format!("history {col}: {e}"),
                };
                Ok(HistoryEntry {
                    id: r.get("id"),
                    change_id: r.get("change_id"),
                    memory_id: r.get("memory_id"),
                    action: r.try_get("action").map_err(|e| corrupt("action", e))?,
                    actor: r.try_get("actor").map_err(|e| corrupt("actor", e))?,
                    reason: r.get("reason"),
                    before: json("before")?,
                    after: json("after")?,
                    at: r.get("at"),
                })
            })
            .collect()
    }

    /// Reverts the most recent change that touched `id` — every memory that change touched,
    /// as it was before. Undoing a creation deletes the created memory.
    pub async fn undo(&self, id: &str, actor: Actor) -> Result<Vec<Memory>, MemoryError> {
        let mut tx = self.begin().await?;
        let change: Option<String> = sqlx::query_scalar(
            "SELECT change_id FROM memory_history WHERE memory_id = ? AND action NOT IN ('undo', 'reinforced')
             ORDER BY id DESC LIMIT 1",
        )
        .bind(id)
        .fetch_optional(&mut *tx)
        .await
        .db("finding the last change")?;
        let Some(change) = change else {
            return Err(MemoryError::State(format!(
                "memory {id} has no change to undo"
            )));
        };
        let rows = sqlx::query(
            "SELECT memory_id, before FROM memory_history WHERE change_id = ? ORDER BY id DESC",
        )
        .bind(&change)
        .fetch_all(&mut *tx)
        .await
        .db("reading the change")?;
        let undo_change = new_change_id();
        let mut reverted = Vec::new();
        for row in rows {
            let memory_id: String = row.get(0);
            let before_text: Option<String> = row.get(1);
            let current = self.require_tx(&mut tx, &memory_id).await?;
            let mut target = match before_text {
                Some(text) => {
                    serde_json::from_str::<Memory>(&text).map_err(|e| MemoryError::Corrupt {
                        id: memory_id.clone(),
                        detail: format!("history: {e}"),
                    })?
                }
                None => {
                    let mut gone = current.clone();
                    gone.status = Status::Deleted;
                    gone
                }
            };
            target.version = current.version;
            let reason = format!("undo of change {change}");
            self.update_tx(
                &mut tx,
                &undo_change,
                &current,
                &mut target,
                MemoryAction::Undo,
                actor,
                Some(&reason),
            )
            .await?;
            reverted.push(target);
        }
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("undoing a change")?;
        Ok(reverted)
    }
}
