//! Reading memories: one, several, by tier and status, the active and working sets, slots,
//! counts, BM25 search, and decoding a row (with its effective importance as of now).

use super::{COLUMNS, MemoryStore, sql};
use crate::error::{Db, MemoryError};
use crate::forgetting::effective_importance;
use crate::model::{Memory, Source, Status, Tier};
use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};

/// What `list` returns.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Only this tier.
    pub tier: Option<Tier>,
    /// Only this status (default: every status but `deleted`).
    pub status: Option<Status>,
    /// At most this many (newest first).
    pub limit: Option<u32>,
}

impl MemoryStore {
    /// One memory, with its effective importance as of now.
    pub async fn get(&self, id: &str) -> Result<Option<Memory>, MemoryError> {
        let row = sqlx::query(sql(format!("SELECT {COLUMNS} FROM memories WHERE id = ?")))
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .db("reading a memory")?;
        row.map(|r| self.read(&r, Utc::now())).transpose()
    }

    /// A memory that must exist.
    pub async fn require(&self, id: &str) -> Result<Memory, MemoryError> {
        self.get(id).await?.ok_or_else(|| MemoryError::NotFound {
            what: "memory",
            id: id.into(),
        })
    }

    /// Memories by tier and status, newest first.
    pub async fn list(&self, filter: &ListFilter) -> Result<Vec<Memory>, MemoryError> {
        let mut q = format!("SELECT {COLUMNS} FROM memories WHERE 1 = 1");
        if filter.tier.is_some() {
            q.push_str(" AND tier = ?");
        }
        match filter.status {
            Some(_) => q.push_str(" AND status = ?"),
            None => q.push_str(" AND status != 'deleted'"),
        }
        q.push_str(" ORDER BY created_at DESC, id DESC LIMIT ?");
        let mut query = sqlx::query(sql(q));
        if let Some(t) = filter.tier {
            query = query.bind(t.as_str());
        }
        if let Some(s) = filter.status {
            query = query.bind(s.as_str());
        }
        let rows = query
            .bind(filter.limit.map_or(i64::MAX, i64::from))
            .fetch_all(&self.pool)
            .await
            .db("listing memories")?;
        let now = Utc::now();
        rows.iter().map(|r| self.read(r, now)).collect()
    }

    /// Several memories by id (missing ids are skipped), in the order asked.
    pub async fn get_many(&self, ids: &[String]) -> Result<Vec<Memory>, MemoryError> {
        let now = Utc::now();
        let mut found: std::collections::HashMap<String, Memory> =
            std::collections::HashMap::with_capacity(ids.len());
        // One query per chunk (SQLite limits bound parameters), not one per id.
        for chunk in ids.chunks(500) {
            let placeholders = vec!["?"; chunk.len()].join(", ");
            let mut q = sqlx::query(sql(format!(
                "SELECT {COLUMNS} FROM memories WHERE id IN ({placeholders})"
            )));
            for id in chunk {
                q = q.bind(id);
            }
            for row in q.fetch_all(&self.pool).await.db("reading memories")? {
                let m = self.read(&row, now)?;
                found.insert(m.id.clone(), m);
            }
        }
        Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
    }

    /// Active memories of the given tiers (for ranking and sweeps).
    pub async fn active(&self, tiers: &[Tier]) -> Result<Vec<Memory>, MemoryError> {
        let rows = sqlx::query(sql(format!(
            "SELECT {COLUMNS} FROM memories WHERE status = 'active'"
        )))
        .fetch_all(&self.pool)
        .await
        .db("reading active memories")?;
        let now = Utc::now();
        let all: Result<Vec<Memory>, MemoryError> =
            rows.iter().map(|r| self.read(r, now)).collect();
        Ok(all?
            .into_iter()
            .filter(|m| tiers.contains(&m.tier))
            .collect())
    }

