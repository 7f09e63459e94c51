//! Provider settings: what the settings page shows and changes (kind, base URL, models, API
//! key), the "test connection" call, and Ollama detection. Changes apply to the next turn
//! without a restart; the API key goes to the OS keychain, never to a file.

use crate::api::Api;
use crate::engine::{Models, stored_key};
use crate::error::ApiError;
use crate::model_calls::ModelCall;
use crate::pipeline::context::ContextStage;
use crate::wire::KeySource;
use crate::wire::{ConnectionReport, OllamaInfo, ProviderKindInfo, ProviderUpdate, ProviderView};
use echo_core::config::{LlmConfig, ProviderSettings, RetryConfig, TimeoutConfig, edit};

use echo_llm::LlmClient;
use std::time::{Duration, Instant};

/// How long "test connection" waits for the first byte of an answer.
const TEST_FIRST_BYTE: Duration = Duration::from_secs(30);
/// How long Ollama detection waits.
const OLLAMA_WAIT: Duration = Duration::from_millis(1500);

impl Api {
    /// The `[desktop]` settings as saved.
    pub fn desktop_settings(&self) -> crate::wire::DesktopSettingsView {
        let desktop = self.inner_desktop();
        crate::wire::DesktopSettingsView {
            quick_ask_shortcut: desktop.quick_ask_shortcut,
            close_to_tray: desktop.close_to_tray,
        }
    }

    /// Saves the quick-ask shortcut to `config.toml` (the desktop app registers it first, so
    /// only a shortcut the system accepted is saved).
    pub fn save_quick_ask_shortcut(&self, shortcut: &str) -> Result<(), ApiError> {
        let shortcut = shortcut.trim();
        if shortcut.is_empty() {
            return Err(ApiError::InvalidInput {
                what: "shortcut",
                message: "it is empty".into(),
            });
        }
        edit::save_quick_ask_shortcut(&self.config().home, shortcut)?;
        self.set_inner_desktop_shortcut(shortcut);
        Ok(())
    }

    /// The user's bootstrap files (`AGENTS.md`, `SOUL.md`, `USER.md`, `TOOLS.md`) as the
    /// settings page shows them: their text, or the default's while none is saved.
    pub fn bootstrap_files(&self) -> Result<Vec<crate::wire::BootstrapFile>, ApiError> {
        Ok(self.inner_bootstrap().list()?)
    }

    /// Saves one bootstrap file (`None` removes the user's copy, restoring the default). The
    /// next turn uses it.
    pub fn save_bootstrap_file(
        &self,
        name: &str,
        content: Option<&str>,
    ) -> Result<crate::wire::BootstrapFile, ApiError> {
        Ok(self.inner_bootstrap().save(name, content)?)
    }

    /// The provider in force (asking the keychain which store it is may be a D-Bus round
    /// trip, so it runs off the async threads).
    pub async fn provider(&self) -> ProviderView {
        let models = self.models();
        let secrets = self.secrets();
        let (keychain, keychain_available) =
            blocking(move || (secrets.describe(), secrets.available()))
                .await
                .unwrap_or_else(|e| (e.to_string(), false));
        ProviderView {
            settings: ProviderSettings::of(&models.config).into(),
            key_source: models.key_source,
            keychain,
            keychain_available,
            env_overrides: self.config().env_overrides.clone(),
            kinds: echo_core::config::ProviderKind::ALL
                .into_iter()
                .map(|kind| ProviderKindInfo {
                    kind,
                    default_base_url: kind.default_base_url().to_string(),
                })
                .collect(),
            notice: self.provider_note(),
        }
    }

    /// Built-in model settings with a catalog name turned into the installed file's path.
    fn resolve_local(&self, mut settings: ProviderSettings) -> Result<ProviderSettings, ApiError> {
        if settings.kind.is_local() {
            let path = echo_local::catalog::resolve(&self.config().home, &settings.model).map_err(
                |message| ApiError::InvalidInput {
                    what: "model",
                    message,
                },
            )?;
            settings.model = path.display().to_string();
        }
        Ok(settings)
    }

    /// The line about the provider the engine chose at start, if it chose one.
    pub fn provider_note(&self) -> Option<String> {
        self.inner.provider_note.clone()
    }

