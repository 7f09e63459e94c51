//! "Delete all my data": everything Echo Desk learned from and about the person — every
//! conversation with its traces and captured model requests, every memory with its history
//! and vectors, automations with their runs, approval rules and decisions, and `USER.md` —
//! gone from every file. Settings (`config.toml`), keys, skills and the other bootstrap
//! files stay: they are how the app is set up, not what it was told.

use crate::api::Api;
use crate::api::memory::mem_err;
use crate::error::ApiError;
use serde::Serialize;

/// What a person types to delete all their data (`delete_all_data`).
pub const DELETE_ALL_DATA_CONFIRMATION: &str = "delete all my data";

/// What `delete_all_data` removed.
#[derive(Clone, Debug, Serialize, ts_rs::TS, utoipa::ToSchema)]
pub struct DataDeleted {
    /// Conversations deleted.
    pub sessions: u64,
    /// Memories deleted (every tier, every status).
    pub memories: u64,
    /// Rows deleted across every table (conversations, traces, memories, automations, …).
    pub rows: u64,
    /// Whether the person's `USER.md` was removed (the default comes back).
    pub user_notes: bool,
}

impl Api {
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
