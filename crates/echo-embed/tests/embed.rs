//! echo-embed end to end: the local MiniLM embedder against an independent numpy reference
//! (`tests/data/reference.json`, made by `scripts/embed-reference.py`), the model download
//! against a file server on loopback, and the OpenAI-compatible embedder against a scripted
//! axum server on loopback. Nothing touches the network.
//!
//! Needs the real all-MiniLM-L6-v2 files: `$ECHO_EMBED_MODEL_DIR`, else
//! `~/.cache/echo-desk-models/all-MiniLM-L6-v2`; `bash scripts/fetch-embed-model.sh` puts them
//! there. Without them these tests fail (on purpose: they are the only check of the model code).

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use echo_embed::{
    EmbedError, Embedder, MODEL_DIR_ENV, MiniLmEmbedder, OpenAiEmbedder, REQUIRED_FILES,
    download_model, is_model_dir, resolve_model_dir,
};
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

// ---------------------------------------------------------------- fixtures

/// Unwraps `r` or fails the test naming `what`.
fn must<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{what}: {e}"),
    }
}

/// The model directory the tests use; fails with instructions when the model is missing.
fn model_dir() -> PathBuf {
    let dir = match std::env::var_os(MODEL_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".cache/echo-desk-models/all-MiniLM-L6-v2")
        }
    };
    assert!(
        is_model_dir(&dir),
        "all-MiniLM-L6-v2 is not in {} (needs {}). Run `bash scripts/fetch-embed-model.sh` and \
         export {MODEL_DIR_ENV}=<the directory it prints>.",
        dir.display(),
        REQUIRED_FILES.join(", "),
    );
    dir
}

/// One loaded model shared by every test of this binary (loading reads ~90 MB).
fn minilm() -> &'static MiniLmEmbedder {
    static MODEL: OnceLock<MiniLmEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| must(MiniLmEmbedder::load(&model_dir()), "loading the model"))
}