    /// Applies and saves new provider settings: the key (if given) goes to the keychain, the
    /// rest to `config.toml` (`[llm]` only; the file's other contents stay), and the next
    /// turn uses them. Nothing changes when any step is refused.
    pub async fn update_provider(&self, update: ProviderUpdate) -> Result<ProviderView, ApiError> {
        let settings =
            self.resolve_local(ProviderSettings::from(update.settings.clone()).normalized()?)?;
        let account = echo_secrets::llm_account(&settings.base_url);
        let secrets = self.secrets();
        let new_key = update
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(String::from);
        if let Some(key) = &new_key {
            echo_secrets::check_secret(key)?;
        }
        // Build the clients first: a setting they refuse changes nothing.
        let (key, source) = self.key_for(&settings, &update).await;
        let llm = LlmConfig {
            api_key: key,
            ..settings.apply(&self.models().config)
        };
        let models = Models::build(self.config(), llm, source)?;
        if let Some(key) = new_key {
            let account = account.clone();
            let store = secrets.clone();
            blocking(move || store.set(&account, &key)).await??;
        } else if update.clear_api_key == Some(true) {
            let account = account.clone();
            let store = secrets.clone();
            blocking(move || store.delete(&account).map(|_| ())).await??;
        }
        let home = self.config().home.clone();
        let to_save = settings.clone();
        blocking(move || edit::save_provider(&home, &to_save)).await??;
        self.set_models(models);
        tracing::info!(
            kind = settings.kind.as_str(),
            base_url = %settings.base_url,
            model = %settings.model,
            "provider settings changed"
        );
        Ok(self.provider().await)
    }

    /// Sends one tiny request with `update`'s settings (nothing is saved) and reports what
    /// happened: the answer's latency, or the error naming the server and model.
    pub async fn test_provider(
        &self,
        update: ProviderUpdate,
    ) -> Result<ConnectionReport, ApiError> {
        let settings =
            self.resolve_local(ProviderSettings::from(update.settings.clone()).normalized()?)?;
        let (key, _) = self.key_for(&settings, &update).await;
        let llm = LlmConfig {
            api_key: key,
            fallback_models: Vec::new(),
            max_tokens: 16,
            temperature: Some(0.0),
            timeouts: TimeoutConfig {
                connect_secs: 5.0,
                first_byte_secs: TEST_FIRST_BYTE.as_secs_f64(),
                idle_secs: 15.0,
            },
            retry: RetryConfig {
                max_retries: 0,
                ..RetryConfig::default()
            },
            ..settings.apply(&self.models().config)
        };
        let client = LlmClient::from_config(&llm)?;
        let context = ContextStage {
            prompts: self.prompts(),
            skills: &[],
        };
        let messages = context
            .connection_test()
            .map_err(|e| ApiError::InvalidInput {
                what: "prompt",
                message: e.to_string(),
            })?;
        let call = ModelCall::new(&client, messages, Vec::new());
        let started = Instant::now();
        let result = call.send_untraced().await;
        let latency_ms = started.elapsed().as_millis() as u64;
        Ok(match result {
            Ok(response) => ConnectionReport {
                ok: true,
                code: None,
                message: format!(
                    "{} (model {}) answered in {latency_ms} ms",
                    client.base_url(),
                    response.model
                ),
                latency_ms,
            },
            Err(failure) => ConnectionReport {
                ok: false,
                code: Some(failure.error.code()),
                message: failure.error.to_string(),
                latency_ms,
            },
        })
    }

    /// A local Ollama server (`OLLAMA_HOST`, else its default port), if one answers.
    pub async fn detect_ollama(&self) -> Option<OllamaInfo> {
        let host = std::env::var("OLLAMA_HOST").ok();
        let root = echo_llm::ollama_root(host.as_deref());
        match echo_llm::ollama_models(&root, OLLAMA_WAIT).await {
            Ok(models) => Some(OllamaInfo {
                base_url: format!("{root}/v1"),
                models,
            }),
            Err(e) => {
                tracing::debug!(%root, error = %e, "no Ollama server");
                None
            }
        }
    }

    /// The key a request with `settings` would use: the environment's, else the one given
    /// now, else (unless cleared) the keychain's for that server.
    async fn key_for(
        &self,
        settings: &ProviderSettings,
        update: &ProviderUpdate,
    ) -> (Option<String>, KeySource) {
        let models = self.models();
        if models.key_source == KeySource::Environment {
            return (models.config.api_key.clone(), KeySource::Environment);
        }
        if let Some(key) = update
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
        {
            return (Some(key.to_string()), KeySource::Keychain);
        }
        if update.clear_api_key == Some(true) {
            return (None, KeySource::None);
        }
        stored_key(&self.secrets(), &settings.base_url).await
    }
}

/// Runs a blocking step (keychain, file) off the async threads.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::InvalidInput {
            what: "settings",
            message: format!("the step did not finish: {e}"),
        })
}
