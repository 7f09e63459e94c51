//! The model clients of the provider in force ([`Models`]), and where its API key comes from.

use crate::error::ApiError;
use crate::wire::KeySource;
use echo_core::config::{Config, TaskType};
use echo_llm::LlmClient;
use echo_secrets::SecretStore;
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
    /// The side model (`[side] model`, else the built-in model when one is installed), or
    /// none (`none`, or nothing installed): then no side jobs run. See [`Models::side`].
    side: SideSlot,
}

/// The side model's client, or what opens it on its first job: opening the built-in model
/// reads its file's header and vocabulary, which an engine that runs no side job (or not
/// yet) should not pay at start.
enum SideSlot {
    Ready(Option<Arc<LlmClient>>),
    Builtin(
        echo_core::config::LlmConfig,
        std::sync::OnceLock<Option<Arc<LlmClient>>>,
    ),
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
        let side = side_client(config, &llm, &main)?;
        Ok(Models {
            side,
            config: llm,
            key_source,
            main,
            memory,
            summary,
            planner,
            routes,
        })
    }

    /// The side model's client, opened now if this is its first use; none: no side jobs.
    pub(crate) fn side(&self) -> Option<Arc<LlmClient>> {
        match &self.side {
            SideSlot::Ready(client) => client.clone(),
            SideSlot::Builtin(local, client) => client
                .get_or_init(|| match LlmClient::from_config(local) {
                    Ok(client) => Some(Arc::new(client)),
                    Err(e) => {
                        tracing::warn!(error = %e, "the built-in side model cannot be used");
                        None
                    }
                })
                .clone(),
        }
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

/// The side model's client: `none`: none; any name but `builtin`: that model of the
/// provider in force; `builtin` or unset: the built-in model (the provider's own worker when
/// it is the provider, else the first installed catalog model, opened on first use), none
/// when none is installed.
fn side_client(
    config: &Config,
    llm: &echo_core::config::LlmConfig,
    main: &Arc<LlmClient>,
) -> Result<SideSlot, ApiError> {
    let named = config.side.model.as_deref().map(str::trim);
    match named {
        Some(echo_core::config::SIDE_NONE) => return Ok(SideSlot::Ready(None)),
        Some(model) if model != echo_core::config::SIDE_BUILTIN => {
            let client = client_for(llm, Some(model))?;
            return Ok(SideSlot::Ready(Some(Arc::new(client))));
        }
        _ => {}
    }
    if llm.kind.is_local() {
        return Ok(SideSlot::Ready(Some(main.clone())));
    }
    let Some(path) = echo_local::catalog::default_installed(&config.home) else {
        if named.is_some() {
            tracing::warn!("side.model = \"builtin\" but no built-in model is installed");
        }
        return Ok(SideSlot::Ready(None));
    };
    let local = echo_core::config::LlmConfig {
        kind: echo_core::config::ProviderKind::Local,
        model: path.display().to_string(),
        base_url: None,
        api_key: None,
        fallback_models: Vec::new(),
        ..llm.clone()
    };
    Ok(SideSlot::Builtin(local, std::sync::OnceLock::new()))
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

/// How long a start-up waits for an Ollama server before choosing the built-in model.
const OLLAMA_PROBE: std::time::Duration = std::time::Duration::from_millis(800);

/// Settles the model in force before the clients are built, and returns the one line a
/// front end shows when the engine chose for the person:
/// - `kind = "local"` naming a catalog model (or nothing) gets that model's installed file;
/// - when nobody chose a provider, Ollama stays if a server answers, else the built-in model
///   is used when one is installed (and the line says so and how to switch), else the line
///   says how to get one.
pub(crate) async fn settle_provider(config: &mut echo_core::config::Config) -> Option<String> {
    use echo_core::config::{LlmConfig, ProviderKind};
    use echo_local::catalog;
    let home = config.home.clone();
    if config.llm.kind.is_local() {
        let given = config.llm.model.trim().to_string();
        if !std::path::Path::new(&given).is_file() {
            let unset = given.is_empty() || given == LlmConfig::default().model;
            let found = if unset {
                catalog::default_installed(&home).ok_or_else(|| no_builtin_model().to_string())
            } else {
                catalog::resolve(&home, &given)
            };
            match found {
                Ok(path) => config.llm.model = path.display().to_string(),
                // Each model call reports it too; the engine still starts, so the model can
                // be fetched or the provider changed.
                Err(e) => {
                    if unset {
                        config.llm.model = String::new();
                    }
                    return Some(e);
                }
            }
        }
        return None;
    }
    if config.llm_chosen {
        return None;
    }
    let host = std::env::var("OLLAMA_HOST").ok();
    let root = echo_llm::ollama_root(host.as_deref());
    if echo_llm::ollama_models(&root, OLLAMA_PROBE).await.is_ok() {
        return None;
    }
    let Some(path) = catalog::default_installed(&home) else {
        return Some(format!(
            "No model provider is configured and no Ollama server answers at {root}; {}",
            no_builtin_model()
        ));
    };
    config.llm.kind = ProviderKind::Local;
    config.llm.model = path.display().to_string();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(format!(
        "No model provider is configured and no Ollama server answers: using the built-in \
         model {name}. Switch in Settings → Model provider or with `echod provider set`."
    ))
}

fn no_builtin_model() -> &'static str {
    "no built-in model is installed: run `echod model fetch` (or scripts/fetch-local-model.sh), \
     or choose a provider in Settings → Model provider"
}
