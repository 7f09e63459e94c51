//! The memory store: reading rows, the low-level row changes every writer goes through
//! (history and outbox kept in step in the same transaction; triggers log each change for
//! the search index, see `bm25.rs`), and the maintenance
//! operations (edit, pin, forget, restore, undo, sweep, reinforce, snapshots).
//!
//! Only the write path (`write.rs`) inserts new memories; everything here changes existing rows.

use crate::bm25::TextIndex;
use crate::error::{Db, MemoryError};
use crate::forgetting::{effective_importance, lapsed, reinforced_half_life};
use crate::model::{Memory, Source, Status, Tier, parse_time};
use chrono::{DateTime, Utc};
use echo_core::config::MemoryConfig;
use echo_core::time::to_rfc3339;
use serde::Serialize;
use sqlx::sqlite::{SqlitePool, SqliteRow};
use sqlx::{Row, Sqlite, Transaction};
use std::sync::Arc;

/// Who changed a memory (recorded in its history).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The person, through the UI or CLI.
    User,
    /// Extraction after a turn.
    Extraction,
    /// Consolidation of a session.
    Consolidation,
    /// A memory tool called by the model.
    Tool,
    /// An import file.
    Import,
    /// The forgetting sweep.
    Sweep,
}

impl Actor {
    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::User => "user",
            Actor::Extraction => "extraction",
            Actor::Consolidation => "consolidation",
            Actor::Tool => "tool",
            Actor::Import => "import",
            Actor::Sweep => "sweep",
        }
    }
}

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
    pub action: String,
    /// Who.
    pub actor: String,
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

/// An unresolved or resolved conflict between two memories.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct Conflict {
    /// Id.
    pub id: String,
    /// One side.
    pub memory_a: String,
    /// The other side.
    pub memory_b: String,
    /// The judge's verdict.
    pub verdict: String,
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

/// What a sweep did.
#[derive(Clone, Debug, Default, Serialize, ts_rs::TS, utoipa::ToSchema)]
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

/// Memory storage over the shared SQLite database.
#[derive(Clone, Debug)]
pub struct MemoryStore {
    pub(crate) pool: SqlitePool,
    pub(crate) config: Arc<MemoryConfig>,
    /// The BM25 index, derived from the rows and shared by every clone.
    text: Arc<TextIndex>,
}

/// Entries of `memory_changes` a sweep keeps.
const CHANGE_LOG_KEPT: i64 = 10_000;

pub(crate) const COLUMNS: &str = "id, tier, kind, subject, slot, content, value, source, confidence, importance, \
    pinned, access_count, last_accessed, stability, created_at, updated_at, valid_from, valid_until, \
    status, superseded_by, invalid_at, archived_from, version, scope, source_session_id, \
    source_turn_id, source_message_id, evidence, context";

impl MemoryStore {
    /// A store on the engine's database (its migrations created the tables).
    pub fn new(pool: SqlitePool, config: MemoryConfig) -> Self {
        Self {
            pool,
            config: Arc::new(config),
            text: Arc::default(),
        }
    }

