//! `Api` operations on long-term memory: browse, search, edit, review conflicts, sweep,
//! export and import. Every change goes through `echo_memory`'s write path or its store
//! operations, with history, so the person can undo it.

use crate::api::Api;
use crate::engine::Models;
use crate::error::ApiError;
use crate::memory::LlmJudge;
use crate::pipeline::context::ContextStage;
use crate::prompts::Prompts;
use crate::semantic::SemanticRef;
use crate::wire::MemoryDetail;
use crate::wire::{
    self, Conflict, Fading, FlushReport, LearnedInTurn, Memory, MemoryPage, MemoryStats,
    PurgeReport, Recalled, SweepReport, TurnLearned, WriteOutcome,
};
use chrono::Utc;
use echo_core::trace::{Span, SpanKind};
use echo_core::{ConflictId, MemoryId};
use echo_memory::{ListFilter, MemoryActor, MemoryError, Neighbours, RecallOptions, WriteOptions};
use std::sync::{Arc, Mutex};

/// Memories in one page of `memory_list` unless the caller asks for another size.
const DEFAULT_PAGE: u32 = 100;
/// The largest page `memory_list` returns: a front end pages, it never loads everything.
const MAX_PAGE: u32 = 1_000;
/// What a person types to delete every memory (`memory_delete_all`).
pub const DELETE_ALL_CONFIRMATION: &str = "delete all memories";

pub(super) fn mem_err(e: MemoryError) -> ApiError {
    match e {
        MemoryError::NotFound { what, id } => ApiError::NotFound { what, id },
        MemoryError::Invalid { field, message } => ApiError::InvalidInput {
            what: field,
            message,
        },
        MemoryError::NotApplicable(message) => ApiError::InvalidInput {
            what: "request",
            message,
        },
        other => ApiError::Memory(other),
    }
}

/// What the person's own writes that go through the judge need (keeping an import's cards,
/// keeping a proposal): the memory model, a span that records nothing (no turn to hang the
/// calls on, and no text of the person's on disk before they keep it), the prompts and the
/// semantic index for the judge's candidates.
pub(super) struct MemoryCalls<'a> {
    pub models: Arc<Models>,
    pub span: Span,
    prompts: &'a Prompts,
    semantic: SemanticRef,
}

impl MemoryCalls<'_> {
    pub fn context(&self) -> ContextStage<'_> {
        ContextStage {
            prompts: self.prompts,
            skills: &[],
        }
    }

    /// The conflict judge on the memory model.
    pub fn judge(&self) -> LlmJudge<'_> {
        LlmJudge {
            llm: self.models.memory.as_ref(),
            context: self.context(),
            span: &self.span,
            calls: Mutex::new(0),
        }
    }

    /// The person's write, judged, with vector neighbours when there is an index.
    pub fn options<'a>(&'a self, judge: &'a LlmJudge<'_>) -> WriteOptions<'a> {
        WriteOptions {
            actor: MemoryActor::User,
            judge: Some(judge),
            neighbours: self.semantic.index().map(|s| s as &dyn Neighbours),
        }
    }
}

