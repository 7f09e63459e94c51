//! Configuration: the data directory and `config.toml` inside it.
//!
//! Precedence, highest first: command-line flag > environment > file > default. The file is
//! strict (unknown keys are errors) and every error names the file, line, column and key.
//! API keys never come from the file: they come from the environment (and, on the desktop,
//! the OS keychain).

pub mod edit;
mod llm;
mod research;
mod search;
mod sections;
mod share;
mod side;

pub use crate::vocab::{EmbedderKind, SearchKind};
pub use edit::ProviderSettings;
pub use llm::{LlmConfig, MIN_INPUT_TOKENS};
pub use research::ResearchConfig;
pub use search::{SEARCH_ENV, SearchConfig};
pub use sections::{AutomationsConfig, TraceConfig};
use serde::Deserialize;
pub use share::Share;
pub use side::{SIDE_BUILTIN, SIDE_NONE, SideConfig};
use std::path::{Path, PathBuf};

/// Name of the config file inside the data directory.
pub const CONFIG_FILE: &str = "config.toml";

/// Environment variable that selects the data directory.
pub const HOME_ENV: &str = "ECHO_DESK_HOME";

/// A configuration problem, named precisely enough to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file is not valid TOML or has a bad value.
    #[error("{path}:{line}:{column}: {key}: {message}", path = path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Dotted key (or `(document)` when none applies).
        key: String,
        /// What was wrong.
        message: String,
    },
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}", path = path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// An environment variable or flag has a bad value.
    #[error("{source_name}: {message}")]
    Override {
        /// The variable or flag, e.g. `ECHO_LLM_KIND`.
        source_name: String,
        /// What was wrong.
        message: String,
    },
    /// No data directory could be chosen.
    #[error("no data directory: set {HOME_ENV} or pass --home")]
    NoHome,
}

pub use crate::vocab::{ProviderKind, TaskType};

impl ProviderKind {
    /// Every kind, in the order settings pages offer them.
    pub const ALL: [ProviderKind; 4] = [Self::Openai, Self::Anthropic, Self::Ollama, Self::Local];

    /// The base URL used when none is configured (none for the built-in model).
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Ollama => "http://127.0.0.1:11434/v1",
            Self::Local => "",
        }
    }

    /// Whether the model runs in this process (no server, no key).
    pub fn is_local(self) -> bool {
        self == Self::Local
    }
}

/// Network time limits for model calls.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutConfig {
    /// TCP/TLS connect limit.
    pub connect_secs: f64,
    /// Limit from sending the request to the first byte of the response body.
    pub first_byte_secs: f64,
    /// Limit on silence between two chunks of a streamed response.
    pub idle_secs: f64,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        Self {
            connect_secs: 10.0,
            first_byte_secs: 120.0,
            idle_secs: 60.0,
        }
    }
}

/// Retry policy for one model before falling back to the next.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetryConfig {
    /// Retries after the first attempt (0 = no retry).
    pub max_retries: u32,
    /// First backoff delay.
    pub initial_backoff_ms: u64,
    /// Cap on one backoff delay (a server's `Retry-After` is honoured up to this cap).
    pub max_backoff_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_retries: 2,
            initial_backoff_ms: 500,
            max_backoff_ms: 8_000,
        }
    }
}

/// Behaviour of the agent loop.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentConfig {
    /// Model/tool rounds per turn before a final summary call without tools.
    pub max_iterations: u32,
    /// Default limit for one tool call (a tool may declare a shorter one).
    pub tool_timeout_secs: f64,
    /// Run independent read-only tool calls of one step concurrently.
    pub parallel_read_only_tools: bool,
    /// How long a one-shot front end (`echod ask`) waits for background jobs before exiting.
    pub background_wait_secs: f64,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            tool_timeout_secs: 60.0,
            parallel_read_only_tools: true,
            background_wait_secs: 30.0,
        }
    }
}

