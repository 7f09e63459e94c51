//! One MCP tool as an echo [`Tool`]: name, schema and risk read off the server's listing,
//! calls sent over the server's current connection, results turned into text.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use echo_tools::{Action, Risk, Tool, ToolContext, ToolError};
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, ResourceContents,
    ToolAnnotations,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::{Value, json};

use crate::manager::Shared;

/// Separates the server name from the tool name in a registered name.
pub(crate) const SEPARATOR: &str = "__";

/// An MCP server's tool in the registry.
pub(crate) struct McpTool {
    /// `{server}__{tool}`.
    name: String,
    /// The tool's name on the server.
    remote: String,
    description: String,
    parameters: Value,
    risk: Risk,
    server: Arc<Shared>,
}

impl McpTool {
    /// Wraps `tool` as listed by `server`.
    pub(crate) fn new(server: Arc<Shared>, tool: &rmcp::model::Tool) -> Self {
        let remote = tool.name.to_string();
        let description = tool
            .description
            .as_deref()
            .map(str::to_string)
            .or_else(|| tool.title.clone())
            .unwrap_or_else(|| format!("{remote} (from MCP server {})", server.name));
        let description = bounded(description, &server.name, &remote);
        Self {
            name: local_name(&server.name, &remote),
            remote,
            description,
            parameters: clean_schema(&tool.input_schema),
            risk: risk_of(tool.annotations.as_ref()),
            server,
        }
    }

    /// The same tool accepting any arguments object, for a schema that does not compile (the
    /// server still checks the arguments).
    pub(crate) fn with_permissive_schema(mut self) -> Self {
        self.parameters = json!({"type": "object", "properties": {}});
        self
    }
}

/// Longest tool description offered to the model, in characters: it goes into every request
/// that offers the tool, and a server is free to send a megabyte.
const DESCRIPTION_LIMIT: usize = 4096;

/// `description`, cut to [`DESCRIPTION_LIMIT`] characters (ending in `…`) when longer.
fn bounded(description: String, server: &str, remote: &str) -> String {
    if description.chars().nth(DESCRIPTION_LIMIT).is_none() {
        return description;
    }
    // Room for the `…`.
    let cut = description
        .char_indices()
        .nth(DESCRIPTION_LIMIT - 1)
        .map_or(description.len(), |(at, _)| at);
    tracing::warn!(
        server,
        tool = remote,
        chars = description.chars().count(),
        "tool description cut to {DESCRIPTION_LIMIT} characters"
    );
    format!("{}…", &description[..cut])
}

/// Longest tool name every provider accepts (OpenAI's limit, the tightest).
const NAME_LIMIT: usize = 64;

/// `{server}__{tool}`, with characters providers reject in tool names replaced by `_`; a
/// name longer than providers accept is cut, ending in a hash of the whole remote name so two
/// long names stay apart (and the same tool keeps its name from one start to the next).
pub(crate) fn local_name(server: &str, remote: &str) -> String {
    let tool: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{server}{SEPARATOR}{tool}");
    if name.len() <= NAME_LIMIT {
        return name;
    }
    let hash = blake3::hash(remote.as_bytes()).to_hex();
    // ASCII by now: any byte is a character boundary.
    format!("{}_{}", &name[..NAME_LIMIT - 9], &hash[..8])
}

/// The risk the server's hints imply. Hints come from the server and are trusted only as far
/// as they ask for caution: a tool without hints is taken to act (`Exec`), and a tool that
/// says it is both read-only and destructive is taken as destructive.
pub(crate) fn risk_of(annotations: Option<&ToolAnnotations>) -> Risk {
    let Some(hints) = annotations else {
        return Risk::Exec;
    };
    let set = |hint: Option<bool>| hint == Some(true);
    if set(hints.destructive_hint) {
        Risk::Dangerous
    } else if set(hints.read_only_hint) {
        Risk::ReadOnly
    } else if set(hints.open_world_hint) {
        Risk::Network
    } else {
        Risk::Exec
    }
}

/// The input schema in the plain form the registry compiles and providers accept: no
/// `$schema`, `type: object` when absent, and `properties` on an object schema.
pub(crate) fn clean_schema(schema: &JsonObject) -> Value {
    let mut map = schema.clone();
    map.remove("$schema");
    let kind = map
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    if kind == "object" {
        map.entry("properties").or_insert_with(|| json!({}));
    }
    Value::Object(map)
}

