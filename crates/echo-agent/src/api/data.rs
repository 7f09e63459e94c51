//! "Delete all my data": everything Echo Desk learned from and about the person — every
//! conversation with its traces and captured model requests, every memory with its history
//! and vectors, automations with their runs, approval rules and decisions, and `USER.md` —
//! gone from every file. Settings (`config.toml`), keys, skills and the other bootstrap
//! files stay: they are how the app is set up, not what it was told.
//!
//! "Check my data": the database is sound, nothing a crash interrupted is left hanging, and
//! the derived search indexes hold exactly the memories SQLite holds.
//!
//! # How a deletion leaves no copy
//!
//! Memories are purged through echo-memory's deletion path (rows, versions, history, conflicts,
//! outbox; then the vectors erased from every LanceDB version). Delete-all then empties every
//! table the schema lists but the migration record and the memory change log (ids only), so a
//! table a later migration adds is covered, rewrites the database (`VACUUM`) and truncates the
//! WAL (`Store::erase_everything`). SQLite runs with `secure_delete`. Deleting a memory scrubs
//! its text from captures, span attributes and tool results (`Store::scrub_copies`). Deleting a
//! conversation must say what becomes of the memories learned in it (`LearnedMemories`: keep,
//! forget, delete); its captured model requests and the message blobs no other call shares go
//! with it, the archive's full-text index is merged so no deleted word stays in its segments,
//! and the WAL is truncated.

use crate::api::Api;
use crate::api::memory::mem_err;
use crate::error::ApiError;
use crate::semantic::Semantic;
use crate::wire::{DataCheck, DataDeleted};

/// What a person types to delete all their data (`delete_all_data`).
pub const DELETE_ALL_DATA_CONFIRMATION: &str = "delete all my data";

impl Api {
    /// Checks the data directory (see [`DataCheck`]); reads only, except that the derived
    /// indexes catch up with SQLite first, as they would before their next use.
    pub async fn check_data(&self) -> Result<DataCheck, ApiError> {
        let instance = &self.inner.instance;
        let store = self
            .inner
            .store
            .check(&|owner| instance.is_alive(owner))
            .await?;
        let memory = self.memory();
        let memories = memory.live_count().await.map_err(mem_err)? as u64;
        let search_index = memory.search_index_count().await.map_err(mem_err)? as u64;
        let mut problems = Vec::new();
        let semantic = self.inner.semantic().await;
        let vectors = match semantic.state() {
            Semantic::Ready(index) => {
                if let Err(e) = index.flush(memory).await {
                    problems.push(format!("the vector index could not catch up: {e}"));
                }
                Some(index.count().await.map_err(mem_err)? as u64)
            }
            Semantic::Unavailable(why) => {
                problems.push(format!(
                    "the vector index cannot be opened, so memory search uses keywords only: \
                     {why}"
                ));
                None
            }
            Semantic::Off => None,
        };
        if !store.sound() {
            problems.push(format!(
                "SQLite's integrity check failed: {}",
                store.integrity.join("; ")
            ));
        }
        if store.foreign_key_violations > 0 {
            problems.push(format!(
                "{} row(s) point at records that do not exist",
                store.foreign_key_violations
            ));
        }
        if store.unfinished_turns > 0 {
            problems.push(format!(
                "{} turn(s) are still marked running by a process that is gone",
                store.unfinished_turns
            ));
        }
        if store.unfinished_consolidations > 0 {
            problems.push(format!(
                "{} conversation stretch(es) are claimed for consolidation by a process that is gone",
                store.unfinished_consolidations
            ));
        }
        if search_index != memories {
            problems.push(format!(
                "the search index holds {search_index} memories, SQLite {memories}"
            ));
        }
        if let Some(vectors) = vectors.filter(|v| *v != memories) {
            problems.push(format!(
                "the vector index holds {vectors} memories, SQLite {memories}; \
                 `echod memory reindex` rebuilds it"
            ));
        }
        Ok(DataCheck {
            problems,
            integrity: store.integrity.join("; "),
            sessions: store.sessions,
            messages: store.messages,
            unfinished_turns: store.unfinished_turns,
            unfinished_consolidations: store.unfinished_consolidations,
            memories,
            search_index,
            vectors,
        })
    }

    /// Deletes all of the person's data; `confirm` must be
    /// [`DELETE_ALL_DATA_CONFIRMATION`]. Refused while a turn runs. Afterwards no file in
    /// the data directory holds a byte of it: memories are purged through their own path
    /// (vectors and the copies tools and traces made), then every table is emptied and the
    /// database rewritten, so no freed page or log frame keeps it.
    pub async fn delete_all_data(&self, confirm: &str) -> Result<DataDeleted, ApiError> {
        if confirm.trim() != DELETE_ALL_DATA_CONFIRMATION {
            return Err(ApiError::InvalidInput {
                what: "confirm",
                message: format!("type {DELETE_ALL_DATA_CONFIRMATION:?} to delete all your data"),
            });
        }
        let busy = || ApiError::Busy {
            message: "a turn is running; stop it first".into(),
        };
        if self.inner.store.turn_running().await? {
            return Err(busy());
        }
        let sessions = self.inner.store.list_sessions().await?.len() as u64;
        let purged = self.memory().purge_all().await.map_err(mem_err)?;
        self.after_purge(&purged).await?;
        let erased = self
            .inner
            .store
            .erase_everything()
            .await?
            .ok_or_else(busy)?;
        self.inner.forget_sessions(None);
        let user_notes = self
            .inner_bootstrap()
            .list()?
            .iter()
            .any(|f| f.name == "USER.md" && !f.is_default);
        if user_notes {
            self.inner_bootstrap().save("USER.md", None)?;
        }
        Ok(DataDeleted {
            sessions,
            memories: purged.deleted.len() as u64,
            rows: erased.rows,
            user_notes,
        })
    }
}
