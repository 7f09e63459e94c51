//! Reading memories: one, several, by tier and status, the active and working sets, slots,
//! counts, BM25 search, which were said on given days, and decoding a row (with its effective
//! importance as of now).

use super::{COLUMNS, MemoryStore, sql};
use crate::error::{Db, MemoryError};
use crate::forgetting::{decayed, effective_importance};
use crate::model::{Memory, MemorySource, MemoryStatus, MemoryTier};
use crate::when::Period;
use chrono::{DateTime, Utc};
use echo_core::time::to_rfc3339;
use serde::Serialize;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use std::collections::HashSet;

pub use echo_core::vocab::MemorySort;

/// The ORDER BY terms (before the `id DESC` tie-break) SQLite sorts by, each backed by an
/// index in the same order (migration 0011), so a page never sorts the table; `None` for
/// `Effective`, which depends on the time now and is ranked in Rust.
pub fn sql_order(sort: MemorySort) -> Option<&'static str> {
    match sort {
        MemorySort::Created => Some("created_at DESC"),
        MemorySort::Updated => Some("updated_at DESC"),
        MemorySort::LastUsed => Some("last_accessed IS NULL, last_accessed DESC"),
        MemorySort::Importance => Some("importance DESC"),
        MemorySort::Effective => None,
    }
}

/// Which memories `list` returns, in what order, and which page of them.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Only this tier.
    pub tier: Option<MemoryTier>,
    /// Only this status (default: every status but `deleted`).
    pub status: Option<MemoryStatus>,
    /// Only memories whose text contains this (case-insensitive for ASCII letters).
    pub text: Option<String>,
    /// Only memories of this scope (`global`, `project:<id>`, `session:<id>`).
    pub scope: Option<String>,
    /// Only memories in an open conflict (`true`) or in none (`false`).
    pub in_conflict: Option<bool>,
    /// Only memories whose `valid_until` falls within this many days from now (or has passed
    /// without a sweep yet): what the next sweeps will archive as expired.
    pub expiring_within_days: Option<u32>,
    /// The order.
    pub sort: MemorySort,
    /// Rows to skip.
    pub offset: u32,
    /// At most this many.
    pub limit: Option<u32>,
}

/// One page of a listing and how many match in all.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MemoryPage {
    /// The memories of this page.
    pub items: Vec<Memory>,
    /// How many memories match the filter (every page).
    pub total: u64,
}

