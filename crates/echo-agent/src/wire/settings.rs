//! Settings as front ends see them: the provider and its key, local models and their
//! downloads, trace capture, and the bootstrap files.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

use echo_core::vocab::{ProviderKind, SearchKind};
use std::collections::BTreeMap;

/// What a model's download is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Checksum {
    /// A SHA-256 written into Echo Desk's catalog, taken from the publisher's metadata.
    Pinned,
    /// The SHA-256 the download host publishes for the file at download time (Hugging
    /// Face's `X-Linked-Etag`): it proves the download is whole, not that the host's file is
    /// the one the catalog was written for.
    PublishedByHost,
}

/// One recommended model.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct LocalModelEntry {
    /// Short name (`echod model fetch ID`).
    pub id: String,
    /// What a person reads.
    pub name: String,
    /// Approximate download size.
    #[ts(type = "number")]
    pub size_bytes: u64,
    /// Licence of the weights.
    pub license: String,
    /// What it is good for.
    pub note: String,
    /// What its download is checked against.
    pub checksum: Checksum,
    /// The installed file, if any.
    pub path: Option<String>,
    /// Whether it is the model in force.
    pub in_use: bool,
    /// Its download in this process, if one was started.
    pub download: Option<DownloadState>,
}

/// The built-in model's catalog and state.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct LocalModels {
    /// Where downloads go.
    pub dir: String,
    /// The GGUF file in force when the provider is the built-in model.
    pub in_use: Option<String>,
    /// Recommended models, smallest first.
    pub models: Vec<LocalModelEntry>,
    /// Threads the built-in model computes with in this process: `llm.threads` when it was
    /// set at start, else the machine's physical cores.
    pub threads: u32,
}

/// The provider as the settings page shows it (never the key itself).
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ProviderView {
    /// Kind, base URL and models in force.
    pub settings: ProviderSettings,
    /// Where the API key in force comes from.
    pub key_source: KeySource,
    /// Which keychain keeps keys (or why none can).
    pub keychain: String,
    /// Whether keys can be saved at all.
    pub keychain_available: bool,
    /// `ECHO_LLM_*` variables set for this process: they win over saved settings at the
    /// next start.
    pub env_overrides: Vec<String>,
    /// Every provider kind with its usual base URL, in the order to offer them (so a
    /// settings page keeps no copy of the engine's defaults).
    pub kinds: Vec<ProviderKindInfo>,
    /// What the engine chose at start because nobody chose a provider (the built-in model
    /// when no Ollama answered), or how to get a model; shown once.
    pub notice: Option<String>,
}

/// A provider kind and the base URL used when none is configured.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ProviderKindInfo {
    /// The kind.
    pub kind: ProviderKind,
    /// Its default base URL.
    pub default_base_url: String,
}

/// A change from the settings page (or the settings to test).
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderUpdate {
    /// Kind, base URL and models.
    pub settings: ProviderSettings,
    /// A new API key for this server (kept in the keychain); absent keeps the stored one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub api_key: Option<String>,
    /// Remove the stored key for this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub clear_api_key: Option<bool>,
}

/// What "test connection" found, in one line for people.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ConnectionReport {
    /// Whether the model answered.
    pub ok: bool,
    /// The model error's code when it did not answer.
    pub code: Option<echo_core::TurnErrorCode>,
    /// What happened, naming the server and model.
    pub message: String,
    /// Time to the answer (or the failure).
    #[ts(type = "number")]
    pub latency_ms: u64,
}

/// The web search service as Settings shows it (never the key itself).
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct SearchView {
    /// The service; `none` offers no `web_search` tool and no research.
    pub kind: SearchKind,
    /// The URL set for it (a SearXNG instance, or a proxy for Brave and Tavily).
    pub url: Option<String>,
    /// Where searches go: `url`, else the service's own endpoint.
    pub service_url: Option<String>,
    /// Most results one search returns (1–20).
    pub max_results: u32,
    /// Whether the service asks for an API key (Brave, Tavily).
    pub needs_key: bool,
    /// Where the key in force comes from.
    pub key_source: KeySource,
    /// Which keychain keeps keys (or why none can).
    pub keychain: String,
    /// Whether keys can be saved at all.
    pub keychain_available: bool,
    /// `ECHO_SEARCH_*` variables set for this process: they win over saved settings, which
    /// cannot be changed from here while they are set.
    pub env_overrides: Vec<String>,
    /// Whether web search and research are available now.
    pub available: bool,
    /// Why the service named is not available (a key missing, a bad URL).
    pub problem: Option<String>,
    /// Every service, in the order to offer them.
    pub kinds: Vec<SearchKind>,
}

