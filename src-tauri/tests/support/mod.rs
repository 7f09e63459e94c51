//! The real-window tests' WebDriver side: `tauri-driver` started on free ports with the app's
//! environment, a session with an app binary (the test build's, or the installed package's),
//! and waiting on the page with a deadline. Each test binary uses the part it needs.
#![allow(dead_code)]

use echo_mock_model::MockServer;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long any one step may take.
pub const STEP: Duration = Duration::from_secs(30);

/// `tauri-driver` and the app it started; both killed at the end whatever happens.
pub struct Driver {
    child: Child,
    port: u16,
    app: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in app_pids(&self.app) {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .status();
        }
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn tauri_driver() -> PathBuf {
    if let Some(p) = std::env::var_os("TAURI_DRIVER") {
        return PathBuf::from(p);
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("tauri-driver"))
                .find(|p| p.is_file())
        })
        .unwrap_or_default();
    on_path.unwrap_or_else(|| {
        panic!("tauri-driver not found: `cargo install tauri-driver --locked` (scripts/test.sh puts ~/.cache/echo-desk-tools/bin on PATH)")
    })
}

/// Processes whose executable is `app`.
pub fn app_pids(app: &Path) -> Vec<u32> {
    let app = std::fs::canonicalize(app).unwrap_or_else(|_| app.to_path_buf());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(e.path().join("exe")).ok()?;
            (exe == app).then_some(pid)
        })
        .collect()
}

/// Starts `tauri-driver`, whose app (`app`) will run in `work` with `env` on top of the
/// mock model as its provider (model `primary`).
pub fn start_driver(app: &Path, env: &[(&str, &OsStr)], work: &Path, mock: &MockServer) -> Driver {
    assert!(
        std::env::var_os("DISPLAY").is_some(),
        "no DISPLAY: run under `xvfb-run -a` (scripts/test.sh does)"
    );
    let port = free_port();
    let native = free_port();
    let mut command = Command::new(tauri_driver());
    command
        .args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native.to_string(),
        ])
        .env("ECHO_LLM_KIND", "openai")
        .env("ECHO_LLM_BASE_URL", mock.base_url())
        .env("ECHO_LLM_MODEL", "primary")
        .env_remove("ECHO_LLM_API_KEY")
        .env_remove("ECHO_LLM_FALLBACK_MODELS")
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (key, value) in env {
        command.env(key, value);
    }
    let child = command.spawn().expect("spawn tauri-driver");
    let driver = Driver {
        child,
        port,
        app: app.to_path_buf(),
    };
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < STEP,
            "tauri-driver did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    driver
}

/// Opens a WebDriver session with the driver's app. On a loaded machine tauri-driver
/// sometimes drops the first session request mid-answer (`IncompleteMessage`) while
/// WebKitWebDriver starts, so a failed attempt is retried until the step's deadline.
pub async fn connect(driver: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert("tauri:options".into(), json!({ "application": driver.app }));
    let start = Instant::now();
    loop {
        let attempt = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await;
        match attempt {
            Ok(client) => return client,
            Err(e) if start.elapsed() < STEP => {
                eprintln!("WebDriver session not ready yet ({e}); trying again");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("a WebDriver session with the app: {e}"),
        }
    }
}

/// Polls a script in the page until it returns `true`.
pub async fn until(client: &Client, what: &str, script: &str) {
    let start = Instant::now();
    loop {
        let v = client.execute(script, vec![]).await.unwrap_or(Value::Null);
        if v == Value::Bool(true) {
            return;
        }
        assert!(start.elapsed() < STEP, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the chat's composer is on the page (the UI rendered and booted).
pub async fn composer_ready(client: &Client) {
    until(
        client,
        "the composer",
        "return !!document.querySelector('.composer textarea')",
    )
    .await;
}

/// Clicks the element `css` selects (`what` names it in the failure message).
pub async fn click(client: &Client, css: &str, what: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{what} ({css}): {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking {what}: {e}"));
}

/// Types `text` into the chat's composer and sends it.
pub async fn send(client: &Client, text: &str) {
    let composer = client
        .wait()
        .at_most(STEP)
        .for_element(Locator::Css(".composer textarea"))
        .await
        .expect("the composer");
    composer
        .send_keys(&format!("{text}{}", char::from(Key::Enter)))
        .await
        .expect("typing");
}

/// Waits until the session has `n` windows; returns their handles.
pub async fn wait_for_windows(client: &Client, n: usize) -> Vec<fantoccini::wd::WindowHandle> {
    let start = Instant::now();
    loop {
        let windows = client.windows().await.unwrap_or_default();
        if windows.len() == n {
            return windows;
        }
        assert!(
            start.elapsed() < STEP,
            "timed out waiting for {n} windows (have {})",
            windows.len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The last assistant message of the chat, as `last`, for the scripts passed to [`until`].
pub const LAST_ASSISTANT: &str =
    "const m = document.querySelectorAll('.message.assistant'); const last = m[m.length - 1];";
