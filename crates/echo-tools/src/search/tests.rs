//! The `web_search` tool against a scripted search server on loopback speaking SearXNG,
//! Brave and Tavily.

use super::*;
use crate::ToolRegistry;
use crate::test_support::ctx;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use echo_core::ToolCall;
use std::collections::HashMap;
use std::sync::Mutex;

/// What the scripted search server was asked: path, query parameters, headers, body.
#[derive(Clone, Debug, Default)]
struct Asked {
    path: String,
    query: HashMap<String, String>,
    headers: HashMap<String, String>,
    body: String,
}

#[derive(Clone, Default)]
struct Server {
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl Server {
    fn record(&self, path: &str, query: HashMap<String, String>, headers: &HeaderMap, body: &str) {
        let headers = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
            .collect();
        self.asked.lock().expect("lock").push(Asked {
            path: path.into(),
            query,
            headers,
            body: body.into(),
        });
    }

    fn asked(&self) -> Vec<Asked> {
        self.asked.lock().expect("lock").clone()
    }
}

/// A search server on loopback speaking the three services' protocols, with canned answers;
/// `q=fail` answers HTTP 500 and `q=garbled` an answer that is not JSON.
async fn server() -> (String, Server) {
    async fn canned(q: &str, ok: serde_json::Value) -> (StatusCode, String) {
        match q {
            "fail" => (StatusCode::INTERNAL_SERVER_ERROR, "engine exploded".into()),
            "garbled" => (StatusCode::OK, "<html>not json</html>".into()),
            _ => (StatusCode::OK, ok.to_string()),
        }
    }
    let state = Server::default();
    let app = Router::new()
        .route(
            "/search",
            get(
                |State(s): State<Server>, Query(q): Query<HashMap<String, String>>, h: HeaderMap| async move {
                    s.record("/search", q.clone(), &h, "");
                    canned(
                        q.get("q").map_or("", String::as_str),
                        serde_json::json!({ "results": [
                            { "title": "Kyoto <b>with kids</b>", "url": "https://example.com/kyoto",
                              "content": "Six   days, two\nchildren &amp; a budget.",
                              "publishedDate": "2026-03-01" },
                            { "title": "A feed", "url": "javascript:alert(1)", "content": "x" },
                            { "title": "Trains", "url": "https://example.org/trains", "content": "JR pass" },
                            { "title": "Third", "url": "https://example.net/3", "content": "more" }
                        ]}),
                    )
                    .await
                },
            )
            .post(
                |State(s): State<Server>, h: HeaderMap, body: String| async move {
                    s.record("/search", HashMap::new(), &h, &body);
                    let q: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                    canned(
                        q["query"].as_str().unwrap_or_default(),
                        serde_json::json!({ "results": [
                            { "title": "Notes apps compared", "url": "https://example.com/notes",
                              "content": "Privacy and sync.", "published_date": null }
                        ]}),
                    )
                    .await
                },
            ),
        )
        .route(
            "/res/v1/web/search",
            get(
                |State(s): State<Server>, Query(q): Query<HashMap<String, String>>, h: HeaderMap| async move {
                    s.record("/res/v1/web/search", q.clone(), &h, "");
                    canned(
                        q.get("q").map_or("", String::as_str),
                        serde_json::json!({ "web": { "results": [
                            { "title": "Brave result", "url": "https://example.com/b",
                              "description": "the <strong>answer</strong>", "page_age": "2025-11-02T00:00:00" }
                        ]}}),
                    )
                    .await
                },
            ),
        )
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/"), state)
}

fn config(kind: SearchKind, url: &str) -> SearchConfig {
    SearchConfig {
        kind,
        url: Some(url.into()),
        max_results: 3,
        ..SearchConfig::default()
    }
}

async fn run(tool: WebSearch, args: &str) -> crate::ToolOutcome {
    let registry = ToolRegistry::new();
    registry.register(Arc::new(tool)).expect("register");
    let call = ToolCall {
        id: "c1".into(),
        name: "web_search".into(),
        arguments: args.into(),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    registry
        .execute(&call, &ctx(dir.path()), Duration::from_secs(30))
        .await
}

fn tool(kind: SearchKind, url: &str, key: Option<&str>) -> WebSearch {
    web_search(&config(kind, url), key.map(str::to_string))
        .expect("configured")
        .expect("a tool")
}

#[tokio::test]
async fn searxng_results_come_back_numbered_cleaned_and_framed_as_data() {
    let (url, server) = server().await;
    let out = run(
        tool(SearchKind::Searxng, &url, None),
        r#"{"query": "kyoto with kids"}"#,
    )
    .await;
    assert!(out.ok, "{}", out.content);
    let text = out.content;
    assert!(text.starts_with("[web_search: 3 results from SearXNG for \"kyoto with kids\""));
    assert!(text.contains("1. Kyoto with kids\n   https://example.com/kyoto\n   2026-03-01\n   Six days, two children & a budget.\n"), "{text}");
    assert!(
        text.contains("2. Trains\n   https://example.org/trains\n"),
        "{text}"
    );
    assert!(
        !text.contains("javascript:"),
        "only http(s) results: {text}"
    );
    assert!(
        text.trim_end()
            .ends_with("read a page with web_fetch before relying on it]")
    );
    let asked = server.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].query.get("q").map(String::as_str),
        Some("kyoto with kids")
    );
    assert_eq!(
        asked[0].query.get("format").map(String::as_str),
        Some("json")
    );
}

