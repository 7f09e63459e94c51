//! Retrieval: hybrid BM25 + vector search fused by reciprocal rank, weighted by effective
//! importance, with a third list when the query names dates (the memories from those days);
//! and the per-session snapshot of the memories that matter most.
//!
//! Only active, unconflicted, in-scope memories are ever injected into a prompt. Injection is
//! what reinforces a memory (a search hit alone does not).

use crate::error::{MemoryError, NeighboursError};
use crate::forgetting::lapsed;
use crate::model::{Memory, MemoryStatus, MemoryTier};
use crate::store::MemoryStore;
use crate::when::periods;
use crate::write::Neighbours;
use chrono::{Local, Utc};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Candidates taken from the BM25 list before fusion (cheap: any number costs the same).
const POOL: usize = 50;
/// Candidates taken from the vector list: twice what is asked for, at least this many (at
/// most [`POOL`]). An approximate search costs more the more it returns (a wider HNSW beam,
/// more rows re-ranked), and with the default weight a vector candidate at rank 21 adds
/// 0.3/81 to the fusion, under a quarter of what BM25's first rank adds.
const VECTOR_POOL_MIN: usize = 20;
/// The usual reciprocal-rank-fusion constant.
const RRF_K: f64 = 60.0;
/// When the query names dates: how deep the BM25 list is read for the memories from those
/// days (they are few, and often not in the first [`POOL`]).
const DATED_POOL: usize = 1000;
/// The fusion weight of the list of memories from the days the query names (BM25's is 1): as
/// strong as the words, because a date in a question says when as plainly as its words say
/// what.
const DATED_WEIGHT: f64 = 1.0;

/// What to recall.
#[derive(Clone, Debug)]
pub struct RecallOptions {
    /// How many memories.
    pub k: usize,
    /// The session asking (its `session:<id>` memories are in scope too).
    pub session_id: Option<String>,
    /// The project of the session asking (its `project:<id>` memories are in scope too;
    /// another project's never are).
    pub project_id: Option<String>,
    /// Also return archived and superseded memories (searching, not injecting).
    pub include_inactive: bool,
}

impl RecallOptions {
    /// The `k` best active memories of the global scope (no session, no project).
    pub fn top(k: usize) -> RecallOptions {
        RecallOptions {
            k,
            session_id: None,
            project_id: None,
            include_inactive: false,
        }
    }
}

/// One recalled memory.
#[derive(Clone, Debug, Serialize)]
pub struct Recalled {
    /// The memory.
    pub memory: Memory,
    /// Fused score (higher is better).
    pub score: f64,
    /// Rank in the BM25 list, from 1.
    pub bm25_rank: Option<usize>,
    /// Rank in the vector list, from 1.
    pub vector_rank: Option<usize>,
    /// Rank among the memories from the days the query names, from 1.
    pub dated_rank: Option<usize>,
}

/// How a recall was made.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RecallInfo {
    /// Whether vector search took part (false: BM25 only).
    pub used_vectors: bool,
    /// Why vectors were not used, if they were asked for and failed.
    pub vector_error: Option<String>,
}

