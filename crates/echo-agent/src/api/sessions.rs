//! Sessions: list, read, rename, move into or out of a project, delete.

use super::Api;
use super::memory::mem_err;
use crate::error::ApiError;
use crate::turn::request::check_session_name;
use crate::wire::SessionDeleted;
use crate::wire::{self, SessionSummary, StoredMessage};
use echo_core::{LearnedMemories, Role, SessionId};
use echo_memory::MemoryActor;

impl Api {
    /// Renames a session; returns it as listed.
    pub async fn rename_session(
        &self,
        name: &str,
        new_name: &str,
    ) -> Result<SessionSummary, ApiError> {
        check_session_name(new_name)?;
        let store = &self.inner.store;
        let id = self.session_id(name).await?;
        if !store.rename_session(&id, new_name).await? {
            return Err(ApiError::InvalidInput {
                what: "session name",
                message: format!("a session named {new_name:?} already exists"),
            });
        }
        self.session_summary(&id, new_name).await
    }

    /// Moves a conversation into the project named `project`, or out of any (`None`): from
    /// its next turn on it recalls that project's memories beside the global ones (its frozen
    /// memory snapshot is made again), works in the project's folders, follows its
    /// instructions and files what it learns about the project there. What earlier turns
    /// learned stays where it was written (`memory_move` moves a memory).
    pub async fn move_session(
        &self,
        name: &str,
        project: Option<&str>,
    ) -> Result<SessionSummary, ApiError> {
        let id = self.session_id(name).await?;
        let project = match project {
            Some(p) => Some(self.project_named(p).await?.id),
            None => None,
        };
        self.inner
            .store
            .set_session_project(&id, project.as_ref())
            .await?;
        self.memory()
            .invalidate_snapshot(id.as_str())
            .await
            .map_err(mem_err)?;
        self.session_summary(&id, name).await
    }

    /// The list entry of session `id` (`name` for the error when it is gone).
    async fn session_summary(
        &self,
        id: &SessionId,
        name: &str,
    ) -> Result<SessionSummary, ApiError> {
        let sessions = self.inner.store.list_sessions().await?;
        sessions
            .into_iter()
            .find(|s| s.id == id.as_str())
            .map(SessionSummary::from)
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: name.to_string(),
            })
    }

    /// Deletes a session with its history, traces, archived summaries, captured model
    /// requests and audited tool decisions, and keeps, forgets or deletes the memories learned
    /// in it. Refused while one of its turns runs.
    pub async fn delete_session(
        &self,
        name: &str,
        memories: LearnedMemories,
    ) -> Result<SessionDeleted, ApiError> {
        let id = self.session_id(name).await?;
        if !crate::engine::delete_conversation(&self.inner.store, &id).await? {
            return Err(ApiError::Busy {
                message: format!("{name:?} has a turn running; stop it first"),
            });
        }
        self.inner.forget_sessions(Some(&id));
        // The memories name their session by id, which outlives the session's rows.
        let memory = self.memory();
        let touched = match memories {
            LearnedMemories::Keep => 0,
            LearnedMemories::Forget => {
                let forgotten = memory
                    .forget_learned_in(id.as_str(), MemoryActor::User)
                    .await
                    .map_err(mem_err)?;
                self.flush_vectors().await;
                forgotten.len()
            }
            LearnedMemories::Delete => {
                let ids = memory.learned_in(id.as_str()).await.map_err(mem_err)?;
                if ids.is_empty() {
                    0
                } else {
                    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
                    let report = memory.purge(&ids).await.map_err(mem_err)?;
                    self.after_purge(&report).await?;
                    report.deleted.len()
                }
            }
        };
        Ok(SessionDeleted {
            memories: touched as u64,
        })
    }

    pub(super) async fn session_id(&self, name: &str) -> Result<SessionId, ApiError> {
        self.inner
            .store
            .session_by_name(name)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: name.to_string(),
            })
    }

    /// Every session, most recently active first.
    pub async fn sessions(&self) -> Result<Vec<SessionSummary>, ApiError> {
        Ok(wire::list(self.inner.store.list_sessions().await?))
    }

    /// A session's messages in order.
    pub async fn history(&self, session: &str) -> Result<Vec<StoredMessage>, ApiError> {
        let id = self
            .inner
            .store
            .session_by_name(session)
            .await?
            .ok_or_else(|| ApiError::NotFound {
                what: "session",
                id: session.into(),
            })?;
        let mut messages: Vec<StoredMessage> = wire::list(self.inner.store.history(&id).await?);
        // A report is its turn's last answer.
        let mut reports = crate::research::reports(&self.inner, &id).await?;
        for m in messages
            .iter_mut()
            .rev()
            .filter(|m| m.role == Role::Assistant)
        {
            m.research = m.turn_id.as_ref().and_then(|turn| reports.remove(turn));
        }
        Ok(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::context::tool_choice::LastChoice;

    /// What the engine keeps about a session between turns goes with the session: a deleted
    /// session's name, used again, starts from nothing, and the maps do not grow for ever.
    #[tokio::test]
    async fn deleting_a_session_drops_what_the_process_kept_about_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = crate::test_support::quiet_api(dir.path()).await;
        let engine = &api.inner;
        let mut ids = Vec::new();
        for name in ["first", "second", "third"] {
            let id = engine
                .store
                .session_by_name_or_create(name)
                .await
                .expect("session");
            let _ = engine.session_lock(&id);
            engine
                .consolidation_backoff
                .lock()
                .expect("lock")
                .insert(id.to_string(), (1, std::time::Instant::now()));
            engine.tools_offered.lock().expect("lock").insert(
                id.to_string(),
                LastChoice {
                    offered: vec!["read_file".into()],
                    left_out: Vec::new(),
                },
            );
            ids.push(id.to_string());
        }
        let kept = |id: &str| {
            [
                engine.session_locks.lock().expect("lock").contains_key(id),
                engine
                    .consolidation_backoff
                    .lock()
                    .expect("lock")
                    .contains_key(id),
                engine.tools_offered.lock().expect("lock").contains_key(id),
            ]
        };

        api.delete_session("first", LearnedMemories::Keep)
            .await
            .expect("delete");
        assert_eq!(kept(&ids[0]), [false; 3], "the deleted session's state");
        assert_eq!(kept(&ids[1]), [true; 3], "another session's state is kept");

        api.delete_all_data(crate::api::DELETE_ALL_DATA_CONFIRMATION)
            .await
            .expect("delete all");
        for id in &ids[1..] {
            assert_eq!(kept(id), [false; 3], "after deleting all data");
        }
        api.close().await;
    }
}
