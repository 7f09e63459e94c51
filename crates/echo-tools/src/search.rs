//! The `web_search` tool: asks a web search service for a query and returns a numbered list
//! of results (title, URL, date, snippet), framed as data for the model. The services sit
//! behind one trait, [`SearchProvider`]: a SearXNG instance, Brave Search and Tavily. Pages
//! are read with `web_fetch`, which has its own limits and framing.

use crate::TypedTool;
use crate::fs::{DETAIL_MAX_CHARS, cut_chars};
use crate::registry::{Action, Risk, ToolContext, ToolError};
use async_trait::async_trait;
use echo_core::config::{SearchConfig, SearchKind};
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// Time limit for one search, answer included.
const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest title kept, in characters.
const TITLE_CHARS: usize = 200;
/// Longest snippet kept, in characters.
const SNIPPET_CHARS: usize = 500;
/// Most answer bytes read from a service.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// One result of a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// Its URL.
    pub url: String,
    /// What the service shows of it.
    pub snippet: String,
    /// When it was published, as the service says it, if it does.
    pub date: Option<String>,
}

/// A web search service.
#[async_trait]
pub trait SearchProvider: Send + Sync + std::fmt::Debug {
    /// Its name for people and the model (`SearXNG`, `Brave Search`, `Tavily`).
    fn name(&self) -> &'static str;
    /// The host a search talks to (what an approval rule for `web_search` names).
    fn host(&self) -> String;
    /// At most `limit` results for `query`, best first.
    async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchResult>, ToolError>;
}

/// The tool's name.
pub const WEB_SEARCH_TOOL: &str = "web_search";

/// Brave Search's own endpoint.
const BRAVE_URL: &str = "https://api.search.brave.com";
/// Tavily's own endpoint.
const TAVILY_URL: &str = "https://api.tavily.com";

/// The base URL a search of `config` is sent under: its `url`, else the service's own; `None`
/// for no service, or a SearXNG without its URL.
pub fn service_url(config: &SearchConfig) -> Option<String> {
    let default = match config.kind {
        SearchKind::None => return None,
        SearchKind::Searxng => None,
        SearchKind::Brave => Some(BRAVE_URL),
        SearchKind::Tavily => Some(TAVILY_URL),
    };
    config.url.as_deref().or(default).map(str::to_string)
}

/// The search tool `config` asks for, with `api_key` for the services that need one; `None`
/// when `[search]` names no service. A service that needs a key and has none is an error
/// naming where to put one.
pub fn web_search(
    config: &SearchConfig,
    api_key: Option<String>,
) -> Result<Option<WebSearch>, String> {
    let url = |default: &str| base_url(config.url.as_deref().unwrap_or(default));
    let key = |service: &str| {
        api_key.clone().ok_or_else(|| {
            format!(
                "{service} needs an API key: save one in Settings → Web search (or `echod \
                 search set --key-stdin`), or set ECHO_SEARCH_API_KEY"
            )
        })
    };
    let provider: Arc<dyn SearchProvider> = match config.kind {
        SearchKind::None => return Ok(None),
        SearchKind::Searxng => {
            let Some(raw) = config.url.as_deref() else {
                return Err("a SearXNG search needs search.url".into());
            };
            Arc::new(Searxng {
                base: url(raw)?,
                client: client()?,
            })
        }
        SearchKind::Brave => Arc::new(Brave {
            base: url(BRAVE_URL)?,
            key: key("Brave Search")?,
            client: client()?,
        }),
        SearchKind::Tavily => Arc::new(Tavily {
            base: url(TAVILY_URL)?,
            key: key("Tavily")?,
            client: client()?,
        }),
    };
    Ok(Some(WebSearch::new(provider, config.max_results)))
}

/// `raw` as a base the endpoints join under: it ends with `/` (a SearXNG at `/searx` is
/// asked at `/searx/search`).
fn base_url(raw: &str) -> Result<Url, String> {
    let mut url = Url::parse(raw).map_err(|e| format!("search.url {raw:?} is not a URL: {e}"))?;
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    Ok(url)
}

fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .user_agent(concat!(
            "EchoDesk/",
            env!("CARGO_PKG_VERSION"),
            " (web_search)"
        ))
        .timeout(SEARCH_TIMEOUT)
        .build()
        .map_err(|e| format!("cannot set up HTTP for web search: {e}"))
}

/// `web_search`: searches the web through the configured service.
#[derive(Debug, Clone)]
pub struct WebSearch {
    provider: Arc<dyn SearchProvider>,
    max_results: u32,
}

