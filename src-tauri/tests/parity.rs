//! One operation, every place: the engine's operation table (`echo_agent::OPERATIONS`), the
//! desktop app's commands and the permissions its build step generated, the windows'
//! capabilities, the gateway's OpenAPI document and the UI's generated operation list must
//! name the same operations. The exceptions are named and explained in
//! `src-tauri/src/commands.rs` (`DESKTOP_COMMANDS`: the turn stream and window commands) and
//! below (the gateway's own routes). A failure says which place is missing what.

use echo_agent::OPERATIONS;
use echo_desk_shell::{DESKTOP_COMMANDS, OPERATION_COMMANDS};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Gateway routes that are not operations of the table, and why.
const GATEWAY_ONLY: &[(&str, &str)] = &[
    ("/api/openapi.json", "the document itself"),
    (
        "/api/turns",
        "a turn: its answer is a stream of server-sent events (IPC: send_turn)",
    ),
    (
        "/api/pair",
        "a browser page trades its one-time code for a token (IPC needs none)",
    ),
];

/// Desktop commands the quick-ask window may call; every other desktop command is the main
/// window's.
const QUICK_WINDOW: &[&str] = &[
    "send_turn",
    "cancel_turn",
    "answer_approval",
    "open_in_main",
    "dismiss_quick",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path))
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn table() -> BTreeSet<&'static str> {
    OPERATIONS.iter().map(|op| op.name).collect()
}

fn desktop_only() -> BTreeSet<&'static str> {
    DESKTOP_COMMANDS.iter().map(|(name, _)| *name).collect()
}

/// `allow-list-sessions` → `list_sessions`.
fn command_of(permission: &str) -> Option<String> {
    permission
        .strip_prefix("allow-")
        .map(|name| name.replace('-', "_"))
}

fn missing<'a>(want: &BTreeSet<&'a str>, have: &BTreeSet<String>) -> Vec<&'a str> {
    want.iter()
        .filter(|name| !have.contains(**name))
        .copied()
        .collect()
}

#[test]
fn every_operation_is_a_desktop_command() {
    let commands: BTreeSet<String> = OPERATION_COMMANDS.iter().map(|s| s.to_string()).collect();
    let lost = missing(&table(), &commands);
    assert!(
        lost.is_empty(),
        "operations without a Tauri command (src-tauri/src/commands.rs): {lost:?}"
    );
    let overlap: Vec<_> = desktop_only().intersection(&table()).copied().collect();
    assert!(
        overlap.is_empty(),
        "DESKTOP_COMMANDS repeats operations of the table: {overlap:?}"
    );
}

#[test]
fn the_build_step_generated_a_permission_for_every_command_and_no_other() {
    let manifest = json(&root().join("src-tauri/gen/schemas/acl-manifests.json"));
    let permissions: BTreeSet<String> = manifest["__app-acl__"]["permissions"]
        .as_object()
        .expect("the app's own permissions in gen/schemas/acl-manifests.json")
        .keys()
        .filter_map(|p| command_of(p))
        .collect();
    let all: BTreeSet<&str> = table().union(&desktop_only()).copied().collect();
    let lost = missing(&all, &permissions);
    assert!(
        lost.is_empty(),
        "commands without a permission (src-tauri/build.rs's command list): {lost:?}"
    );
    let stray: Vec<_> = permissions
        .iter()
        .filter(|p| !all.contains(p.as_str()))
        .collect();
    assert!(
        stray.is_empty(),
        "permissions for commands that do not exist (src-tauri/build.rs): {stray:?}"
    );
}