#[derive(Deserialize)]
struct Reference {
    dim: usize,
    max_seq_length: usize,
    sentences: Vec<RefSentence>,
    cosine: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct RefSentence {
    text: String,
    input_ids: Vec<u32>,
    norm: f64,
    embedding: Vec<f64>,
}

fn reference() -> Reference {
    must(
        serde_json::from_str(include_str!("data/reference.json")),
        "parsing tests/data/reference.json",
    )
}

fn texts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

async fn embed(e: &dyn Embedder, list: &[String]) -> Vec<Vec<f32>> {
    must(e.embed(list).await, "embed")
}

fn norm(v: &[f32]) -> f64 {
    v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum::<f64>()
        / (norm(a) * norm(b))
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "vector lengths differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs())
        .fold(0.0, f64::max)
}

/// Serves `router` on an ephemeral loopback port for the rest of the test.
async fn serve(router: Router) -> SocketAddr {
    let listener = must(
        tokio::net::TcpListener::bind("127.0.0.1:0").await,
        "binding a loopback port",
    );
    let addr = must(listener.local_addr(), "local address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

// ---------------------------------------------------------------- MiniLM vs the reference

const TOLERANCE: f64 = 1e-4;

#[tokio::test]
async fn minilm_matches_the_numpy_reference() {
    let reference = reference();
    let model = minilm();
    assert_eq!(model.dim(), reference.dim);
    assert_eq!(model.max_seq_length(), reference.max_seq_length);
    let list: Vec<String> = reference.sentences.iter().map(|s| s.text.clone()).collect();
    // Batches of six after sorting by length: the six short ones (empty and Chinese among
    // them) padded together, the 256-word-piece one alone — cheap in an unoptimised build.
    let ours = embed(&model.clone().with_batch_size(6), &list).await;
    assert_eq!(ours.len(), list.len());

    let mut worst_value = 0.0f64;
    for (s, v) in reference.sentences.iter().zip(&ours) {
        let label = s.text.chars().take(40).collect::<String>();
        assert_eq!(
            must(model.token_ids(&s.text), "token ids"),
            s.input_ids,
            "token ids of {label:?}"
        );
        let expected: Vec<f32> = s.embedding.iter().map(|x| *x as f32).collect();
        let diff = max_abs_diff(v, &expected);
        assert!(
            diff <= TOLERANCE,
            "{label:?}: max |ours - reference| = {diff:e} > {TOLERANCE:e}"
        );
        assert!(
            (norm(v) - s.norm).abs() <= 1e-5,
            "{label:?}: norm {}",
            norm(v)
        );
        worst_value = worst_value.max(diff);
    }
    let mut worst_cosine = 0.0f64;
    for (i, row) in reference.cosine.iter().enumerate() {
        for (j, expected) in row.iter().enumerate() {
            let diff = (cosine(&ours[i], &ours[j]) - expected).abs();
            assert!(diff <= TOLERANCE, "cosine({i}, {j}) differs by {diff:e}");
            worst_cosine = worst_cosine.max(diff);
        }
    }
    eprintln!(
        "reference check: {} sentences x {} dims, max abs diff {worst_value:.3e}, \
         max cosine diff {worst_cosine:.3e}",
        list.len(),
        reference.dim
    );
}

#[tokio::test]
async fn eating_food_is_closer_to_bread_than_to_a_horse() {
    let v = embed(
        minilm(),
        &texts(&[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "A man is riding a horse.",
        ]),
    )
    .await;
    let bread = cosine(&v[0], &v[1]);
    let horse = cosine(&v[0], &v[2]);
    assert!(bread > horse, "bread {bread} vs horse {horse}");
    // The figure sentence-transformers prints for this pair.
    assert!((bread - 0.7553).abs() < 1e-3, "bread {bread}");
}

#[tokio::test]
async fn empty_string_embeds_and_empty_batch_is_empty() {
    let model = minilm();
    assert!(embed(model, &[]).await.is_empty());
    let v = embed(model, &texts(&[""])).await;
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].len(), 384);
    assert!(v[0].iter().all(|x| x.is_finite()));
    assert!((norm(&v[0]) - 1.0).abs() <= 1e-5);
    // Only [CLS] [SEP].
    assert_eq!(must(model.token_ids(""), "token ids"), vec![101, 102]);
}

#[tokio::test]
async fn batches_equal_one_by_one() {
    // The reference sentences short of the 256-word-piece one (which the reference check
    // already runs padded and the truncation test alone).
    let list: Vec<String> = reference()
        .sentences
        .into_iter()
        .map(|s| s.text)
        .filter(|t| t.len() < 200)
        .collect();
    assert_eq!(list.len(), 6);
    // Batches of three mix lengths, so most inputs are padded; one by one none is.
    let batched = embed(&minilm().clone().with_batch_size(3), &list).await;
    let mut worst = 0.0f64;
    for (text, b) in list.iter().zip(&batched) {
        let alone = embed(minilm(), std::slice::from_ref(text)).await;
        worst = worst.max(max_abs_diff(&alone[0], b));
    }
    eprintln!("batch vs one-by-one: max abs diff {worst:.3e}");
    assert!(worst <= 1e-5, "batch vs one-by-one differ by {worst:e}");
}

#[tokio::test]
async fn vectors_are_unit_length() {
    let list = texts(&[
        "x",
        "Remember that my sister's birthday is on 3 May.",
        "¿Dónde está la biblioteca?",
        "🙂🙂🙂",
        "   \n\t ",
    ]);
    for (text, v) in list.iter().zip(embed(minilm(), &list).await) {
        assert_eq!(v.len(), 384, "{text:?}");
        let n = norm(&v);
        assert!((n - 1.0).abs() <= 1e-5, "{text:?}: norm {n}");
    }
}

#[tokio::test]
async fn input_past_256_word_pieces_is_truncated() {
    let model = minilm();
    let Some(long) = reference()
        .sentences
        .into_iter()
        .max_by_key(|s| s.input_ids.len())
    else {
        panic!("empty reference")
    };
    assert_eq!(long.input_ids.len(), 256);
    // A tail past the limit changes nothing: same word pieces, same vector as the reference.
    let longer = format!("{} And then a tail that the model never sees.", long.text);
    assert_eq!(must(model.token_ids(&longer), "token ids"), long.input_ids);
    let v = embed(model, &[longer]).await;
    let expected: Vec<f32> = long.embedding.iter().map(|x| *x as f32).collect();
    let diff = max_abs_diff(&v[0], &expected);
    assert!(diff <= TOLERANCE, "truncated input differs by {diff:e}");
}

#[tokio::test]
async fn the_embedder_is_usable_as_a_trait_object() {
    let e: Arc<dyn Embedder> = Arc::new(minilm().clone());
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2");
    assert_eq!(e.dim(), 384);
    assert_eq!(embed(e.as_ref(), &texts(&["hello"])).await[0].len(), 384);
}

// ---------------------------------------------------------------- loading and resolving

fn copy_files(from: &Path, to: &Path, files: &[&str]) {
    for f in files {
        let target = to.join(f);
        if let Some(parent) = target.parent() {
            must(std::fs::create_dir_all(parent), "mkdir");
        }
        must(std::fs::copy(from.join(f), &target), "copying a model file");
    }
}

#[test]
fn load_names_the_missing_file() {
    let dir = must(tempfile::tempdir(), "tempdir");
    copy_files(&model_dir(), dir.path(), &["config.json"]);
    let err = match MiniLmEmbedder::load(dir.path()) {
        Ok(_) => panic!("loaded a model without tokenizer.json"),
        Err(e) => e,
    };
    assert!(
        matches!(err, EmbedError::ModelFileMissing { ref file, .. } if file == "tokenizer.json")
    );
    assert_eq!(
        err.to_string(),
        format!(
            "embedding model file tokenizer.json is missing from {}",
            dir.path().display()
        )
    );
}

#[test]
fn load_rejects_corrupt_weights() {
    let dir = must(tempfile::tempdir(), "tempdir");
    copy_files(&model_dir(), dir.path(), &["config.json", "tokenizer.json"]);
    must(
        std::fs::write(dir.path().join("model.safetensors"), b"not safetensors"),
        "write",
    );
    let err = match MiniLmEmbedder::load(dir.path()) {
        Ok(_) => panic!("loaded garbage weights"),
        Err(e) => e,
    };
    assert_eq!(err.code(), "embed_invalid_model");
    let msg = err.to_string();
    assert!(msg.contains("model.safetensors is unusable"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
}

#[test]
fn resolve_model_dir_takes_the_first_candidate_that_holds_the_model() {
    let explicit = must(tempfile::tempdir(), "tempdir");
    let data = must(tempfile::tempdir(), "tempdir");
    let default = data.path().join("models/all-MiniLM-L6-v2");
    let env_dir = std::env::var_os(MODEL_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|d| is_model_dir(d));

    // Nothing anywhere (unless the environment names a model directory).
    assert_eq!(
        resolve_model_dir(Some(explicit.path()), data.path()),
        env_dir
    );
    // The default location, once it holds the files, comes after the environment.
    for f in REQUIRED_FILES {
        let p = default.join(f);
        must(std::fs::create_dir_all(&default), "mkdir");
        must(std::fs::write(&p, b"x"), "write");
    }
    assert_eq!(
        resolve_model_dir(Some(explicit.path()), data.path()),
        Some(env_dir.unwrap_or(default.clone()))
    );
    // An explicit directory that holds the files wins.
    for f in REQUIRED_FILES {
        must(std::fs::write(explicit.path().join(f), b"x"), "write");
    }
    assert_eq!(
        resolve_model_dir(Some(explicit.path()), data.path()),
        Some(explicit.path().to_path_buf())
    );
}

// ---------------------------------------------------------------- download

#[derive(Clone)]
struct FileServer {
    root: PathBuf,
    /// Paths asked for, in order.
    requests: Arc<Mutex<Vec<String>>>,
    /// Paths whose body breaks off after a few bytes.
    broken: Vec<String>,
}

async fn serve_file(State(s): State<FileServer>, UrlPath(path): UrlPath<String>) -> Response {
    if let Ok(mut r) = s.requests.lock() {
        r.push(path.clone());
    }
    if s.broken.contains(&path) {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![
            Ok(b"partial".to_vec()),
            Err(std::io::Error::other("connection dropped")),
        ];
        return axum::body::Body::from_stream(futures::stream::iter(chunks)).into_response();
    }
    // Only files under the root; the test controls the paths anyway.
    match tokio::fs::read(s.root.join(&path)).await {
        Ok(bytes) => bytes.into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn file_server(root: &Path, broken: &[&str]) -> (String, Arc<Mutex<Vec<String>>>) {
    let state = FileServer {
        root: root.to_path_buf(),
        requests: Arc::new(Mutex::new(Vec::new())),
        broken: broken.iter().map(|s| s.to_string()).collect(),
    };
    let requests = state.requests.clone();
    let router = Router::new()
        .route("/models/minilm/{*path}", get(serve_file))
        .with_state(state);
    let addr = serve(router).await;
    (format!("http://{addr}/models/minilm/"), requests)
}

fn taken(requests: &Mutex<Vec<String>>) -> Vec<String> {
    match requests.lock() {
        Ok(mut r) => std::mem::take(&mut *r),
        Err(_) => panic!("request log poisoned"),
    }
}

fn leftovers(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part"))
        .collect()
}

#[tokio::test]
async fn download_model_fetches_the_files_and_the_result_loads() {
    let source = model_dir();
    let (base_url, requests) = file_server(&source, &[]).await;
    let data = must(tempfile::tempdir(), "tempdir");
    let dest = echo_embed::default_model_dir(data.path());

    let got = must(download_model(&base_url, &dest).await, "download");
    assert_eq!(got, dest);
    let asked = taken(&requests);
    for f in REQUIRED_FILES.iter().chain(echo_embed::CONFIG_FILES.iter()) {
        assert!(asked.iter().any(|a| a == f), "{f} was not requested");
        let a = must(std::fs::read(source.join(f)), "read source");
        let b = must(std::fs::read(dest.join(f)), "read download");
        assert!(a == b, "{f} differs after download");
    }
    assert!(leftovers(&dest).is_empty());
    assert_eq!(
        resolve_model_dir(Some(&dest), data.path()),
        Some(dest.clone())
    );

    // A second call finds everything in place and asks for nothing.
    must(download_model(&base_url, &dest).await, "second download");
    assert!(taken(&requests).is_empty());

    // And what came down is the model.
    let loaded = must(MiniLmEmbedder::load(&dest), "loading the download");
    let list = texts(&["A man is eating food."]);
    let diff = max_abs_diff(
        &embed(&loaded, &list).await[0],
        &embed(minilm(), &list).await[0],
    );
    assert!(diff <= 1e-6, "downloaded model differs by {diff:e}");
}

#[tokio::test]
async fn download_tolerates_missing_configs_but_not_missing_weights() {
    let source = must(tempfile::tempdir(), "tempdir");
    copy_files(
        &model_dir(),
        source.path(),
        &["config.json", "tokenizer.json"],
    );
    let (base_url, _) = file_server(source.path(), &[]).await;
    let tmp = must(tempfile::tempdir(), "tempdir");
    let dest = tmp.path().join("m");

    let err = match download_model(&base_url, &dest).await {
        Ok(_) => panic!("download without weights succeeded"),
        Err(e) => e,
    };
    assert_eq!(
        err.to_string(),
        format!("download of {base_url}model.safetensors failed: HTTP 404 Not Found")
    );
    // What did download stays; nothing half-written does.
    assert!(dest.join("config.json").is_file());
    assert!(!dest.join("model.safetensors").exists());
    assert!(leftovers(&dest).is_empty());

    // With the weights there, the missing optional configs are skipped.
    copy_files(&model_dir(), source.path(), &["model.safetensors"]);
    must(download_model(&base_url, &dest).await, "download");
    assert!(is_model_dir(&dest));
    assert!(!dest.join("modules.json").exists());
}

#[tokio::test]
async fn weights_with_another_checksum_are_refused_and_not_kept() {
    let source = must(tempfile::tempdir(), "tempdir");
    copy_files(
        &model_dir(),
        source.path(),
        &["config.json", "tokenizer.json", "model.safetensors"],
    );
    // One byte changed deep inside the tensors: the file still has its length and header.
    let weights = source.path().join("model.safetensors");
    let mut bytes = must(std::fs::read(&weights), "read weights");
    let at = bytes.len() / 2;
    bytes[at] ^= 0x01;
    must(std::fs::write(&weights, bytes), "write weights");
    let (base_url, _) = file_server(source.path(), &[]).await;
    let tmp = must(tempfile::tempdir(), "tempdir");
    let dest = tmp.path().join("m");
    let err = match download_model(&base_url, &dest).await {
        Ok(_) => panic!("tampered weights were accepted"),
        Err(e) => e,
    };
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "download of {base_url}model.safetensors failed: its SHA-256 is "
        )) && msg.ends_with(&format!(
            "not the pinned {}",
            echo_embed::PINNED_SHA256[0].1
        )),
        "{msg}"
    );
    assert!(!dest.join("model.safetensors").exists());
    assert!(leftovers(&dest).is_empty(), "{:?}", leftovers(&dest));
}

#[tokio::test]
async fn an_interrupted_download_leaves_no_file() {
    let (base_url, _) = file_server(&model_dir(), &["model.safetensors"]).await;
    let tmp = must(tempfile::tempdir(), "tempdir");
    let dest = tmp.path().join("m");
    let err = match download_model(&base_url, &dest).await {
        Ok(_) => panic!("a broken body downloaded"),
        Err(e) => e,
    };
    assert_eq!(err.code(), "embed_download");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("download of {base_url}model.safetensors failed: ")),
        "{msg}"
    );
    assert!(!dest.join("model.safetensors").exists());
    assert!(leftovers(&dest).is_empty(), "{:?}", leftovers(&dest));
}