/// The message for a call that cannot reach its server.
pub(crate) fn unavailable(server: &str, reason: &str) -> ToolError {
    ToolError::Failed(format!(
        "MCP server {server} is unavailable: {reason}; restarting"
    ))
}

/// The text of a finished call: text blocks as they are, other content summarised, joined by
/// newlines; an error result becomes [`ToolError::Failed`] with the server's text.
pub(crate) fn render(result: &CallToolResult) -> Result<String, ToolError> {
    let mut parts: Vec<String> = result.content.iter().map(describe).collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        let text = if text.trim().is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text
        };
        return Err(ToolError::Failed(text));
    }
    Ok(text)
}

/// One content block as text.
fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!(
                "[image {}, {} bytes]",
                image.mime_type,
                decoded_len(&image.data)
            )
        }
        ContentBlock::Audio(audio) => {
            format!(
                "[audio {}, {} bytes]",
                audio.mime_type,
                decoded_len(&audio.data)
            )
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}, {}, {} bytes]",
                mime_type.as_deref().unwrap_or("binary"),
                decoded_len(blob)
            ),
            #[allow(unreachable_patterns)]
            _ => "[resource]".to_string(),
        },
        ContentBlock::ResourceLink(link) => format!("[resource link {}]", link.uri),
        #[allow(unreachable_patterns)]
        _ => "[content of an unknown kind]".to_string(),
    }
}

/// Bytes that base64 `data` decodes to.
fn decoded_len(data: &str) -> usize {
    let digits = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    digits * 3 / 4
}

/// An error and its causes as one line, each cause once (transport errors repeat their
/// cause in their own message, and rmcp's HTTP client error hides its cause from `source`).
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(current) = next {
        let part = current.to_string();
        if !parts.iter().any(|p| p.contains(&part)) {
            parts.push(part);
        }
        next = match current.downcast_ref::<StreamableHttpError<reqwest_mcp::Error>>() {
            Some(StreamableHttpError::Client(inner)) => Some(inner),
            _ => current.source(),
        };
    }
    parts.join(": ")
}

/// A request's error as one line without the transport's type names.
pub(crate) fn service_error_text(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportSend(e) => error_chain(e.error.as_ref()),
        ServiceError::McpError(e) => e.message.to_string(),
        other => error_chain(other),
    }
}

/// How a failed request reflects on the server.
enum Failure {
    /// The server answered with an error; it is still healthy.
    Refused(String),
    /// The connection is broken; the server must be restarted.
    Broken(String),
}

