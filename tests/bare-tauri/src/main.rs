//! A bare Tauri 2 app: one window showing one static page, nothing else. It logs
//! `main page loaded ms=…` (from process start) as `echo-desk` does, to stderr, so
//! `scripts/bench-desktop.sh` measures both the same way; SIGTERM ends it as it ends the app.

use std::time::Instant;
use tauri::webview::PageLoadEvent;

fn main() {
    let started = Instant::now();
    let built = tauri::Builder::default()
        .on_page_load(move |_webview, payload| {
            if payload.event() == PageLoadEvent::Finished {
                eprintln!(
                    "bare-tauri: main page loaded ms={}",
                    started.elapsed().as_millis()
                );
            }
        })
        .build(tauri::generate_context!());
    match built {
        Ok(app) => app.run(|_, _| {}),
        Err(e) => {
            eprintln!("bare-tauri: {e}");
            std::process::exit(1);
        }
    }
}