/// Tools, the approval gate and MCP servers.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolsConfig {
    /// Directories the assistant may write in (besides none). Empty means the working
    /// directory of the process. `~` is expanded.
    pub workspace_roots: Vec<PathBuf>,
    /// Extra paths (globs, `~` expanded) that are never read or written, on top of the
    /// built-in secret list (`~/.ssh`, `~/.aws`, `~/.gnupg`, `.env` files, keychains, …).
    pub secret_paths: Vec<String>,
    /// Tools never offered to the model.
    pub disabled: Vec<String>,
    /// Longest tool result (in characters) the model sees; longer output is cut with a marker
    /// and the full text is kept on the trace.
    pub output_cap_chars: usize,
    /// How long an approval question waits for an answer before it counts as "deny".
    pub approval_timeout_secs: f64,
    /// Time limit for the short model-written explanation shown in the approval dialog.
    pub explain_timeout_secs: f64,
    /// Ask the model for that explanation at all.
    pub explain_approvals: bool,
    /// Model for the explanation (a small, fast one); default: the main model.
    pub explain_model: Option<String>,
    /// Consecutive failures of one tool that open its circuit breaker.
    pub breaker_failures: u32,
    /// How long an open breaker keeps the tool unavailable.
    pub breaker_cooldown_secs: f64,
    /// MCP servers whose tools are offered as `server__tool`.
    pub mcp: Vec<McpServerConfig>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            workspace_roots: Vec::new(),
            secret_paths: Vec::new(),
            disabled: Vec::new(),
            output_cap_chars: 16_000,
            approval_timeout_secs: 300.0,
            explain_timeout_secs: 8.0,
            explain_approvals: true,
            explain_model: None,
            breaker_failures: 3,
            breaker_cooldown_secs: 60.0,
            mcp: Vec::new(),
        }
    }
}

/// One MCP server (`[[tools.mcp]]`): either a local command speaking stdio or a
/// streamable-HTTP URL.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
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
    pub env: std::collections::BTreeMap<String, String>,
    /// Streamable-HTTP endpoint (instead of `command`).
    #[serde(default)]
    pub url: Option<String>,
    /// Extra HTTP headers (e.g. `Authorization`).
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Whether the server is used.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Half-lives of memories by source, in days: how long until an unused memory's retention
/// falls to one half. Each real use multiplies its own half-life by `reinforce_factor`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HalfLifeConfig {
    /// What the person said (and what they typed in the memory UI).
    pub user_stated: f64,
    /// What consolidation distilled from several turns.
    pub consolidated: f64,
    /// What the model inferred.
    pub inferred: f64,
}

impl Default for HalfLifeConfig {
    fn default() -> Self {
        Self {
            user_stated: 120.0,
            consolidated: 60.0,
            inferred: 21.0,
        }
    }
}

/// How extraction states a fact (`memory.extraction_style`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionStyle {
    /// `quoted` on the built-in (local) model, `written` on a server.
    #[default]
    Auto,
    /// The model writes each fact in its own words, with a quote as evidence.
    Written,
    /// The model only chooses which of the user's statements to keep, in their words.
    Quoted,
}

/// Long-term memory.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemoryConfig {
    /// Memory on or off (off: nothing is recalled or extracted).
    pub enabled: bool,
    /// Extract memories after each turn (a background model call).
    pub extraction: bool,
    /// How the extraction call states a fact (`auto`: `quoted` on the built-in model).
    pub extraction_style: ExtractionStyle,
    /// Ask before remembering: what extraction finds waits for the person's Keep or Discard
    /// (under the answer, or `echod memory proposals`) instead of being written.
    pub ask_before_remembering: bool,
    /// Model for extraction and conflict judging (same server); the main model when unset.
    pub extraction_model: Option<String>,
    /// Initial half-lives by source.
    pub half_life_days: HalfLifeConfig,
    /// Each injection into a prompt multiplies a memory's half-life by this.
    pub reinforce_factor: f64,
    /// Cap on a half-life.
    pub max_half_life_days: f64,
    /// Effective importance below which the sweep archives a memory.
    pub archive_below: f64,
    /// Hours between sweeps while a process runs (a sweep also runs at start).
    pub sweep_interval_hours: f64,
    /// Memories in a session's frozen snapshot.
    pub snapshot_size: usize,
    /// Memories recalled for each message.
    pub recall_k: usize,
    /// Cosine similarity above which a vector neighbour is a conflict candidate.
    pub conflict_similarity: f32,
    /// Unconsolidated messages that trigger consolidation of a session.
    pub consolidate_after: u32,
    /// Embedder: `local` (all-MiniLM-L6-v2 with candle), `openai` (`/embeddings` of the LLM
    /// server) or `none` (BM25 only).
    pub embedder: EmbedderKind,
    /// Folder with the local model's files; default `$ECHO_EMBED_MODEL_DIR`, then
    /// `<data dir>/models/all-MiniLM-L6-v2`, then the shared model cache
    /// (`~/.cache/echo-desk-models/all-MiniLM-L6-v2`: `scripts/fetch-embed-model.sh`'s).
    pub embed_model_dir: Option<PathBuf>,
    /// Download the local model from Hugging Face on first use when it is nowhere to be
    /// found. Off by default: Echo Desk connects to nothing but the model server unless told.
    pub embed_download: bool,
    /// Model name for the `openai` embedder.
    pub embed_model: String,
    /// Vector length of the `openai` embedder's model.
    pub embed_dim: usize,
    /// Weight of the vector ranking against BM25 (1.0) in reciprocal-rank fusion.
    pub vector_weight: f64,
    /// Seconds without memory search before the embedder and vector index are let go (0: kept).
    pub release_after_secs: u64,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            extraction: true,
            extraction_style: ExtractionStyle::Auto,
            ask_before_remembering: false,
            extraction_model: None,
            half_life_days: HalfLifeConfig::default(),
            reinforce_factor: 1.6,
            max_half_life_days: 3650.0,
            archive_below: 0.05,
            sweep_interval_hours: 6.0,
            snapshot_size: 12,
            recall_k: 6,
            conflict_similarity: 0.8,
            consolidate_after: 40,
            embedder: EmbedderKind::Local,
            embed_model_dir: None,
            embed_download: false,
            embed_model: "text-embedding-3-small".into(),
            embed_dim: 1536,
            vector_weight: 0.3,
            release_after_secs: 300,
        }
    }
}