#[tokio::test]
async fn brave_gets_its_key_and_count_and_its_markup_is_removed() {
    let (url, server) = server().await;
    let out = run(
        tool(SearchKind::Brave, &url, Some("brave-key")),
        r#"{"query": "answer", "max_results": 2}"#,
    )
    .await;
    assert!(out.ok, "{}", out.content);
    assert!(
        out.content.contains(
            "1. Brave result\n   https://example.com/b\n   2025-11-02T00:00:00\n   the answer\n"
        ),
        "{}",
        out.content
    );
    let asked = &server.asked()[0];
    assert_eq!(asked.path, "/res/v1/web/search");
    assert_eq!(
        asked
            .headers
            .get("x-subscription-token")
            .map(String::as_str),
        Some("brave-key")
    );
    assert_eq!(asked.query.get("count").map(String::as_str), Some("2"));
}

#[tokio::test]
async fn tavily_gets_a_bearer_key_and_a_json_query() {
    let (url, server) = server().await;
    let out = run(
        tool(SearchKind::Tavily, &url, Some("tvly-key")),
        r#"{"query": "notes apps", "max_results": 50}"#,
    )
    .await;
    assert!(out.ok, "{}", out.content);
    assert!(
        out.content.contains(
            "1. Notes apps compared\n   https://example.com/notes\n   Privacy and sync.\n"
        ),
        "{}",
        out.content
    );
    let asked = &server.asked()[0];
    assert_eq!(
        asked.headers.get("authorization").map(String::as_str),
        Some("Bearer tvly-key")
    );
    let body: serde_json::Value = serde_json::from_str(&asked.body).expect("json body");
    assert_eq!(body["query"], "notes apps");
    // More than the configured most is asked as the most.
    assert_eq!(body["max_results"], 3);
}

#[tokio::test]
async fn a_failing_or_garbled_service_is_a_failed_call_naming_it() {
    let (url, _server) = server().await;
    let out = run(
        tool(SearchKind::Searxng, &url, None),
        r#"{"query": "fail"}"#,
    )
    .await;
    assert!(!out.ok);
    assert!(
        out.content.contains("SearXNG: HTTP 500") && out.content.contains("engine exploded"),
        "{}",
        out.content
    );
    let out = run(
        tool(SearchKind::Searxng, &url, None),
        r#"{"query": "garbled"}"#,
    )
    .await;
    assert!(!out.ok);
    assert!(
        out.content.contains("SearXNG: unexpected answer"),
        "{}",
        out.content
    );
    // Nothing listens on port 9 of loopback.
    let out = run(
        tool(SearchKind::Searxng, "http://127.0.0.1:9/", None),
        r#"{"query": "x"}"#,
    )
    .await;
    assert!(!out.ok);
    assert!(
        out.content.contains("SearXNG: cannot reach the service"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn the_action_names_the_service_host_and_query_and_an_empty_query_is_refused() {
    let registry = ToolRegistry::new();
    registry
        .register(Arc::new(tool(
            SearchKind::Searxng,
            "http://search.example:8080/",
            None,
        )))
        .expect("register");
    let dir = tempfile::tempdir().expect("tempdir");
    let call = |args: &str| ToolCall {
        id: "c1".into(),
        name: "web_search".into(),
        arguments: args.into(),
    };
    let prepared = registry
        .prepare(&call(r#"{"query": "kyoto"}"#), &ctx(dir.path()))
        .await
        .expect("prepared");
    assert_eq!(prepared.action.host.as_deref(), Some("search.example"));
    assert_eq!(prepared.action.detail, "search SearXNG for \"kyoto\"");
    let Err(refused) = registry
        .prepare(&call(r#"{"query": "  "}"#), &ctx(dir.path()))
        .await
    else {
        panic!("an empty query is refused");
    };
    assert!(
        refused.content.contains("the query is empty"),
        "{}",
        refused.content
    );
}

#[test]
fn no_service_offers_no_tool_and_a_keyed_service_without_a_key_says_what_to_set() {
    let none = SearchConfig::default();
    assert!(web_search(&none, None).expect("fine").is_none());
    for kind in [SearchKind::Brave, SearchKind::Tavily] {
        let e = web_search(&config(kind, "http://127.0.0.1:1/"), None).expect_err("no key");
        assert!(e.contains("ECHO_SEARCH_API_KEY"), "{e}");
    }
}

#[test]
fn endpoints_join_under_a_base_with_or_without_its_slash() {
    for raw in ["http://h:8888/searx", "http://h:8888/searx/"] {
        let base = base_url(raw).expect("a URL");
        assert_eq!(
            base.join("search").expect("join").as_str(),
            "http://h:8888/searx/search"
        );
    }
    assert_eq!(
        base_url("https://api.tavily.com")
            .and_then(|b| b.join("search").map_err(|e| e.to_string()))
            .expect("join")
            .as_str(),
        "https://api.tavily.com/search"
    );
    assert!(base_url("not a url").is_err());
}
