//! The store at a glance, for the memory page: counts by tier and status, open conflicts, and
//! what the next sweep would archive.

use super::{MemoryStore, sql};
use crate::error::{Db, MemoryError};
use crate::forgetting::lapsed;
use crate::model::{MemoryStatus, MemoryTier};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::Row;

/// Counts of the store.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemoryStats {
    /// As of when.
    pub now: String,
    /// Memories by tier and status (deleted ones are gone, not counted).
    pub counts: Vec<TierStatusCount>,
    /// Conflicts waiting for the person.
    pub open_conflicts: usize,
    /// Active memories the next sweep would archive because they expired.
    pub will_expire: usize,
    /// Active memories the next sweep would archive because they faded.
    pub will_fade: usize,
    /// When the last sweep ran.
    pub last_sweep: Option<String>,
}

/// How many memories are in one tier with one status.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierStatusCount {
    /// Tier.
    pub tier: MemoryTier,
    /// Status.
    pub status: MemoryStatus,
    /// How many.
    pub count: usize,
}

impl MemoryStore {
    /// The store's counts as of `now` (see [`MemoryStats`]).
    pub async fn stats(&self, now: DateTime<Utc>) -> Result<MemoryStats, MemoryError> {
        let rows = sqlx::query(sql(
            "SELECT tier, status, COUNT(*) AS n FROM memories GROUP BY tier, status ORDER BY tier, status"
                .to_string(),
        ))
        .fetch_all(&self.pool)
        .await
        .db("counting memories")?;
        let mut counts = Vec::with_capacity(rows.len());
        for row in &rows {
            counts.push(TierStatusCount {
                tier: row.try_get("tier").db("reading a tier")?,
                status: row.try_get("status").db("reading a status")?,
                count: row.get::<i64, _>("n").max(0) as usize,
            });
        }
        let open_conflicts: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM memory_conflicts WHERE status = 'open'")
                .fetch_one(&self.pool)
                .await
                .db("counting conflicts")?;
        // The same test the sweep applies, on the same candidates.
        let mut stats = MemoryStats {
            now: echo_core::time::to_rfc3339(now),
            counts,
            open_conflicts: open_conflicts.max(0) as usize,
            last_sweep: self.last_sweep().await?.map(echo_core::time::to_rfc3339),
            ..MemoryStats::default()
        };
        for m in self
            .active(&[MemoryTier::Semantic, MemoryTier::Episodic])
            .await?
        {
            match lapsed(&m, now, self.config.archive_below) {
                Some("expired") => stats.will_expire += 1,
                Some(_) => stats.will_fade += 1,
                None => {}
            }
        }
        Ok(stats)
    }
}