#[tokio::test]
async fn download_refuses_a_bad_base_url() {
    let dest = must(tempfile::tempdir(), "tempdir");
    for url in ["not a url", "ftp://127.0.0.1/models/"] {
        match download_model(url, dest.path()).await {
            Err(EmbedError::InvalidUrl { .. }) => {}
            other => panic!("{url}: {:?}", other.map(|_| ())),
        }
    }
}

// ---------------------------------------------------------------- OpenAI-compatible server

const DIM: usize = 4;

/// One request to the scripted server: its authorization header and JSON body.
type Seen = (Option<String>, Value);

#[derive(Clone, Default)]
struct Scripted {
    /// Every request, in order.
    seen: Arc<Mutex<Vec<Seen>>>,
}

/// Behaviour chosen by the requested model name: `good`, `reversed` (answers out of order),
/// `short` (wrong dimension), `garbage` (not JSON), `fail` (HTTP 500 with a two-line message),
/// `missing` (one embedding too few). A key other than `sk-test` gets HTTP 401.
async fn embeddings(State(s): State<Scripted>, headers: HeaderMap, body: String) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    if let Ok(mut seen) = s.seen.lock() {
        seen.push((auth.clone(), body.clone()));
    }
    if auth.as_deref() != Some("Bearer sk-test") {
        let err = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}});
        return (StatusCode::UNAUTHORIZED, axum::Json(err)).into_response();
    }
    let model = body["model"].as_str().unwrap_or_default().to_string();
    let inputs: Vec<String> = body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let dim = if model == "short" { DIM - 1 } else { DIM };
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": raw_vector(text, dim)}))
        .collect();
    match model.as_str() {
        "garbage" => return "<html>gateway</html>".into_response(),
        "fail" => {
            let err = json!({"error": {"message": "upstream\nexploded"}});
            return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(err)).into_response();
        }
        "reversed" => data.reverse(),
        "missing" => {
            data.pop();
        }
        _ => {}
    }
    axum::Json(json!({"object": "list", "model": model, "data": data})).into_response()
}

