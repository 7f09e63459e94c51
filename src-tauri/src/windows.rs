//! The app's windows: the main window (shown, hidden, brought up on a session) and the
//! quick-ask window (created on demand, destroyed when dismissed so no WebKit process idles).

use tauri::{Emitter, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

/// Label of the main window (tauri.conf.json).
pub const MAIN: &str = "main";
/// Label of the quick-ask window.
pub const QUICK: &str = "quick";

/// Shows the main window, or hides it when it is visible.
pub fn toggle_main<R: Runtime, M: Manager<R>>(app: &M) {
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

/// Shows the main window (and brings it to the front).
pub fn show_main<R: Runtime, M: Manager<R>>(app: &M) {
    if let Some(main) = app.get_webview_window(MAIN)
        && let Err(e) = main
            .show()
            .and_then(|()| main.unminimize())
            .and_then(|()| main.set_focus())
    {
        tracing::warn!(error = %e, "cannot show the main window");
    }
}

/// Opens quick ask, or closes it when it is open.
pub fn toggle_quick<R: Runtime, M: Manager<R>>(app: &M) {
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
pub fn close_quick<R: Runtime, M: Manager<R>>(app: &M) {
    if let Some(quick) = app.get_webview_window(QUICK)
        && let Err(e) = quick.destroy()
    {
        tracing::warn!(error = %e, "cannot close the quick-ask window");
    }
}

/// Brings the main window up on `session` and closes quick ask.
pub fn open_in_main<R: Runtime, M: Manager<R> + Emitter<R>>(
    app: &M,
    session: &str,
) -> tauri::Result<()> {
    if let Some(main) = app.get_webview_window(MAIN) {
        main.show()?;
        main.unminimize()?;
        main.set_focus()?;
        app.emit_to(MAIN, "open-session", session)?;
    }
    close_quick(app);
    Ok(())
}
