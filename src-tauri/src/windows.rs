//! The app's windows: the main window (shown, hidden, brought up on a session) and the
//! quick-ask window (created on demand, destroyed when dismissed so no WebKit process idles).

use std::path::PathBuf;
use tauri::{Emitter, Manager, Runtime, WebviewUrl, WebviewWindowBuilder};

/// Where the web views keep their storage (WebKit's local storage, caches, cookies): inside
/// the data directory, so nothing of the app's lives outside it (Tauri's default is a
/// directory of its own under the platform's local data directory). Both windows share it,
/// and with it one WebKit network process.
pub struct WebviewData(pub PathBuf);

/// Creates the main window from its entry in tauri.conf.json (`create: false` there, so that
/// it gets the data directory of [`WebviewData`]).
pub fn create_main<R: Runtime>(app: &tauri::AppHandle<R>) -> tauri::Result<()> {
    let Some(config) = app.config().app.windows.iter().find(|w| w.label == MAIN) else {
        return Err(tauri::Error::WindowNotFound);
    };
    let builder = WebviewWindowBuilder::from_config(app, config)?;
    with_data_directory(app, builder).build()?;
    Ok(())
}

fn with_data_directory<'a, R: Runtime, M: Manager<R>>(
    app: &M,
    builder: WebviewWindowBuilder<'a, R, M>,
) -> WebviewWindowBuilder<'a, R, M> {
    match app.try_state::<WebviewData>() {
        Some(dir) => builder.data_directory(dir.0.clone()),
        None => builder,
    }
}

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
    open_quick(app);
}

/// Opens quick ask, or brings it to the front when it is open.
pub fn open_quick<R: Runtime, M: Manager<R>>(app: &M) {
    if let Some(quick) = app.get_webview_window(QUICK) {
        if let Err(e) = quick.show().and_then(|()| quick.set_focus()) {
            tracing::warn!(error = %e, "cannot bring the quick-ask window up");
        }
        return;
    }
    let builder = WebviewWindowBuilder::new(app, QUICK, WebviewUrl::App("quick.html".into()));
    let built = with_data_directory(app, builder)
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