impl Api {
    /// See [`MemoryCalls`]; `name` names the span.
    pub(super) async fn memory_calls(&self, name: &str) -> MemoryCalls<'_> {
        MemoryCalls {
            models: self.models(),
            span: self.inner.tracer.unrecorded(SpanKind::MemoryWrite, name),
            prompts: &self.inner.prompts,
            semantic: self.semantic().await,
        }
    }

    /// Memories by tier and status (default: all but deleted), newest first.
    pub async fn memory_list(&self, filter: &ListFilter) -> Result<MemoryPage, ApiError> {
        let filter = ListFilter {
            limit: Some(filter.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE)),
            ..filter.clone()
        };
        let page = self.memory().page(&filter).await.map_err(mem_err)?;
        Ok(page.into())
    }

    /// Searches every memory that is not deleted (archived and superseded included, marked by
    /// their status). Searching does not reinforce.
    pub async fn memory_search(&self, query: &str, k: usize) -> Result<Vec<Recalled>, ApiError> {
        let opts = RecallOptions {
            k,
            session_id: None,
            include_inactive: true,
            project_id: None,
        };
        let semantic = self.semantic().await;
        let neighbours = semantic.index().map(|s| s as &dyn echo_memory::Neighbours);
        let (found, _) = self
            .memory()
            .recall(query, &opts, neighbours)
            .await
            .map_err(mem_err)?;
        Ok(wire::list(found))
    }

    /// One memory with its provenance chain, history and conflicts.
    pub async fn memory_show(&self, id: &MemoryId) -> Result<MemoryDetail, ApiError> {
        let id = id.as_str();
        let store = self.memory();
        let memory = store.require(id).await.map_err(mem_err)?;
        let superseded_by_memory = match &memory.superseded_by {
            Some(other) => store.get(other).await.map_err(mem_err)?,
            None => None,
        };
        let supersedes = store.superseded_by(id).await.map_err(mem_err)?;
        let history = store.history(id).await.map_err(mem_err)?;
        let (reads, answers) = store.reads(id).await.map_err(mem_err)?;
        let conflicts = store
            .conflicts(false)
            .await
            .map_err(mem_err)?
            .into_iter()
            .filter(|c| c.memory_a == id || c.memory_b == id)
            .map(Conflict::from)
            .collect();
        Ok(MemoryDetail {
            memory: memory.into(),
            superseded_by_memory: superseded_by_memory.map(Memory::from),
            supersedes: wire::list(supersedes),
            history: wire::list(history),
            conflicts,
            answers,
            reads: wire::list(reads),
        })
    }

    /// Adds what the person typed (source `manual`, the highest), to the project named
    /// `project` or to the global memories: it supersedes an older memory in the same slot.
    pub async fn memory_add(
        &self,
        text: &str,
        slot: Option<&str>,
        pinned: bool,
        project: Option<&str>,
    ) -> Result<WriteOutcome, ApiError> {
        let scope = self.memory_scope(project).await?;
        self.inner
            .remember_manual(text, slot, pinned, &scope)
            .await
            .map(WriteOutcome::from)
            .map_err(mem_err)
    }

    /// Replaces a memory's text.
    pub async fn memory_edit(&self, id: &MemoryId, text: &str) -> Result<Memory, ApiError> {
        let id = id.as_str();
        let m = self
            .memory()
            .edit(id, text, MemoryActor::User)
            .await
            .map_err(mem_err)?;
        self.flush_vectors().await;
        Ok(m.into())
    }

    /// Pins or unpins.
    pub async fn memory_pin(&self, id: &MemoryId, pinned: bool) -> Result<Memory, ApiError> {
        let id = id.as_str();
        let m = self
            .memory()
            .set_pinned(id, pinned)
            .await
            .map_err(mem_err)?;
        Ok(m.into())
    }

    /// Deletes (from prompts, search, vectors and the review queue).
    pub async fn memory_forget(&self, id: &MemoryId) -> Result<Memory, ApiError> {
        let id = id.as_str();
        let m = self
            .memory()
            .forget(id, MemoryActor::User)
            .await
            .map_err(mem_err)?;
        self.flush_vectors().await;
        Ok(m.into())
    }

    /// Forgets every memory learned in a session (by its name), as one change that one undo
    /// reverts.
    pub async fn memory_forget_session(&self, session: &str) -> Result<Vec<Memory>, ApiError> {
        let id = self.session_id(session).await?;
        let forgotten = self
            .memory()
            .forget_learned_in(id.as_str(), MemoryActor::User)
            .await
            .map_err(mem_err)?;
        self.flush_vectors().await;
        Ok(wire::list(forgotten))
    }

    /// Sets the date after which a memory no longer holds (`YYYY-MM-DD` or RFC 3339), or
    /// clears it with `None`.
    pub async fn memory_set_expiry(
        &self,
        id: &MemoryId,
        valid_until: Option<&str>,
    ) -> Result<Memory, ApiError> {
        let until = match valid_until {
            Some(text) => {
                Some(
                    echo_memory::parse_time(text).ok_or_else(|| ApiError::InvalidInput {
                        what: "valid_until",
                        message: format!("{text:?} is not a date (YYYY-MM-DD or RFC 3339)"),
                    })?,
                )
            }
            None => None,
        };
        self.memory()
            .set_expiry(id.as_str(), until, MemoryActor::User)
            .await
            .map(Memory::from)
            .map_err(mem_err)
    }

    /// Restores an archived, superseded or deleted memory.
    pub async fn memory_restore(&self, id: &MemoryId) -> Result<Memory, ApiError> {
        let id = id.as_str();
        let m = self
            .memory()
            .restore(id, MemoryActor::User)
            .await
            .map_err(mem_err)?;
        self.flush_vectors().await;
        Ok(m.into())
    }

    /// Deletes memories for good: each with the older versions it superseded, its history
    /// and conflicts, from SQLite (free pages zeroed, the log truncated) and the vector index.
    pub async fn memory_delete(&self, ids: &[MemoryId]) -> Result<PurgeReport, ApiError> {
        if ids.is_empty() {
            return Err(ApiError::InvalidInput {
                what: "ids",
                message: "name at least one memory to delete".into(),
            });
        }
        let ids: Vec<&str> = ids.iter().map(MemoryId::as_str).collect();
        let report = self.memory().purge(&ids).await.map_err(mem_err)?;
        self.after_purge(&report).await?;
        Ok(report.into())
    }

    /// Deletes every memory for good; `confirm` must be [`DELETE_ALL_CONFIRMATION`].
    pub async fn memory_delete_all(&self, confirm: &str) -> Result<PurgeReport, ApiError> {
        if confirm.trim() != DELETE_ALL_CONFIRMATION {
            return Err(ApiError::InvalidInput {
                what: "confirm",
                message: format!("type {DELETE_ALL_CONFIRMATION:?} to delete every memory"),
            });
        }
        let report = self.memory().purge_all().await.map_err(mem_err)?;
        self.after_purge(&report).await?;
        Ok(report.into())
    }

    /// The copies a purge leaves elsewhere: the vector index's rows, and the memories' text
    /// that tools and traces copied (tool results that showed them, captured requests that
    /// injected them).
    /// The vectors go for good too: pending deletions applied, then the table's earlier
    /// versions and the data files that held them removed (`SemanticIndex::erase`).
    pub(super) async fn after_purge(
        &self,
        report: &echo_memory::PurgeReport,
    ) -> Result<(), ApiError> {
        self.inner.store.scrub_copies(&report.contents).await?;
        if let Some(index) = self.inner.semantic().await.index() {
            index.erase(&self.inner.memory).await.map_err(|e| {
                ApiError::Memory(echo_memory::MemoryError::State(format!(
                    "the memories are deleted, but erasing their vectors failed ({e}); \
                     `echod memory reindex` rebuilds the vector index without them"
                )))
            })?;
        }
        Ok(())
    }

    /// Undoes a change that touched a memory (every memory that change touched): the last
    /// one, or `change` (a history entry's change id) from anywhere in its history, where
    /// only what that change altered goes back.
    pub async fn memory_undo(
        &self,
        id: &MemoryId,
        change: Option<&str>,
    ) -> Result<Vec<Memory>, ApiError> {
        let id = id.as_str();
        let m = self
            .memory()
            .undo_change(id, change, MemoryActor::User)
            .await
            .map_err(mem_err)?;
        self.flush_vectors().await;
        Ok(wire::list(m))
    }

    /// What turn `turn_id` taught memory, and whether its extraction has ended (a turn
    /// without extraction is settled at once).
    pub async fn turn_memory(&self, turn_id: &str) -> Result<TurnLearned, ApiError> {
        let turn = echo_core::TurnId::from_string(turn_id);
        let pending = self.inner.store.extraction_pending(&turn).await?;
        let memory = self.memory();
        let mut memories = Vec::new();
        for (m, change_id) in memory.from_turn(turn_id).await.map_err(mem_err)? {
            let replaced = memory
                .superseded_by(&m.id)
                .await
                .map_err(mem_err)?
                .into_iter()
                .next()
                .map(|old| old.content);
            memories.push(LearnedInTurn {
                memory: m.into(),
                change_id,
                replaced,
            });
        }
        let proposals = memory.proposals_of_turn(turn_id).await.map_err(mem_err)?;
        Ok(TurnLearned {
            settled: !pending,
            memories,
            proposals: wire::list(proposals),
        })
    }

    /// Conflicts: open ones, or all.
    pub async fn memory_conflicts(&self, all: bool) -> Result<Vec<Conflict>, ApiError> {
        let conflicts = self.memory().conflicts(!all).await.map_err(mem_err)?;
        Ok(wire::list(conflicts))
    }

    /// Settles a conflict: keep one memory (`Some(id)`) or both (`None`).
    ///
    /// With `merged`, the two become one: the kept memory's text is replaced by `merged` (an
    /// edit through the write path, after the other one is superseded), e.g. "vegetarian,
    /// but eats fish".
    pub async fn memory_resolve(
        &self,
        conflict: &ConflictId,
        keep: Option<&MemoryId>,
        merged: Option<&str>,
    ) -> Result<Conflict, ApiError> {
        let merged = match (merged.map(str::trim), keep) {
            (None, _) => None,
            (Some(_), None) => {
                return Err(ApiError::InvalidInput {
                    what: "merged",
                    message: "name the memory that keeps the merged text (keep)".into(),
                });
            }
            (Some(""), Some(_)) => {
                return Err(ApiError::InvalidInput {
                    what: "merged",
                    message: "the merged text is empty".into(),
                });
            }
            (Some(text), Some(id)) => Some((id, text)),
        };
        let resolved = self
            .memory()
            .resolve(conflict.as_str(), keep.map(MemoryId::as_str))
            .await
            .map_err(mem_err)?;
        if let Some((id, text)) = merged {
            self.memory_edit(id, text).await?;
        }
        Ok(resolved.into())
    }

    /// A memory's fading curve (the engine's own formula), with its uses in prompts.
    pub async fn memory_fading(&self, id: &MemoryId) -> Result<Fading, ApiError> {
        let memory = self
            .memory()
            .get(id.as_str())
            .await
            .map_err(mem_err)?
            .ok_or_else(|| ApiError::NotFound {
                what: "memory",
                id: id.as_str().into(),
            })?;
        let mut fading = echo_memory::forgetting::fading(
            &memory,
            Utc::now(),
            self.config().memory.archive_below,
        );
        fading.uses = self.inner.store.memory_uses(id.as_str(), 200).await?;
        Ok(fading.into())
    }

    /// Counts by tier and status, open conflicts, and what the next sweep would archive.
    pub async fn memory_stats(&self) -> Result<MemoryStats, ApiError> {
        let stats = self.memory().stats(Utc::now()).await.map_err(mem_err)?;
        Ok(stats.into())
    }

    /// Archives what expired or faded as of `now` (RFC 3339 or YYYY-MM-DD; default: the
    /// current time).
    pub async fn memory_sweep(&self, now: Option<&str>) -> Result<SweepReport, ApiError> {
        let now = match now {
            Some(text) => echo_memory::parse_time(text).ok_or_else(|| ApiError::InvalidInput {
                what: "now",
                message: format!("{text:?} is not an RFC 3339 time or YYYY-MM-DD date"),
            })?,
            None => Utc::now(),
        };
        self.memory()
            .sweep(now)
            .await
            .map(SweepReport::from)
            .map_err(mem_err)
    }

    /// Rebuilds the vector index from SQLite (e.g. after its folder was deleted or the
    /// embedder changed). Fails when no embedder is available.
    pub async fn memory_reindex(&self) -> Result<FlushReport, ApiError> {
        let semantic = self.semantic().await;
        let index = semantic.index().ok_or_else(|| ApiError::InvalidInput {
            what: "embedder",
            message: format!(
                "memory.embedder is {:?} or its model is unavailable, so there is no vector index to rebuild",
                self.config().memory.embedder.as_str()
            ),
        })?;
        let report = index.reindex(self.memory()).await.map_err(mem_err)?;
        Ok(report.into())
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// With the real embedder: a search opens the vector index, a quiet period closes it (the
    /// embedder's weights and LanceDB's caches go), and the next search opens it again and
    /// finds the same.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn memory_search_lets_go_of_the_embedder_when_quiet_and_opens_it_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = crate::test_support::quiet_config(dir.path());
        config.memory.embedder = echo_core::config::EmbedderKind::Local;
        config.memory.embed_model_dir = Some(
            std::env::var_os("ECHO_EMBED_MODEL_DIR")
                .map(std::path::PathBuf::from)
                .expect("ECHO_EMBED_MODEL_DIR names all-MiniLM-L6-v2 (scripts/test.sh sets it)"),
        );
        config.memory.release_after_secs = 1;
        let api = crate::Api::open_with(config, crate::test_support::in_memory_secrets())
            .await
            .expect("engine");
        api.memory_add("The user waters the ferns on Sundays", None, false, None)
            .await
            .expect("a memory");
        let found = api
            .memory_search("when are the ferns watered", 5)
            .await
            .expect("search");
        assert!(!found.is_empty(), "found");
        assert!(
            api.inner.semantic.is_open(),
            "the search opened the vector index"
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while api.inner.semantic.is_open() {
            assert!(
                Instant::now() < deadline,
                "the index was not let go after a quiet second"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let again = api
            .memory_search("when are the ferns watered", 5)
            .await
            .expect("search");
        assert_eq!(
            again.iter().map(|r| &r.memory.id).collect::<Vec<_>>(),
            found.iter().map(|r| &r.memory.id).collect::<Vec<_>>(),
            "the reopened index finds the same"
        );
        assert!(api.inner.semantic.is_open());
        api.close().await;
    }
}