impl WebSearch {
    /// The tool over any provider, with at most `max_results` results a search (1–20).
    pub fn new(provider: Arc<dyn SearchProvider>, max_results: u32) -> Self {
        Self {
            provider,
            max_results: max_results.clamp(1, 20),
        }
    }

    /// Most results one search returns.
    pub fn max_results(&self) -> u32 {
        self.max_results
    }

    /// The service's name for people (`SearXNG`, `Brave Search`, `Tavily`).
    pub fn service(&self) -> &'static str {
        self.provider.name()
    }

    /// At most `limit` (and the configured number) results for `query`, as data: what the
    /// research path reads instead of the tool's text.
    pub async fn results(&self, query: &str, limit: u32) -> Result<Vec<SearchResult>, ToolError> {
        let limit = limit.clamp(1, self.max_results);
        let mut results = self.provider.search(query, limit).await?;
        results.truncate(limit as usize);
        Ok(results)
    }
}

/// Arguments of `web_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchArgs {
    /// What to search for, as you would type it into a search engine.
    query: String,
    /// How many results you want (at most the configured number, 8 by default).
    #[serde(default)]
    max_results: Option<u32>,
}

impl WebSearchArgs {
    fn query(&self) -> Result<&str, ToolError> {
        let query = self.query.trim();
        if query.is_empty() {
            return Err(ToolError::InvalidArguments("the query is empty".into()));
        }
        if query.chars().count() > 400 {
            return Err(ToolError::InvalidArguments(
                "the query is longer than 400 characters; search for fewer words".into(),
            ));
        }
        Ok(query)
    }
}

#[async_trait]
impl TypedTool for WebSearch {
    type Args = WebSearchArgs;
    const NAME: &'static str = WEB_SEARCH_TOOL;
    const RISK: Risk = Risk::Network;

    fn description(&self) -> &str {
        crate::texts::WEB_SEARCH.text()
    }
    fn timeout(&self) -> Option<Duration> {
        Some(SEARCH_TIMEOUT + Duration::from_secs(5))
    }
    async fn action(
        &self,
        args: WebSearchArgs,
        _ctx: &ToolContext,
    ) -> Result<Option<Action>, ToolError> {
        let query = args.query()?;
        let service = self.provider.name();
        Ok(Some(Action {
            detail: cut_chars(format!("search {service} for {query:?}"), DETAIL_MAX_CHARS),
            host: Some(self.provider.host()),
            ..Action::default()
        }))
    }
    async fn call(&self, args: WebSearchArgs, _ctx: &ToolContext) -> Result<String, ToolError> {
        let query = args.query()?;
        let limit = args
            .max_results
            .unwrap_or(self.max_results)
            .clamp(1, self.max_results);
        let mut results = self.provider.search(query, limit).await?;
        results.truncate(limit as usize);
        Ok(render(self.provider.name(), query, &results))
    }
}

/// The results as the model reads them, between the lines of `prompts/results/web_search_*.md`.
fn render(service: &str, query: &str, results: &[SearchResult]) -> String {
    let mut out = crate::texts::WEB_SEARCH_START.render(serde_json::json!({
        "count": results.len(),
        "service": service,
        "query": format!("{query:?}"),
    }));
    out.push('\n');
    for (i, r) in results.iter().enumerate() {
        out.push_str(&format!("{}. {}\n   {}\n", i + 1, r.title, r.url));
        if let Some(date) = &r.date {
            out.push_str(&format!("   {date}\n"));
        }
        if !r.snippet.is_empty() {
            out.push_str(&format!("   {}\n", r.snippet));
        }
    }
    out.push_str(&crate::texts::WEB_SEARCH_END.render(()));
    out
}

/// A result as a service gave it: tags and runs of white space gone, long text cut, and
/// nothing but http(s) URLs.
fn clean(title: &str, url: &str, snippet: &str, date: Option<&str>) -> Option<SearchResult> {
    let parsed = Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let text = |s: &str, max: usize| {
        let plain = html2text::config::plain_no_decorate()
            .string_from_read(s.as_bytes(), 10_000)
            .unwrap_or_else(|_| s.to_string());
        let words = plain.split_whitespace().collect::<Vec<_>>().join(" ");
        cut_chars(words, max)
    };
    Some(SearchResult {
        title: text(title, TITLE_CHARS),
        url: parsed.to_string(),
        snippet: text(snippet, SNIPPET_CHARS),
        date: date
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| cut_chars(d.to_string(), 40)),
    })
}

