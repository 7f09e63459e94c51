//! Conflicts between memories: which memories are held back, the review queue, and
//! resolving a conflict.

use super::{MemoryActor, MemoryStore, new_change_id, now_text};
use crate::error::{Db, MemoryError};
use crate::model::MemoryStatus;
use echo_core::MemoryAction;
use serde::Serialize;
use sqlx::Row;

/// An unresolved or resolved conflict between two memories.
#[derive(Clone, Debug, Serialize)]
pub struct Conflict {
    /// Id.
    pub id: String,
    /// One side.
    pub memory_a: String,
    /// The other side.
    pub memory_b: String,
    /// The judge's verdict.
    pub verdict: crate::write::MemoryVerdict,
    /// The judge's explanation.
    pub explanation: Option<String>,
    /// Open (waiting for the person) or resolved.
    pub status: echo_core::ConflictStatus,
    /// How it was resolved.
    pub resolution: Option<String>,
    /// When it was found.
    pub created_at: String,
    /// When it was resolved.
    pub resolved_at: Option<String>,
}

impl MemoryStore {
    /// Ids of memories in an open conflict (never injected until the person decides).
    pub async fn conflicted_ids(&self) -> Result<std::collections::HashSet<String>, MemoryError> {
        let rows =
            sqlx::query("SELECT memory_a, memory_b FROM memory_conflicts WHERE status = 'open'")
                .fetch_all(&self.pool)
                .await
                .db("reading open conflicts")?;
        Ok(rows
            .iter()
            .flat_map(|r| [r.get::<String, _>(0), r.get::<String, _>(1)])
            .collect())
    }

    /// Conflicts, open ones first.
    pub async fn conflicts(&self, open_only: bool) -> Result<Vec<Conflict>, MemoryError> {
        let q = if open_only {
            "SELECT * FROM memory_conflicts WHERE status = 'open' ORDER BY created_at"
        } else {
            "SELECT * FROM memory_conflicts ORDER BY status DESC, created_at"
        };
        let rows = sqlx::query(q)
            .fetch_all(&self.pool)
            .await
            .db("listing conflicts")?;
        rows.iter()
            .map(|r| {
                let id: String = r.get("id");
                let verdict = r.try_get("verdict").map_err(|e| MemoryError::Corrupt {
                    id: id.clone(),
                    detail: format!("conflict verdict: {e}"),
                })?;
                Ok(Conflict {
                    id,
                    memory_a: r.get("memory_a"),
                    memory_b: r.get("memory_b"),
                    verdict,
                    explanation: r.get("explanation"),
                    status: r.get("status"),
                    resolution: r.get("resolution"),
                    created_at: r.get("created_at"),
                    resolved_at: r.get("resolved_at"),
                })
            })
            .collect()
    }

    /// Settles a conflict from the review queue: keep one side (the other is superseded by
    /// it) or both (they are then not in conflict any more).
    pub async fn resolve(
        &self,
        conflict_id: &str,
        keep: Option<&str>,
    ) -> Result<Conflict, MemoryError> {
        let mut tx = self.begin().await?;
        let row =
            sqlx::query("SELECT memory_a, memory_b, status FROM memory_conflicts WHERE id = ?")
                .bind(conflict_id)
                .fetch_optional(&mut *tx)
                .await
                .db("reading a conflict")?
                .ok_or_else(|| MemoryError::NotFound {
                    what: "conflict",
                    id: conflict_id.into(),
                })?;
        let (a, b, status): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        if status != "open" {
            return Err(MemoryError::NotApplicable(format!(
                "conflict {conflict_id} is already resolved"
            )));
        }
        let change = new_change_id();
        let resolution = match keep {
            None => "kept both".to_string(),
            Some(winner) if winner == a || winner == b => {
                let loser = if winner == a { &b } else { &a };
                let before = self.require_tx(&mut tx, loser).await?;
                let mut after = before.clone();
                after.status = MemoryStatus::Superseded;
                after.superseded_by = Some(winner.to_string());
                after.invalid_at = Some(now_text());
                let reason = format!("review: the person kept {winner}");
                self.update_tx(
                    &mut tx,
                    &change,
                    &before,
                    &mut after,
                    MemoryAction::Superseded,
                    MemoryActor::User,
                    Some(&reason),
                )
                .await?;
                format!("kept {winner}")
            }
            Some(other) => {
                return Err(MemoryError::Invalid {
                    field: "keep",
                    message: format!("{other} is not part of conflict {conflict_id} ({a} vs {b})"),
                });
            }
        };
        sqlx::query("UPDATE memory_conflicts SET status = 'resolved', resolution = ?, resolved_at = ? WHERE id = ?")
            .bind(&resolution)
            .bind(now_text())
            .bind(conflict_id)
            .execute(&mut *tx)
            .await
            .db("resolving a conflict")?;
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("resolving a conflict")?;
        self.conflicts(false)
            .await?
            .into_iter()
            .find(|c| c.id == conflict_id)
            .ok_or_else(|| MemoryError::NotFound {
                what: "conflict",
                id: conflict_id.into(),
            })
    }
}
