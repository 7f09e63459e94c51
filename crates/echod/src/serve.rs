//! `echod serve`: the engine's `Api` over HTTP on loopback, for the browser UI and scripts;
//! beyond loopback (`--listen`) over TLS only (`tls.rs`), so a token never crosses a network
//! in clear.
//!
//! Every `/api` request needs a bearer token (`access.rs`): the one kept in
//! `<data dir>/serve-token` (readable only by the user, for scripts), the one a browser page
//! gets by pairing, or a paired device's own. The address printed for the browser carries a
//! one-time pairing code (`#pair=…`), never a token: a browser keeps the addresses it opens
//! on disk (and may sync them), and a spent code opens nothing. The page trades the code for
//! a token that dies with this process (`POST /api/pair`), and each pairing prints a fresh
//! address for the next page; a device trades a code from `echod devices pair` at the same
//! route for a token that lasts until it is revoked.
//!
//! Requests whose `Host` is not this server's address (loopback, the address it listens on,
//! the names given with `--host`), or whose `Origin` is another site, are refused before
//! anything else — so a web page cannot reach the server through DNS
//! rebinding or a cross-site request. A turn is a `POST /api/turns` answered with
//! server-sent events (the same `EventEnvelope`s the CLI prints with `--events`); approval
//! questions in it are answered with `POST /api/approvals/{request_id}`.

use crate::access::{Access, Caller, Paired, Refusal};
use crate::listen::Peer;
use crate::tls::TlsSource;
use anyhow::Context;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, get, on, post};
use axum::{Extension, Json, Router};
use echo_agent::wire::{
    EntryPoint, ErrorBody, ErrorCode, EventEnvelope, PairRequest, Paired as WirePaired, SendTurn,
};
use echo_agent::{
    Api, ApiError, EventHandler, HttpMethod, Operation, OperationVisitor, TurnRequest,
    openapi_document, path_params, visit_operations,
};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The file in the data directory that holds the running server's address (scheme, host,
/// port), for `echod devices pair`.
pub const ADDRESS_FILE: &str = "serve-address";

#[derive(Clone)]
struct AppState {
    api: Api,
    access: Arc<Access>,
    site: Arc<Site>,
}

/// `echod serve`'s flags.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Port on 127.0.0.1 (default: a free one, printed at start).
    #[arg(long, conflicts_with = "listen")]
    port: Option<u16>,
    /// Address and port to listen on, e.g. `0.0.0.0:8443`; beyond loopback only with TLS
    /// (`--tls-cert`/`--tls-key` or `--tls-local-ca`).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<SocketAddr>,
    /// A name or address devices reach the server by (repeatable): allowed as `Host`, and
    /// named in the local CA's certificate.
    #[arg(long = "host", value_name = "NAME")]
    hosts: Vec<String>,
    /// The server's certificate chain (PEM).
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        conflicts_with = "tls_local_ca"
    )]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve a certificate signed by a certificate authority of this data directory
    /// (`tls/ca.pem`, made on first use; install it on each device once).
    #[arg(long)]
    tls_local_ca: bool,
    /// Serve the UI from this directory instead of the one built into echod (`ui/dist`
    /// when echod was built).
    #[arg(long, value_name = "DIR")]
    pub ui: Option<PathBuf>,
}

impl ServeArgs {
    pub fn listen(&self) -> Listen {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(TlsSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ if self.tls_local_ca => Some(TlsSource::LocalCa),
            _ => None,
        };
        Listen {
            addr: self
                .listen
                .unwrap_or(Listen::loopback(self.port.unwrap_or(0)).addr),
            hosts: self.hosts.clone(),
            tls,
        }
    }
}

/// Where and how `echod serve` listens.
#[derive(Debug, Clone)]
pub struct Listen {
    pub addr: SocketAddr,
    /// Names and addresses devices reach it by, besides loopback and `addr`'s address.
    pub hosts: Vec<String>,
    pub tls: Option<TlsSource>,
}

