//! Who may call `echod serve`: the bearer tokens it takes and how a client gets one.
//!
//! - The owner's token in `<data dir>/serve-token` (mode 0600, for scripts on this machine).
//! - A browser page's: the address `echod serve` prints carries a one-time code (`#pair=…`)
//!   that the page trades for a token dying with this process (`POST /api/pair`).
//! - A device's: `echod devices pair` (the `pair_device` operation) makes a one-time code
//!   good for a few minutes; the device trades it at the same route for a token of its own,
//!   kept (as a digest) until `echod devices revoke`. Each device token has its own rate
//!   limit.
//!
//! Every pairing, wrong code and the wrong-code lock go to the sign-in log (`echod devices
//! log`, the app's settings) with the address they came from.
//!
//! Wrong pairing codes are limited per process, so a code cannot be guessed by trying.

use anyhow::Context;
use axum::http::{HeaderMap, header};
use echo_agent::Api;
use echo_agent::wire::AccessEventKind;
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Name of the token file in the data directory.
const TOKEN_FILE: &str = "serve-token";
/// Wrong pairing codes taken within [`WRONG_CODE_WINDOW`] before the route refuses all codes.
const WRONG_CODES: usize = 10;
const WRONG_CODE_WINDOW: Duration = Duration::from_secs(60);
/// A device token's rate limit: a burst of this many requests …
const DEVICE_BURST: f64 = 240.0;
/// … refilled at this many per second.
const DEVICE_RATE: f64 = 20.0;

/// Who a request is from.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// The owner's token file, or a paired page of this process.
    Owner,
    /// A paired device.
    Device,
}

/// Why a request was refused.
pub enum Refusal {
    /// No token, or one that opens nothing.
    Unauthorized,
    /// A device over its rate limit, or too many wrong codes.
    TooMany(String),
    /// The store could not be asked.
    Failed(String),
}

/// The tokens and codes of one `echod serve` process.
pub struct Access {
    owner: String,
    owner_path: PathBuf,
    page_code: Mutex<String>,
    page_token: String,
    wrong_codes: Mutex<VecDeque<Instant>>,
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// A token bucket: how many requests are left, as of when.
struct Bucket {
    left: f64,
    at: Instant,
}

/// What a pairing gave.
pub enum Paired {
    /// A page of this process: the page token, and the code for the next page.
    Page { token: String, next_code: String },
    /// A device: its token, id and name.
    Device {
        token: String,
        id: String,
        name: String,
    },
}

impl Access {
    /// The owner's token (created on first use) and fresh page codes.
    pub fn new(home: &Path) -> anyhow::Result<Access> {
        let (owner, owner_path) = load_or_create_token(home)?;
        Ok(Access {
            owner,
            owner_path,
            page_code: Mutex::new(random_hex(1)),
            page_token: random_hex(2),
            wrong_codes: Mutex::new(VecDeque::new()),
            buckets: Mutex::new(HashMap::new()),
        })
    }

    pub fn owner_token_path(&self) -> &Path {
        &self.owner_path
    }

    /// The code the next page's address carries.
    pub fn page_code(&self) -> String {
        self.page_code
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Who sent a request with these headers, or why it is refused.
    pub async fn caller(&self, api: &Api, headers: &HeaderMap) -> Result<Caller, Refusal> {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .unwrap_or("");
        // In constant time, so timing says nothing about how much of a guess was right (the
        // length is no secret: every token has 64 characters). Both are always compared.
        let file = given.as_bytes().ct_eq(self.owner.as_bytes());
        let page = given.as_bytes().ct_eq(self.page_token.as_bytes());
        if bool::from(file | page) {
            return Ok(Caller::Owner);
        }
        if given.len() != 64 {
            return Err(Refusal::Unauthorized);
        }
        // A device's token is looked up by its digest.
        let device = api
            .device_for_token(given)
            .await
            .map_err(|e| Refusal::Failed(e.to_string()))?;
        let Some(id) = device else {
            return Err(Refusal::Unauthorized);
        };
        let id = id.to_string();
        if !self.take(&id) {
            return Err(Refusal::TooMany(format!(
                "this device sent more than {DEVICE_BURST} requests in a burst or {DEVICE_RATE} a second: wait a moment"
            )));
        }
        Ok(Caller::Device)
    }

    /// One request of device `id` against its bucket; false when it is empty.
    fn take(&self, id: &str) -> bool {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let bucket = buckets.entry(id.to_string()).or_insert(Bucket {
            left: DEVICE_BURST,
            at: now,
        });
        let refill = now.duration_since(bucket.at).as_secs_f64() * DEVICE_RATE;
        bucket.left = (bucket.left + refill).min(DEVICE_BURST);
        bucket.at = now;
        if bucket.left < 1.0 {
            return false;
        }
        bucket.left -= 1.0;
        true
    }

    /// Trades a code sent from `peer` for a token: this process's page code first, then a
    /// device's.
    pub async fn pair(&self, api: &Api, code: &str, peer: Option<&str>) -> Result<Paired, Refusal> {
        let failed = |e: echo_agent::ApiError| Refusal::Failed(e.to_string());
        if self.too_many_wrong_codes() {
            return Err(Refusal::TooMany(format!(
                "more than {WRONG_CODES} wrong pairing codes in a minute: wait a minute"
            )));
        }
        if let Some(next_code) = self.redeem_page_code(code) {
            api.record_access(AccessEventKind::PagePaired, peer)
                .await
                .map_err(failed)?;
            return Ok(Paired::Page {
                token: self.page_token.clone(),
                next_code,
            });
        }
        let redeemed = api.redeem_device_code(code, peer).await.map_err(failed)?;
        match redeemed {
            Some(paired) => {
                tracing::info!(device = %paired.device.id, "a device paired");
                Ok(Paired::Device {
                    token: paired.token,
                    id: paired.device.id,
                    name: paired.device.name,
                })
            }
            None => {
                tracing::warn!("a wrong pairing code was given");
                if self.wrong_code() {
                    api.record_access(AccessEventKind::CodesLocked, peer)
                        .await
                        .map_err(failed)?;
                }
                Err(Refusal::Unauthorized)
            }
        }
    }

    /// The next page code when `given` is the current one (which is then spent).
    fn redeem_page_code(&self, given: &str) -> Option<String> {
        let mut code = self.page_code.lock().unwrap_or_else(|e| e.into_inner());
        if !bool::from(given.as_bytes().ct_eq(code.as_bytes())) {
            return None;
        }
        *code = random_hex(1);
        Some(code.clone())
    }

    fn too_many_wrong_codes(&self) -> bool {
        let mut wrong = self.wrong_codes.lock().unwrap_or_else(|e| e.into_inner());
        while wrong
            .front()
            .is_some_and(|at| at.elapsed() > WRONG_CODE_WINDOW)
        {
            wrong.pop_front();
        }
        wrong.len() >= WRONG_CODES
    }

    /// Counts a wrong code; true when it is the one that locks codes out.
    fn wrong_code(&self) -> bool {
        let mut wrong = self.wrong_codes.lock().unwrap_or_else(|e| e.into_inner());
        wrong.push_back(Instant::now());
        wrong.len() == WRONG_CODES
    }
}

/// `n` × 122 random bits as lowercase hex (32 characters each).
fn random_hex(n: usize) -> String {
    (0..n)
        .map(|_| uuid::Uuid::new_v4().simple().to_string())
        .collect()
}

/// The token, created (random, 256 bits, mode 0600) on first use.
fn load_or_create_token(home: &Path) -> anyhow::Result<(String, PathBuf)> {
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
    let token = random_hex(2);
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
