//! Echo Desk, the desktop app: a Tauri 2 shell that owns the engine (`echo_agent::Api`)
//! in-process and hosts the same web UI `echod serve` serves.
//!
//! The rooms, each depending only on those listed before it: `instance` (one app per data
//! directory; a second start hands its request over), `state` (what the app keeps),
//! `windows` (main and quick-ask windows), `shortcut` (the global quick-ask shortcut), `tray`
//! (its menu, the approvals count, pause/resume all automations), `notices` (OS notifications
//! about automation runs), `commands` (IPC: thin calls into `Api`), and this file, which owns the command list and
//! wires the app ([`builder`] for any Tauri runtime, so tests can drive it on the mock
//! runtime; [`run`] for the real one).
#![deny(missing_docs)]

mod commands;
mod instance;
mod notices;
mod shortcut;
mod state;
mod tray;
mod windows;

pub use commands::{DESKTOP_COMMANDS, OPERATION_COMMANDS};
pub use instance::Request as Launch;
pub use state::Desk;

use echo_agent::Api;
use echo_agent::Config;
use std::time::{Duration, Instant};
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Manager, RunEvent, Runtime, WindowEvent};
use tauri_plugin_global_shortcut::ShortcutState;

/// How long quitting waits for stopped turns to save their partial answers.
const QUIT_WAIT: Duration = Duration::from_secs(5);

/// `base` with every command, and closing the main window hiding it to the tray when the
/// settings say so; any runtime (tests pass `tauri::test::mock_builder()`). The engine is
/// `manage`d by the caller as a [`Desk`].
pub fn builder<R: Runtime>(base: tauri::Builder<R>) -> tauri::Builder<R> {
    base.invoke_handler(commands::handler())
        .on_window_event(|window, event| {
            if let WindowEvent::CloseRequested { api, .. } = event
                && window.label() == windows::MAIN
                && window
                    .try_state::<Desk>()
                    .is_some_and(|desk| desk.close_to_tray)
            {
                api.prevent_close();
                if let Err(e) = window.hide() {
                    tracing::warn!(error = %e, "cannot hide the main window");
                }
            }
        })
}

/// Opens the engine and runs the app until it quits, or, when an app already runs on the
/// same data directory, hands `launch` to it and returns. `started` is when the process
/// began; the time to the main page's first load is logged (`scripts/bench-desktop.sh` reads
/// it).
pub fn run(config: Config, started: Instant, launch: Launch) -> anyhow::Result<()> {
    let listener = match instance::claim(&config.home, launch) {
        Ok(instance::Claim::First(listener)) => listener,
        Ok(instance::Claim::Forwarded) => {
            tracing::info!(
                ?launch,
                "handed to the app already running on this data directory"
            );
            return Ok(());
        }
        Err(e) => anyhow::bail!(
            "cannot tell whether Echo Desk already runs on {}: {e}",
            config.home.display()
        ),
    };
    let webview_data = windows::WebviewData(config.home.join("webview"));
    let app = builder(tauri::Builder::<tauri::Wry>::new())
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state() == ShortcutState::Pressed {
                        windows::toggle_quick(app);
                    }
                })
                .build(),
        )
        .plugin(tauri_plugin_notification::init())
        .setup(move |app| {
            // The window first, as Tauri creates configured windows before `setup`: WebKit
            // starts and loads the page while the engine opens (the page's calls wait for
            // the event loop, which runs once `setup` is done).
            app.manage(webview_data);
            windows::create_main(app.handle())?;
            let api = tauri::async_runtime::block_on(Api::open(config))?;
            // The runtime context lets the index build start on Tauri's runtime.
            tauri::async_runtime::block_on(async {
                api.warm_memory_search();
                // Automations keep running while the window is closed (the app stays in
                // the tray); the store decides which open process runs each one.
                api.start_automations();
            });
            app.manage(Desk::new(api));
            if let Err(e) = tray::build(app.handle()) {
                // No tray (no status-notifier host): the app still works from its window.
                tracing::warn!(error = %e, "no tray icon");
            }
            notices::watch(app.handle().clone());
            let desk = app.state::<Desk>();
            let wanted = desk.shortcut_status().shortcut;
            let status = shortcut::register(app.handle(), &wanted);
            if let Some(e) = &status.error {
                tracing::warn!(shortcut = %wanted, error = %e, "quick-ask shortcut not registered");
            }
            desk.set_shortcut_status(status);
            quit_on_signal(app.handle().clone());
            let handle = app.handle().clone();
            instance::serve(listener, move |request| {
                let app = handle.clone();
                let shown = handle.run_on_main_thread(move || match request {
                    Launch::Show => windows::show_main(&app),
                    Launch::QuickAsk => windows::open_quick(&app),
                });
                if let Err(e) = shown {
                    tracing::warn!(error = %e, "cannot act on a second start");
                }
            });
            if launch == Launch::QuickAsk {
                if let Some(main) = app.get_webview_window(windows::MAIN) {
                    let _ = main.hide();
                }
                windows::open_quick(app.handle());
            }
            Ok(())
        })
        .on_page_load(move |webview, payload| {
            if webview.label() == windows::MAIN && payload.event() == PageLoadEvent::Finished {
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    "main page loaded"
                );
            }
        })
        .build(tauri::generate_context!())?;
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            shutdown(app);
        }
    });
    Ok(())
}

/// SIGTERM (logout, `kill`) and Ctrl-C quit the way the tray's Quit does.
fn quit_on_signal<R: Runtime>(app: AppHandle<R>) {
    tauri::async_runtime::spawn(async move {
        echod::stop_signal().await;
        app.exit(0);
    });
}

/// Stops running turns (each saves its partial answer, marked interrupted), waits a little
/// for them, and closes the engine.
fn shutdown<R: Runtime>(app: &AppHandle<R>) {
    let Some(desk) = app.try_state::<Desk>() else {
        return;
    };
    let api = desk.api.clone();
    let stopped = api.cancel_all();
    if stopped > 0 {
        tracing::info!(stopped, "quitting: stopped running turns");
    }
    tauri::async_runtime::block_on(async move {
        let deadline = Instant::now() + QUIT_WAIT;
        while api.running_turns() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        api.close().await;
    });
}
