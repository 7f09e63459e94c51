//! The desktop around the engine: the main window (closing hides it to the tray), the tray
//! menu, the quick-ask window (created on demand by a global shortcut, destroyed when
//! dismissed so no WebKit process idles), and a clean quit that stops running turns first.

use crate::commands;
use echo_agent::Api;
use echo_core::config::Config;
use serde::Serialize;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::webview::PageLoadEvent;
use tauri::{AppHandle, Emitter, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};

/// Label of the main window (tauri.conf.json).
const MAIN: &str = "main";
/// Label of the quick-ask window.
const QUICK: &str = "quick";
/// How long quitting waits for stopped turns to save their partial answers.
const QUIT_WAIT: Duration = Duration::from_secs(5);

/// What the app keeps: the engine and the desktop settings in force.
pub struct Desk {
    /// The engine.
    pub api: Api,
    shortcut: Mutex<ShortcutStatus>,
    close_to_tray: bool,
}

/// The quick-ask shortcut and whether it works.
#[derive(Clone, Debug, Serialize)]
pub struct ShortcutStatus {
    /// Accelerator, e.g. `CommandOrControl+Shift+Space`.
    pub shortcut: String,
    /// Whether it is registered now.
    pub registered: bool,
    /// Why it is not (taken by another program, not a valid accelerator).
    pub error: Option<String>,
}

impl Desk {
    /// The shortcut's state.
    pub fn shortcut_status(&self) -> ShortcutStatus {
        self.shortcut
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn set_shortcut_status(&self, status: ShortcutStatus) {
        *self.shortcut.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }
}

/// Opens the engine and runs the app until it quits. `started` is when the process began;
/// the time to the main page's first load is logged (`scripts/bench-desktop.sh` reads it).
pub fn run(config: Config, started: Instant) -> anyhow::Result<()> {
    let shortcut = config.desktop.quick_ask_shortcut.clone();
    let close_to_tray = config.desktop.close_to_tray;
    let app = tauri::Builder::default()
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state() == ShortcutState::Pressed {
                        toggle_quick(app);
                    }
                })
                .build(),
        )
        .invoke_handler(tauri::generate_handler![
            commands::list_sessions,
            commands::history,
            commands::rename_session,
            commands::delete_session,
            commands::send_turn,
            commands::cancel_turn,
            commands::answer_approval,
            commands::list_rules,
            commands::add_rule,
            commands::remove_rule,
            commands::mcp_servers,
            commands::mcp_config,
            commands::set_mcp_config,
            commands::approvals,
            commands::provider,
            commands::update_provider,
            commands::test_provider,
            commands::detect_ollama,
            commands::bootstrap_files,
            commands::save_bootstrap_file,
            commands::quick_shortcut,
            commands::set_quick_shortcut,
            commands::open_in_main,
            commands::dismiss_quick,
        ])
        .setup(move |app| {
            let api = tauri::async_runtime::block_on(Api::open(config))?;
            // The runtime context lets the index build start on Tauri's runtime.
            tauri::async_runtime::block_on(async { api.warm_memory_search() });
            app.manage(Desk {
                api,
                shortcut: Mutex::new(ShortcutStatus {
                    shortcut: shortcut.clone(),
                    registered: false,
                    error: None,
                }),
                close_to_tray,
            });
            if let Err(e) = build_tray(app.handle()) {
                // No tray (no status-notifier host): the app still works from its window.
                tracing::warn!(error = %e, "no tray icon");
            }
            let status = register_shortcut(app.handle(), &shortcut);
            if let Some(e) = &status.error {
                tracing::warn!(%shortcut, error = %e, "quick-ask shortcut not registered");
            }
            app.state::<Desk>().set_shortcut_status(status);
            quit_on_signal(app.handle().clone());
            Ok(())
        })
        .on_page_load(move |webview, payload| {
            if webview.label() == MAIN && payload.event() == PageLoadEvent::Finished {
                tracing::info!(
                    ms = started.elapsed().as_millis() as u64,
                    "main page loaded"
                );
            }
        })
        .on_window_event(|window, event| {
            if let WindowEvent::CloseRequested { api, .. } = event
                && window.label() == MAIN
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
        .build(tauri::generate_context!())?;
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            shutdown(app);
        }
    });
    Ok(())
}

/// SIGTERM (logout, `kill`) and Ctrl-C quit the way the tray's Quit does.
fn quit_on_signal(app: AppHandle) {
    tauri::async_runtime::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = tokio::signal::ctrl_c() => {}
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "SIGTERM not handled");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        app.exit(0);
    });
}

