//! Tauri's build step, with an app manifest so every IPC command needs an explicit
//! permission: `capabilities/*.json` then grant each window only what its UI calls. The
//! command list is the operation table (`crates/echo-agent/src/operations.table`) plus the
//! desktop's own commands, so a new operation gets its permission without an edit here.

macro_rules! operations {
    ($(
        $name:ident : $method:ident $path:literal ($request:ident) -> $response:ty
            = |$api:ident, $req:pat_param| $body:expr;
    )*) => {
        const OPERATIONS: &[&str] = &[$(stringify!($name)),*];
    };
}

include!("../crates/echo-agent/src/operations.table");

/// Commands that are not engine operations (see `DESKTOP_COMMANDS` in `src/commands.rs`;
/// `tests/parity.rs` checks the two lists agree).
const DESKTOP: &[&str] = &[
    "send_turn",
    "quick_shortcut",
    "set_quick_shortcut",
    "open_in_main",
    "dismiss_quick",
];

fn main() {
    println!("cargo:rerun-if-changed=../crates/echo-agent/src/operations.table");
    let commands: Vec<&'static str> = OPERATIONS.iter().chain(DESKTOP).copied().collect();
    let commands: &'static [&'static str] = commands.leak();
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(commands));
    if let Err(e) = tauri_build::try_build(attributes) {
        eprintln!("tauri build step failed: {e:#}");
        std::process::exit(1);
    }
}