/// `filter`'s WHERE clause (after `WHERE 1 = 1`) and its bound values, in order.
fn where_clause(filter: &ListFilter) -> (String, Vec<String>) {
    let mut q = String::new();
    let mut binds = Vec::new();
    if let Some(t) = filter.tier {
        q.push_str(" AND tier = ?");
        binds.push(t.as_str().to_string());
    }
    match filter.status {
        Some(s) => {
            q.push_str(" AND status = ?");
            binds.push(s.as_str().to_string());
        }
        None => q.push_str(" AND status != 'deleted'"),
    }
    if let Some(text) = filter
        .text
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        q.push_str(" AND content LIKE ? ESCAPE '\\'");
        let escaped = text
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        binds.push(format!("%{escaped}%"));
    }
    if let Some(scope) = &filter.scope {
        q.push_str(" AND scope = ?");
        binds.push(scope.clone());
    }
    if let Some(in_conflict) = filter.in_conflict {
        q.push_str(if in_conflict {
            " AND id IN "
        } else {
            " AND id NOT IN "
        });
        q.push_str(
            "(SELECT memory_a FROM memory_conflicts WHERE status = 'open' \
             UNION SELECT memory_b FROM memory_conflicts WHERE status = 'open')",
        );
    }
    if let Some(days) = filter.expiring_within_days {
        // Stored times are RFC 3339 in UTC with one format (`to_rfc3339`), so they compare as text.
        q.push_str(" AND valid_until IS NOT NULL AND valid_until <= ?");
        binds.push(to_rfc3339(
            Utc::now() + chrono::Duration::days(i64::from(days)),
        ));
    }
    (q, binds)
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

    /// Memories matching `filter`, in its order, from its offset.
    pub async fn list(&self, filter: &ListFilter) -> Result<Vec<Memory>, MemoryError> {
        let (clause, binds) = where_clause(filter);
        let Some(order) = sql_order(filter.sort) else {
            return self.list_by_effective(filter, &clause, &binds).await;
        };
        let q = format!(
            "SELECT {COLUMNS} FROM memories WHERE 1 = 1{clause} ORDER BY {order}, id DESC LIMIT ? OFFSET ?"
        );
        let mut query = sqlx::query(sql(q));
        for b in &binds {
            query = query.bind(b);
        }
        let rows = query
            .bind(filter.limit.map_or(i64::MAX, i64::from))
            .bind(i64::from(filter.offset))
            .fetch_all(&self.pool)
            .await
            .db("listing memories")?;
        let now = Utc::now();
        rows.iter().map(|r| self.read(r, now)).collect()
    }

    /// `list` in effective-importance order. Decay depends on the time now, so SQL cannot
    /// order by it: the fields the decay reads are fetched for every match (not whole rows),
    /// ranked with the engine's one formula (`forgetting::decayed`), and only the page is read.
    async fn list_by_effective(
        &self,
        filter: &ListFilter,
        clause: &str,
        binds: &[String],
    ) -> Result<Vec<Memory>, MemoryError> {
        let mut query = sqlx::query(sql(format!(
            "SELECT id, importance, pinned, stability, COALESCE(last_accessed, created_at) AS touched \
             FROM memories WHERE 1 = 1{clause}"
        )));
        for b in binds {
            query = query.bind(b);
        }
        let rows = query
            .fetch_all(&self.pool)
            .await
            .db("ranking memories by effective importance")?;
        let now = Utc::now();
        let mut ranked: Vec<(f64, String)> = rows
            .iter()
            .map(|r| {
                let touched: Option<String> = r.get("touched");
                let effective = decayed(
                    r.get("importance"),
                    r.get("pinned"),
                    touched.as_deref().and_then(crate::model::parse_time),
                    r.get("stability"),
                    now,
                );
                (effective, r.get::<String, _>("id"))
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
        let ids: Vec<String> = ranked
            .into_iter()
            .skip(filter.offset as usize)
            .take(filter.limit.map_or(usize::MAX, |l| l as usize))
            .map(|(_, id)| id)
            .collect();
        self.get_many(&ids).await
    }

    /// One page of memories matching `filter`, with the count of all that match.
    pub async fn page(&self, filter: &ListFilter) -> Result<MemoryPage, MemoryError> {
        let (clause, binds) = where_clause(filter);
        let mut count = sqlx::query_scalar::<_, i64>(sql(format!(
            "SELECT COUNT(*) FROM memories WHERE 1 = 1{clause}"
        )));
        for b in &binds {
            count = count.bind(b);
        }
        let total = count.fetch_one(&self.pool).await.db("counting memories")?;
        Ok(MemoryPage {
            items: self.list(filter).await?,
            total: total.max(0) as u64,
        })
    }

    /// The memories `id` superseded directly (its older versions), newest first.
    pub async fn superseded_by(&self, id: &str) -> Result<Vec<Memory>, MemoryError> {
        let rows = sqlx::query(sql(format!(
            "SELECT {COLUMNS} FROM memories WHERE superseded_by = ? ORDER BY created_at DESC"
        )))
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .db("reading superseded versions")?;
        let now = Utc::now();
        rows.iter().map(|r| self.read(r, now)).collect()
    }

    /// The memories turn `turn_id` taught (made from it, by extraction or a tool) that are
    /// not deleted, oldest first, each with the change that made it: undoing that change
    /// takes the memory back out and puts back what it replaced.
    pub async fn from_turn(&self, turn_id: &str) -> Result<Vec<(Memory, String)>, MemoryError> {
        let made: Vec<(String, String)> = sqlx::query_as(
            "SELECT h.memory_id, h.change_id FROM memory_history h
             JOIN memories m ON m.id = h.memory_id
             WHERE m.source_turn_id = ? AND h.action = 'created' AND m.status != 'deleted'
             ORDER BY h.id",
        )
        .bind(turn_id)
        .fetch_all(&self.pool)
        .await
        .db("reading what a turn taught")?;
        let ids: Vec<String> = made.iter().map(|(id, _)| id.clone()).collect();
        let mut changes: std::collections::HashMap<String, String> = made.into_iter().collect();
        Ok(self
            .get_many(&ids)
            .await?
            .into_iter()
            .filter_map(|m| {
                let change = changes.remove(&m.id)?;
                Some((m, change))
            })
            .collect())
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
    pub async fn active(&self, tiers: &[MemoryTier]) -> Result<Vec<Memory>, MemoryError> {
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

    /// The slots of the active semantic memories a conversation may see (the global ones,
    /// and its project's when it is in one), for extraction to reuse; another project's
    /// are never listed.
    pub async fn slots(&self, project_id: Option<&str>) -> Result<Vec<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT DISTINCT slot FROM memories WHERE status = 'active' AND tier = 'semantic' AND slot IS NOT NULL
               AND (scope = 'global' OR scope = ?)
             ORDER BY slot LIMIT 200",
        )
        .bind(project_id.map(crate::project_scope))
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
        statuses: &[MemoryStatus],
        limit: u32,
    ) -> Result<Vec<(String, f64)>, MemoryError> {
        self.text
            .search(&self.pool, query, statuses, limit as usize)
            .await
    }

    /// Which of `ids` are memories whose `valid_from` falls on one of the days of `periods`
    /// (local days). Only the candidates are looked at, by primary key, so a day with
    /// thousands of memories (a bulk import) costs no more than one with a few.
    pub(crate) async fn said_on(
        &self,
        ids: &[&String],
        periods: &[Period],
    ) -> Result<HashSet<String>, MemoryError> {
        let bounds: Vec<(String, String)> = periods
            .iter()
            .filter_map(Period::bounds)
            .map(|(from, until)| (to_rfc3339(from), to_rfc3339(until)))
            .collect();
        let mut found = HashSet::new();
        if bounds.is_empty() {
            return Ok(found);
        }
        let within = vec!["(valid_from >= ? AND valid_from < ?)"; bounds.len()].join(" OR ");
        for chunk in ids.chunks(500) {
            let placeholders = vec!["?"; chunk.len()].join(", ");
            let mut q = sqlx::query(sql(format!(
                "SELECT id FROM memories WHERE id IN ({placeholders}) AND ({within})"
            )));
            for id in chunk {
                q = q.bind(*id);
            }
            for (from, until) in &bounds {
                q = q.bind(from).bind(until);
            }
            let rows = q
                .fetch_all(&self.pool)
                .await
                .db("reading the memories from a day")?;
            found.extend(rows.iter().map(|r| r.get::<String, _>(0)));
        }
        Ok(found)
    }

    /// Brings this process's search index up to date with the database now (otherwise that
    /// happens on the next search); the first call builds it from every memory.
    pub async fn warm_search_index(&self) -> Result<(), MemoryError> {
        self.text.catch_up(&self.pool).await
    }

    /// How many memories this process's search index holds once it is up to date (it should
    /// be [`MemoryStore::live_count`]).
    pub async fn search_index_count(&self) -> Result<usize, MemoryError> {
        self.text.catch_up(&self.pool).await?;
        Ok(self.text.live())
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
            tier: MemoryTier::parse(&tier).ok_or_else(|| bad("tier", &tier))?,
            kind: r.get("kind"),
            subject: r.get("subject"),
            slot: r.get("slot"),
            content: r.get("content"),
            value: r.get("value"),
            source: MemorySource::parse(&source).ok_or_else(|| bad("source", &source))?,
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
            status: MemoryStatus::parse(&status).ok_or_else(|| bad("status", &status))?,
            superseded_by: r.get("superseded_by"),
            invalid_at: r.get("invalid_at"),
            archived_from: match archived_from {
                Some(t) => Some(MemoryTier::parse(&t).ok_or_else(|| bad("tier", &t))?),
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
