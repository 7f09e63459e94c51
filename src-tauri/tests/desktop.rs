//! The desktop app in a real window: `echo-desk` under X (Xvfb in CI), driven through
//! `tauri-driver` + WebKitWebDriver. It renders the UI, streams an answer from the scripted
//! mock model over the Tauri IPC channel, asks before a shell call in its approval dialog,
//! opens quick ask from the global shortcut (pressed with `xdotool`), asks there too and hands
//! its conversation to the main window, runs an automation on a file dropped into a watched
//! folder with OS notifications (a real notification daemon, dunst, on the session bus) when
//! its write needs approval and when it finished, and on SIGTERM quits cleanly: the turn that
//! was streaming is stopped, its partial answer saved and marked interrupted.
//!
//! Needs `DISPLAY` (`xvfb-run -a`), a D-Bus session (`dbus-run-session`), `tauri-driver`
//! (`cargo install tauri-driver --locked`; `TAURI_DRIVER` may name it), `WebKitWebDriver`
//! (Debian `webkit2gtk-driver`) and `dunst`. `scripts/test.sh` provides them.

mod support;

use echo_core::store::Store;
use echo_mock_model::MockServer;
use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use support::{
    LAST_ASSISTANT, STEP, app_pids, click, connect, send, start_driver, until, wait_for_windows,
};

const APP: &str = env!("CARGO_BIN_EXE_echo-desk");

/// A notification daemon on the test's session bus, killed at the end.
struct Notifications {
    child: Child,
    _config: tempfile::TempDir,
}

impl Drop for Notifications {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Notifications {
    fn start() -> Notifications {
        assert!(
            std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
            "no D-Bus session: run under `dbus-run-session` (scripts/test.sh does)"
        );
        let config = tempfile::tempdir().expect("tempdir");
        let rc = config.path().join("dunstrc");
        std::fs::write(&rc, "").expect("dunstrc");
        let child = Command::new("dunst")
            .arg("-config")
            .arg(&rc)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dunst, a notification daemon (apt-get install dunst)");
        Notifications {
            child,
            _config: config,
        }
    }

