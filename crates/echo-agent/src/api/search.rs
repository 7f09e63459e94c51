//! Web search settings: what Settings shows and changes (the service, its URL, how many
//! results, its API key) and "test search". Changes apply to the next turn without a restart;
//! the key goes to the OS keychain, never to a file.

use super::settings::blocking;
use crate::api::Api;
use crate::engine::{Search, search_account, search_needs_key};
use crate::error::ApiError;
use crate::wire::{KeySource, SearchTestReport, SearchUpdate, SearchView};
use echo_core::config::{SearchConfig, SearchKind, edit};
use echo_secrets::SecretStore;
use std::sync::Arc;
use std::time::Instant;

/// What "test search" asks the service.
const TEST_QUERY: &str = "Echo Desk";

impl Api {
    /// The web search service in force (asking the keychain which store it is may be a D-Bus
    /// round trip, so it runs off the async threads).
    pub async fn search_settings(&self) -> SearchView {
        let search = self.inner.search();
        let secrets = self.secrets();
        let (keychain, keychain_available) =
            blocking(move || (secrets.describe(), secrets.available()))
                .await
                .unwrap_or_else(|e| (e.to_string(), false));
        SearchView {
            kind: search.config.kind,
            url: search.config.url.clone(),
            service_url: echo_tools::service_url(&search.config),
            max_results: search.config.max_results,
            needs_key: search_needs_key(search.config.kind),
            key_source: search.key_source,
            keychain,
            keychain_available,
            env_overrides: self.config().search.env_overrides.clone(),
            available: search.service.is_some(),
            problem: search.problem.clone(),
            kinds: SearchKind::names()
                .iter()
                .filter_map(|name| SearchKind::parse(name))
                .collect(),
        }
    }

    /// Applies and saves new web search settings: the key (if given) goes to the keychain,
    /// the rest to `config.toml` (`[search]` only), and the next turn uses them. Nothing
    /// changes when any step is refused, and settings that leave no working service (a
    /// service that needs a key and has none) are refused, unless the person is removing
    /// that key.
    pub async fn update_search(&self, update: SearchUpdate) -> Result<SearchView, ApiError> {
        let overrides = &self.config().search.env_overrides;
        if !overrides.is_empty() {
            return Err(ApiError::InvalidInput {
                what: "search settings",
                message: format!(
                    "{} in the environment decide the web search service; unset them to \
                     change it here",
                    overrides.join(", ")
                ),
            });
        }
        let config = self.search_config(&update)?;
        let new_key = new_key(&update)?;
        let search = self.search_for(&config, &update).await;
        if let Some(problem) = &search.problem
            && update.clear_api_key != Some(true)
        {
            return Err(ApiError::InvalidInput {
                what: "search settings",
                message: problem.clone(),
            });
        }
        if let Some(account) = search_account(&config) {
            let secrets = self.secrets();
            if let Some(key) = new_key {
                blocking(move || secrets.set(&account, &key)).await??;
            } else if update.clear_api_key == Some(true) {
                blocking(move || secrets.delete(&account).map(|_| ())).await??;
            }
        }
        let home = self.config().home.clone();
        let to_save = config.clone();
        blocking(move || edit::save_search(&home, &to_save)).await??;
        self.inner.set_search(search);
        tracing::info!(kind = config.kind.as_str(), "web search settings changed");
        Ok(self.search_settings().await)
    }

    /// Sends one search with `update`'s settings (nothing is saved) and reports what
    /// happened: how many results came back and how fast, or the error naming the service.
    pub async fn test_search(&self, update: SearchUpdate) -> Result<SearchTestReport, ApiError> {
        let config = self.search_config(&update)?;
        new_key(&update)?;
        let search = self.search_for(&config, &update).await;
        let Some(service) = &search.service else {
            return Ok(SearchTestReport {
                ok: false,
                message: search
                    .problem
                    .clone()
                    .unwrap_or_else(|| "no web search service is chosen".into()),
                results: 0,
                latency_ms: 0,
            });
        };
        let started = Instant::now();
        let result = service.results(TEST_QUERY, config.max_results).await;
        let latency_ms = started.elapsed().as_millis() as u64;
        let at = echo_tools::service_url(&config).unwrap_or_default();
        Ok(match result {
            Ok(results) => SearchTestReport {
                ok: true,
                message: format!(
                    "{} at {at} answered with {} results in {latency_ms} ms",
                    service.service(),
                    results.len()
                ),
                results: results.len() as u32,
                latency_ms,
            },
            Err(e) => SearchTestReport {
                ok: false,
                message: e.to_string(),
                results: 0,
                latency_ms,
            },
        })
    }

    /// `[search]` as `update` asks, checked.
    fn search_config(&self, update: &SearchUpdate) -> Result<SearchConfig, ApiError> {
        let mut config = SearchConfig {
            kind: update.kind,
            url: update
                .url
                .as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(String::from),
            max_results: update
                .max_results
                .unwrap_or(self.inner.search().config.max_results),
            api_key: None,
            env_overrides: Vec::new(),
        };
        config.check()?;
        Ok(config)
    }

    /// The service `config` with `update`'s key: the key given now, else (unless cleared)
    /// the keychain's for that service.
    async fn search_for(&self, config: &SearchConfig, update: &SearchUpdate) -> Search {
        if let Some(key) = new_key(update).ok().flatten() {
            return Search::with_key(config, Some(key), KeySource::Keychain);
        }
        if update.clear_api_key == Some(true) {
            return Search::with_key(config, None, KeySource::None);
        }
        let secrets: Arc<dyn SecretStore> = self.secrets();
        Search::build(config, &secrets).await
    }
}

/// The key typed now, trimmed, if any; an error when it cannot be a key.
fn new_key(update: &SearchUpdate) -> Result<Option<String>, ApiError> {
    let key = update
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(String::from);
    if let Some(key) = &key {
        echo_secrets::check_secret(key)?;
    }
    Ok(key)
}