/// Stops running turns (each saves its partial answer, marked interrupted), waits a little
/// for them, and closes the engine.
fn shutdown(app: &AppHandle) {
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

/// Tray labels in the system's language (English, or Simplified Chinese).
struct TrayText {
    show_hide: &'static str,
    quick: &'static str,
    quit: &'static str,
}

fn tray_text() -> TrayText {
    let lang = ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_default();
    if lang.starts_with("zh") {
        TrayText {
            show_hide: "显示/隐藏 Echo Desk",
            quick: "快速提问",
            quit: "退出",
        }
    } else {
        TrayText {
            show_hide: "Show/Hide Echo Desk",
            quick: "Quick ask",
            quit: "Quit",
        }
    }
}

fn build_tray(app: &AppHandle) -> tauri::Result<()> {
    let text = tray_text();
    let toggle = MenuItem::with_id(app, "toggle", text.show_hide, true, None::<&str>)?;
    let quick = MenuItem::with_id(app, "quick", text.quick, true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", text.quit, true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&toggle, &quick, &separator, &quit])?;
    let icon = tauri::image::Image::from_bytes(include_bytes!("../icons/tray.png"))?;
    TrayIconBuilder::with_id("main")
        .icon(icon)
        .tooltip("Echo Desk")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "toggle" => toggle_main(app),
            "quick" => toggle_quick(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .build(app)?;
    Ok(())
}

fn toggle_main(app: &AppHandle) {
    let Some(main) = app.get_webview_window(MAIN) else {
        return;
    };
    let visible = main.is_visible().unwrap_or(false);
    let result = if visible {
        main.hide()
    } else {
        main.show().and_then(|()| main.set_focus())
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, "cannot show or hide the main window");
    }
}

/// Opens quick ask, or closes it when it is open.
fn toggle_quick(app: &AppHandle) {
    if app.get_webview_window(QUICK).is_some() {
        close_quick(app);
        return;
    }
    let built = WebviewWindowBuilder::new(app, QUICK, WebviewUrl::App("quick.html".into()))
        .title("Echo Desk")
        .inner_size(640.0, 380.0)
        .resizable(false)
        .decorations(false)
        .always_on_top(true)
        .skip_taskbar(true)
        .center()
        .focused(true)
        .build();
    if let Err(e) = built {
        tracing::warn!(error = %e, "cannot open the quick-ask window");
    }
}

/// Destroys the quick-ask window (and with it its WebKit web process).
pub fn close_quick(app: &AppHandle) {
    if let Some(quick) = app.get_webview_window(QUICK)
        && let Err(e) = quick.destroy()
    {
        tracing::warn!(error = %e, "cannot close the quick-ask window");
    }
}

/// Brings the main window up on `session` and closes quick ask.
pub fn open_in_main(app: &AppHandle, session: &str) -> tauri::Result<()> {
    if let Some(main) = app.get_webview_window(MAIN) {
        main.show()?;
        main.unminimize()?;
        main.set_focus()?;
        app.emit_to(MAIN, "open-session", session)?;
    }
    close_quick(app);
    Ok(())
}

fn register_shortcut(app: &AppHandle, shortcut: &str) -> ShortcutStatus {
    let result = app.global_shortcut().register(shortcut);
    ShortcutStatus {
        shortcut: shortcut.to_string(),
        registered: result.is_ok(),
        error: result.err().map(|e| e.to_string()),
    }
}

/// Swaps the quick-ask shortcut: the new one must register before the old one is let go,
/// and is saved to `config.toml`; on any failure the old one stays and the error says why.
pub fn change_shortcut(
    app: &AppHandle,
    desk: &Desk,
    shortcut: &str,
) -> Result<ShortcutStatus, String> {
    let shortcut = shortcut.trim();
    if shortcut.is_empty() {
        return Err("the shortcut is empty".into());
    }
    let old = desk.shortcut_status();
    if old.registered && old.shortcut.eq_ignore_ascii_case(shortcut) {
        return Ok(old);
    }
    let status = register_shortcut(app, shortcut);
    if let Some(e) = status.error {
        return Err(format!("{shortcut} cannot be used: {e}"));
    }
    if let Err(e) =
        echo_core::config::edit::save_quick_ask_shortcut(&desk.api.config().home, shortcut)
    {
        let _ = app.global_shortcut().unregister(shortcut);
        return Err(e.to_string());
    }
    if old.registered
        && let Err(e) = app.global_shortcut().unregister(old.shortcut.as_str())
    {
        tracing::warn!(shortcut = %old.shortcut, error = %e, "old shortcut not released");
    }
    desk.set_shortcut_status(status.clone());
    Ok(status)
}
