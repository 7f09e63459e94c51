//! Model downloads against a real HTTP server on loopback: checksums, a wrong checksum, a
//! connection cut in the middle and the resume that follows.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use echo_local::download::{DownloadError, Progress, download, published_sha256, sha256_of};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Served {
    /// The `Range` header of each request (`None` = whole file).
    ranges: Vec<Option<String>>,
    /// Cut the next whole-file response after this many bytes.
    cut_after: Option<usize>,
}

#[derive(Clone)]
struct Server {
    data: Arc<Vec<u8>>,
    served: Arc<Mutex<Served>>,
}

async fn file(State(s): State<Server>, headers: HeaderMap) -> Response {
    let range = headers
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let cut = {
        let mut served = s.served.lock().expect("lock");
        served.ranges.push(range.clone());
        served.cut_after.take()
    };
    let len = s.data.len();
    if let Some(range) = range {
        let start: usize = range
            .trim_start_matches("bytes=")
            .trim_end_matches('-')
            .parse()
            .expect("range");
        if start >= len {
            return StatusCode::RANGE_NOT_SATISFIABLE.into_response();
        }
        return Response::builder()
            .status(StatusCode::PARTIAL_CONTENT)
            .header(header::CONTENT_LENGTH, len - start)
            .header(
                header::CONTENT_RANGE,
                format!("bytes {start}-{}/{len}", len - 1),
            )
            .body(Body::from(s.data[start..].to_vec()))
            .expect("response");
    }
    let body = match cut {
        // The full length is promised, part of it is sent, then the connection breaks.
        Some(n) => {
            use futures::StreamExt;
            let first: Result<Vec<u8>, std::io::Error> = Ok(s.data[..n].to_vec());
            // The break comes once the first part is on the wire.
            let broken = futures::stream::once(async {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                Err(std::io::Error::other("connection cut"))
            });
            Body::from_stream(futures::stream::iter([first]).chain(broken))
        }
        None => Body::from(s.data.to_vec()),
    };
    Response::builder()
        .header(header::CONTENT_LENGTH, len)
        .header("x-linked-etag", format!("\"{}\"", sha_hex(&s.data)))
        .body(body)
        .expect("response")
}

fn sha_hex(data: &[u8]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("x");
    std::fs::write(&p, data).expect("write");
    sha256_of(&p).expect("sha")
}

async fn serve(data: Vec<u8>) -> (String, Server) {
    let server = Server {
        data: Arc::new(data),
        served: Arc::default(),
    };
    let app = Router::new()
        .route("/model.gguf", axum::routing::get(file).head(file))
        .with_state(server.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/model.gguf"), server)
}

fn data() -> Vec<u8> {
    (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect()
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

#[tokio::test]
async fn a_checked_download_lands_and_a_wrong_checksum_leaves_nothing() {
    let data = data();
    let sha = sha_hex(&data);
    let (url, _server) = serve(data.clone()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let dest = dir.path().join("model.gguf");

    let mut seen: Vec<Progress> = Vec::new();
    download(&http(), &url, &sha, &dest, &mut |p| seen.push(p))
        .await
        .expect("download");
    assert_eq!(std::fs::read(&dest).expect("read"), data);
    let last = seen.last().copied().expect("progress");
    assert_eq!(last.done, data.len() as u64);
    assert_eq!(last.total, Some(data.len() as u64));

    let wrong = dir.path().join("wrong.gguf");
    let e = download(&http(), &url, &"0".repeat(64), &wrong, &mut |_| {})
        .await
        .expect_err("wrong checksum");
    assert!(matches!(e, DownloadError::Checksum { .. }), "{e}");
    assert!(!wrong.exists());
    assert!(!dir.path().join("wrong.gguf.part").exists());
}

#[tokio::test]
async fn a_cut_download_resumes_where_it_stopped() {
    let data = data();
    let sha = sha_hex(&data);
    let (url, server) = serve(data.clone()).await;
    server.served.lock().expect("lock").cut_after = Some(120_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let dest = dir.path().join("model.gguf");

    let e = download(&http(), &url, &sha, &dest, &mut |_| {})
        .await
        .expect_err("the connection is cut");
    assert!(matches!(e, DownloadError::Network { .. }), "{e}");
    assert!(!dest.exists());
    let part = dir.path().join("model.gguf.part");
    let kept = std::fs::metadata(&part).expect("part kept").len();
    assert!(kept > 0 && kept <= 120_000, "{kept}");

    let mut first = None;
    download(&http(), &url, &sha, &dest, &mut |p| {
        first.get_or_insert(p);
    })
    .await
    .expect("resumed download");
    assert_eq!(std::fs::read(&dest).expect("read"), data);
    assert_eq!(
        first.map(|p| p.done),
        Some(kept),
        "progress starts where it was"
    );
    let ranges = server.served.lock().expect("lock").ranges.clone();
    assert_eq!(ranges, vec![None, Some(format!("bytes={kept}-"))]);
}

#[tokio::test]
async fn the_published_checksum_is_read_from_the_host() {
    let data = data();
    let (url, _server) = serve(data.clone()).await;
    let published = published_sha256(&url).await.expect("head");
    assert_eq!(published, Some(sha_hex(&data)));
}
