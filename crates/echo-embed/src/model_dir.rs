//! Where the local model's files live and how they get there: resolving the model directory
//! (explicit path → `$ECHO_EMBED_MODEL_DIR` → `<data dir>/models/all-MiniLM-L6-v2`) and
//! downloading the files on first use, each written to a temporary file and renamed into place.

use crate::error::{EmbedError, one_line};
use sha2::Digest;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// The id of the local model, also the name of its folder under `<data dir>/models/`.
pub const MODEL_ID: &str = "all-MiniLM-L6-v2";

/// Environment variable naming a model directory; consulted after an explicit path.
pub const MODEL_DIR_ENV: &str = "ECHO_EMBED_MODEL_DIR";

/// Where [`download_model`] fetches from by default (the sentence-transformers repository).
pub const DEFAULT_BASE_URL: &str =
    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/";

/// The files a model directory must hold for [`crate::MiniLmEmbedder::load`].
pub const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The small sentence-transformers configuration files: downloaded when the server has them
/// (a 404 is tolerated), read when present (pooling mode, maximum sequence length).
pub const CONFIG_FILES: [&str; 5] = [
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
];

/// Files whose SHA-256 is pinned: a download with other bytes is refused. The weights are the
/// publisher's (sentence-transformers/all-MiniLM-L6-v2, its `model.safetensors` LFS object);
/// the small JSON files are parsed and checked by loading, not pinned, because the
/// repository's `main` has changed them over time.
pub const PINNED_SHA256: [(&str, &str); 1] = [(
    "model.safetensors",
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
)];

/// Time allowed to open a connection for one file.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest silence tolerated while a file streams in.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// `<data dir>/models/all-MiniLM-L6-v2`: where the model goes when nothing else is configured.
pub fn default_model_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join(MODEL_ID)
}

/// Whether `dir` holds every file of [`REQUIRED_FILES`].
pub fn is_model_dir(dir: &Path) -> bool {
    REQUIRED_FILES.iter().all(|f| dir.join(f).is_file())
}

/// The candidate model directories in resolution order: `explicit`, then the value of
/// `$ECHO_EMBED_MODEL_DIR` (passed in as `env_value`), then [`default_model_dir`]. Empty values
/// are skipped.
pub fn model_dir_candidates(
    explicit: Option<&Path>,
    env_value: Option<OsString>,
    data_dir: &Path,
) -> Vec<PathBuf> {
    let mut out = Vec::with_capacity(3);
    if let Some(p) = explicit.filter(|p| !p.as_os_str().is_empty()) {
        out.push(p.to_path_buf());
    }
    if let Some(v) = env_value.filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(v));
    }
    out.push(default_model_dir(data_dir));
    out
}

/// The first candidate of [`model_dir_candidates`] that holds the model (every file of
/// [`REQUIRED_FILES`]), reading `$ECHO_EMBED_MODEL_DIR` from the environment; `None` when none
/// does — then [`download_model`] into [`default_model_dir`] is the way forward.
pub fn resolve_model_dir(explicit: Option<&Path>, data_dir: &Path) -> Option<PathBuf> {
    model_dir_candidates(explicit, std::env::var_os(MODEL_DIR_ENV), data_dir)
        .into_iter()
        .find(|d| is_model_dir(d))
}

/// Downloads the model into `dest` (normally [`default_model_dir`]) from `base_url` (normally
/// [`DEFAULT_BASE_URL`]; `{base_url}/{file}` for each file) and returns `dest`.
///
/// Files already present are kept, so calling it again is cheap. Each file streams into a
/// temporary file beside its destination and is renamed into place only when complete, so an
/// interrupted download never leaves a truncated model file. The three [`REQUIRED_FILES`] must
/// download; of the [`CONFIG_FILES`], those the server does not have (HTTP 404) are skipped. A
/// file of [`PINNED_SHA256`] whose bytes have another SHA-256 is refused and not kept.
pub async fn download_model(base_url: &str, dest: &Path) -> Result<PathBuf, EmbedError> {
    let base = base_url.trim_end_matches('/');
    match reqwest::Url::parse(base) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        Ok(u) => {
            return Err(EmbedError::InvalidUrl {
                url: base_url.into(),
                detail: format!("scheme {} is not http or https", u.scheme()),
            });
        }
        Err(e) => {
            return Err(EmbedError::InvalidUrl {
                url: base_url.into(),
                detail: e.to_string(),
            });
        }
    }
    let http = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(|e| EmbedError::Download {
            url: base_url.into(),
            detail: one_line(&e.to_string(), 300),
        })?;
    let files = REQUIRED_FILES
        .iter()
        .map(|f| (*f, true))
        .chain(CONFIG_FILES.iter().map(|f| (*f, false)));
    for (file, required) in files {
        let target = dest.join(file);
        if target.is_file() {
            continue;
        }
        let url = format!("{base}/{file}");
        let span = tracing::info_span!("embed_model_download", file, url = %url);
        // Instrument, not enter: an entered span held across an await makes the future !Send.
        let pinned = PINNED_SHA256
            .iter()
            .find(|(name, _)| *name == file)
            .map(|(_, sha)| *sha);
        match tracing::Instrument::instrument(fetch_to(&http, &url, &target, pinned), span).await? {
            Fetched::Written(bytes) => tracing::info!(file, bytes, "downloaded model file"),
            Fetched::NotFound if !required => {
                tracing::debug!(file, "optional model file not on the server");
            }
            Fetched::NotFound => {
                return Err(EmbedError::Download {
                    url,
                    detail: "HTTP 404 Not Found".into(),
                });
            }
        }
    }
    Ok(dest.to_path_buf())
}

