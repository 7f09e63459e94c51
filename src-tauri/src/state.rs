//! What the desktop app keeps while it runs: the engine and the desktop settings in force.
//! Commands, the tray and the windows read it; it depends on none of them.

use echo_agent::Api;
use echo_agent::wire::ShortcutStatus;
use std::sync::Mutex;

/// The app's state (`tauri::Manager::manage`d once at start).
pub struct Desk {
    /// The engine.
    pub api: Api,
    shortcut: Mutex<ShortcutStatus>,
    /// Closing the main window hides it to the tray.
    pub close_to_tray: bool,
}

impl Desk {
    /// The engine with its desktop settings; the shortcut is not registered yet.
    pub fn new(api: Api) -> Desk {
        let settings = api.desktop_settings();
        Desk {
            api,
            shortcut: Mutex::new(ShortcutStatus {
                shortcut: settings.quick_ask_shortcut,
                registered: false,
                error: None,
            }),
            close_to_tray: settings.close_to_tray,
        }
    }

    /// The shortcut's state.
    pub fn shortcut_status(&self) -> ShortcutStatus {
        self.shortcut
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records the shortcut's state.
    pub fn set_shortcut_status(&self, status: ShortcutStatus) {
        *self.shortcut.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }
}
