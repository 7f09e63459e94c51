//! Accepting the gateway's connections, with bounds a hostile local client cannot push past:
//! at most [`MAX_CONNECTIONS`] are served at once (the next wait in the kernel's backlog), and
//! a request's head must arrive whole within [`HEAD_TIMEOUT`], so a client that trickles its
//! headers (slowloris) or opens a connection and says nothing is dropped, freeing its slot.
//! With TLS, the handshake must also end within [`HEAD_TIMEOUT`]. Each request carries its
//! connection's [`Peer`].

use axum::{Extension, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tower_layer::Layer;

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 512;
/// Time to send a whole request head (also between requests on a kept-alive connection).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open connections (a turn's event stream) may take to finish after Ctrl-C.
const DRAIN: Duration = Duration::from_secs(5);

/// The address a request's connection came from (a request extension).
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

/// A connection's service: the app, with its peer on every request.
type ConnectionService = TowerToHyperService<axum::middleware::AddExtension<Router, Peer>>;

/// Serves `app` on `listener` (through `tls` when given) until `shutdown` completes, then
/// lets open connections finish for a moment.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Router,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, usually: wait for some to close.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(Extension(Peer(peer)).layer(app.clone()));
        let tls = tls.clone();
        tokio::spawn(async move {
            let _slot = permit;
            match tls {
                None => serve_connection(stream, service).await,
                Some(tls) => match tokio::time::timeout(HEAD_TIMEOUT, tls.accept(stream)).await {
                    Ok(Ok(stream)) => serve_connection(stream, service).await,
                    Ok(Err(e)) => tracing::debug!(error = %e, "a TLS handshake failed"),
                    Err(_) => tracing::debug!("a TLS handshake took too long"),
                },
            }
        });
    }
    let all = MAX_CONNECTIONS as u32;
    let _ = tokio::time::timeout(DRAIN, slots.acquire_many(all)).await;
}

/// Serves the requests of one connection.
async fn serve_connection<S>(stream: S, service: ConnectionService)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if let Err(e) = served {
        tracing::debug!(error = %e, "a connection ended with an error");
    }
}