impl Listen {
    /// Loopback only, plain HTTP: the default.
    pub fn loopback(port: u16) -> Listen {
        Listen {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            hosts: Vec::new(),
            tls: None,
        }
    }

    /// Every name a request's `Host` may carry (without the port): loopback's, the address
    /// listened on when it is one, and `hosts`.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = ["127.0.0.1", "localhost", "::1"].map(String::from).into();
        let ip = self.addr.ip();
        if !ip.is_unspecified() && !ip.is_loopback() {
            names.push(ip.to_string());
        }
        for host in &self.hosts {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(host)) {
                names.push(host.clone());
            }
        }
        names
    }
}

/// The server as its pages and clients name it.
struct Site {
    scheme: &'static str,
    /// `host:port` forms a request's `Host` may carry.
    hosts: Vec<String>,
    /// `host:port` of the addresses printed for a browser.
    shown: String,
}

impl Site {
    fn new(listen: &Listen, port: u16) -> Site {
        let with_port = |name: &str| match name.parse::<IpAddr>() {
            Ok(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
            _ => format!("{name}:{port}"),
        };
        let names = listen.names();
        let ip = listen.addr.ip();
        let shown = match listen.hosts.first() {
            Some(host) => with_port(host),
            None if !ip.is_unspecified() => with_port(&ip.to_string()),
            None => with_port("127.0.0.1"),
        };
        Site {
            scheme: if listen.tls.is_some() {
                "https"
            } else {
                "http"
            },
            hosts: names.iter().map(|n| with_port(n)).collect(),
            shown,
        }
    }

    fn allows_host(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
    }

    fn allows_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix(self.scheme)
            .and_then(|rest| rest.strip_prefix("://"))
            .is_some_and(|rest| self.allows_host(rest.trim_end_matches('/')))
    }
}

/// Runs the server until Ctrl-C; with `ui`, also serves the built UI from that directory.
/// The web UI built into the binary: `ui/dist` as it was when echod was compiled (read from
/// that folder at run time in debug builds). Empty when the UI was not built first.
#[derive(rust_embed::RustEmbed)]
#[folder = "../../ui/dist"]
#[allow_missing = true]
struct BuiltUi;

/// A file of the built-in UI; any other path gets `index.html` (client-side routes).
async fn built_ui(uri: axum::http::Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let file = BuiltUi::get(path).or_else(|| BuiltUi::get("index.html"));
    match file {
        Some(file) => (
            [(axum::http::header::CONTENT_TYPE, file.metadata.mimetype().to_string())],
            file.data,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "this echod was built without the web UI: run `npm ci && npm run build`, then rebuild echod (or pass --ui DIR)",
        )
            .into_response(),
    }
}

pub async fn run(api: Api, listen: Listen, ui: Option<PathBuf>) -> anyhow::Result<()> {
    let tls = prepare(&api, &listen, ui.as_deref())?;
    let access = Access::new(&api.config().home)?;
    let listener = tokio::net::TcpListener::bind(listen.addr)
        .await
        .with_context(|| format!("cannot listen on {}", listen.addr))?;
    let addr = listener.local_addr()?;
    let site = Site::new(&listen, addr.port());
    let state = AppState {
        api: api.clone(),
        access: Arc::new(access),
        site: Arc::new(site),
    };
    // Everything that is not /api is the single-page UI; the guard still checks Host and
    // Origin, but the page itself needs no token (it pairs for one).
    let page = match &ui {
        Some(dir) => Router::new().fallback_service(
            tower_http::services::ServeDir::new(dir)
                .fallback(tower_http::services::ServeFile::new(dir.join("index.html"))),
        ),
        None => Router::new().fallback(built_ui),
    };
    let app = router(state.clone())
        .fallback_service(page.layer(middleware::from_fn_with_state(state.clone(), guard)));
    let has_ui = ui.is_some() || BuiltUi::get("index.html").is_some();
    let local_ca = tls.as_ref().and_then(|t| t.local_ca.as_ref());
    let banner = banner(&state, addr, local_ca, has_ui);
    // One write, and a launcher that stops reading after the first line does not stop us.
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(banner.as_bytes()).and_then(|()| out.flush()) {
        tracing::warn!(error = %e, "cannot print the address");
    }
    drop(out);
    // Where `echod devices pair` finds the address a device opens.
    let address = api.config().home.join(ADDRESS_FILE);
    let site = format!("{}://{}\n", state.site.scheme, state.site.shown);
    if let Err(e) = std::fs::write(&address, site) {
        tracing::warn!(error = %e, "cannot write the server's address for `echod devices pair`");
    }
    let acceptor = tls.map(|t| t.acceptor);
    crate::listen::serve(listener, acceptor, app, stop_signal()).await;
    let _ = std::fs::remove_file(&address);
    Ok(())
}