/// The desktop app.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DesktopConfig {
    /// Global shortcut that opens the quick-ask window (Tauri accelerator syntax).
    pub quick_ask_shortcut: String,
    /// Closing the main window hides it to the tray instead of quitting.
    pub close_to_tray: bool,
}

impl Default for DesktopConfig {
    fn default() -> Self {
        Self {
            quick_ask_shortcut: "CommandOrControl+Shift+Space".into(),
            close_to_tray: true,
        }
    }
}

/// Long conversations (`[context]`): when a session's history is compressed into a rolling
/// summary, and how much of it stays verbatim.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextConfig {
    /// Compress when a request would take more than this share of the model's input budget.
    pub compress_at: Share,
    /// Share of the input budget the newest turns keep, verbatim, after a compression.
    pub keep_recent: Share,
    /// Turns that must pass after a compression attempt (successful or not) before the next
    /// one; in between, a request that does not fit is trimmed without a summary.
    pub cooldown_turns: u32,
    /// Model that writes summaries (same server); the memory extraction model when unset,
    /// then the main model.
    pub summary_model: Option<String>,
    /// Upper bound on one summary call's answer.
    pub summary_max_tokens: u32,
    /// Share of the input budget tool definitions may take; past it a request offers only
    /// the tools most related to the turn (small windows).
    pub tools_share: Share,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            compress_at: Share(0.75),
            keep_recent: Share(0.35),
            cooldown_turns: 2,
            summary_model: None,
            summary_max_tokens: 1024,
            tools_share: Share(0.5),
        }
    }
}

/// Models by task type (`[routing]`): each list is a model and its fallbacks on the `[llm]`
/// server, in order. A task type without a list uses `[llm]`'s model and fallbacks.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// Conversation.
    pub chat: Vec<String>,
    /// Code.
    pub code: Vec<String>,
    /// Research.
    pub research: Vec<String>,
    /// Planning.
    pub planning: Vec<String>,
}

impl RoutingConfig {
    /// The models configured for `task`, first choice first (empty: use `[llm]`).
    pub fn models_for(&self, task: TaskType) -> &[String] {
        match task {
            TaskType::Chat => &self.chat,
            TaskType::Code => &self.code,
            TaskType::Research => &self.research,
            TaskType::Planning => &self.planning,
        }
    }
}

/// The optional planner (`[planner]`): before a turn of the listed task types, one short call
/// writes a plan that is appended to the user's message as `[Plan] …`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlannerConfig {
    /// Off by default.
    pub enabled: bool,
    /// Task types that get a plan.
    pub task_types: Vec<TaskType>,
    /// Model that plans (same server); the main model when unset.
    pub model: Option<String>,
    /// Upper bound on a plan's tokens.
    pub max_tokens: u32,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            task_types: vec![TaskType::Planning, TaskType::Research],
            model: None,
            max_tokens: 400,
        }
    }
}

