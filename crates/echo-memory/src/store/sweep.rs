//! Forgetting over time: the sweep that archives what expired or faded (and prunes the
//! search index's change log), and reinforcement of memories injected into a prompt.

use super::{MemoryActor, MemoryStore, new_change_id, now_text};
use crate::error::{Db, MemoryError};
use crate::forgetting::{lapsed, reinforced_half_life};
use crate::model::{MemoryStatus, MemoryTier, parse_time};
use chrono::{DateTime, Utc};
use echo_core::MemoryAction;
use echo_core::time::to_rfc3339;
use serde::Serialize;

/// What a sweep did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SweepReport {
    /// As of when.
    pub now: String,
    /// Memories looked at.
    pub checked: usize,
    /// Archived because `valid_until` passed.
    pub expired: Vec<String>,
    /// Archived because their effective importance fell below the threshold.
    pub faded: Vec<String>,
}

/// Entries of `memory_changes` a sweep keeps.
const CHANGE_LOG_KEPT: i64 = 10_000;

impl MemoryStore {
    /// Archives what expired or faded, as of `now`. Pinned memories never fade, but do expire.
    pub async fn sweep(&self, now: DateTime<Utc>) -> Result<SweepReport, MemoryError> {
        let candidates = self
            .active(&[MemoryTier::Semantic, MemoryTier::Episodic])
            .await?;
        let mut report = SweepReport {
            now: to_rfc3339(now),
            checked: candidates.len(),
            ..Default::default()
        };
        let mut tx = self.begin().await?;
        let change = new_change_id();
        for m in candidates {
            let Some(reason) = lapsed(&m, now, self.config.archive_below) else {
                continue;
            };
            let mut after = m.clone();
            after.archived_from = Some(m.tier);
            after.tier = MemoryTier::Archival;
            after.status = MemoryStatus::Archived;
            after.invalid_at = Some(to_rfc3339(now));
            self.update_tx(
                &mut tx,
                &change,
                &m,
                &mut after,
                MemoryAction::Archived,
                MemoryActor::Sweep,
                Some(reason),
            )
            .await?;
            if reason == "expired" {
                report.expired.push(m.id);
            } else {
                report.faded.push(m.id);
            }
        }
        if !report.expired.is_empty() || !report.faded.is_empty() {
            self.invalidate_snapshots_tx(&mut tx).await?;
        }
        // The search indexes' change log keeps its newest entries; a process further behind
        // than that rebuilds its index (see `bm25.rs`).
        sqlx::query(
            "DELETE FROM memory_changes
             WHERE seq <= (SELECT MAX(seq) FROM memory_changes) - ?",
        )
        .bind(CHANGE_LOG_KEPT)
        .execute(&mut *tx)
        .await
        .db("pruning the memory change log")?;
        sqlx::query(
            "INSERT INTO memory_sweeps (at, swept_at, checked, archived) VALUES (?, ?, ?, ?)",
        )
        .bind(to_rfc3339(now))
        .bind(now_text())
        .bind(report.checked as i64)
        .bind((report.expired.len() + report.faded.len()) as i64)
        .execute(&mut *tx)
        .await
        .db("recording the sweep")?;
        tx.commit().await.db("sweeping memories")?;
        Ok(report)
    }

    /// When the last sweep ran (wall-clock time), if one ever did.
    pub async fn last_sweep(&self) -> Result<Option<DateTime<Utc>>, MemoryError> {
        let at: Option<String> =
            sqlx::query_scalar("SELECT swept_at FROM memory_sweeps ORDER BY id DESC LIMIT 1")
                .fetch_optional(&self.pool)
                .await
                .db("reading the last sweep")?;
        Ok(at.as_deref().and_then(parse_time))
    }

    /// Records that these memories were injected into a prompt: their half-life grows.
    /// (A search hit that is not injected does not count.)
    pub async fn reinforce(&self, ids: &[String], now: DateTime<Utc>) -> Result<(), MemoryError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin().await?;
        for id in ids {
            let stability: Option<f64> =
                sqlx::query_scalar("SELECT stability FROM memories WHERE id = ?")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await
                    .db("reading a memory's stability")?;
            let Some(stability) = stability else { continue };
            sqlx::query(
                "UPDATE memories SET stability = ?, access_count = access_count + 1, last_accessed = ? WHERE id = ?",
            )
            .bind(reinforced_half_life(stability, &self.config))
            .bind(to_rfc3339(now))
            .bind(id)
            .execute(&mut *tx)
            .await
            .db("reinforcing a memory")?;
        }
        tx.commit().await.db("reinforcing memories")?;
        Ok(())
    }
}
