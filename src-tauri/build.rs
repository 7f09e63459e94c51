//! Tauri's build step, with an app manifest so every IPC command needs an explicit
//! permission: `capabilities/*.json` then grant each window only what its UI calls.

const COMMANDS: &[&str] = &[
    "list_sessions",
    "history",
    "rename_session",
    "delete_session",
    "send_turn",
    "cancel_turn",
    "answer_approval",
    "list_rules",
    "add_rule",
    "remove_rule",
    "mcp_servers",
    "mcp_config",
    "set_mcp_config",
    "approvals",
    "provider",
    "update_provider",
    "test_provider",
    "detect_ollama",
    "bootstrap_files",
    "save_bootstrap_file",
    "quick_shortcut",
    "set_quick_shortcut",
    "open_in_main",
    "dismiss_quick",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(e) = tauri_build::try_build(attributes) {
        eprintln!("tauri build step failed: {e:#}");
        std::process::exit(1);
    }
}