/// The whole configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Default model.
    pub llm: LlmConfig,
    /// Agent loop.
    pub agent: AgentConfig,
    /// Long-term memory.
    pub memory: MemoryConfig,
    /// Tools, approvals and MCP servers.
    pub tools: ToolsConfig,
    /// The desktop app.
    pub desktop: DesktopConfig,
    /// Long conversations: compression into a rolling summary.
    pub context: ContextConfig,
    /// Models by task type.
    pub routing: RoutingConfig,
    /// The optional planner.
    pub planner: PlannerConfig,
    /// Traces: request/response capture and its retention.
    pub trace: TraceConfig,
    /// Automations: watch rules and schedules.
    pub automations: AutomationsConfig,
    /// Web search for the `web_search` tool.
    pub search: SearchConfig,
    /// The research path: when it is taken, and one run's budget.
    pub research: ResearchConfig,
    /// The side model's jobs: titles and follow-up questions.
    pub side: SideConfig,
    /// Data directory this configuration belongs to (not read from the file).
    #[serde(skip)]
    pub home: PathBuf,
    /// `ECHO_LLM_*` variables that were set when this configuration was loaded: they win over
    /// the file, so a settings page says so (not read from the file).
    #[serde(skip)]
    pub env_overrides: Vec<String>,
    /// Whether anyone chose the model provider: the file's `[llm]` names a kind, model or
    /// base URL, or an `ECHO_LLM_*` variable or a flag does. When nobody did, the engine
    /// uses Ollama if one answers and the built-in model otherwise (not read from the file).
    #[serde(skip)]
    pub llm_chosen: bool,
}

/// Environment variables that override `[llm]` (and, for the key, the keychain).
pub const LLM_ENV: [&str; 7] = [
    "ECHO_LLM_KIND",
    "ECHO_LLM_BASE_URL",
    "ECHO_LLM_MODEL",
    "ECHO_LLM_FALLBACK_MODELS",
    "ECHO_LLM_API_KEY",
    "ECHO_LLM_CONTEXT_WINDOW",
    "ECHO_LOCAL_MODEL",
];

/// Values given on the command line; `None` means "not given".
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--home`.
    pub home: Option<PathBuf>,
    /// `--provider`.
    pub kind: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--fallback-models` (comma-separated).
    pub fallback_models: Option<String>,
}

/// Reads environment variables; injectable so tests need not touch the real environment.
pub trait Env {
    /// The variable's value, if set and non-empty.
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

impl Config {
    /// Resolves the data directory and loads `config.toml` from it with all overrides applied.
    pub fn load(flags: &Overrides, env: &dyn Env) -> Result<Config, ConfigError> {
        let home = resolve_home(flags, env)?;
        let path = home.join(CONFIG_FILE);
        let (mut config, file_chose) = match std::fs::read_to_string(&path) {
            Ok(text) => (Self::parse(&text, &path)?, names_provider(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Config::default(), false),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        config.home = home;
        config.llm_chosen = file_chose
            || ["ECHO_LLM_KIND", "ECHO_LLM_BASE_URL", "ECHO_LLM_MODEL"]
                .iter()
                .any(|name| env.var(name).is_some())
            || flags.kind.is_some()
            || flags.base_url.is_some()
            || flags.model.is_some();
        config.apply_env(env)?;
        config.apply_flags(flags)?;
        Ok(config)
    }

    /// Parses config text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        toml::from_str::<Config>(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let (line, column) = line_col(text, offset);
            ConfigError::File {
                path: path.to_path_buf(),
                line,
                column,
                key: key_at(text, offset),
                message: e.message().trim().to_string(),
            }
        })
    }