impl MemoryStore {
    /// Hybrid recall for `query`.
    pub async fn recall(
        &self,
        query: &str,
        opts: &RecallOptions,
        vectors: Option<&dyn Neighbours>,
    ) -> Result<(Vec<Recalled>, RecallInfo), MemoryError> {
        let statuses: &[MemoryStatus] = if opts.include_inactive {
            &[
                MemoryStatus::Active,
                MemoryStatus::Archived,
                MemoryStatus::Superseded,
            ]
        } else {
            &[MemoryStatus::Active]
        };
        // A date the query names ("on 3 June, 2023", "last week") adds a third list: the
        // memories from those days, in BM25's order, then the vector search's.
        let periods = periods(query, Local::now().date_naive());
        let bm25_depth = if periods.is_empty() { POOL } else { DATED_POOL };
        // Three independent strands run at the same time: BM25 and then the rows it found
        // (both quick, so they are usually read while the vector search is still running),
        // the vector search, and the open conflicts. Which candidates are from the named
        // days, and the rows only the other lists found, are read after.
        let text_side = async {
            let mut found = self.search_bm25(query, statuses, bm25_depth as u32).await?;
            let deeper = found.split_off(found.len().min(POOL));
            let ids: Vec<String> = found.iter().map(|(id, _)| id.clone()).collect();
            let rows = self.get_many(&ids).await?;
            Ok::<_, MemoryError>((found, deeper, rows))
        };
        let vector_side = async {
            match vectors {
                Some(v) => {
                    let pool = (2 * opts.k).clamp(VECTOR_POOL_MIN, POOL);
                    Some(v.ranked(query, pool).await)
                }
                None => None,
            }
        };
        let conflicted = async {
            if opts.include_inactive {
                Ok(Default::default())
            } else {
                self.conflicted_ids().await
            }
        };
        let (text_side, similar, conflicted) = tokio::join!(text_side, vector_side, conflicted);
        let ((bm25, deeper, rows), conflicted) = (text_side?, conflicted?);
        let (vector, info) = vector_outcome(similar);
        let candidates: Vec<&String> = (bm25.iter().chain(&deeper).map(|(id, _)| id))
            .chain(&vector)
            .collect();
        let from_days = self.said_on(&candidates, &periods).await?;
        let dated = dated_list(&from_days, candidates.into_iter());
        let fused = fuse(&bm25, &vector, self.config.vector_weight.max(0.0), &dated);
        // The candidates whose rows were not read with BM25's.
        let unread: Vec<String> = vector
            .into_iter()
            .chain(dated)
            .filter(|id| fused.get(id).is_some_and(|e| e.bm25.is_none()))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let scope = opts.session_id.as_ref().map(|s| format!("session:{s}"));
        let project = opts.project_id.as_deref().map(project_scope);
        let now = Utc::now();
        let archive_below = self.config.archive_below;
        let recalled = |m: Memory| {
            let usable = statuses.contains(&m.status)
                && (opts.include_inactive || m.tier != MemoryTier::Archival)
                && (m.scope == "global"
                    || Some(&m.scope) == scope.as_ref()
                    || Some(&m.scope) == project.as_ref())
                && !conflicted.contains(&m.id)
                && (opts.include_inactive || lapsed(&m, now, archive_below).is_none());
            let f = fused.get(&m.id).copied().filter(|_| usable)?;
            Some(Recalled {
                score: f.score * importance_weight(&m),
                bm25_rank: f.bm25,
                vector_rank: f.vector,
                dated_rank: f.dated,
                memory: m,
            })
        };
        let mut out: Vec<Recalled> = rows.into_iter().filter_map(recalled).collect();
        // A row's weight is at most 1, so an unread candidate scores at most its fused rank
        // score: read only those that could still beat the k-th best row in hand (the
        // threshold algorithm; the answer is the same as reading them all). With BM25 hits
        // of its own a query usually needs none of them.
        let mut in_hand: Vec<f64> = out.iter().map(|r| r.score).collect();
        in_hand.sort_by(|a, b| b.total_cmp(a));
        let bar = opts.k.checked_sub(1).and_then(|i| in_hand.get(i)).copied();
        let wanted: Vec<String> = unread
            .into_iter()
            .filter(|id| match (bar, fused.get(id)) {
                (Some(bar), Some(f)) => f.score >= bar,
                _ => true,
            })
            .collect();
        if !wanted.is_empty() {
            out.extend(
                self.get_many(&wanted)
                    .await?
                    .into_iter()
                    .filter_map(recalled),
            );
        }
        out.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.memory.id.cmp(&b.memory.id))
        });
        out.truncate(opts.k);
        Ok((out, info))
    }

    /// The session's frozen memory snapshot: the most important active, unconflicted, global
    /// semantic memories (pinned first; in a project's session its own ones too), chosen once
    /// and reused until invalidated. A fresh snapshot counts as an injection of its members.
    pub async fn snapshot_memories(
        &self,
        session_id: &str,
        project_id: Option<&str>,
    ) -> Result<Vec<Memory>, MemoryError> {
        if let Some(ids) = self.snapshot(session_id).await? {
            let usable = self.usable_for_snapshot().await?;
            return Ok(self
                .get_many(&ids)
                .await?
                .into_iter()
                .filter(usable)
                .collect());
        }
        let all = self.choose_snapshot(project_id).await?;
        let ids: Vec<String> = all.iter().map(|m| m.id.clone()).collect();
        self.set_snapshot(session_id, &ids).await?;
        self.reinforce(&ids, Utc::now()).await?;
        Ok(all)
    }

    /// The snapshot a new session would get now, neither frozen nor counted as a use: a
    /// temporary chat's, which leaves memory as it was.
    pub async fn snapshot_unrecorded(
        &self,
        project_id: Option<&str>,
    ) -> Result<Vec<Memory>, MemoryError> {
        self.choose_snapshot(project_id).await
    }

    /// The most important usable global semantic memories (and the project's, if any),
    /// pinned first.
    async fn choose_snapshot(&self, project_id: Option<&str>) -> Result<Vec<Memory>, MemoryError> {
        let usable = self.usable_for_snapshot().await?;
        let project = project_id.map(project_scope);
        let mut all: Vec<Memory> = self
            .active(&[MemoryTier::Semantic])
            .await?
            .into_iter()
            .filter(|m| (m.scope == "global" || Some(&m.scope) == project.as_ref()) && usable(m))
            .collect();
        all.sort_by(|a, b| {
            b.pinned
                .cmp(&a.pinned)
                .then_with(|| b.effective_importance.total_cmp(&a.effective_importance))
                .then_with(|| b.created_at.cmp(&a.created_at))
        });
        all.truncate(self.config.snapshot_size);
        Ok(all)
    }

    /// Whether a memory may be in a snapshot now: active, not in an open conflict, not lapsed.
    async fn usable_for_snapshot(&self) -> Result<impl Fn(&Memory) -> bool, MemoryError> {
        let conflicted = self.conflicted_ids().await?;
        let (now, archive_below) = (Utc::now(), self.config.archive_below);
        Ok(move |m: &Memory| {
            m.status == MemoryStatus::Active
                && !conflicted.contains(&m.id)
                && lapsed(m, now, archive_below).is_none()
        })
    }
}

