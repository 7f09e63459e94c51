//! A memory's recorded history, and undo (reverting the last change that touched it, or any
//! change in its history).

use super::{MemoryActor, MemoryStore, new_change_id};
use crate::error::{Db, MemoryError};
use crate::model::{Memory, MemoryStatus};
use echo_core::MemoryAction;
use serde::Serialize;
use sqlx::Row;

/// One recorded change.
#[derive(Clone, Debug, Serialize)]
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
    pub actor: MemoryActor,
    /// Why.
    pub reason: Option<String>,
    /// The row before (`None` for a creation).
    pub before: Option<serde_json::Value>,
    /// The row after.
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
    pub async fn undo(&self, id: &str, actor: MemoryActor) -> Result<Vec<Memory>, MemoryError> {
        self.undo_change(id, None, actor).await
    }

    /// Reverts one change that touched `id`: the most recent one (`None`), or `change` from
    /// anywhere in its history. Every memory that change touched goes back to how it was just
    /// before it, recorded as a new `undo` change, so nothing later is lost: the history keeps
    /// the later versions and the undo can itself be reverted. Undoing a creation deletes the
    /// created memory.
    pub async fn undo_change(
        &self,
        id: &str,
        change: Option<&str>,
        actor: MemoryActor,
    ) -> Result<Vec<Memory>, MemoryError> {
        let explicit = change.is_some();
        let mut tx = self.begin().await?;
        let found: Option<String> = match change {
            None => sqlx::query_scalar(
                "SELECT change_id FROM memory_history WHERE memory_id = ? AND action NOT IN ('undo', 'reinforced')
                 ORDER BY id DESC LIMIT 1",
            )
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .db("finding the last change")?,
            Some(change) => sqlx::query_scalar(
                "SELECT change_id FROM memory_history WHERE memory_id = ? AND change_id = ? LIMIT 1",
            )
            .bind(id)
            .bind(change)
            .fetch_optional(&mut *tx)
            .await
            .db("finding the change")?,
        };
        let Some(change) = found else {
            self.require_tx(&mut tx, id).await?;
            return Err(match change {
                None => MemoryError::NotApplicable(format!("memory {id} has no change to undo")),
                Some(change) => MemoryError::NotFound {
                    what: "change of this memory",
                    id: change.to_string(),
                },
            });
        };
        let rows = sqlx::query(
            "SELECT memory_id, before, after FROM memory_history WHERE change_id = ? ORDER BY id DESC",
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
            let after_text: Option<String> = row.get(2);
            let current = self.require_tx(&mut tx, &memory_id).await?;
            let corrupt = |e: serde_json::Error| MemoryError::Corrupt {
                id: memory_id.clone(),
                detail: format!("history: {e}"),
            };
            let mut target = match (before_text, explicit) {
                (None, _) => {
                    let mut gone = current.clone();
                    gone.status = MemoryStatus::Deleted;
                    gone
                }
                // The latest change: the memory goes back to the whole row before it.
                (Some(text), false) => serde_json::from_str::<Memory>(&text).map_err(corrupt)?,
                // Any change: only what that change altered goes back, over today's row.
                (Some(before), true) => {
                    let before: serde_json::Value =
                        serde_json::from_str(&before).map_err(corrupt)?;
                    let after: serde_json::Value = match after_text {
                        Some(after) => serde_json::from_str(&after).map_err(corrupt)?,
                        None => serde_json::Value::Null,
                    };
                    let current_json = serde_json::to_value(&current).map_err(corrupt)?;
                    let merged = revert_fields(&before, &after, current_json).map_err(|field| {
                        MemoryError::NotApplicable(format!(
                            "memory {memory_id}: `{field}` changed again after change {change}; \
                             undo the later change first"
                        ))
                    })?;
                    serde_json::from_value::<Memory>(merged).map_err(corrupt)?
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

/// Fields every write sets, which say nothing about what a change meant.
const BOOKKEEPING: &[&str] = &["version", "updated_at", "effective_importance"];

/// `current` with every field that the change `before` → `after` altered set back to its value
/// in `before` (a three-way revert). A field altered since (today's value is neither the
/// change's result nor its start) is not overwritten: its name comes back as the error.
fn revert_fields(
    before: &serde_json::Value,
    after: &serde_json::Value,
    mut current: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let (Some(before), Some(now)) = (before.as_object(), current.as_object_mut()) else {
        return Err("row".into());
    };
    for (field, old) in before {
        if BOOKKEEPING.contains(&field.as_str()) {
            continue;
        }
        let new = after.get(field).unwrap_or(&serde_json::Value::Null);
        if new == old {
            continue;
        }
        let today = now.get(field).unwrap_or(&serde_json::Value::Null);
        if today != new && today != old {
            return Err(field.clone());
        }
        now.insert(field.clone(), old.clone());
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::revert_fields;
    use serde_json::json;

    #[test]
    fn reverts_only_what_the_change_altered() {
        let before = json!({"content": "a", "pinned": false, "version": 1});
        let after = json!({"content": "b", "pinned": false, "version": 2});
        // Pinned since: the pin stays, the content goes back.
        let current = json!({"content": "b", "pinned": true, "version": 3});
        assert_eq!(
            revert_fields(&before, &after, current).expect("revert"),
            json!({"content": "a", "pinned": true, "version": 3})
        );
    }

    #[test]
    fn refuses_a_field_changed_again_since() {
        let before = json!({"content": "a"});
        let after = json!({"content": "b"});
        let current = json!({"content": "c"});
        assert_eq!(
            revert_fields(&before, &after, current).expect_err("refused"),
            "content"
        );
    }
}