/// What one file download came to.
enum Fetched {
    /// The file was written; its size in bytes.
    Written(u64),
    /// The server answered 404.
    NotFound,
}

/// Streams `url` into a temporary file next to `target`, then renames it to `target` (when
/// `sha256` is given, only if the bytes have that SHA-256).
async fn fetch_to(
    http: &reqwest::Client,
    url: &str,
    target: &Path,
    sha256: Option<&str>,
) -> Result<Fetched, EmbedError> {
    let fail = |detail: String| EmbedError::Download {
        url: url.into(),
        detail,
    };
    let net = |e: reqwest::Error| fail(one_line(&e.to_string(), 300));
    let mut response = http.get(url).send().await.map_err(net)?;
    let status = response.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(Fetched::NotFound);
    }
    if !status.is_success() {
        return Err(fail(format!("HTTP {status}")));
    }
    let expected = response.content_length();

    let dir = target.parent().unwrap_or(Path::new("."));
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EmbedError::Io { path, source }
    };
    tokio::fs::create_dir_all(dir).await.map_err(io(dir))?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The temporary file is removed when `temp_path` drops, i.e. on every early return.
    let (file, temp_path) = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".part")
        .tempfile_in(dir)
        .map_err(io(dir))?
        .into_parts();
    let mut out = tokio::fs::File::from_std(file);
    let mut written: u64 = 0;
    let mut hasher = sha2::Sha256::new();
    loop {
        let chunk = match tokio::time::timeout(IDLE_TIMEOUT, response.chunk()).await {
            Err(_) => {
                return Err(fail(format!(
                    "no data for {} s after {written} bytes",
                    IDLE_TIMEOUT.as_secs()
                )));
            }
            Ok(chunk) => chunk.map_err(net)?,
        };
        let Some(chunk) = chunk else { break };
        out.write_all(&chunk).await.map_err(io(&temp_path))?;
        hasher.update(&chunk);
        written += chunk.len() as u64;
    }
    if let Some(expected) = expected
        && expected != written
    {
        return Err(fail(format!(
            "body ended after {written} of {expected} bytes"
        )));
    }
    if let Some(expected) = sha256 {
        let actual: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if actual != expected {
            return Err(fail(format!(
                "its SHA-256 is {actual}, not the pinned {expected}"
            )));
        }
    }
    out.flush().await.map_err(io(&temp_path))?;
    out.sync_all().await.map_err(io(&temp_path))?;
    drop(out);
    temp_path.persist(target).map_err(|e| EmbedError::Io {
        path: target.to_path_buf(),
        source: e.error,
    })?;
    Ok(Fetched::Written(written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_come_in_order_and_skip_empty_values() {
        let data = Path::new("/data");
        let default = PathBuf::from("/data/models/all-MiniLM-L6-v2");
        let check = |explicit: Option<&str>, env: Option<&str>, expect: &[&str]| {
            let got = model_dir_candidates(explicit.map(Path::new), env.map(OsString::from), data);
            let expect: Vec<PathBuf> = expect.iter().map(PathBuf::from).collect();
            assert_eq!(got, expect, "explicit {explicit:?}, env {env:?}");
        };
        let d = default.to_str().unwrap_or_default();
        check(Some("/x"), Some("/e"), &["/x", "/e", d]);
        check(None, Some("/e"), &["/e", d]);
        check(Some("/x"), None, &["/x", d]);
        check(Some(""), Some(""), &[d]);
        check(None, None, &[d]);
    }
}
