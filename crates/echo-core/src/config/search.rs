//! `[search]`: the web search service behind the `web_search` tool, and its
//! `ECHO_SEARCH_*` overrides. None by default: the tool is then not offered.

use super::{ConfigError, Env, check_url};
use crate::vocab::SearchKind;
use serde::Deserialize;

/// Environment variables that override `[search]` (and, for the key, the keychain).
pub const SEARCH_ENV: [&str; 3] = ["ECHO_SEARCH_KIND", "ECHO_SEARCH_URL", "ECHO_SEARCH_API_KEY"];

/// Which web search service the assistant may ask, and how.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// The service; `none` offers no search tool.
    pub kind: SearchKind,
    /// Base URL: a SearXNG instance (required for `searxng`); for Brave and Tavily, another
    /// endpoint than the service's own (a proxy).
    pub url: Option<String>,
    /// Most results one search returns (1–20).
    pub max_results: u32,
    /// The API key from `ECHO_SEARCH_API_KEY` (not read from the file; the keychain keeps
    /// saved keys, and the engine reads it there when the environment has none).
    #[serde(skip)]
    pub api_key: Option<String>,
    /// `ECHO_SEARCH_*` variables set for this process: they win over saved settings.
    #[serde(skip)]
    pub env_overrides: Vec<String>,
}

/// Debug output never shows the key.
impl std::fmt::Debug for SearchConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchConfig")
            .field("kind", &self.kind)
            .field("url", &self.url)
            .field("max_results", &self.max_results)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("env_overrides", &self.env_overrides)
            .finish()
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            kind: SearchKind::None,
            url: None,
            max_results: 8,
            api_key: None,
            env_overrides: Vec::new(),
        }
    }
}

impl SearchConfig {
    /// Applies `ECHO_SEARCH_*` over the file's `[search]`, then checks the whole.
    pub(crate) fn apply_env(&mut self, env: &dyn Env) -> Result<(), ConfigError> {
        self.env_overrides = SEARCH_ENV
            .iter()
            .filter(|name| env.var(name).is_some())
            .map(|name| name.to_string())
            .collect();
        if let Some(kind) = env.var("ECHO_SEARCH_KIND") {
            self.kind = SearchKind::parse(&kind.to_ascii_lowercase()).ok_or_else(|| {
                ConfigError::Override {
                    source_name: "ECHO_SEARCH_KIND".into(),
                    message: format!(
                        "unknown search kind {kind:?}; expected {}",
                        SearchKind::expected()
                    ),
                }
            })?;
        }
        if let Some(url) = env.var("ECHO_SEARCH_URL") {
            self.url = Some(check_url(&url, "ECHO_SEARCH_URL")?);
        }
        self.api_key = env
            .var("ECHO_SEARCH_API_KEY")
            .filter(|k| !k.trim().is_empty());
        self.check()
    }

    /// A SearXNG service needs its URL; a URL must be http(s); 1–20 results. (A service that
    /// needs a key may have it in the keychain, which the engine reads: its absence is the
    /// engine's to report.)
    pub fn check(&mut self) -> Result<(), ConfigError> {
        if let Some(url) = &self.url {
            self.url = Some(check_url(url, "search.url")?);
        }
        if self.kind == SearchKind::Searxng && self.url.is_none() {
            return Err(ConfigError::Override {
                source_name: "search.url".into(),
                message: "a SearXNG search needs the instance's URL (search.url or \
                          ECHO_SEARCH_URL)"
                    .into(),
            });
        }
        if !(1..=20).contains(&self.max_results) {
            return Err(ConfigError::Override {
                source_name: "search.max_results".into(),
                message: format!("{} is not between 1 and 20", self.max_results),
            });
        }
        Ok(())
    }
}
