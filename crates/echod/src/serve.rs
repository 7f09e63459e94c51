//! `echod serve`: the engine's `Api` over HTTP on loopback, for the browser UI and scripts.
//!
//! Every `/api` request needs the bearer token kept in `<data dir>/serve-token` (readable only
//! by the user). Requests whose `Host` is not this loopback address, or whose `Origin` is
//! another site, are refused before anything else — so a web page cannot reach the server
//! through DNS rebinding or a cross-site request. A turn is a `POST /api/turns` answered with
//! server-sent events (the same `EventEnvelope`s the CLI prints with `--events`); approval
//! questions in it are answered with `POST /api/approvals/{request_id}`.

use anyhow::Context;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use echo_agent::{
    Api, ApiError, ApprovalAnswer, ApprovalMode, EventHandler, ProviderUpdate, RuleRequest,
    TurnRequest,
};
use echo_core::EventEnvelope;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use utoipa::{OpenApi, ToSchema};

/// Name of the token file in the data directory.
const TOKEN_FILE: &str = "serve-token";

#[derive(Clone)]
struct AppState {
    api: Api,
    token: Arc<str>,
    port: u16,
}

/// Runs the server until Ctrl-C; with `ui`, also serves the built UI from that directory.
pub async fn run(api: Api, port: u16, ui: Option<PathBuf>) -> anyhow::Result<()> {
    if let Some(dir) = &ui {
        anyhow::ensure!(
            dir.join("index.html").is_file(),
            "{} has no index.html; build the UI first (npm run build)",
            dir.display()
        );
    }
    let (token, token_path) = load_or_create_token(&api.config().home)?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let addr = listener.local_addr()?;
    let state = AppState {
        api: api.clone(),
        token: token.into(),
        port: addr.port(),
    };
    let mut app = router(state.clone());
    if let Some(dir) = &ui {
        // Everything that is not /api is the single-page UI; the guard still checks Host
        // and Origin, but the page itself needs no token (it reads it from the fragment).
        let files = tower_http::services::ServeDir::new(dir)
            .fallback(tower_http::services::ServeFile::new(dir.join("index.html")));
        app = app.fallback_service(
            Router::new()
                .fallback_service(files)
                .layer(middleware::from_fn_with_state(state.clone(), guard)),
        );
    }
    // One write, and a launcher that stops reading after the first line does not stop us.
    let mut banner = format!(
        "echod serve listening on http://{addr}\ntoken: {}\nopenapi: http://{addr}/api/openapi.json\n",
        token_path.display()
    );
    if ui.is_some() {
        // The token travels in the fragment, which browsers never send to a server.
        banner.push_str(&format!("open: http://{addr}/#token={}\n", state.token));
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(banner.as_bytes()).and_then(|()| out.flush()) {
        tracing::warn!(error = %e, "cannot print the address");
    }
    drop(out);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("the HTTP server stopped")?;
    Ok(())
}

fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/openapi.json", get(openapi))
        .route("/api/sessions", get(sessions))
        .route(
            "/api/sessions/{name}",
            axum::routing::patch(rename_session).delete(delete_session),
        )
        .route("/api/sessions/{name}/messages", get(history))
        .route("/api/turns", post(turn))
        .route("/api/turns/{turn_id}/cancel", post(cancel_turn))
        .route("/api/approvals", get(approvals))
        .route("/api/approvals/pending", get(pending_approvals))
        .route("/api/approvals/{request_id}", post(answer_approval))
        .route("/api/rules", get(rules).post(add_rule))
        .route("/api/rules/{id}", delete(remove_rule))
        .route("/api/mcp", get(mcp))
        .route("/api/settings/provider", get(provider).put(update_provider))
        .route("/api/settings/provider/test", post(test_provider))
        .route("/api/settings/ollama", get(detect_ollama))
        .route("/api/settings/mcp", get(mcp_config).put(set_mcp_config))
        .route("/api/settings/bootstrap", get(bootstrap_files))
        .route(
            "/api/settings/bootstrap/{name}",
            axum::routing::put(save_bootstrap_file).delete(reset_bootstrap_file),
        )
        .route("/api/traces", get(traces))
        .route("/api/traces/{turn_id}", get(trace))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Refuses foreign `Host` and `Origin` headers, then checks the bearer token.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let local = |host: &str| {
        [
            format!("127.0.0.1:{}", state.port),
            format!("localhost:{}", state.port),
            format!("[::1]:{}", state.port),
        ]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
    };
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !local(host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "foreign_host",
            format!("Host {host:?} is not this server's loopback address"),
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let same = origin
            .strip_prefix("http://")
            .is_some_and(|rest| local(rest.trim_end_matches('/')));
        if !same {
            return refuse(
                StatusCode::FORBIDDEN,
                "foreign_origin",
                format!("requests from {origin:?} are not allowed"),
            );
        }
    }
    let api = request.uri().path().starts_with("/api/");
    if api && !authorized(headers, &state.token) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or wrong bearer token (see the serve-token file in the data directory)".into(),
        );
    }
    next.run(request).await
}

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("");
    // Compare without an early exit so timing says nothing about the token.
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The token, created (random, 256 bits, mode 0600) on first use.
fn load_or_create_token(home: &std::path::Path) -> anyhow::Result<(String, PathBuf)> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let path = home.join(TOKEN_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().len() >= 32 => {
            let mode = std::fs::metadata(&path)?.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .with_context(|| format!("cannot restrict {}", path.display()))?;
            }
            return Ok((text.trim().to_string(), path));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok((token, path))
}