    fn apply_env(&mut self, env: &dyn Env) -> Result<(), ConfigError> {
        self.env_overrides = LLM_ENV
            .iter()
            .filter(|name| env.var(name).is_some())
            .map(|name| name.to_string())
            .collect();
        if let Some(kind) = env.var("ECHO_LLM_KIND") {
            self.llm.kind = parse_kind(&kind, "ECHO_LLM_KIND")?;
        }
        if let Some(url) = env.var("ECHO_LLM_BASE_URL") {
            self.llm.base_url = Some(check_url(&url, "ECHO_LLM_BASE_URL")?);
        }
        if let Some(model) = env.var("ECHO_LLM_MODEL") {
            self.llm.model = model.trim().to_string();
        }
        if let Some(list) = env.var("ECHO_LLM_FALLBACK_MODELS") {
            self.llm.fallback_models = split_list(&list);
        }
        if let Some(path) = env.var("ECHO_LOCAL_MODEL")
            && self.llm.kind.is_local()
        {
            self.llm.model = path.trim().to_string();
        }
        if let Some(window) = env.var("ECHO_LLM_CONTEXT_WINDOW") {
            self.llm.context_window =
                window
                    .trim()
                    .parse()
                    .ok()
                    .filter(|w| *w > 0)
                    .ok_or_else(|| ConfigError::Override {
                        source_name: "ECHO_LLM_CONTEXT_WINDOW".into(),
                        message: format!("{window:?} is not a positive number of tokens"),
                    })?;
        }
        self.llm.api_key = env.var("ECHO_LLM_API_KEY");
        if !(0.0..=1.0).contains(&self.trace.notice_rate) {
            return Err(ConfigError::Override {
                source_name: "trace.notice_rate".into(),
                message: format!("{} is not between 0 and 1", self.trace.notice_rate),
            });
        }
        self.research.check()?;
        self.side.check()?;
        self.search.apply_env(env)
    }

    fn apply_flags(&mut self, flags: &Overrides) -> Result<(), ConfigError> {
        if let Some(kind) = &flags.kind {
            self.llm.kind = parse_kind(kind, "--provider")?;
        }
        if let Some(url) = &flags.base_url {
            self.llm.base_url = Some(check_url(url, "--base-url")?);
        }
        if let Some(model) = &flags.model {
            self.llm.model = model.trim().to_string();
        }
        if let Some(list) = &flags.fallback_models {
            self.llm.fallback_models = split_list(list);
        }
        if self.llm.model.is_empty() {
            return Err(ConfigError::Override {
                source_name: "llm.model".into(),
                message: "no model name configured".into(),
            });
        }
        self.llm.check_window()
    }
}

/// Whether config text's `[llm]` table names a kind, a model or a base URL.
fn names_provider(text: &str) -> bool {
    let Ok(value) = text.parse::<toml::Table>() else {
        return false;
    };
    value
        .get("llm")
        .and_then(toml::Value::as_table)
        .is_some_and(|llm| {
            ["kind", "model", "base_url"]
                .iter()
                .any(|k| llm.contains_key(*k))
        })
}

/// The data directory: `--home`, then `ECHO_DESK_HOME`, then the platform's data directory.
pub fn resolve_home(flags: &Overrides, env: &dyn Env) -> Result<PathBuf, ConfigError> {
    if let Some(home) = &flags.home {
        return Ok(home.clone());
    }
    if let Some(home) = env.var(HOME_ENV) {
        return Ok(PathBuf::from(home));
    }
    directories::ProjectDirs::from("dev", "EchoDesk", "echo-desk")
        .map(|d| d.data_dir().to_path_buf())
        .ok_or(ConfigError::NoHome)
}

fn parse_kind(value: &str, source_name: &str) -> Result<ProviderKind, ConfigError> {
    ProviderKind::parse(&value.to_ascii_lowercase()).ok_or_else(|| ConfigError::Override {
        source_name: source_name.into(),
        message: format!(
            "unknown provider kind {value:?}; expected openai, anthropic, ollama or local"
        ),
    })
}

pub(crate) fn check_url(value: &str, source_name: &str) -> Result<String, ConfigError> {
    let v = value.trim();
    if v.starts_with("http://") || v.starts_with("https://") {
        Ok(v.to_string())
    } else {
        Err(ConfigError::Override {
            source_name: source_name.into(),
            message: format!("{v:?} is not an http(s) URL"),
        })
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(String::from)
        .collect()
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The dotted key at `offset`: the enclosing `[table]` plus the key on that line.
fn key_at(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = text[line_start..line_end].trim();
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string());
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    match (table, key) {
        (_, None) if line.starts_with('[') => line.trim_matches(['[', ']']).trim().to_string(),
        (Some(t), Some(k)) => format!("{t}.{k}"),
        (None, Some(k)) => k,
        (Some(t), None) => t,
        (None, None) => "(document)".into(),
    }
}

#[cfg(test)]
mod tests;