/// Checks what `run` was given before anything is written, and sets up TLS when asked.
fn prepare(
    api: &Api,
    listen: &Listen,
    ui: Option<&std::path::Path>,
) -> anyhow::Result<Option<crate::tls::Tls>> {
    if let Some(dir) = ui {
        anyhow::ensure!(
            dir.join("index.html").is_file(),
            "{} has no index.html; build the UI first (npm run build)",
            dir.display()
        );
    }
    anyhow::ensure!(
        listen.addr.ip().is_loopback() || listen.tls.is_some(),
        "refusing to listen on {} without TLS: devices on the network would send their token \
         in clear. Pass --tls-cert FILE --tls-key FILE, or --tls-local-ca to have echod make a \
         certificate authority of its own (it prints the fingerprint for devices to check)",
        listen.addr
    );
    match &listen.tls {
        Some(source) => crate::tls::setup(source, &api.config().home, &listen.names()).map(Some),
        None => Ok(None),
    }
}

/// What `echod serve` prints at start: where it listens, the token file, the local CA, and
/// the address a browser opens to pair.
fn banner(
    state: &AppState,
    addr: SocketAddr,
    local_ca: Option<&crate::tls::LocalCa>,
    has_ui: bool,
) -> String {
    let (scheme, shown) = (state.site.scheme, &state.site.shown);
    let mut banner = format!(
        "echod serve listening on {scheme}://{addr}\ntoken: {}\nopenapi: {scheme}://{shown}/api/openapi.json\n",
        state.access.owner_token_path().display()
    );
    if let Some(ca) = local_ca {
        banner.push_str(&format!(
            "tls: local CA {} (SHA-256 {})\n",
            ca.cert.display(),
            ca.fingerprint
        ));
    }
    if has_ui {
        // The code travels in the fragment, which browsers never send to a server.
        banner.push_str(&format!(
            "open: {scheme}://{shown}/#pair={}\n",
            state.access.page_code()
        ));
    }
    banner
}

/// Ends at Ctrl-C or SIGTERM (`kill`, logout, a service manager): `echod serve` then stops
/// taking requests and closes the engine (deleting this process's temporary chats); the
/// desktop app quits the way its tray's Quit does.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
                return;
            }
            Err(e) => tracing::warn!(error = %e, "SIGTERM not handled"),
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

