//! The tray icon and its menu: show/hide the main window, quick ask, quit.

use crate::windows::{toggle_main, toggle_quick};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Runtime};

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

/// Puts the icon in the tray.
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let text = tray_text();
    let toggle = MenuItem::with_id(app, "toggle", text.show_hide, true, None::<&str>)?;
    let quick = MenuItem::with_id(app, "quick", text.quick, true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", text.quit, true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&toggle, &quick, &separator, &quit])?;
    let icon = tauri::image::Image::from_bytes(include_bytes!("../../icons/tray.png"))?;
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