/// A candidate's fused score and its rank in each list it is on.
#[derive(Clone, Copy, Default)]
struct Fused {
    score: f64,
    bm25: Option<usize>,
    vector: Option<usize>,
    dated: Option<usize>,
}

/// The vector search's ranking (empty when it was not asked for or failed) and how recall
/// went.
fn vector_outcome(
    similar: Option<Result<Vec<String>, NeighboursError>>,
) -> (Vec<String>, RecallInfo) {
    let mut info = RecallInfo::default();
    let vector = match similar {
        Some(Ok(found)) => {
            info.used_vectors = true;
            found
        }
        Some(Err(e)) => {
            info.vector_error = Some(e.to_string());
            Vec::new()
        }
        None => Vec::new(),
    };
    (vector, info)
}

/// Reciprocal-rank fusion of the BM25, vector and dated lists (weights 1, `vector_weight` and
/// [`DATED_WEIGHT`]), each candidate with its rank in each list it is on.
fn fuse(
    bm25: &[(String, f64)],
    vector: &[String],
    vector_weight: f64,
    dated: &[String],
) -> HashMap<String, Fused> {
    let mut fused: HashMap<String, Fused> = HashMap::new();
    let mut add = |ids: &mut dyn Iterator<Item = &String>,
                   weight: f64,
                   rank_in: fn(&mut Fused) -> &mut Option<usize>| {
        for (rank, id) in ids.enumerate() {
            let e = fused.entry(id.clone()).or_default();
            e.score += weight / (RRF_K + rank as f64 + 1.0);
            *rank_in(e) = Some(rank + 1);
        }
    };
    add(&mut bm25.iter().map(|(id, _)| id), 1.0, |f| &mut f.bm25);
    add(&mut vector.iter(), vector_weight, |f| &mut f.vector);
    add(&mut dated.iter(), DATED_WEIGHT, |f| &mut f.dated);
    fused
}

/// The candidates from the named days (`from_days`) in the order they come (BM25's, read
/// deep, then the vector search's), each once: at most [`POOL`].
fn dated_list<'a>(
    from_days: &HashSet<String>,
    candidates: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    if from_days.is_empty() {
        return Vec::new();
    }
    let mut seen = HashSet::new();
    candidates
        .filter(|id| from_days.contains(*id) && seen.insert(*id))
        .take(POOL)
        .cloned()
        .collect()
}

/// The scope of a project's memories.
pub fn project_scope(project_id: &str) -> String {
    format!("project:{project_id}")
}

/// How much a memory's effective importance scales its fused score: between 0.5 and 1, so
/// importance orders close calls without burying a strong match.
fn importance_weight(m: &Memory) -> f64 {
    0.5 + 0.5 * m.effective_importance.clamp(0.0, 1.0)
}
