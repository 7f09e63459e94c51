//! `Api`: the one way into the engine, a thin list of operations front ends call, one module
//! per domain: sessions, turns, traces, memory, tools and approvals, settings. The engine
//! itself (stores, models, tools, background tasks) is built by [`Engine::build`]; a turn runs
//! through [`crate::pipeline`].

mod automations;
mod data;
mod devices;
mod local_models;
mod memory;
mod memory_import;
mod memory_io;
mod memory_proposals;
mod projects;
mod search;
mod sessions;
mod settings;
mod tools;
mod traces;
mod turns;

pub use data::DELETE_ALL_DATA_CONFIRMATION;
pub use devices::{PAIRING_MINUTES, PairedDevice};
pub use memory::DELETE_ALL_CONFIRMATION;
pub use memory_io::{EXPORT_FORMAT, EXPORT_VERSION};

use crate::approval::Gate;
use crate::engine::{Engine, McpSet, Models, client_for};
use crate::error::ApiError;
use crate::prompts::Prompts;
use echo_core::config::Config;
use echo_core::store::Store;
use echo_memory::MemoryStore;
use echo_secrets::SecretStore;
use std::sync::Arc;
use std::time::Duration;

/// The engine facade; cheap to clone and share between tasks.
#[derive(Clone)]
pub struct Api {
    inner: Arc<Engine>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("home", &self.inner.config.home)
            .finish()
    }
}

impl Api {
    /// Opens the engine on `config.home` with API keys from the OS keychain (see
    /// [`Api::open_with`]).
    pub async fn open(config: Config) -> Result<Api, ApiError> {
        // The keychain is chosen on first use (a D-Bus round trip on Linux), not here.
        let secrets: Arc<dyn SecretStore> = Arc::new(echo_secrets::Keychain::platform());
        Api::open_with(config, secrets).await
    }

    /// Opens the engine on `config.home` with API keys from `secrets` (see [`Engine::build`]).
    pub async fn open_with(config: Config, secrets: Arc<dyn SecretStore>) -> Result<Api, ApiError> {
        Ok(Api {
            inner: Arc::new(Engine::build(config, secrets).await?),
        })
    }

    /// The tools the engine offers (a replay swaps them for recorded ones).
    pub(crate) fn tool_registry(&self) -> &echo_tools::ToolRegistry {
        &self.inner.tools
    }

    /// `[desktop]` as saved.
    pub(crate) fn inner_desktop(&self) -> echo_core::config::DesktopConfig {
        self.inner
            .desktop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Records a saved quick-ask shortcut.
    pub(crate) fn set_inner_desktop_shortcut(&self, shortcut: &str) {
        self.inner
            .desktop
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .quick_ask_shortcut = shortcut.to_string();
    }

    /// The provider in force, as one consistent snapshot.
    pub(crate) fn models(&self) -> Arc<Models> {
        self.inner.models()
    }

    /// Replaces the provider in force (turns already running keep theirs).
    pub(crate) fn set_models(&self, models: Models) {
        let explain = client_for(
            &models.config,
            self.inner.config.tools.explain_model.as_deref(),
        );
        match explain {
            Ok(explain) => self.inner.gate.set_explain_llm(explain),
            Err(e) => tracing::warn!(error = %e, "approval explanations keep the old model"),
        }
        let mut slot = self
            .inner
            .models
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *slot = Arc::new(models);
    }

    /// The user's bootstrap files.
    pub(crate) fn inner_bootstrap(&self) -> &crate::bootstrap::Bootstrap {
        &self.inner.bootstrap
    }

    /// The prompt templates.
    pub(crate) fn prompts(&self) -> &Prompts {
        &self.inner.prompts
    }

    /// Where API keys are kept.
    pub(crate) fn secrets(&self) -> Arc<dyn SecretStore> {
        self.inner.secrets.clone()
    }

    /// The approval gate.
    pub(crate) fn gate(&self) -> &Gate {
        &self.inner.gate
    }

    /// The MCP servers in force.
    pub(crate) fn mcp(&self) -> Arc<echo_mcp::McpManager> {
        self.inner.mcp_manager()
    }

    /// The configured MCP server list.
    pub(crate) fn mcp_configs(&self) -> Vec<echo_core::config::McpServerConfig> {
        self.inner
            .mcp
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .configs
            .clone()
    }

    /// Replaces the MCP servers: the old ones stop (their tools leave the registry) before
    /// the new list starts. `configs` must already be validated.
    pub(crate) async fn replace_mcp(&self, configs: Vec<echo_core::config::McpServerConfig>) {
        let _one_at_a_time = self.inner.mcp_change.lock().await;
        let old = self.inner.mcp_manager();
        old.shutdown().await;
        let manager = echo_mcp::McpManager::start_with(
            configs.clone(),
            self.inner.tools.clone(),
            self.inner.mcp_options,
        );
        *self
            .inner
            .mcp
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = McpSet { configs, manager };
    }

    /// The engine's database.
    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Automations, runs and the approval queue.
    pub(crate) fn automation_store(&self) -> &echo_automations::AutomationStore {
        &self.inner.automations
    }

    /// Runs a long-lived task until it ends or the engine closes.
    pub(crate) fn spawn_service<F>(&self, name: &'static str, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.inner.spawn_service(name, task);
    }

    /// Cancelled when the engine closes.
    pub(crate) fn shutdown_token(&self) -> &tokio_util::sync::CancellationToken {
        self.inner.shutdown_token()
    }

    /// The memory store.
    pub(crate) fn memory(&self) -> &MemoryStore {
        &self.inner.memory
    }

    /// Starts building this process's memory search index in the background. Long-running
    /// front ends (desktop, gateway, interactive chat) call it after opening so that the
    /// first turn does not wait for the build; one-shot commands skip it (the first search
    /// builds the index, and a command that never searches never pays for it).
    pub fn warm_memory_search(&self) {
        if !self.config().memory.enabled {
            return;
        }
        let memory = self.memory().clone();
        self.inner.spawn_service("memory search index", async move {
            if let Err(e) = memory.warm_search_index().await {
                tracing::warn!(error = %e, "building the memory search index failed");
            }
        });
    }

    /// The semantic index, set up on first use.
    pub(crate) async fn semantic(&self) -> crate::semantic::SemanticRef {
        self.inner.semantic().await
    }

    /// Embeds memories changed since the last flush.
    pub(crate) async fn flush_vectors(&self) {
        self.inner.flush_vectors().await;
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Waits for background jobs started so far, at most `limit`. Returns whether all ended.
    pub async fn wait_background(&self, limit: Duration) -> bool {
        self.inner.background.wait(limit).await
    }

    /// Stops every background task the engine started (the scheduled sweep at once,
    /// post-turn jobs after a bounded wait), deletes this process's temporary chats, stops the
    /// MCP servers and closes the store.
    pub async fn close(&self) {
        self.inner.close().await;
    }
}
