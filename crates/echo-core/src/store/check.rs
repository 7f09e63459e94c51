//! "Check my data": SQLite's own integrity and foreign-key checks, and the promises a crash
//! must not break — no turn left accepted or running by a process that is gone, no
//! consolidation claim left behind by one.

use super::Store;
use crate::error::{QueryContext, StoreError};
use sqlx::Row;

/// What [`Store::check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreCheck {
    /// `PRAGMA integrity_check`'s lines: exactly `["ok"]` when the file is sound.
    pub integrity: Vec<String>,
    /// Rows whose foreign key points at nothing (`PRAGMA foreign_key_check`).
    pub foreign_key_violations: u64,
    /// Conversations.
    pub sessions: u64,
    /// Messages across them.
    pub messages: u64,
    /// Turns still accepted or running whose process is gone.
    pub unfinished_turns: u64,
    /// Consolidation claims whose process is gone.
    pub unfinished_consolidations: u64,
}

impl StoreCheck {
    /// Whether SQLite called the file sound.
    pub fn sound(&self) -> bool {
        self.integrity == ["ok"]
    }
}

impl Store {
    /// Checks the database (reads only; the whole file is read once).
    pub async fn check(
        &self,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<StoreCheck, StoreError> {
        const OP: &str = "checking the database";
        let integrity = sqlx::query("PRAGMA integrity_check")
            .fetch_all(&self.pool)
            .await
            .during(OP)?
            .iter()
            .map(|row| row.try_get::<String, _>(0).unwrap_or_default())
            .collect();
        let foreign_key_violations = sqlx::query("PRAGMA foreign_key_check")
            .fetch_all(&self.pool)
            .await
            .during(OP)?
            .len() as u64;
        let count = |table: &'static str| {
            let pool = self.pool.clone();
            async move {
                let sql = format!("SELECT COUNT(*) FROM {table}");
                sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
                    .fetch_one(&pool)
                    .await
                    .during(OP)
                    .map(|n| n.max(0) as u64)
            }
        };
        let dead = |owners: Vec<String>| owners.iter().filter(|o| !owner_alive(o)).count() as u64;
        let turn_owners: Vec<String> =
            sqlx::query_scalar("SELECT owner FROM turns WHERE status IN ('accepted', 'running')")
                .fetch_all(&self.pool)
                .await
                .during(OP)?;
        let claim_owners: Vec<String> = sqlx::query_scalar(
            "SELECT consolidation_owner FROM sessions WHERE consolidation_owner IS NOT NULL",
        )
        .fetch_all(&self.pool)
        .await
        .during(OP)?;
        Ok(StoreCheck {
            integrity,
            foreign_key_violations,
            sessions: count("sessions").await?,
            messages: count("messages").await?,
            unfinished_turns: dead(turn_owners),
            unfinished_consolidations: dead(claim_owners),
        })
    }
}