    /// Number of memories that are not deleted (what the vector index should hold).
    pub async fn live_count(&self) -> Result<usize, MemoryError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memories WHERE status != 'deleted'")
            .fetch_one(&self.pool)
            .await
            .db("counting memories")?;
        Ok(n.max(0) as usize)
    }

    /// Distinct slots of active semantic memories (so extraction can reuse them).
    pub async fn slots(&self) -> Result<Vec<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT DISTINCT slot FROM memories WHERE status = 'active' AND tier = 'semantic' AND slot IS NOT NULL
             ORDER BY slot LIMIT 200",
        )
        .fetch_all(&self.pool)
        .await
        .db("listing slots")
    }

    /// Active working memory of one session, oldest first.
    pub async fn working(&self, session_id: &str) -> Result<Vec<Memory>, MemoryError> {
        let rows = sqlx::query(sql(format!(
            "SELECT {COLUMNS} FROM memories WHERE status = 'active' AND tier = 'working' AND scope = ?
             ORDER BY created_at LIMIT 50"
        )))
        .bind(format!("session:{session_id}"))
        .fetch_all(&self.pool)
        .await
        .db("reading working memory")?;
        let now = Utc::now();
        rows.iter().map(|r| self.read(r, now)).collect()
    }

    /// BM25 search over memories of the given statuses (active when none are given): ids
    /// with scores, best first (higher is better). See [`crate::bm25`].
    pub async fn search_bm25(
        &self,
        query: &str,
        statuses: &[Status],
        limit: u32,
    ) -> Result<Vec<(String, f64)>, MemoryError> {
        self.text
            .search(&self.pool, query, statuses, limit as usize)
            .await
    }

    /// Brings this process's search index up to date with the database now (otherwise that
    /// happens on the next search); the first call builds it from every memory.
    pub async fn warm_search_index(&self) -> Result<(), MemoryError> {
        self.text.catch_up(&self.pool).await
    }

    pub(crate) async fn require_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        id: &str,
    ) -> Result<Memory, MemoryError> {
        let row = sqlx::query(sql(format!("SELECT {COLUMNS} FROM memories WHERE id = ?")))
            .bind(id)
            .fetch_optional(&mut **tx)
            .await
            .db("reading a memory")?
            .ok_or_else(|| MemoryError::NotFound {
                what: "memory",
                id: id.into(),
            })?;
        self.read(&row, Utc::now())
    }

    pub(crate) async fn rows_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        q: String,
        bind: &[&str],
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut query = sqlx::query(sql(q));
        for b in bind {
            query = query.bind(*b);
        }
        let rows = query.fetch_all(&mut **tx).await.db("reading memories")?;
        let now = Utc::now();
        rows.iter().map(|r| self.read(r, now)).collect()
    }

    fn read(&self, r: &SqliteRow, now: DateTime<Utc>) -> Result<Memory, MemoryError> {
        let id: String = r.get("id");
        let bad = |what: &str, v: &str| MemoryError::Corrupt {
            id: id.clone(),
            detail: format!("unknown {what} {v:?}"),
        };
        let tier: String = r.get("tier");
        let source: String = r.get("source");
        let status: String = r.get("status");
        let archived_from: Option<String> = r.get("archived_from");
        let mut m = Memory {
            tier: Tier::parse(&tier).ok_or_else(|| bad("tier", &tier))?,
            kind: r.get("kind"),
            subject: r.get("subject"),
            slot: r.get("slot"),
            content: r.get("content"),
            value: r.get("value"),
            source: Source::parse(&source).ok_or_else(|| bad("source", &source))?,
            confidence: r.get("confidence"),
            importance: r.get("importance"),
            effective_importance: 0.0,
            pinned: r.get("pinned"),
            access_count: r.get("access_count"),
            last_accessed: r.get("last_accessed"),
            stability: r.get("stability"),
            created_at: r.get("created_at"),
            updated_at: r.get("updated_at"),
            valid_from: r.get("valid_from"),
            valid_until: r.get("valid_until"),
            status: Status::parse(&status).ok_or_else(|| bad("status", &status))?,
            superseded_by: r.get("superseded_by"),
            invalid_at: r.get("invalid_at"),
            archived_from: match archived_from {
                Some(t) => Some(Tier::parse(&t).ok_or_else(|| bad("tier", &t))?),
                None => None,
            },
            version: r.get("version"),
            scope: r.get("scope"),
            source_session_id: r.get("source_session_id"),
            source_turn_id: r.get("source_turn_id"),
            source_message_id: r.get("source_message_id"),
            evidence: r.get("evidence"),
            context: r.get("context"),
            id: id.clone(),
        };
        m.effective_importance = effective_importance(&m, now);
        Ok(m)
    }
}