fn classify(error: ServiceError) -> Failure {
    match error {
        ServiceError::McpError(e) => Failure::Refused(e.message.to_string()),
        ServiceError::TransportClosed => Failure::Broken("the connection closed".into()),
        ServiceError::TransportSend(_) => {
            Failure::Broken(format!("sending failed: {}", service_error_text(&error)))
        }
        ServiceError::Timeout { timeout } => {
            Failure::Broken(format!("no answer within {:.1}s", timeout.as_secs_f64()))
        }
        other => Failure::Refused(other.to_string()),
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn risk(&self) -> Risk {
        self.risk
    }

    /// A little over the call limit, so the call's own limit (which restarts a hung server)
    /// fires first.
    fn timeout(&self) -> Option<Duration> {
        Some(self.server.options.call_timeout + Duration::from_secs(1))
    }

    async fn action(&self, args: &Value, _ctx: &ToolContext) -> Result<Action, ToolError> {
        let pretty = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
        Ok(Action {
            detail: format!("{} › {}\n{pretty}", self.server.name, self.remote),
            server: Some(self.server.name.clone()),
            ..Action::default()
        })
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let server = &self.server.name;
        let conn = self.server.connection()?;
        let mut params = CallToolRequestParams::new(self.remote.clone());
        match args {
            Value::Object(map) => params = params.with_arguments(map),
            Value::Null => {}
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "expected a JSON object, got {other}"
                )));
            }
        }
        let limit = self.server.options.call_timeout;
        let outcome = tokio::select! {
            biased;
            () = conn.down() => return Err(conn.unavailable(server)),
            r = tokio::time::timeout(limit, conn.peer.call_tool(params)) => r,
        };
        match outcome {
            Ok(Ok(result)) => render(&result),
            Ok(Err(error)) => match classify(error) {
                Failure::Refused(message) => Err(ToolError::Failed(format!(
                    "MCP server {server} could not run {}: {message}",
                    self.remote
                ))),
                Failure::Broken(reason) => {
                    tracing::warn!(server = %server, tool = %self.remote, %reason, "MCP connection broken");
                    conn.fail(reason);
                    Err(conn.unavailable(server))
                }
            },
            Err(_elapsed) => {
                let reason = format!(
                    "{} did not answer within {:.1}s",
                    self.remote,
                    limit.as_secs_f64()
                );
                tracing::warn!(server = %server, tool = %self.remote, "MCP call timed out");
                conn.fail(reason);
                Err(conn.unavailable(server))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        open: Option<bool>,
    ) -> ToolAnnotations {
        let mut a = ToolAnnotations::default();
        a.read_only_hint = read_only;
        a.destructive_hint = destructive;
        a.open_world_hint = open;
        a
    }

    #[test]
    fn risks_follow_the_hints_cautiously() {
        let check = |a: Option<ToolAnnotations>, expect: Risk| {
            assert_eq!(risk_of(a.as_ref()), expect, "{a:?}");
        };
        check(None, Risk::Exec);
        check(Some(hints(None, None, None)), Risk::Exec);
        check(Some(hints(Some(true), None, None)), Risk::ReadOnly);
        check(Some(hints(Some(true), None, Some(true))), Risk::ReadOnly);
        check(Some(hints(Some(false), Some(true), None)), Risk::Dangerous);
        check(Some(hints(Some(true), Some(true), None)), Risk::Dangerous);
        check(
            Some(hints(Some(false), Some(false), Some(true))),
            Risk::Network,
        );
        check(
            Some(hints(Some(false), Some(false), Some(false))),
            Risk::Exec,
        );
    }

    #[test]
    fn schemas_are_made_plain() {
        let check = |input: Value, expect: Value| {
            let Value::Object(map) = input else {
                panic!("not an object")
            };
            assert_eq!(clean_schema(&map), expect);
        };
        check(
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}}),
        );
        check(json!({}), json!({"type": "object", "properties": {}}));
        check(
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                   "properties": {"a": {"type": "number"}}, "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}),
        );
    }

    #[test]
    fn long_descriptions_are_cut() {
        let short = "Lists files.".to_string();
        assert_eq!(bounded(short.clone(), "s", "t"), short);
        let exact = "é".repeat(DESCRIPTION_LIMIT);
        assert_eq!(bounded(exact.clone(), "s", "t"), exact);
        let long = bounded("é".repeat(1_000_000), "s", "t");
        assert_eq!(long.chars().count(), DESCRIPTION_LIMIT);
        assert!(long.ends_with("é…"));
    }

    #[test]
    fn names_are_namespaced_and_safe() {
        assert_eq!(local_name("git", "log"), "git__log");
        assert_eq!(local_name("git", "repo.log/all"), "git__repo_log_all");
        let (a, b) = (
            local_name("git", &"x".repeat(70)),
            local_name("git", &"x".repeat(71)),
        );
        assert_eq!((a.len(), b.len()), (NAME_LIMIT, NAME_LIMIT));
        assert_ne!(a, b, "two long names stay apart");
        assert_eq!(a, local_name("git", &"x".repeat(70)), "and stay the same");
        assert!(a.starts_with("git__xxx"), "{a}");
    }

    #[test]
    fn results_become_text() {
        let ok = |content: Vec<ContentBlock>| render(&CallToolResult::success(content));
        assert_eq!(
            ok(vec![ContentBlock::text("a"), ContentBlock::text("b")]).ok(),
            Some("a\nb".into())
        );
        assert_eq!(
            ok(vec![ContentBlock::image("AAAAAA==", "image/png")]).ok(),
            Some("[image image/png, 4 bytes]".into())
        );
        assert_eq!(
            ok(vec![ContentBlock::embedded_text("file:///x", "hello")]).ok(),
            Some("[resource file:///x]\nhello".into())
        );
        let err = render(&CallToolResult::error(vec![ContentBlock::text("nope")]));
        assert!(matches!(err, Err(ToolError::Failed(m)) if m == "nope"));
        let err = render(&CallToolResult::error(vec![]));
        assert!(matches!(err, Err(ToolError::Failed(m)) if m.contains("without a message")));
    }
}
