//! The mock model server's HTTP side: the routes of docs/mock-model.md, the shared state
//! (the script being played and the requests received), and the model-request flow.

mod answer;
mod anthropic;
mod openai;
mod protocol;
mod script;
mod wire;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use answer::Answer;
use protocol::{ModelRequest, Protocol};
pub use script::Script;
use script::{ScriptRun, Step};
use wire::Ending;

/// Model requests may carry long conversations; this is far above what tests send.
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// The state every handler shares; cheap to clone.
#[derive(Clone)]
struct AppState(Arc<Shared>);

struct Shared {
    run: Mutex<ScriptRun>,
    requests: Mutex<Vec<Value>>,
    next_id: AtomicU64,
}

/// Locks a mutex, carrying on after a panic elsewhere: every update here is one step.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Seconds since the Unix epoch, for the `created` fields.
fn unix_time() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The whole server, playing `script`.
pub fn router(script: Script) -> Router {
    let state = AppState(Arc::new(Shared {
        run: Mutex::new(ScriptRun::new(script)),
        requests: Mutex::new(Vec::new()),
        next_id: AtomicU64::new(1),
    }));
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/messages", post(messages))
        .route("/v1/models", get(models))
        .route("/api/tags", get(ollama_tags))
        .route("/_mock/requests", get(requests))
        .route("/_mock/script", post(set_script))
        .route("/_mock/health", get(health))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

async fn chat_completions(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    model_request(&state, Protocol::OpenAi, &headers, &body).await
}

async fn messages(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    model_request(&state, Protocol::Anthropic, &headers, &body).await
}

/// Ollama's native model list, so a client can detect "an Ollama server" here.
async fn ollama_tags(State(state): State<AppState>) -> Json<Value> {
    let models = lock(&state.0.run).script().models();
    let list: Vec<Value> = models
        .iter()
        .map(|name| json!({"name": name, "model": name}))
        .collect();
    Json(json!({"models": list}))
}

/// The key a request carries: `Authorization: Bearer KEY` (OpenAI) or `x-api-key` (Anthropic).
fn request_key(headers: &HeaderMap) -> Option<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("x-api-key").map(String::from).or_else(|| {
        header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(String::from)
    })
}

async fn models(State(state): State<AppState>) -> Json<Value> {
    let mut models = lock(&state.0.run).script().models();
    if models.is_empty() {
        models.push("mock".to_owned());
    }
    let data: Vec<Value> = models
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "mock-model"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

async fn requests(State(state): State<AppState>) -> Json<Value> {
    Json(Value::Array(lock(&state.0.requests).clone()))
}

async fn set_script(State(state): State<AppState>, body: Bytes) -> Response {
    let script = std::str::from_utf8(&body)
        .map_err(|e| e.to_string())
        .and_then(Script::from_json_str);
    match script {
        Ok(script) => {
            *lock(&state.0.run) = ScriptRun::new(script);
            Json(json!({"ok": true})).into_response()
        }
        Err(message) => plain_error(
            StatusCode::BAD_REQUEST,
            &format!("invalid script: {message}"),
        ),
    }
}

async fn health() -> &'static str {
    "ok"
}

async fn not_found(method: Method, uri: Uri) -> Response {
    plain_error(
        StatusCode::NOT_FOUND,
        &format!("mock-model has no route {method} {uri}"),
    )
}

/// `{"error": {"message": ...}}` with `status`, for the non-model routes.
fn plain_error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message}}))).into_response()
}

/// A model request from arrival to reply: record it, check it, take a step, answer.
async fn model_request(
    state: &AppState,
    protocol: Protocol,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let parsed = serde_json::from_slice::<Value>(body);
    let recorded = match &parsed {
        Ok(value) => value.clone(),
        Err(_) => Value::String(String::from_utf8_lossy(body).into_owned()),
    };
    let key = request_key(headers);
    lock(&state.0.requests)
        .push(json!({"path": protocol.path(), "body": recorded, "api_key": key}));
    let wanted = lock(&state.0.run).script().api_key.clone();
    if let Some(wanted) = wanted
        && key.as_deref() != Some(wanted.as_str())
    {
        return protocol.error_response(StatusCode::UNAUTHORIZED, "invalid API key", None);
    }

    let request = parsed
        .map_err(|e| format!("invalid JSON body: {e}"))
        .and_then(|value| protocol.parse_request(&value));
    let request = match request {
        Ok(request) => request,
        Err(message) => return protocol.error_response(StatusCode::BAD_REQUEST, &message, None),
    };
    let step = lock(&state.0.run).take(&request.model, &request.tools);
    match step {
        Some(step) => play(state, protocol, &request, &step).await,
        None => protocol.error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "mock script exhausted",
            None,
        ),
    }
}

/// Answers `request` as `step` says: wait, hang, fail, or send the answer.
async fn play(
    state: &AppState,
    protocol: Protocol,
    request: &ModelRequest,
    step: &Step,
) -> Response {
    if let Some(ms) = step.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if step.hang {
        return std::future::pending().await;
    }
    if let Some(Ok(bytes)) = step.raw_bytes() {
        // The script check only lets valid status codes and hex through.
        let status = StatusCode::from_u16(step.status.unwrap_or(200)).unwrap_or(StatusCode::OK);
        let content_type = step
            .raw_content_type
            .clone()
            .unwrap_or_else(|| "text/plain".to_owned());
        let repeat = step.raw_repeat.unwrap_or(1);
        let body = Bytes::from(bytes);
        let stream = futures::stream::iter(
            std::iter::repeat_n(body, repeat).map(Ok::<Bytes, std::convert::Infallible>),
        );
        return Response::builder()
            .status(status)
            .header(axum::http::header::CONTENT_TYPE, content_type)
            .body(axum::body::Body::from_stream(stream))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response());
    }
    if let Some(code) = step.status {
        // The script check only lets valid status codes through.
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let message = step
            .error_message
            .clone()
            .unwrap_or_else(|| format!("mock error {code}"));
        return protocol.error_response(status, &message, step.retry_after);
    }
    let answer = Answer::new(step, request);
    let id = format!(
        "{}{}",
        protocol.id_prefix(),
        state.0.next_id.fetch_add(1, Ordering::Relaxed)
    );
    let ending = Ending::of(step);
    if request.stream {
        let delay = Duration::from_millis(step.chunk_delay_ms.unwrap_or(0));
        wire::event_stream(protocol.events(request, &answer, &id), delay, ending)
    } else {
        wire::json(&protocol.body(request, &answer, &id), ending)
    }
}