/// An error body: `{"error": {"code", "message"}}`.
#[derive(Serialize, ToSchema)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
struct ErrorDetail {
    /// Machine-readable code.
    code: String,
    /// One line for people.
    message: String,
}

fn refuse(status: StatusCode, code: &str, message: String) -> Response {
    let body = ErrorBody {
        error: ErrorDetail {
            code: code.into(),
            message,
        },
    };
    (status, Json(body)).into_response()
}

struct Failure(ApiError);

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure(e)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status = match self.0.code() {
            "invalid_input" => StatusCode::BAD_REQUEST,
            "not_found" => StatusCode::NOT_FOUND,
            "keychain" => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        refuse(status, self.0.code(), self.0.to_string())
    }
}

type Answer<T> = Result<Json<T>, Failure>;

#[utoipa::path(get, path = "/api/sessions", responses((status = 200, description = "Sessions, most recent first", body = Object)))]
async fn sessions(State(s): State<AppState>) -> Answer<serde_json::Value> {
    Ok(Json(
        serde_json::to_value(s.api.sessions().await?).unwrap_or_default(),
    ))
}

#[utoipa::path(get, path = "/api/sessions/{name}/messages", params(("name" = String, Path, description = "Session name")), responses((status = 200, description = "The session's messages in order", body = Object), (status = 404, body = ErrorBody)))]
async fn history(State(s): State<AppState>, Path(name): Path<String>) -> Answer<serde_json::Value> {
    Ok(Json(
        serde_json::to_value(s.api.history(&name).await?).unwrap_or_default(),
    ))
}

/// A session's new name.
#[derive(Deserialize, ToSchema)]
struct RenameBody {
    /// The new name.
    name: String,
}

#[utoipa::path(patch, path = "/api/sessions/{name}", params(("name" = String, Path)), request_body = RenameBody, responses((status = 200, description = "The renamed session", body = Object), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn rename_session(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Json(body): Json<RenameBody>,
) -> Answer<serde_json::Value> {
    let session = s.api.rename_session(&name, &body.name).await?;
    Ok(Json(serde_json::to_value(session).unwrap_or_default()))
}

#[utoipa::path(delete, path = "/api/sessions/{name}", params(("name" = String, Path)), responses((status = 204, description = "Deleted"), (status = 400, description = "A turn of it is running", body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn delete_session(State(s): State<AppState>, Path(name): Path<String>) -> Response {
    match s.api.delete_session(&name).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => Failure(e).into_response(),
    }
}