/// A deterministic, unnormalised vector for `text`.
fn raw_vector(text: &str, dim: usize) -> Vec<f32> {
    let n = text.chars().count() as f32;
    (0..dim).map(|i| n + 1.0 + i as f32 * 2.0).collect()
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = norm(&v) as f32;
    v.into_iter().map(|x| x / n).collect()
}

async fn openai_server() -> (String, Scripted) {
    let state = Scripted::default();
    let router = Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state(state.clone());
    let addr = serve(router).await;
    (format!("http://{addr}/v1"), state)
}

fn openai(base_url: &str, model: &str, key: Option<&str>) -> OpenAiEmbedder {
    must(
        OpenAiEmbedder::new(base_url, model, key.map(String::from), DIM),
        "OpenAiEmbedder::new",
    )
}

#[tokio::test]
async fn openai_embeds_in_input_order_normalised_and_batched() {
    let (base_url, server) = openai_server().await;
    let list = texts(&["a", "bbb", "", "dddddd"]);
    for model in ["good", "reversed"] {
        let e = openai(&format!("{base_url}/"), model, Some("sk-test"));
        assert_eq!(e.model_id(), model);
        assert_eq!(e.dim(), DIM);
        let got = embed(&e, &list).await;
        let expect: Vec<Vec<f32>> = list.iter().map(|t| unit(raw_vector(t, DIM))).collect();
        for (g, x) in got.iter().zip(&expect) {
            assert!(max_abs_diff(g, x) <= 1e-6, "{model}: {g:?} vs {x:?}");
        }
    }
    let seen = match server.seen.lock() {
        Ok(mut s) => std::mem::take(&mut *s),
        Err(_) => panic!("poisoned"),
    };
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0.as_deref(), Some("Bearer sk-test"));
    assert_eq!(
        seen[0].1,
        json!({"model": "good", "input": ["a", "bbb", "", "dddddd"]})
    );

    // More inputs than one request takes: split, order kept.
    let many: Vec<String> = (0..300).map(|i| "x".repeat(i % 7)).collect();
    let got = embed(&openai(&base_url, "good", Some("sk-test")), &many).await;
    assert_eq!(got.len(), 300);
    for (t, g) in many.iter().zip(&got) {
        assert!(max_abs_diff(g, &unit(raw_vector(t, DIM))) <= 1e-6);
    }
    let sizes: Vec<usize> = match server.seen.lock() {
        Ok(s) => s
            .iter()
            .map(|(_, b)| b["input"].as_array().map_or(0, |a| a.len()))
            .collect(),
        Err(_) => panic!("poisoned"),
    };
    assert_eq!(sizes, vec![256, 44]);

    // Nothing to embed, nothing sent.
    assert!(
        embed(&openai(&base_url, "good", None), &[])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn openai_errors_are_typed_and_name_the_server() {
    let (base_url, _) = openai_server().await;
    let host = base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let check = |model: &'static str, key: Option<&'static str>, code: &str, message: String| {
        let base_url = base_url.clone();
        let code = code.to_string();
        async move {
            let err = match openai(&base_url, model, key)
                .embed(&texts(&["a", "b"]))
                .await
            {
                Ok(v) => panic!("{model}: expected {code}, got {} vectors", v.len()),
                Err(e) => e,
            };
            assert_eq!(err.code(), code, "{model}: {err}");
            assert_eq!(err.to_string(), message, "{model}");
        }
    };
    let server = |model: &str| format!("embedding server {host} (model {model})");
    check(
        "good",
        Some("sk-wrong"),
        "embed_status",
        format!(
            "{} answered HTTP 401: Incorrect API key provided",
            server("good")
        ),
    )
    .await;
    check(
        "good",
        None,
        "embed_status",
        format!(
            "{} answered HTTP 401: Incorrect API key provided",
            server("good")
        ),
    )
    .await;
    check(
        "fail",
        Some("sk-test"),
        "embed_status",
        format!("{} answered HTTP 500: upstream exploded", server("fail")),
    )
    .await;
    check(
        "short",
        Some("sk-test"),
        "embed_dimension_mismatch",
        format!(
            "{} returned 3-dimensional embeddings, expected 4",
            server("short")
        ),
    )
    .await;
    check(
        "missing",
        Some("sk-test"),
        "embed_bad_response",
        format!(
            "{} sent an unusable response: 1 embeddings for 2 inputs",
            server("missing")
        ),
    )
    .await;
    let err = match openai(&base_url, "garbage", Some("sk-test"))
        .embed(&texts(&["a"]))
        .await
    {
        Ok(_) => panic!("garbage accepted"),
        Err(e) => e,
    };
    assert_eq!(err.code(), "embed_bad_response");
    assert!(err.to_string().starts_with(&format!(
        "{} sent an unusable response: ",
        server("garbage")
    )));
}

#[tokio::test]
async fn openai_unreachable_server_is_named() {
    // A port that was just free: nothing listens there.
    let port = {
        let l = must(std::net::TcpListener::bind("127.0.0.1:0"), "bind");
        must(l.local_addr(), "addr").port()
    };
    let e = openai(&format!("http://127.0.0.1:{port}/v1"), "m", None);
    let err = match e.embed(&texts(&["a"])).await {
        Ok(_) => panic!("nothing listens, yet it answered"),
        Err(e) => e,
    };
    assert_eq!(err.code(), "embed_unreachable");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "embedding server 127.0.0.1:{port} (model m) is unreachable: "
        )),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
}

#[test]
fn openai_new_refuses_bad_configuration() {
    for (url, dim) in [
        ("not a url", 4),
        ("file:///tmp", 4),
        ("http://127.0.0.1:1/v1", 0),
    ] {
        match OpenAiEmbedder::new(url, "m", None, dim) {
            Err(EmbedError::InvalidUrl { .. }) => {}
            other => panic!("{url} dim {dim}: {:?}", other.map(|_| ())),
        }
    }
    // The key stays out of debug output.
    let e = must(
        OpenAiEmbedder::new("http://127.0.0.1:1/v1", "m", Some("sk-secret".into()), 4),
        "new",
    );
    assert!(!format!("{e:?}").contains("sk-secret"));
}
