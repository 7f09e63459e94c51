//! The model clients of the provider in force ([`Models`]), and where its API key comes from.

use crate::error::ApiError;
use echo_core::config::{Config, TaskType};
use echo_llm::LlmClient;
use echo_secrets::SecretStore;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// The model clients of the provider in force; replaced as a whole when settings change, and
/// snapshotted by each turn so a change never lands mid-turn.
pub(crate) struct Models {
    /// `[llm]` with the settings page's changes and the resolved API key.
    pub config: echo_core::config::LlmConfig,
    /// Where the key came from.
    pub key_source: KeySource,
    /// The main model (and its fallbacks).
    pub main: Arc<LlmClient>,
    /// Extraction and conflict judging.
    pub memory: Arc<LlmClient>,
    /// History summaries (`[context] summary_model`, else the memory model).
    pub summary: Arc<LlmClient>,
    /// The optional planner (`[planner] model`, else the main model).
    pub planner: Arc<LlmClient>,
    /// Models by task type (`[routing]`); a task type not here uses `main`.
    pub routes: HashMap<TaskType, Arc<LlmClient>>,
}

/// Where the API key in force came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ts_rs::TS, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// `ECHO_LLM_API_KEY` (wins over the keychain).
    Environment,
    /// The OS keychain.
    Keychain,
    /// No key (fine for local servers such as Ollama).
    None,
}

impl Models {
    /// Clients for `llm` (whose `api_key` is already resolved).
    pub(crate) fn build(
        config: &Config,
        llm: echo_core::config::LlmConfig,
        key_source: KeySource,
    ) -> Result<Models, ApiError> {
        let main = Arc::new(LlmClient::from_config(&llm)?);
        let memory = Arc::new(client_for(&llm, config.memory.extraction_model.as_deref())?);
        let summary = match &config.context.summary_model {
            Some(model) => Arc::new(client_for(&llm, Some(model))?),
            None => memory.clone(),
        };
        let planner = match &config.planner.model {
            Some(model) => Arc::new(client_for(&llm, Some(model))?),
            None => main.clone(),
        };
        let mut routes = HashMap::new();
        for task in [
            TaskType::Chat,
            TaskType::Code,
            TaskType::Research,
            TaskType::Planning,
        ] {
            if let Some((first, rest)) = config.routing.models_for(task).split_first() {
                let client = LlmClient::from_config(&echo_core::config::LlmConfig {
                    model: first.clone(),
                    fallback_models: rest.to_vec(),
                    ..llm.clone()
                })?;
                routes.insert(task, Arc::new(client));
            }
        }
        Ok(Models {
            config: llm,
            key_source,
            main,
            memory,
            summary,
            planner,
            routes,
        })
    }

    /// The client for a turn of type `task`, and why it was chosen (for the trace).
    pub(crate) fn route(&self, task: TaskType) -> (Arc<LlmClient>, String) {
        match self.routes.get(&task) {
            Some(client) => (client.clone(), format!("routing.{}", task.as_str())),
            None => (
                self.main.clone(),
                format!("llm.model (no [routing] entry for {})", task.as_str()),
            ),
        }
    }
}

/// A client for a secondary model on the same server (extraction, explanations); the main
/// model when none is named.
pub(crate) fn client_for(
    llm: &echo_core::config::LlmConfig,
    model: Option<&str>,
) -> Result<LlmClient, ApiError> {
    Ok(match model {
        Some(model) => LlmClient::from_config(&echo_core::config::LlmConfig {
            model: model.to_string(),
            ..llm.clone()
        })?,
        None => LlmClient::from_config(llm)?,
    })
}

/// The keychain's key for the server at `base_url`, and where it came from.
pub(crate) async fn stored_key(
    secrets: &Arc<dyn SecretStore>,
    base_url: &str,
) -> (Option<String>, KeySource) {
    match read_secret(secrets, echo_secrets::llm_account(base_url)).await {
        Some(key) => (Some(key), KeySource::Keychain),
        None => (None, KeySource::None),
    }
}

/// The secret under `account`, read off the async threads; a keychain failure is logged and
/// counts as "no key" (the model server then says what it needs).
pub(crate) async fn read_secret(secrets: &Arc<dyn SecretStore>, account: String) -> Option<String> {
    let store = secrets.clone();
    let read = tokio::task::spawn_blocking(move || store.get(&account)).await;
    match read {
        Ok(Ok(key)) => key.filter(|k| !k.trim().is_empty()),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "API key not read from the keychain");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "keychain read did not finish");
            None
        }
    }
}
