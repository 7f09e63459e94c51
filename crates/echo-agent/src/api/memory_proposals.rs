//! "Ask before remembering": the setting, the proposals memory work made instead of writing,
//! and the person's Keep (the write path, judge included) or Discard.

use super::memory::mem_err;
use crate::api::Api;
use crate::error::ApiError;
use crate::wire::{self, MemoryProposal, MemorySettings, WriteOutcome};
use std::sync::atomic::Ordering;

impl Api {
    /// `[memory]` as the memory page shows it.
    pub fn memory_settings(&self) -> MemorySettings {
        MemorySettings {
            ask_before_remembering: self.inner.asks_before_remembering(),
        }
    }

    /// Saves `[memory] ask_before_remembering`; memory work started from now on follows it.
    pub fn update_memory_settings(
        &self,
        ask_before_remembering: bool,
    ) -> Result<MemorySettings, ApiError> {
        echo_core::config::edit::save_memory_settings(
            &self.inner.config.home,
            ask_before_remembering,
        )?;
        self.inner
            .ask_before_remembering
            .store(ask_before_remembering, Ordering::Relaxed);
        Ok(self.memory_settings())
    }

    /// Every proposal waiting for Keep or Discard, newest first.
    pub async fn memory_proposals(&self) -> Result<Vec<MemoryProposal>, ApiError> {
        let proposals = self.memory().proposals().await.map_err(mem_err)?;
        Ok(wire::list(proposals))
    }

    /// Writes a proposal through the write path, as the person's decision, then takes it
    /// out. If the write fails the proposal stays.
    pub async fn memory_keep_proposal(&self, id: &str) -> Result<WriteOutcome, ApiError> {
        let proposal = self.memory().proposal(id).await.map_err(mem_err)?;
        let calls = self.memory_calls("keep_memory_proposal").await;
        let judge = calls.judge();
        let opts = calls.options(&judge);
        let outcome = self
            .memory()
            .remember(proposal.draft, opts)
            .await
            .map_err(mem_err)?;
        self.memory().take_proposal(id).await.map_err(mem_err)?;
        self.flush_vectors().await;
        Ok(outcome.into())
    }

    /// Drops a proposal: nothing of it is written.
    pub async fn memory_discard_proposal(&self, id: &str) -> Result<(), ApiError> {
        self.memory().take_proposal(id).await.map_err(mem_err)?;
        Ok(())
    }
}
