//! The web search service in force: `[search]` with its key (the environment's, else the
//! keychain's), built at start and replaced as a whole when Settings change it; the
//! `web_search` tool is registered while there is a service. Settings that name a service
//! that cannot be built (a key missing, a bad URL) leave no service and keep the reason,
//! which Settings and research show: nothing starts failing silently.

use super::Engine;
use super::models::read_secret;
use crate::wire::KeySource;
use echo_core::config::{SearchConfig, SearchKind};
use echo_secrets::SecretStore;
use std::sync::Arc;

/// The search service in force and what it was built from.
pub(crate) struct Search {
    /// `[search]` as in force, without its key.
    pub(crate) config: SearchConfig,
    /// The service, when `config` names one that could be built.
    pub(crate) service: Option<echo_tools::WebSearch>,
    /// Where its key comes from.
    pub(crate) key_source: KeySource,
    /// Why `config` names a service and there is none.
    pub(crate) problem: Option<String>,
}

impl Search {
    /// The service of `config`, with the environment's key or else the one the keychain
    /// keeps for it (read only for the services that need one).
    pub(crate) async fn build(config: &SearchConfig, secrets: &Arc<dyn SecretStore>) -> Search {
        if let Some(key) = &config.api_key {
            return Search::with_key(config, Some(key.clone()), KeySource::Environment);
        }
        let stored = match account(config) {
            Some(account) if needs_key(config.kind) => read_secret(secrets, account).await,
            _ => None,
        };
        let source = if stored.is_some() {
            KeySource::Keychain
        } else {
            KeySource::None
        };
        Search::with_key(config, stored, source)
    }

    /// The service in force at start, its `web_search` tool registered in `tools`; a
    /// service that cannot be built is logged with why.
    pub(crate) async fn start(
        config: &SearchConfig,
        secrets: &Arc<dyn SecretStore>,
        tools: &echo_tools::ToolRegistry,
    ) -> Search {
        let search = Search::build(config, secrets).await;
        if let Some(problem) = &search.problem {
            tracing::warn!(%problem, "no web search service");
        }
        if let Some(tool) = search.tool()
            && let Err(e) = tools.register(tool)
        {
            tracing::error!(error = %e, "web search tool rejected");
        }
        search
    }

    /// The service of `config` with `key`.
    pub(crate) fn with_key(
        config: &SearchConfig,
        key: Option<String>,
        key_source: KeySource,
    ) -> Search {
        let config = SearchConfig {
            api_key: None,
            ..config.clone()
        };
        let (service, problem) = match echo_tools::web_search(&config, key) {
            Ok(service) => (service, None),
            Err(problem) => (None, Some(problem)),
        };
        let key_source = if needs_key(config.kind) {
            key_source
        } else {
            KeySource::None
        };
        Search {
            config,
            service,
            key_source,
            problem,
        }
    }

    /// The `web_search` tool over the service, if there is one.
    fn tool(&self) -> Option<Arc<dyn echo_tools::Tool>> {
        self.service
            .clone()
            .map(|s| Arc::new(s) as Arc<dyn echo_tools::Tool>)
    }
}

/// Whether `kind` asks for an API key.
pub(crate) fn needs_key(kind: SearchKind) -> bool {
    matches!(kind, SearchKind::Brave | SearchKind::Tavily)
}

/// The keychain account of `config`'s key: one per service and endpoint.
pub(crate) fn account(config: &SearchConfig) -> Option<String> {
    echo_tools::service_url(config)
        .map(|url| echo_secrets::search_account(config.kind.as_str(), &url))
}

impl Engine {
    /// The search service in force.
    pub(crate) fn search(&self) -> Arc<Search> {
        self.search
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Puts `search` in force: the next turn offers its tool (or none), and research uses
    /// it. Turns already running keep what they took.
    pub(crate) fn set_search(&self, search: Search) {
        let mut slot = self
            .search
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.tools.unregister(echo_tools::WEB_SEARCH_TOOL);
        if let Some(tool) = search.tool()
            && let Err(e) = self.tools.register(tool)
        {
            tracing::error!(error = %e, "web search tool rejected");
        }
        *slot = Arc::new(search);
    }
}