fn router(state: AppState) -> Router {
    let mut mount = Mount(Router::new());
    visit_operations(&mut mount);
    mount
        .0
        .route("/api/openapi.json", get(openapi))
        .route("/api/turns", post(turn))
        .route(PAIR_PATH, post(pair))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Refuses foreign `Host` and `Origin` headers, then checks the bearer token.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !state.site.allows_host(host) {
        return refuse(
            StatusCode::FORBIDDEN,
            ErrorCode::ForeignHost,
            format!("Host {host:?} is not this server's address"),
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !state.site.allows_origin(origin) {
            return refuse(
                StatusCode::FORBIDDEN,
                ErrorCode::ForeignOrigin,
                format!("requests from {origin:?} are not allowed"),
            );
        }
    }
    let path = request.uri().path();
    let api = path.starts_with("/api/") && path != PAIR_PATH;
    if api {
        match state.access.caller(&state.api, headers).await {
            Err(refusal) => return refused(refusal),
            // A device's token cannot pair or revoke devices: a lost phone's cannot keep
            // itself a way back in.
            Ok(Caller::Device) if path.starts_with(DEVICES_PATH) => {
                return refuse(
                    StatusCode::FORBIDDEN,
                    ErrorCode::Unauthorized,
                    "devices are paired and revoked on the server's machine (`echod devices`, the app), not from a paired device".into(),
                );
            }
            Ok(_) => {}
        }
    }
    next.run(request).await
}

/// The device routes (`list_devices`, `pair_device`, `revoke_device`).
const DEVICES_PATH: &str = "/api/devices";

/// A refused request's answer.
fn refused(refusal: Refusal) -> Response {
    match refusal {
        Refusal::Unauthorized => refuse(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "missing or wrong bearer token: open the newest address `echod serve` printed, pair this device again (`echod devices pair`), or send the token in the serve-token file of the data directory".into(),
        ),
        Refusal::TooMany(why) => refuse(StatusCode::TOO_MANY_REQUESTS, ErrorCode::RateLimited, why),
        Refusal::Failed(why) => refuse(StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Store, why),
    }
}

/// The route that trades a pairing code for a token; the only `/api` route without one.
const PAIR_PATH: &str = "/api/pair";

fn refuse(status: StatusCode, code: ErrorCode, message: String) -> Response {
    (status, Json(ErrorBody::new(code, message))).into_response()
}

/// An `ApiError` as an HTTP answer: the status follows the error's kind.
struct Failure(ApiError);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status = match self.0.kind() {
            ErrorCode::InvalidInput => StatusCode::BAD_REQUEST,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Busy => StatusCode::CONFLICT,
            ErrorCode::Keychain => StatusCode::SERVICE_UNAVAILABLE,
            // The model server answered badly or not at all: the gateway in front of it.
            ErrorCode::ModelCall => StatusCode::BAD_GATEWAY,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::ForeignHost | ErrorCode::ForeignOrigin => StatusCode::FORBIDDEN,
            ErrorCode::Store
            | ErrorCode::ModelConfig
            | ErrorCode::Memory
            | ErrorCode::DataDir
            | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (status, Json(ErrorBody::from(&self.0))).into_response()
    }
}

/// Mounts one route per operation of the table, each on the generic handler.
struct Mount(Router<AppState>);

impl OperationVisitor for Mount {
    fn visit<O: Operation>(&mut self) {
        let handler = if path_params(O::PATH).is_empty() {
            on(filter(O::METHOD), handle::<O>)
        } else {
            on(filter(O::METHOD), handle_with_path::<O>)
        };
        let router = std::mem::take(&mut self.0);
        self.0 = router.route(O::PATH, handler);
    }
}

fn filter(method: HttpMethod) -> MethodFilter {
    match method {
        HttpMethod::Get => MethodFilter::GET,
        HttpMethod::Post => MethodFilter::POST,
        HttpMethod::Put => MethodFilter::PUT,
        HttpMethod::Patch => MethodFilter::PATCH,
        HttpMethod::Delete => MethodFilter::DELETE,
    }
}

async fn handle<O: Operation>(State(s): State<AppState>, uri: Uri, body: Bytes) -> Response {
    answer::<O>(&s, Vec::new(), uri.query(), &body).await
}

async fn handle_with_path<O: Operation>(
    State(s): State<AppState>,
    Path(params): Path<Vec<(String, String)>>,
    uri: Uri,
    body: Bytes,
) -> Response {
    answer::<O>(&s, params, uri.query(), &body).await
}