    /// Every notification shown so far, as (summary, body): shown ones are closed into the
    /// daemon's history first.
    fn shown(&self) -> Vec<(String, String)> {
        let _ = Command::new("dunstctl").arg("close-all").status();
        let Ok(out) = Command::new("dunstctl").arg("history").output() else {
            return Vec::new();
        };
        let history: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let field = |n: &Value, f: &str| n[f]["data"].as_str().unwrap_or_default().to_string();
        history["data"][0]
            .as_array()
            .map(|all| {
                all.iter()
                    .map(|n| (field(n, "summary"), field(n, "body")))
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn wait_for(&self, what: &str, summary: &str, body: &str) {
        let start = Instant::now();
        loop {
            let shown = self.shown();
            if shown.iter().any(|(s, b)| s == summary && b.contains(body)) {
                return;
            }
            assert!(
                start.elapsed() < STEP,
                "no notification {what} ({summary:?}); shown: {shown:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// A watch rule on `inbox` whose runs go to the model `auto` (routed as code).
async fn add_automation(home: &Path, inbox: &Path) {
    use echo_automations::{AutomationStore, Spec, Trigger, Watch};
    let store = Store::open_in(home).await.expect("store");
    let mut watch = Watch::new(vec![inbox.to_string_lossy().into_owned()]);
    watch.settle_ms = 200;
    watch.events = vec![echo_core::FileEvent::Created];
    let mut spec = Spec::new(Trigger::Watch(watch), "File {{name}} into notes");
    spec.task = Some(echo_core::config::TaskType::Code);
    AutomationStore::new(store.pool().clone())
        .create("Inbox notes", &spec, true)
        .await
        .expect("add the automation");
    store.close().await;
}

/// WebKit web processes on this machine (each live web view has one).
fn web_processes() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("WebKitWebProcess"))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_renders_streams_an_answer_and_quits_cleanly_mid_turn() {
    let mock = MockServer::start(json!({ "steps": [
        { "model": "primary", "text": "Hello from the **desktop** window.", "chunks": 6, "chunk_delay_ms": 40 },
        { "model": "primary", "tool_calls": [{ "id": "c1", "name": "shell", "arguments": "{\"command\": \"touch desktop-approved.txt\"}" }] },
        { "model": "primary", "text": "Made the file." },
        { "model": "explainer", "times": 8, "text": "It creates an empty file." },
        { "model": "auto", "tool_calls": [{ "id": "a1", "name": "write_file", "arguments": json!({ "path": "notes/report.md", "content": "Quarterly numbers, filed.\n" }).to_string() }] },
        { "model": "auto", "text": "Filed report.txt." },
        { "model": "primary", "tool_calls": [{ "id": "q1", "name": "shell", "arguments": "{\"command\": \"touch quick-approved.txt\"}" }] },
        { "model": "primary", "text": "A quick answer, streamed.", "chunks": 5, "chunk_delay_ms": 40 },
        { "model": "primary", "text": format!("A long story {}", "that goes on and on. ".repeat(40)), "chunks": 80, "chunk_delay_ms": 150 }
    ] }))
    .expect("mock model");
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        home.path().join("config.toml"),
        "[side]\nmodel = \"none\"\n[memory]\nextraction = false\nembedder = \"none\"\n[tools]\nexplain_model = \"explainer\"\n[routing]\ncode = [\"auto\"]\n",
    )
    .expect("config");
    let work = tempfile::tempdir().expect("work dir");
    let inbox = work.path().join("inbox");
    std::fs::create_dir(&inbox).expect("inbox");
    std::fs::create_dir(work.path().join("notes")).expect("notes");
    add_automation(home.path(), &inbox).await;
    let notifications = Notifications::start();
    let driver = start_driver(
        Path::new(APP),
        &[("ECHO_DESK_HOME", home.path().as_os_str())],
        work.path(),
        &mock,
    );
    let client = connect(&driver).await;

    // The window rendered the UI, and the engine answers through the IPC channel.
    support::composer_ready(&client).await;
    send(&client, "Say hello").await;
    until(
        &client,
        "the streamed answer",
        &format!("{LAST_ASSISTANT} return !!last && last.dataset.status === 'completed' && !!last.querySelector('strong') && last.textContent.includes('desktop window')"),
    )
    .await;
    let shot = client.screenshot().await.expect("screenshot");
    assert!(
        shot.len() > 10_000,
        "a rendered window, not a blank one ({} bytes)",
        shot.len()
    );

    // A shell call asks first: the dialog in the window shows the exact command and the
    // model's explanation; "Allow once" runs it.
    send(&client, "Make a file").await;
    until(
        &client,
        "the approval dialog with the command",
        "return (document.querySelector('[role=dialog] .approval-detail')?.textContent ?? '').includes('touch desktop-approved.txt')",
    )
    .await;
    until(
        &client,
        "the explanation in the dialog",
        "return (document.querySelector('[role=dialog] .approval-explanation')?.textContent ?? '').includes('creates an empty file')",
    )
    .await;
    click(&client, "[role=dialog] .buttons button", "Allow once").await;
    until(
        &client,
        "the answer after the approved call",
        &format!("{LAST_ASSISTANT} return !!last && last.dataset.status === 'completed' && last.textContent.includes('Made the file')"),
    )
    .await;
    assert!(
        work.path().join("desktop-approved.txt").exists(),
        "the approved command ran in the app's working directory"
    );

    // Settings → Desktop: the shortcut is registered; an unusable one is refused with a clear
    // message and the old one keeps working (quick ask below uses it).
    click(
        &client,
        ".topbar button.nav-settings",
        "the Settings button",
    )
    .await;
    until(
        &client,
        "the registered shortcut",
        "const s = document.querySelector('[data-testid=shortcut-status]'); return !!s && s.dataset.registered === 'true' && s.textContent.includes('CommandOrControl+Shift+Space')",
    )
    .await;
    let field = client
        .find(Locator::Css("[data-testid=shortcut-input]"))
        .await
        .expect("the shortcut field");
    field.clear().await.expect("clear");
    field.send_keys("Ctrl+NoSuchKey").await.expect("type");
    click(&client, "[data-testid=shortcut-apply]", "Apply").await;
    until(
        &client,
        "the refusal",
        "return (document.querySelector('[data-testid=shortcut-error]')?.textContent ?? '').includes('Ctrl+NoSuchKey')",
    )
    .await;

    // The memory page in the real window: a memory added in its form comes back through the
    // IPC commands (memory_add, then the server-paged memory_list) as a row.
    click(&client, ".topbar button.nav-memory", "the Memory button").await;
    let content = client
        .wait()
        .at_most(STEP)
        .for_element(Locator::Css("[data-testid=memory-add-content]"))
        .await
        .expect("the memory form");
    content
        .send_keys("The user waters the ferns on Sundays")
        .await
        .expect("type a memory");
    click(&client, "[data-testid=memory-add]", "Add").await;
    until(
        &client,
        "the new memory row",
        "return [...document.querySelectorAll('[data-testid=memory-row]')].some((r) => r.textContent.includes('waters the ferns'))",
    )
    .await;

    // The trace page in the real window: the approved shell turn is listed (trace_list over
    // IPC), and opening it draws its waterfall (trace_get) with the tool's span and the
    // approval wait; the tool span's detail shows the exact command it ran.
    click(&client, ".topbar button.nav-traces", "the Traces button").await;
    until(
        &client,
        "the approved turn in the trace list",
        "return [...document.querySelectorAll('[data-testid=trace-row]')].some((r) => r.textContent.includes('Make a file'))",
    )
    .await;
    client
        .execute(
            "[...document.querySelectorAll('[data-testid=trace-row]')].find((r) => r.textContent.includes('Make a file')).querySelector('.trace-open').click()",
            vec![],
        )
        .await
        .expect("open the turn");
    until(
        &client,
        "the waterfall with a tool span and an approval span",
        "const kinds = [...document.querySelectorAll('[data-testid=span-row]')].map((r) => r.dataset.kind); return kinds.includes('tool') && kinds.includes('approval') && kinds.includes('model')",
    )
    .await;
    // Clicked from the page: the span's row may sit below the window's fold.
    client
        .execute(
            "document.querySelector('[data-testid=span-row][data-kind=tool]').click()",
            vec![],
        )
        .await
        .expect("open the tool span");
    until(
        &client,
        "the tool span's arguments",
        "return (document.querySelector('[data-testid=tool-arguments]')?.textContent ?? '').includes('touch desktop-approved.txt')",
    )
    .await;
    // An automation in the real app: a file dropped into its folder starts a run whose write
    // waits for approval; the OS notification says so, the Automations page shows the
    // question, Allow once lets it finish, and the OS notification says that too.
    std::fs::write(inbox.join("report.txt"), "Quarterly numbers\n").expect("drop a file");
    notifications
        .wait_for(
            "about the question",
            "“Inbox notes” needs your approval",
            "write_file",
        )
        .await;
    click(
        &client,
        ".topbar button.nav-automations",
        "the Automations button",
    )
    .await;
    until(
        &client,
        "the question in the approval queue",
        "return [...document.querySelectorAll('[data-testid=queued-approval]')].some((q) => q.querySelector('.queued-tool')?.textContent === 'write_file')",
    )
    .await;
    client
        .execute(
            "document.querySelector('[data-testid=queued-approval] [data-testid=queue-allow-once]').click()",
            vec![],
        )
        .await
        .expect("allow once");
    notifications
        .wait_for(
            "about the finished run",
            "“Inbox notes” finished",
            "report.txt",
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(work.path().join("notes/report.md")).expect("the filed note"),
        "Quarterly numbers, filed.\n"
    );
    click(&client, ".topbar button.nav-chat", "the Chat button").await;

    // Quick ask: the global shortcut opens a small window of its own; it answers, and Enter on
    // the empty input hands the conversation to the main window and destroys the small one.
    let main_window = client.window().await.expect("main window handle");
    let web_before = web_processes();
    let pressed = Command::new("xdotool")
        .args(["key", "--clearmodifiers", "ctrl+shift+space"])
        .status()
        .expect("xdotool (apt-get install xdotool)");
    assert!(pressed.success());
    let quick = wait_for_windows(&client, 2).await;
    let quick = quick
        .into_iter()
        .find(|w| *w != main_window)
        .expect("the quick-ask window");
    client
        .switch_to_window(quick)
        .await
        .expect("switch to quick ask");
    let web_open = web_processes();
    let input = client
        .wait()
        .at_most(STEP)
        .for_element(Locator::Css("[data-testid=quick-input]"))
        .await
        .expect("the quick-ask input");
    input
        .send_keys(&format!("Quick question{}", char::from(Key::Enter)))
        .await
        .expect("typing");
    // Quick ask asks before acting, in its own window.
    until(
        &client,
        "the approval dialog in quick ask",
        "return (document.querySelector('[role=dialog] .approval-detail')?.textContent ?? '').includes('touch quick-approved.txt')",
    )
    .await;
    click(
        &client,
        "[role=dialog] .buttons button",
        "Allow once in quick ask",
    )
    .await;
    until(
        &client,
        "the quick answer",
        "return (document.querySelector('[data-testid=quick-answer]')?.textContent ?? '').includes('A quick answer, streamed.')",
    )
    .await;
    until(
        &client,
        "the quick turn to end",
        "return !document.querySelector('[data-testid=quick-stop]')",
    )
    .await;
    // The window goes away while the key is being delivered, so the driver may report
    // NoSuchWindow for this command; what counts is checked next.
    let _ = input.send_keys(&char::from(Key::Enter).to_string()).await;
    wait_for_windows(&client, 1).await;
    client
        .switch_to_window(main_window)
        .await
        .expect("back to main");
    until(
        &client,
        "the quick-ask conversation in the main window",
        "const t = document.querySelector('.chat')?.textContent ?? ''; return t.includes('Quick question') && t.includes('A quick answer, streamed.')",
    )
    .await;
    assert!(
        work.path().join("quick-approved.txt").exists(),
        "approved from quick ask"
    );
    // The destroyed window's web process exits on its own schedule; wait for it.
    let start = Instant::now();
    let mut web_after = web_processes();
    while web_after > web_before && start.elapsed() < STEP {
        tokio::time::sleep(Duration::from_millis(100)).await;
        web_after = web_processes();
    }
    assert!(
        web_after <= web_before && web_open >= web_before,
        "web processes before {web_before}, with quick ask {web_open}, after {web_after}"
    );
    eprintln!("web processes: before {web_before}, with quick ask {web_open}, after {web_after}");

    // A long answer starts streaming; SIGTERM quits the app cleanly in the middle of it.
    send(&client, "Tell me a long story").await;
    until(
        &client,
        "the story to stream",
        &format!("{LAST_ASSISTANT} return !!last && last.dataset.status === 'running' && last.textContent.includes('goes on')"),
    )
    .await;
    let pids = app_pids(Path::new(APP));
    assert_eq!(pids.len(), 1, "one app process: {pids:?}");
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(pids[0].to_string())
        .status()
        .expect("kill");
    assert!(status.success());
    let start = Instant::now();
    while !app_pids(Path::new(APP)).is_empty() {
        assert!(start.elapsed() < STEP, "the app did not quit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(client);
    drop(driver);
    drop(notifications);

    // The stopped turn is saved as interrupted with its partial answer; the first completed.
    let store = Store::open_in(home.path()).await.expect("store");
    let turns = store
        .list_turns(&echo_core::store::TurnFilter::default(), 10)
        .await
        .expect("turns");
    let mut statuses: Vec<&str> = turns.iter().map(|t| t.status.as_str()).collect();
    statuses.sort();
    assert_eq!(
        statuses,
        [
            "completed",
            "completed",
            "completed",
            "completed",
            "interrupted"
        ],
        "{turns:?}"
    );
    let sessions = store.list_sessions().await.expect("sessions");
    assert_eq!(
        sessions.len(),
        3,
        "the main chat, the quick ask and the automation's run: {sessions:?}"
    );
    let interrupted = turns
        .iter()
        .find(|t| t.status == echo_core::TurnStatus::Interrupted)
        .expect("the interrupted turn");
    let session = echo_core::SessionId::from_string(interrupted.session_id.clone());
    let history = store.history(&session).await.expect("history");
    let last = history.last().expect("messages");
    assert_eq!(last.status, echo_core::MessageStatus::Partial, "{last:?}");
    assert!(last.content.contains("goes on"), "{last:?}");
}