/// A change to the web search service from Settings (or the settings to test).
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchUpdate {
    /// The service.
    pub kind: SearchKind,
    /// Its URL (required for SearXNG); absent: the service's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    /// Most results one search returns (1–20); absent keeps the current number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_results: Option<u32>,
    /// A new API key for this service (kept in the keychain); absent keeps the stored one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub api_key: Option<String>,
    /// Remove the stored key for this service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub clear_api_key: Option<bool>,
}

/// What "test search" found, in one line for people.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct SearchTestReport {
    /// Whether the service answered.
    pub ok: bool,
    /// What happened, naming the service.
    pub message: String,
    /// Results it returned.
    pub results: u32,
    /// Time to the answer (or the failure).
    #[ts(type = "number")]
    pub latency_ms: u64,
}

/// A local Ollama server that answered.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct OllamaInfo {
    /// Base URL to use for it (its OpenAI-compatible endpoint).
    pub base_url: String,
    /// Models it has pulled.
    pub models: Vec<String>,
}

/// `[memory]` as the memory page shows and edits it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct MemorySettings {
    /// Ask before remembering: what memory work finds waits for Keep or Discard.
    pub ask_before_remembering: bool,
}

/// `[trace]` as the settings page shows and edits it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, TS, ToSchema)]
pub struct TraceSettings {
    /// Whether each model call's request and response are kept.
    pub capture: bool,
    /// Days they are kept (0: removed at the next sweep).
    pub retention_days: u32,
    /// The share of the last day's turns that fell back (0–1) from which the app says so;
    /// 0: never.
    pub notice_rate: f64,
}

/// One bootstrap file as the settings page shows it.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct BootstrapFile {
    /// `AGENTS.md`, `SOUL.md`, `USER.md` or `TOOLS.md`.
    pub name: String,
    /// Its text (the default's when the user has not saved one).
    pub content: String,
    /// Whether this is the built-in default (no file in the data directory).
    pub is_default: bool,
    /// Where the user's copy lives (or will live once saved).
    pub path: String,
}

/// How a download of this process is going.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct DownloadState {
    /// Bytes on disk.
    #[ts(type = "number")]
    pub done: u64,
    /// The whole size, once the server said.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
    /// Whether it ended (then `error` says whether it failed).
    pub finished: bool,
    /// Why it failed.
    pub error: Option<String>,
}

/// Where the API key in force came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// `ECHO_LLM_API_KEY` (wins over the keychain).
    Environment,
    /// The OS keychain.
    Keychain,
    /// No key (fine for local servers such as Ollama).
    None,
}

/// Which server and models the assistant talks to, as `config.toml`'s `[llm]` spells them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderSettings {
    /// Wire protocol.
    pub kind: ProviderKind,
    /// Server base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Main model.
    pub model: String,
    /// Models tried in order on the same server when the main one keeps failing.
    pub fallback_models: Vec<String>,
}

impl From<echo_core::config::ProviderSettings> for ProviderSettings {
    fn from(v: echo_core::config::ProviderSettings) -> Self {
        Self {
            kind: v.kind,
            base_url: v.base_url,
            model: v.model,
            fallback_models: v.fallback_models,
        }
    }
}

impl From<ProviderSettings> for echo_core::config::ProviderSettings {
    fn from(v: ProviderSettings) -> Self {
        Self {
            kind: v.kind,
            base_url: v.base_url,
            model: v.model,
            fallback_models: v.fallback_models,
        }
    }
}

/// One MCP server (`[[tools.mcp]]` of `config.toml`): either a local command speaking stdio
/// or a streamable-HTTP URL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// Short name; its tools appear as `name__tool`. Letters, digits, `-` and `_`.
    pub name: String,
    /// Program to start (stdio transport).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for the program.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Streamable-HTTP endpoint (instead of `command`).
    #[serde(default)]
    pub url: Option<String>,
    /// Extra HTTP headers (e.g. `Authorization`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Whether the server is used.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

impl From<echo_core::config::McpServerConfig> for McpServerConfig {
    fn from(v: echo_core::config::McpServerConfig) -> Self {
        Self {
            name: v.name,
            command: v.command,
            args: v.args,
            env: v.env,
            url: v.url,
            headers: v.headers,
            enabled: v.enabled,
        }
    }
}

impl From<McpServerConfig> for echo_core::config::McpServerConfig {
    fn from(v: McpServerConfig) -> Self {
        Self {
            name: v.name,
            command: v.command,
            args: v.args,
            env: v.env,
            url: v.url,
            headers: v.headers,
            enabled: v.enabled,
        }
    }
}