    /// The database pool (shared with the engine's store).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The configuration in force.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

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
                Ok(HistoryEntry {
                    id: r.get("id"),
                    change_id: r.get("change_id"),
                    memory_id: r.get("memory_id"),
                    action: r.get("action"),
                    actor: r.get("actor"),
                    reason: r.get("reason"),
                    before: json("before")?,
                    after: json("after")?,
                    at: r.get("at"),
                })
            })
            .collect()
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

    // ---- changes to existing memories ----

    /// Replaces a memory's text (the person's edit: the memory becomes `manual`, the
    /// highest source).
    pub async fn edit(&self, id: &str, content: &str, actor: Actor) -> Result<Memory, MemoryError> {
        crate::write::check_content(content)?;
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        if before.status == Status::Deleted {
            return Err(MemoryError::State(format!(
                "memory {id} is deleted; restore it first"
            )));
        }
        let mut after = before.clone();
        after.content = content.trim().to_string();
        if actor == Actor::User {
            after.source = Source::Manual;
        }
        let change = new_change_id();
        self.update_tx(&mut tx, &change, &before, &mut after, "edited", actor, None)
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
        let action = if pinned { "pinned" } else { "unpinned" };
        self.update_tx(
            &mut tx,
            &new_change_id(),
            &before,
            &mut after,
            action,
            Actor::User,
            None,
        )
        .await?;
        tx.commit().await.db("pinning a memory")?;
        Ok(after)
    }

    /// Deletes a memory: gone from search, prompts, the vector index and the review queue.
    /// The row stays as a tombstone with its history, so the deletion itself can be undone.
    pub async fn forget(&self, id: &str, actor: Actor) -> Result<Memory, MemoryError> {
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        if before.status == Status::Deleted {
            return Ok(before);
        }
        let mut after = before.clone();
        after.status = Status::Deleted;
        let change = new_change_id();
        self.update_tx(
            &mut tx, &change, &before, &mut after, "deleted", actor, None,
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
        .execute(&mut *tx)
        .await
        .db("closing conflicts of a deleted memory")?;
        tracing::debug!(
            memory = id,
            conflicts = closed.rows_affected(),
            "closed conflicts of a deleted memory"
        );
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("deleting a memory")?;
        Ok(after)
    }

    /// Brings an archived, superseded or deleted memory back to `active` in its old tier. A
    /// restore counts as a use, so it does not fade away again at the next sweep.
    pub async fn restore(&self, id: &str, actor: Actor) -> Result<Memory, MemoryError> {
        let mut tx = self.begin().await?;
        let before = self.require_tx(&mut tx, id).await?;
        if before.status == Status::Active {
            return Ok(before);
        }
        let mut after = before.clone();
        after.status = Status::Active;
        if after.tier == Tier::Archival {
            after.tier = after.archived_from.unwrap_or(Tier::Semantic);
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
            "restored",
            actor,
            None,
        )
        .await?;
        self.invalidate_snapshots_tx(&mut tx).await?;
        tx.commit().await.db("restoring a memory")?;
        Ok(after)
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
                "undo",
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
        Ok(rows
            .iter()
            .map(|r| Conflict {
                id: r.get("id"),
                memory_a: r.get("memory_a"),
                memory_b: r.get("memory_b"),
                verdict: r.get("verdict"),
                explanation: r.get("explanation"),
                status: r.get("status"),
                resolution: r.get("resolution"),
                created_at: r.get("created_at"),
                resolved_at: r.get("resolved_at"),
            })
            .collect())
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
            return Err(MemoryError::State(format!(
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
                after.status = Status::Superseded;
                after.superseded_by = Some(winner.to_string());
                after.invalid_at = Some(now_text());
                let reason = format!("review: the person kept {winner}");
                self.update_tx(
                    &mut tx,
                    &change,
                    &before,
                    &mut after,
                    "superseded",
                    Actor::User,
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

    /// Archives what expired or faded, as of `now`. Pinned memories never fade, but do expire.
    pub async fn sweep(&self, now: DateTime<Utc>) -> Result<SweepReport, MemoryError> {
        let candidates = self.active(&[Tier::Semantic, Tier::Episodic]).await?;
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
            after.tier = Tier::Archival;
            after.status = Status::Archived;
            after.invalid_at = Some(to_rfc3339(now));
            self.update_tx(
                &mut tx,
                &change,
                &m,
                &mut after,
                "archived",
                Actor::Sweep,
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

    // ---- snapshots ----

    /// The frozen memory ids of a session's prompt, if any.
    pub async fn snapshot(&self, session_id: &str) -> Result<Option<Vec<String>>, MemoryError> {
        let text: Option<String> =
            sqlx::query_scalar("SELECT memory_ids FROM memory_snapshots WHERE session_id = ?")
                .bind(session_id)
                .fetch_optional(&self.pool)
                .await
                .db("reading a snapshot")?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Freezes a session's memory snapshot.
    pub async fn set_snapshot(&self, session_id: &str, ids: &[String]) -> Result<(), MemoryError> {
        let text = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        sqlx::query(
            "INSERT INTO memory_snapshots (session_id, memory_ids, created_at) VALUES (?, ?, ?)
             ON CONFLICT(session_id) DO UPDATE SET memory_ids = excluded.memory_ids, created_at = excluded.created_at",
        )
        .bind(session_id)
        .bind(text)
        .bind(now_text())
        .execute(&self.pool)
        .await
        .db("saving a snapshot")?;
        Ok(())
    }

    /// Drops a session's snapshot (the next turn builds a fresh one).
    pub async fn invalidate_snapshot(&self, session_id: &str) -> Result<(), MemoryError> {
        sqlx::query("DELETE FROM memory_snapshots WHERE session_id = ?")
            .bind(session_id)
            .execute(&self.pool)
            .await
            .db("dropping a snapshot")?;
        Ok(())
    }

    // ---- outbox (drives the derived vector index) ----

    /// Pending embedding work: `(memory_id, op)`, oldest first.
    pub async fn outbox(&self, limit: u32) -> Result<Vec<(String, String)>, MemoryError> {
        let rows =
            sqlx::query("SELECT memory_id, op FROM memory_outbox ORDER BY enqueued_at LIMIT ?")
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await
                .db("reading the outbox")?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Removes finished outbox entries.
    pub async fn outbox_done(&self, ids: &[String]) -> Result<(), MemoryError> {
        let mut tx = self.begin().await?;
        for id in ids {
            sqlx::query("DELETE FROM memory_outbox WHERE memory_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await
                .db("clearing the outbox")?;
        }
        tx.commit().await.db("clearing the outbox")?;
        Ok(())
    }

    /// Queues every live memory for (re)embedding: the vector index is rebuilt from SQLite.
    pub async fn enqueue_all(&self) -> Result<u64, MemoryError> {
        let done = sqlx::query(
            "INSERT INTO memory_outbox (memory_id, op, enqueued_at)
             SELECT id, 'upsert', ? FROM memories WHERE status != 'deleted'
             ON CONFLICT(memory_id) DO UPDATE SET op = 'upsert', enqueued_at = excluded.enqueued_at",
        )
        .bind(now_text())
        .execute(&self.pool)
        .await
        .db("queueing a reindex")?;
        Ok(done.rows_affected())
    }

    // ---- internals shared with the write path ----

    pub(crate) async fn begin(&self) -> Result<Transaction<'static, Sqlite>, MemoryError> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .db("starting a memory transaction")
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

    /// Inserts a new row with its history and outbox entry.
    pub(crate) async fn insert_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        change: &str,
        m: &Memory,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), MemoryError> {
        sqlx::query(sql(format!(
            "INSERT INTO memories ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )))
        .bind(&m.id)
        .bind(m.tier.as_str())
        .bind(&m.kind)
        .bind(&m.subject)
        .bind(&m.slot)
        .bind(&m.content)
        .bind(&m.value)
        .bind(m.source.as_str())
        .bind(m.confidence)
        .bind(m.importance)
        .bind(m.pinned)
        .bind(m.access_count)
        .bind(&m.last_accessed)
        .bind(m.stability)
        .bind(&m.created_at)
        .bind(&m.updated_at)
        .bind(&m.valid_from)
        .bind(&m.valid_until)
        .bind(m.status.as_str())
        .bind(&m.superseded_by)
        .bind(&m.invalid_at)
        .bind(m.archived_from.map(Tier::as_str))
        .bind(m.version)
        .bind(&m.scope)
        .bind(&m.source_session_id)
        .bind(&m.source_turn_id)
        .bind(&m.source_message_id)
        .bind(&m.evidence)
        .bind(&m.context)
        .execute(&mut **tx)
        .await
        .db("inserting a memory")?;
        record(tx, change, &m.id, "created", actor, reason, None, Some(m)).await?;
        enqueue(tx, &m.id, "upsert").await?;
        Ok(())
    }

    /// Writes `after` over `before` (version + 1), with history and outbox in step.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn update_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        change: &str,
        before: &Memory,
        after: &mut Memory,
        action: &str,
        actor: Actor,
        reason: Option<&str>,
    ) -> Result<(), MemoryError> {
        after.version = before.version + 1;
        after.updated_at = now_text();
        sqlx::query(
            "UPDATE memories SET tier = ?, kind = ?, subject = ?, slot = ?, content = ?, value = ?, source = ?,
                confidence = ?, importance = ?, pinned = ?, access_count = ?, last_accessed = ?, stability = ?,
                updated_at = ?, valid_from = ?, valid_until = ?, status = ?, superseded_by = ?, invalid_at = ?,
                archived_from = ?, version = ?, scope = ?, evidence = ?
             WHERE id = ?",
        )
        .bind(after.tier.as_str())
        .bind(&after.kind)
        .bind(&after.subject)
        .bind(&after.slot)
        .bind(&after.content)
        .bind(&after.value)
        .bind(after.source.as_str())
        .bind(after.confidence)
        .bind(after.importance)
        .bind(after.pinned)
        .bind(after.access_count)
        .bind(&after.last_accessed)
        .bind(after.stability)
        .bind(&after.updated_at)
        .bind(&after.valid_from)
        .bind(&after.valid_until)
        .bind(after.status.as_str())
        .bind(&after.superseded_by)
        .bind(&after.invalid_at)
        .bind(after.archived_from.map(Tier::as_str))
        .bind(after.version)
        .bind(&after.scope)
        .bind(&after.evidence)
        .bind(&after.id)
        .execute(&mut **tx)
        .await
        .db("updating a memory")?;
        record(
            tx,
            change,
            &after.id,
            action,
            actor,
            reason,
            Some(before),
            Some(after),
        )
        .await?;
        if after.status == Status::Deleted {
            enqueue(tx, &after.id, "delete").await?;
        } else if before.content != after.content || before.status == Status::Deleted {
            enqueue(tx, &after.id, "upsert").await?;
        }
        Ok(())
    }

    pub(crate) async fn invalidate_snapshots_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
    ) -> Result<(), MemoryError> {
        sqlx::query("DELETE FROM memory_snapshots")
            .execute(&mut **tx)
            .await
            .db("dropping snapshots")?;
        Ok(())
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

#[allow(clippy::too_many_arguments)]
async fn record(
    tx: &mut Transaction<'_, Sqlite>,
    change: &str,
    id: &str,
    action: &str,
    actor: Actor,
    reason: Option<&str>,
    before: Option<&Memory>,
    after: Option<&Memory>,
) -> Result<(), MemoryError> {
    let json = |m: Option<&Memory>| m.and_then(|m| serde_json::to_string(m).ok());
    sqlx::query(
        "INSERT INTO memory_history (change_id, memory_id, action, actor, reason, before, after, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(change)
    .bind(id)
    .bind(action)
    .bind(actor.as_str())
    .bind(reason)
    .bind(json(before))
    .bind(json(after))
    .bind(now_text())
    .execute(&mut **tx)
    .await
    .db("recording memory history")?;
    Ok(())
}

async fn enqueue(tx: &mut Transaction<'_, Sqlite>, id: &str, op: &str) -> Result<(), MemoryError> {
    sqlx::query(
        "INSERT INTO memory_outbox (memory_id, op, enqueued_at) VALUES (?, ?, ?)
         ON CONFLICT(memory_id) DO UPDATE SET op = excluded.op, enqueued_at = excluded.enqueued_at, attempts = 0",
    )
    .bind(id)
    .bind(op)
    .bind(now_text())
    .execute(&mut **tx)
    .await
    .db("queueing embedding work")?;
    Ok(())
}

pub(crate) fn new_change_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub(crate) fn now_text() -> String {
    to_rfc3339(Utc::now())
}

fn sql(q: String) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(q)
}