/// Sends `request` and parses the service's JSON answer, naming the service in every error.
async fn answer<T: serde::de::DeserializeOwned>(
    service: &str,
    request: reqwest::RequestBuilder,
) -> Result<T, ToolError> {
    let failed = |what: String| ToolError::Failed(format!("{service}: {what}"));
    let response = request
        .send()
        .await
        .map_err(|e| failed(format!("cannot reach the service: {e}")))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| failed(format!("cannot read the answer: {e}")))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        return Err(failed(format!("HTTP {status}: {}", text.trim())));
    }
    if body.len() > MAX_ANSWER_BYTES {
        return Err(failed(format!(
            "the answer is larger than {} KiB",
            MAX_ANSWER_BYTES / 1024
        )));
    }
    serde_json::from_slice(&body).map_err(|e| failed(format!("unexpected answer: {e}")))
}

fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_string()
}

/// A SearXNG instance: `GET /search?q=…&format=json` (JSON output must be switched on in the
/// instance's `settings.yml`).
#[derive(Debug)]
struct Searxng {
    base: Url,
    client: reqwest::Client,
}

#[derive(Deserialize)]
struct SearxngAnswer {
    #[serde(default)]
    results: Vec<SearxngResult>,
}

#[derive(Deserialize)]
struct SearxngResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    content: String,
    #[serde(default, rename = "publishedDate")]
    published_date: Option<String>,
}

#[async_trait]
impl SearchProvider for Searxng {
    fn name(&self) -> &'static str {
        "SearXNG"
    }
    fn host(&self) -> String {
        host_of(&self.base)
    }
    async fn search(&self, query: &str, _limit: u32) -> Result<Vec<SearchResult>, ToolError> {
        let endpoint = self
            .base
            .join("search")
            .map_err(|e| ToolError::Failed(format!("SearXNG: bad URL: {e}")))?;
        let request = self
            .client
            .get(endpoint)
            .query(&[("q", query), ("format", "json")]);
        let answer: SearxngAnswer = answer(self.name(), request).await?;
        Ok(answer
            .results
            .iter()
            .filter_map(|r| clean(&r.title, &r.url, &r.content, r.published_date.as_deref()))
            .collect())
    }
}

/// Brave Search's web search API: `GET /res/v1/web/search` with `X-Subscription-Token`.
#[derive(Debug)]
struct Brave {
    base: Url,
    key: String,
    client: reqwest::Client,
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<BraveResult>,
}

#[derive(Deserialize)]
struct BraveResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    page_age: Option<String>,
    #[serde(default)]
    age: Option<String>,
}

#[async_trait]
impl SearchProvider for Brave {
    fn name(&self) -> &'static str {
        "Brave Search"
    }
    fn host(&self) -> String {
        host_of(&self.base)
    }
    async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchResult>, ToolError> {
        let endpoint = self
            .base
            .join("res/v1/web/search")
            .map_err(|e| ToolError::Failed(format!("Brave Search: bad URL: {e}")))?;
        let count = limit.min(20).to_string();
        let request = self
            .client
            .get(endpoint)
            .header("Accept", "application/json")
            .header("X-Subscription-Token", &self.key)
            .query(&[("q", query), ("count", count.as_str())]);
        let answer: BraveAnswer = answer(self.name(), request).await?;
        Ok(answer
            .web
            .map(|w| w.results)
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                let date = r.page_age.as_deref().or(r.age.as_deref());
                clean(&r.title, &r.url, &r.description, date)
            })
            .collect())
    }
}

/// Tavily's search API: `POST /search` with a bearer key.
#[derive(Debug)]
struct Tavily {
    base: Url,
    key: String,
    client: reqwest::Client,
}

#[derive(Deserialize)]
struct TavilyAnswer {
    #[serde(default)]
    results: Vec<TavilyResult>,
}

#[derive(Deserialize)]
struct TavilyResult {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    published_date: Option<String>,
}

#[async_trait]
impl SearchProvider for Tavily {
    fn name(&self) -> &'static str {
        "Tavily"
    }
    fn host(&self) -> String {
        host_of(&self.base)
    }
    async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchResult>, ToolError> {
        let endpoint = self
            .base
            .join("search")
            .map_err(|e| ToolError::Failed(format!("Tavily: bad URL: {e}")))?;
        let request = self
            .client
            .post(endpoint)
            .bearer_auth(&self.key)
            .json(&serde_json::json!({ "query": query, "max_results": limit.min(20) }));
        let answer: TavilyAnswer = answer(self.name(), request).await?;
        Ok(answer
            .results
            .iter()
            .filter_map(|r| clean(&r.title, &r.url, &r.content, r.published_date.as_deref()))
            .collect())
    }
}

#[cfg(test)]
mod tests;