#[test]
fn the_windows_are_granted_what_their_ui_calls() {
    let granted = |file: &str| -> BTreeSet<String> {
        json(&root().join("src-tauri/capabilities").join(file))["permissions"]
            .as_array()
            .expect("a permissions list")
            .iter()
            .filter_map(Value::as_str)
            .filter(|p| !p.starts_with("core:"))
            .map(|p| command_of(p).unwrap_or_else(|| panic!("{file}: unexpected permission {p}")))
            .collect()
    };
    let main = granted("main.json");
    let quick = granted("quick.json");
    let all: BTreeSet<&str> = table().union(&desktop_only()).copied().collect();
    let quick_only: BTreeSet<&str> = ["open_in_main", "dismiss_quick"].into();
    let want_main: BTreeSet<&str> = all.difference(&quick_only).copied().collect();
    let lost = missing(&want_main, &main);
    assert!(
        lost.is_empty(),
        "src-tauri/capabilities/main.json does not grant: {lost:?}"
    );
    let want_quick: BTreeSet<&str> = QUICK_WINDOW.iter().copied().collect();
    let lost = missing(&want_quick, &quick);
    assert!(
        lost.is_empty(),
        "src-tauri/capabilities/quick.json does not grant: {lost:?}"
    );
    for (file, set) in [("main.json", &main), ("quick.json", &quick)] {
        let stray: Vec<_> = set.iter().filter(|c| !all.contains(c.as_str())).collect();
        assert!(
            stray.is_empty(),
            "src-tauri/capabilities/{file} grants commands that do not exist: {stray:?}"
        );
    }
    let extra: Vec<_> = quick
        .iter()
        .filter(|c| !want_quick.contains(c.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "the quick-ask window is granted more than it calls (src-tauri/capabilities/quick.json): {extra:?}"
    );
}

#[test]
fn every_operation_is_a_gateway_route_in_the_openapi_document() {
    let doc = json(&root().join("docs/openapi.json"));
    let paths = doc["paths"].as_object().expect("paths");
    let mut routed = BTreeSet::new();
    for (path, item) in paths {
        let item = item.as_object().expect("a path item");
        for operation in item.values() {
            if let Some(id) = operation["operationId"].as_str() {
                routed.insert(id.to_string());
            }
        }
        let known_route = OPERATIONS.iter().any(|op| op.path == path)
            || GATEWAY_ONLY.iter().any(|(p, _)| p == path);
        assert!(
            known_route,
            "docs/openapi.json has {path}, which is neither an operation nor a named gateway route"
        );
    }
    let lost = missing(&table(), &routed);
    assert!(
        lost.is_empty(),
        "operations missing from docs/openapi.json (run ECHO_UPDATE_OPENAPI=1 cargo test -p echo-agent --test openapi): {lost:?}"
    );
}

#[test]
fn the_ui_knows_every_operation_and_only_real_desktop_commands() {
    let generated = read(&root().join("ui/src/generated/engine.ts"));
    let lost: Vec<_> = table()
        .into_iter()
        .filter(|name| {
            !generated.contains(&format!("\n  {name}: {{ request: "))
                || !generated.contains(&format!("\n  {name}: {{ method: "))
        })
        .collect();
    assert!(
        lost.is_empty(),
        "operations missing from `Operations` or `OPERATION_ROUTES` in ui/src/generated/engine.ts (run ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript): {lost:?}"
    );
    // The desktop transport invokes the desktop's own commands by name.
    let transport = read(&root().join("ui/src/tauriTransport.ts"));
    let invoked: BTreeSet<String> = transport
        .split("this.invoke")
        .skip(1)
        .filter_map(|rest| {
            // `this.invoke<T>('name', …)` or `this.invoke('name', …)`; a name held in a
            // variable (the generic `call`) is not a desktop command.
            let rest = match rest.strip_prefix('<') {
                Some(generic) => &generic[generic.find(">(")? + 1..],
                None => rest,
            };
            let rest = rest.strip_prefix("('")?;
            Some(rest[..rest.find('\'')?].to_string())
        })
        .collect();
    let desktop = desktop_only();
    let unknown: Vec<_> = invoked
        .iter()
        .filter(|c| !desktop.contains(c.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "ui/src/tauriTransport.ts invokes commands that are not desktop commands: {unknown:?}"
    );
    let lost = missing(&desktop, &invoked);
    assert!(
        lost.is_empty(),
        "desktop commands the UI never invokes (ui/src/tauriTransport.ts): {lost:?}"
    );
}