/// Parse, call `Api`, answer: 204 for an operation that returns nothing, else the JSON.
async fn answer<O: Operation>(
    s: &AppState,
    params: Vec<(String, String)>,
    query: Option<&str>,
    body: &[u8],
) -> Response {
    let request = match parse::<O>(params, query, body) {
        Ok(request) => request,
        Err(e) => return Failure(e).into_response(),
    };
    match s.api.call(request).await {
        Ok(response) if std::any::TypeId::of::<O::Response>() == std::any::TypeId::of::<()>() => {
            let _ = response;
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(response) => Json(response).into_response(),
        Err(e) => Failure(e).into_response(),
    }
}

/// The request from the path parameters plus the query (GET, DELETE) or the JSON body.
fn parse<O: Operation>(
    params: Vec<(String, String)>,
    query: Option<&str>,
    body: &[u8],
) -> Result<O, ApiError> {
    let invalid = |message: String| ApiError::InvalidInput {
        what: "request",
        message,
    };
    if O::METHOD.has_body() {
        let mut object = if body.iter().all(u8::is_ascii_whitespace) {
            serde_json::Map::new()
        } else {
            match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(serde_json::Value::Object(object)) => object,
                Ok(_) => return Err(invalid("the body must be a JSON object".into())),
                Err(e) => return Err(invalid(format!("the body is not JSON: {e}"))),
            }
        };
        for (name, value) in params {
            object.insert(name, serde_json::Value::String(value));
        }
        serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|e| invalid(e.to_string()))
    } else {
        let mut form = serde_urlencoded::to_string(&params).map_err(|e| invalid(e.to_string()))?;
        if let Some(query) = query.filter(|q| !q.is_empty()) {
            if !form.is_empty() {
                form.push('&');
            }
            form.push_str(query);
        }
        serde_urlencoded::from_str(&form).map_err(|e| invalid(e.to_string()))
    }
}

/// The JSON body of a route outside the operation table, or the failure (400) that refuses it.
fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Failure> {
    serde_json::from_slice(body).map_err(|e| {
        Failure(ApiError::InvalidInput {
            what: "request",
            message: e.to_string(),
        })
    })
}

/// A turn: the request is checked before the stream starts (a bad one is a plain error),
/// then its events go out as server-sent events.
async fn turn(State(s): State<AppState>, body: Bytes) -> Response {
    let body: SendTurn = match json_body(&body) {
        Ok(body) => body,
        Err(refused) => return refused.into_response(),
    };
    let request = TurnRequest::sent(body, EntryPoint::Gateway);
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
        let event = match serde_json::to_string(&envelope) {
            Ok(data) => Event::default().id(envelope.seq.to_string()).data(data),
            Err(e) => Event::default().event("error").data(e.to_string()),
        };
        Some((Ok::<_, std::convert::Infallible>(event), rx))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// Trades the current pairing code for this process's browser token, and prints the address
/// with the next code (for another page or browser).
async fn pair(State(s): State<AppState>, peer: Option<Extension<Peer>>, body: Bytes) -> Response {
    let body: PairRequest = match json_body(&body) {
        Ok(body) => body,
        Err(refused) => return refused.into_response(),
    };
    let peer = peer.map(|Extension(Peer(addr))| addr.to_string());
    let paired = match s.access.pair(&s.api, &body.code, peer.as_deref()).await {
        Ok(paired) => paired,
        Err(Refusal::Unauthorized) => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthorized,
                "this pairing code is wrong, was used already, has expired, or belongs to an earlier run of echod serve: open the newest address `echod serve` printed, or make a new code with `echod devices pair`".into(),
            );
        }
        Err(refusal) => return refused(refusal),
    };
    let (line, token, device) = match paired {
        Paired::Page { token, next_code } => (
            format!(
                "paired a browser page; for another one, open: {}://{}/#pair={next_code}\n",
                s.site.scheme, s.site.shown
            ),
            token,
            None,
        ),
        Paired::Device { token, id, name } => {
            (format!("paired device {name:?} ({id})\n"), token, Some(id))
        }
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
        tracing::warn!(error = %e, "cannot print a pairing");
    }
    Json(WirePaired { token, device }).into_response()
}

async fn openapi() -> Response {
    Json(openapi_document()).into_response()
}
