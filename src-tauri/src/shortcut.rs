//! The quick-ask global shortcut: registered at start, swapped from the settings page (the
//! new one must register before the old one is let go; only an accepted one is saved).

use crate::state::Desk;
use echo_agent::wire::ShortcutStatus;
use tauri::{AppHandle, Runtime};
use tauri_plugin_global_shortcut::GlobalShortcutExt;

/// Registers `shortcut` and says whether that worked.
pub fn register<R: Runtime>(app: &AppHandle<R>, shortcut: &str) -> ShortcutStatus {
    let result = app.global_shortcut().register(shortcut);
    ShortcutStatus {
        shortcut: shortcut.to_string(),
        registered: result.is_ok(),
        error: result.err().map(|e| e.to_string()),
    }
}

/// Swaps the quick-ask shortcut; on any failure the old one stays and the error says why.
pub fn change<R: Runtime>(
    app: &AppHandle<R>,
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
    let status = register(app, shortcut);
    if let Some(e) = status.error {
        return Err(format!("{shortcut} cannot be used: {e}"));
    }
    if let Err(e) = desk.api.save_quick_ask_shortcut(shortcut) {
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