/// A turn to run.
#[derive(Deserialize, ToSchema)]
struct TurnBody {
    /// Session name (created on first use).
    session: String,
    /// The user's message.
    input: String,
    /// Regenerate / edit and resend: id of the user message this turn replaces (with
    /// everything after it).
    replace_from: Option<String>,
}

#[utoipa::path(post, path = "/api/turns", request_body = TurnBody, responses((status = 200, description = "Server-sent events: one EventEnvelope (JSON) per event, ending with turn_finished", content_type = "text/event-stream"), (status = 400, body = ErrorBody)))]
async fn turn(State(s): State<AppState>, Json(body): Json<TurnBody>) -> Response {
    let request = TurnRequest {
        session: body.session,
        input: body.input,
        entry_point: "gateway".into(),
        approvals: ApprovalMode::Ask,
        replace_from: body.replace_from,
    };
    if let Err(e) = s.api.validate(&request).await {
        return Failure(e).into_response();
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<EventEnvelope>();
    let cancel = CancellationToken::new();
    let handler: EventHandler = Arc::new(move |envelope: EventEnvelope| {
        let _ = tx.send(envelope);
    });
    let api = s.api.clone();
    tokio::spawn(async move {
        // The client going away does not stop the turn: it finishes and is saved; a stop is
        // an explicit POST /api/turns/{id}/cancel.
        if let Err(e) = api.send(request, handler, cancel).await {
            tracing::warn!(error = %e, "gateway turn failed to start");
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        let envelope = rx.recv().await?;
        let event = Event::default()
            .id(envelope.seq.to_string())
            .data(serde_json::to_string(&envelope).unwrap_or_default());
        Some((Ok::<_, std::convert::Infallible>(event), rx))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

#[utoipa::path(post, path = "/api/turns/{turn_id}/cancel", params(("turn_id" = String, Path)), responses((status = 204, description = "Stopping"), (status = 404, body = ErrorBody)))]
async fn cancel_turn(State(s): State<AppState>, Path(turn_id): Path<String>) -> Response {
    match s.api.cancel_turn(&turn_id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => Failure(e).into_response(),
    }
}

/// The answer to an approval question.
#[derive(Deserialize, ToSchema)]
struct ApprovalBody {
    /// `allow_once`, `allow_session`, `allow_always` or `deny`.
    answer: String,
}

#[utoipa::path(post, path = "/api/approvals/{request_id}", params(("request_id" = String, Path)), request_body = ApprovalBody, responses((status = 204, description = "Answered"), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
async fn answer_approval(
    State(s): State<AppState>,
    Path(request_id): Path<String>,
    Json(body): Json<ApprovalBody>,
) -> Response {
    let answer = match body.answer.as_str() {
        "allow_once" => ApprovalAnswer::AllowOnce,
        "allow_session" => ApprovalAnswer::AllowSession,
        "allow_always" => ApprovalAnswer::AllowAlways,
        "deny" => ApprovalAnswer::Deny,
        other => {
            return Failure(ApiError::InvalidInput {
                what: "answer",
                message: format!(
                    "{other:?}; expected allow_once, allow_session, allow_always or deny"
                ),
            })
            .into_response();
        }
    };
    match s.api.answer_approval(&request_id, answer) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => Failure(e).into_response(),
    }
}

#[utoipa::path(get, path = "/api/approvals/pending", responses((status = 200, description = "Ids of questions waiting for an answer", body = Vec<String>)))]
async fn pending_approvals(State(s): State<AppState>) -> Json<Vec<String>> {
    Json(s.api.pending_approvals())
}

/// `?limit=N`.
#[derive(Deserialize)]
struct Limit {
    limit: Option<u32>,
}

#[utoipa::path(get, path = "/api/approvals", params(("limit" = Option<u32>, Query)), responses((status = 200, description = "The audit log, newest first", body = Object)))]
async fn approvals(State(s): State<AppState>, Query(q): Query<Limit>) -> Answer<serde_json::Value> {
    let list = s.api.approvals(q.limit.unwrap_or(100)).await?;
    Ok(Json(serde_json::to_value(list).unwrap_or_default()))
}

#[utoipa::path(get, path = "/api/rules", responses((status = 200, description = "Every approval rule", body = Object)))]
async fn rules(State(s): State<AppState>) -> Answer<serde_json::Value> {
    Ok(Json(
        serde_json::to_value(s.api.rules().await?).unwrap_or_default(),
    ))
}

/// A rule to add.
#[derive(Deserialize, ToSchema)]
struct RuleBody {
    /// Tool name or glob.
    tool: String,
    /// Command prefix, path glob, host or MCP server.
    pattern: Option<String>,
    /// `allow`, `ask` or `deny`.
    decision: String,
    /// `session` or `always` (default).
    scope: Option<String>,
    /// Session name, for session rules.
    session: Option<String>,
}

#[utoipa::path(post, path = "/api/rules", request_body = RuleBody, responses((status = 200, description = "The new rule", body = Object), (status = 400, body = ErrorBody)))]
async fn add_rule(
    State(s): State<AppState>,
    Json(body): Json<RuleBody>,
) -> Answer<serde_json::Value> {
    let request = RuleRequest {
        tool: body.tool,
        pattern: body.pattern,
        decision: body.decision,
        scope: body.scope,
        session: body.session,
    };
    let rule = s.api.add_rule_request(&request, "user").await?;
    Ok(Json(serde_json::to_value(rule).unwrap_or_default()))
}

#[utoipa::path(delete, path = "/api/rules/{id}", params(("id" = String, Path)), responses((status = 200, description = "The removed rule", body = Object), (status = 404, body = ErrorBody)))]
async fn remove_rule(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Answer<serde_json::Value> {
    Ok(Json(
        serde_json::to_value(s.api.remove_rule(&id).await?).unwrap_or_default(),
    ))
}

#[utoipa::path(get, path = "/api/mcp", responses((status = 200, description = "MCP servers and their state", body = Object)))]
async fn mcp(State(s): State<AppState>) -> Json<serde_json::Value> {
    let servers = s.api.mcp_servers(std::time::Duration::ZERO).await;
    Json(serde_json::to_value(servers).unwrap_or_default())
}

#[utoipa::path(get, path = "/api/settings/mcp", responses((status = 200, description = "The configured MCP servers ([[tools.mcp]])", body = Object)))]
async fn mcp_config(State(s): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::to_value(s.api.mcp_config()).unwrap_or_default())
}

#[utoipa::path(put, path = "/api/settings/mcp", request_body = Object, responses((status = 200, description = "Saved and applied; the new servers' states", body = Object), (status = 400, description = "An invalid list")))]
async fn set_mcp_config(
    State(s): State<AppState>,
    Json(body): Json<serde_json::Value>,
) -> Answer<serde_json::Value> {
    let servers = serde_json::from_value(body).map_err(|e| {
        Failure(ApiError::InvalidInput {
            what: "MCP servers",
            message: e.to_string(),
        })
    })?;
    let status = s.api.set_mcp_config(servers).await?;
    Ok(Json(serde_json::to_value(status).unwrap_or_default()))
}

#[utoipa::path(get, path = "/api/settings/provider", responses((status = 200, description = "The model provider in force (never the key)", body = Object)))]
async fn provider(State(s): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::to_value(s.api.provider().await).unwrap_or_default())
}

/// Reads a provider change, naming what is wrong with it.
fn provider_update(body: serde_json::Value) -> Result<ProviderUpdate, Failure> {
    serde_json::from_value(body).map_err(|e| {
        Failure(ApiError::InvalidInput {
            what: "provider settings",
            message: e.to_string(),
        })
    })
}

#[utoipa::path(put, path = "/api/settings/provider", request_body = Object, responses((status = 200, description = "Saved; the next turn uses it", body = Object), (status = 400, description = "Invalid settings or key")))]
async fn update_provider(
    State(s): State<AppState>,
    Json(body): Json<serde_json::Value>,
) -> Answer<serde_json::Value> {
    let view = s.api.update_provider(provider_update(body)?).await?;
    Ok(Json(serde_json::to_value(view).unwrap_or_default()))
}

#[utoipa::path(post, path = "/api/settings/provider/test", request_body = Object, responses((status = 200, description = "What one tiny request with these settings found", body = Object)))]
async fn test_provider(
    State(s): State<AppState>,
    Json(body): Json<serde_json::Value>,
) -> Answer<serde_json::Value> {
    let report = s.api.test_provider(provider_update(body)?).await?;
    Ok(Json(serde_json::to_value(report).unwrap_or_default()))
}

/// A bootstrap file's new text.
#[derive(Deserialize, ToSchema)]
struct BootstrapBody {
    /// The whole file.
    content: String,
}

#[utoipa::path(get, path = "/api/settings/bootstrap", responses((status = 200, description = "AGENTS.md, SOUL.md, USER.md and TOOLS.md: each file's text, or its default", body = Object)))]
async fn bootstrap_files(State(s): State<AppState>) -> Answer<serde_json::Value> {
    let files = s.api.bootstrap_files()?;
    Ok(Json(serde_json::to_value(files).unwrap_or_default()))
}

#[utoipa::path(put, path = "/api/settings/bootstrap/{name}", params(("name" = String, Path)), request_body = BootstrapBody, responses((status = 200, description = "Saved; the next turn uses it", body = Object), (status = 400, body = ErrorBody)))]
async fn save_bootstrap_file(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Json(body): Json<BootstrapBody>,
) -> Answer<serde_json::Value> {
    let file = s.api.save_bootstrap_file(&name, Some(&body.content))?;
    Ok(Json(serde_json::to_value(file).unwrap_or_default()))
}

#[utoipa::path(delete, path = "/api/settings/bootstrap/{name}", params(("name" = String, Path)), responses((status = 200, description = "The user's copy is removed; the default is back", body = Object), (status = 400, body = ErrorBody)))]
async fn reset_bootstrap_file(
    State(s): State<AppState>,
    Path(name): Path<String>,
) -> Answer<serde_json::Value> {
    let file = s.api.save_bootstrap_file(&name, None)?;
    Ok(Json(serde_json::to_value(file).unwrap_or_default()))
}

#[utoipa::path(get, path = "/api/settings/ollama", responses((status = 200, description = "A local Ollama server and its models, or null", body = Object)))]
async fn detect_ollama(State(s): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::to_value(s.api.detect_ollama().await).unwrap_or_default())
}

#[utoipa::path(get, path = "/api/traces", params(("limit" = Option<u32>, Query)), responses((status = 200, description = "Recent turns", body = Object)))]
async fn traces(State(s): State<AppState>, Query(q): Query<Limit>) -> Answer<serde_json::Value> {
    let list = s.api.traces(q.limit.unwrap_or(50)).await?;
    Ok(Json(serde_json::to_value(list).unwrap_or_default()))
}

#[utoipa::path(get, path = "/api/traces/{turn_id}", params(("turn_id" = String, Path)), responses((status = 200, description = "One turn's spans", body = Object), (status = 404, body = ErrorBody)))]
async fn trace(
    State(s): State<AppState>,
    Path(turn_id): Path<String>,
) -> Answer<serde_json::Value> {
    Ok(Json(
        serde_json::to_value(s.api.trace(&turn_id).await?).unwrap_or_default(),
    ))
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Echo Desk gateway",
        description = "The engine's Api over loopback HTTP. Every request needs `Authorization: Bearer <token>`."
    ),
    paths(
        sessions,
        rename_session,
        delete_session,
        history,
        turn,
        cancel_turn,
        answer_approval,
        pending_approvals,
        approvals,
        rules,
        add_rule,
        remove_rule,
        mcp_config,
        set_mcp_config,
        provider,
        update_provider,
        test_provider,
        detect_ollama,
        bootstrap_files,
        save_bootstrap_file,
        reset_bootstrap_file,
        mcp,
        traces,
        trace
    ),
    components(schemas(
        ErrorBody,
        ErrorDetail,
        RenameBody,
        TurnBody,
        ApprovalBody,
        RuleBody,
        BootstrapBody
    ))
)]
struct ApiDoc;

async fn openapi() -> Response {
    match ApiDoc::openapi().to_json() {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "openapi", e.to_string()),
    }
}
