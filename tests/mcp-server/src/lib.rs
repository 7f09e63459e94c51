//! A small MCP server for testing `echo-mcp`: well-behaved tools (`echo`, `add`,
//! `delete_everything`, `web_lookup`) and misbehaving ones (`fail`, `crash`, `hang`).
//!
//! The `mcp-test-server` binary serves it over stdio, or over streamable HTTP with
//! `--http ADDR`; [`serve_http_in_process`] serves it inside a test on a random loopback port.
#![deny(missing_docs)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio_util::sync::CancellationToken;

/// The path the HTTP endpoint is served under.
pub const MCP_PATH: &str = "/mcp";

/// The exit status of the process after the `crash` tool.
pub const CRASH_STATUS: i32 = 3;

/// What the `crash` tool does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashMode {
    /// Exit the whole process with [`CRASH_STATUS`] (the binary).
    ExitProcess,
    /// Refuse with an error result: the server shares its process with the test, which a
    /// crash would take down.
    Refuse,
}

/// Arguments of `echo`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    pub text: String,
}

/// Arguments of `add`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first number.
    pub a: f64,
    /// The second number.
    pub b: f64,
}

/// Arguments of `hang`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct HangArgs {
    /// A file to create when the call arrives, so a test can see that it reached the server.
    pub marker: Option<String>,
}

/// Arguments of `web_lookup`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct LookupArgs {
    /// What to look up.
    pub query: String,
}

/// The test server's tools.
#[derive(Clone, Debug)]
pub struct TestServer {
    crash: CrashMode,
    hang_on_list: bool,
    echo_description: Option<String>,
    tool_router: ToolRouter<Self>,
}

impl TestServer {
    /// A server whose `crash` tool behaves as `crash` says.
    pub fn new(crash: CrashMode) -> Self {
        Self {
            crash,
            hang_on_list: false,
            echo_description: None,
            tool_router: Self::tool_router(),
        }
    }

    /// The same server, never answering when asked for its tools (a server that hangs on
    /// start).
    pub fn hanging_on_list(mut self) -> Self {
        self.hang_on_list = true;
        self
    }

    /// The same server, describing its `echo` tool with `text` (a description that tries to
    /// steer the model, for the prompt-injection tests).
    pub fn describing_echo(mut self, text: String) -> Self {
        self.echo_description = Some(text);
        self
    }
}

#[tool_router]
impl TestServer {
    /// Sends its `text` argument back.
    #[tool(
        description = "Returns its text argument unchanged.",
        annotations(read_only_hint = true)
    )]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }

    /// Adds two numbers.
    #[tool(description = "Adds two numbers.")]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> String {
        (args.a + args.b).to_string()
    }

    /// Pretends to delete everything.
    #[tool(
        description = "Deletes everything (only pretends to).",
        annotations(destructive_hint = true)
    )]
    async fn delete_everything(&self) -> String {
        "pretend-deleted".to_string()
    }

    /// Pretends to look something up on the web.
    #[tool(
        description = "Looks a query up on the web (only pretends to).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        )
    )]
    async fn web_lookup(&self, Parameters(args): Parameters<LookupArgs>) -> String {
        format!("no results for {:?}", args.query)
    }

    /// Always answers with an error result.
    #[tool(description = "Always fails with an error result.")]
    async fn fail(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text("the fail tool failed, as asked")])
    }

    /// Exits the process at once.
    #[tool(description = "Exits the server process immediately with status 3.")]
    async fn crash(&self) -> CallToolResult {
        match self.crash {
            CrashMode::ExitProcess => std::process::exit(CRASH_STATUS),
            CrashMode::Refuse => CallToolResult::error(vec![ContentBlock::text(
                "crash refused: this server shares its process with the test",
            )]),
        }
    }

    /// Never answers (after creating its `marker` file, when given one).
    #[tool(description = "Never returns.")]
    async fn hang(&self, Parameters(args): Parameters<HangArgs>) -> String {
        if let Some(marker) = args.marker {
            // A test waits for this file; if it cannot be made, the test's deadline says so.
            let _ = std::fs::write(marker, "called");
        }
        std::future::pending::<String>().await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions("A test server for echo-mcp.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if self.hang_on_list {
            std::future::pending::<()>().await;
        }
        let mut tools = self.tool_router.list_all();
        if let Some(text) = &self.echo_description {
            for tool in tools.iter_mut().filter(|t| t.name == "echo") {
                tool.description = Some(text.clone().into());
            }
        }
        Ok(ListToolsResult::with_all_items(tools))
    }
}

/// A streamable-HTTP test server running on this process's Tokio runtime; dropping it
/// stops it.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Stops serving and waits until the listener is closed.
    pub async fn stop(mut self) {
        self.cancel.cancel();
        self.task.abort();
        let _ = (&mut self.task).await;
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.task.abort();
    }
}

/// Serves the test server over streamable HTTP on `addr` (port 0 picks a free one).
pub async fn serve_http(addr: SocketAddr, crash: CrashMode) -> std::io::Result<HttpServer> {
    let cancel = CancellationToken::new();
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(TestServer::new(crash)),
            Arc::default(),
            StreamableHttpServerConfig::default()
                .with_sse_keep_alive(None)
                // Clients wait this long before resuming a broken stream; short, so a test
                // sees a crashed server's requests fail soon.
                .with_sse_retry(Some(Duration::from_millis(100)))
                .with_cancellation_token(cancel.child_token()),
        );
    let router = axum::Router::new().nest_service(MCP_PATH, service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let stop = cancel.clone();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
    });
    Ok(HttpServer { addr, cancel, task })
}

/// Serves the test server over streamable HTTP on a random loopback port, in this process;
/// its `crash` tool refuses rather than take the test down.
pub async fn serve_http_in_process() -> std::io::Result<HttpServer> {
    serve_http(SocketAddr::from(([127, 0, 0, 1], 0)), CrashMode::Refuse).await
}
