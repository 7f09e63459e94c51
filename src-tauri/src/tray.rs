//! The tray icon and its menu: show/hide the main window, quick ask, the approval questions
//! waiting (with a count beside the icon), pause/resume all automations, quit.

use crate::state::Desk;
use crate::windows::{show_main, toggle_main, toggle_quick};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, Runtime};

/// Whether the system's language is Chinese (the tray and notifications speak it then).
pub fn chinese() -> bool {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .is_some_and(|lang| lang.starts_with("zh"))
}

/// What the tray shows about automations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrayLook {
    /// Beside the icon: the number of questions waiting, if any.
    pub title: Option<String>,
    /// The icon's tooltip.
    pub tooltip: String,
    /// The approvals item, and whether it can be clicked.
    pub approvals: (String, bool),
    /// The pause/resume item, and whether it can be clicked (there are automations).
    pub pause: (String, bool),
}

impl TrayLook {
    /// The look for `pending` questions and `enabled` of `total` automations.
    pub fn new(zh: bool, pending: i64, enabled: i64, total: i64) -> TrayLook {
        let pause = match (zh, enabled > 0) {
            (false, true) => "Pause all automations",
            (false, false) => "Resume all automations",
            (true, true) => "暂停所有自动化",
            (true, false) => "恢复所有自动化",
        };
        let approvals = match (zh, pending) {
            (false, 0) => "No approvals waiting".to_string(),
            (false, 1) => "1 approval waiting…".to_string(),
            (false, n) => format!("{n} approvals waiting…"),
            (true, 0) => "没有待批准的操作".to_string(),
            (true, n) => format!("{n} 项操作待批准…"),
        };
        let tooltip = if pending > 0 {
            format!("Echo Desk — {approvals}")
        } else {
            "Echo Desk".to_string()
        };
        TrayLook {
            title: (pending > 0).then(|| pending.to_string()),
            tooltip,
            approvals: (approvals, pending > 0),
            pause: (pause.to_string(), total > 0),
        }
    }
}

/// The tray's parts that change (`manage`d when the tray exists).
pub struct Tray<R: Runtime> {
    icon: TrayIcon<R>,
    approvals: MenuItem<R>,
    pause: MenuItem<R>,
}

impl<R: Runtime> Tray<R> {
    /// Shows `look`.
    pub fn show(&self, look: &TrayLook) -> tauri::Result<()> {
        self.icon.set_title(look.title.as_deref())?;
        self.icon.set_tooltip(Some(&look.tooltip))?;
        self.approvals.set_text(&look.approvals.0)?;
        self.approvals.set_enabled(look.approvals.1)?;
        self.pause.set_text(&look.pause.0)?;
        self.pause.set_enabled(look.pause.1)
    }
}

/// Puts the icon in the tray and `manage`s its [`Tray`].
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let zh = chinese();
    let (show_hide, quick, quit) = if zh {
        ("显示/隐藏 Echo Desk", "快速提问", "退出")
    } else {
        ("Show/Hide Echo Desk", "Quick ask", "Quit")
    };
    let look = TrayLook::new(zh, 0, 0, 0);
    let toggle = MenuItem::with_id(app, "toggle", show_hide, true, None::<&str>)?;
    let quick = MenuItem::with_id(app, "quick", quick, true, None::<&str>)?;
    let approvals = MenuItem::with_id(
        app,
        "approvals",
        &look.approvals.0,
        look.approvals.1,
        None::<&str>,
    )?;
    let pause = MenuItem::with_id(app, "pause_all", &look.pause.0, look.pause.1, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", quit, true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &toggle,
            &quick,
            &PredefinedMenuItem::separator(app)?,
            &approvals,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let image = tauri::image::Image::from_bytes(include_bytes!("../../icons/tray.png"))?;
    let icon = TrayIconBuilder::with_id("main")
        .icon(image)
        .tooltip("Echo Desk")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "toggle" => toggle_main(app),
            "quick" => toggle_quick(app),
            "approvals" => show_main(app),
            "pause_all" => pause_or_resume_all(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .build(app)?;
    app.manage(Tray {
        icon,
        approvals,
        pause,
    });
    Ok(())
}

/// Pauses every automation when any is on, else resumes them all; the tray follows on the
/// next look at the notices.
fn pause_or_resume_all<R: Runtime>(app: &AppHandle<R>) {
    let Some(desk) = app.try_state::<Desk>() else {
        return;
    };
    let api = desk.api.clone();
    tauri::async_runtime::spawn(async move {
        let result = match api.automation_notices(None).await {
            Ok(now) => api.set_all_automations_enabled(now.enabled == 0).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(changed) => tracing::info!(changed, "tray: paused or resumed all automations"),
            Err(e) => tracing::warn!(error = %e, "tray: cannot pause or resume automations"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::TrayLook;

    #[test]
    fn the_tray_counts_waiting_questions_and_offers_what_can_be_done() {
        let calm = TrayLook::new(false, 0, 2, 2);
        assert_eq!(calm.title, None);
        assert_eq!(calm.tooltip, "Echo Desk");
        assert_eq!(calm.approvals, ("No approvals waiting".into(), false));
        assert_eq!(calm.pause, ("Pause all automations".into(), true));

        let waiting = TrayLook::new(false, 3, 0, 2);
        assert_eq!(waiting.title.as_deref(), Some("3"));
        assert_eq!(waiting.tooltip, "Echo Desk — 3 approvals waiting…");
        assert!(waiting.approvals.1);
        assert_eq!(waiting.pause, ("Resume all automations".into(), true));

        // No automations at all: nothing to pause or resume.
        assert!(!TrayLook::new(false, 0, 0, 0).pause.1);
        assert_eq!(TrayLook::new(true, 1, 1, 1).approvals.0, "1 项操作待批准…");
    }
}
