//! One operation, every place: the engine's operation table (`echo_agent::OPERATIONS`), the
//! desktop app's commands and the permissions its build step generated, the windows'
//! capabilities, the gateway's OpenAPI document and the UI's generated operation list must
//! name the same operations. The exceptions are named and explained in
//! `src-tauri/src/commands.rs` (`DESKTOP_COMMANDS`: the turn stream and window commands) and
//! below (the gateway's own routes). `echod`'s commands are checked the same way: each one
//! carries out operations of the table or says why it is apart (`CLI_COMMANDS`), and each
//! operation no command carries out says why (`NOT_IN_CLI`). A failure says which place is
//! missing what.

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

/// What an `echod` command is in terms of the operation table.
enum Cli {
    /// The operations it carries out (the CLI's source calls each one's `Api` method).
    Calls(&'static [&'static str]),
    /// Not an operation of the table, and why.
    Apart(&'static str),
}

/// Every `echod` command (`echod::command_paths`), with the operations it carries out.
const CLI_COMMANDS: &[(&str, Cli)] = &[
    (
        "ask",
        Cli::Apart("a turn: its answer is a stream (Api::send), like /api/turns"),
    ),
    (
        "chat",
        Cli::Apart("turns in a loop, each through Api::send"),
    ),
    (
        "serve",
        Cli::Apart("the gateway itself: it mounts the table"),
    ),
    ("history", Cli::Calls(&["history"])),
    ("provider show", Cli::Calls(&["provider"])),
    ("provider set", Cli::Calls(&["update_provider"])),
    ("provider test", Cli::Calls(&["test_provider"])),
    ("search show", Cli::Calls(&["search"])),
    ("search set", Cli::Calls(&["update_search"])),
    ("search test", Cli::Calls(&["test_search"])),
    ("model list", Cli::Calls(&["local_models"])),
    ("model fetch", Cli::Calls(&["fetch_local_model"])),
    ("model use", Cli::Calls(&["use_local_model"])),
    ("sessions list", Cli::Calls(&["list_sessions"])),
    ("sessions rename", Cli::Calls(&["rename_session"])),
    ("sessions move", Cli::Calls(&["move_session"])),
    ("projects add", Cli::Calls(&["add_project"])),
    ("projects list", Cli::Calls(&["list_projects"])),
    ("projects rename", Cli::Calls(&["edit_project"])),
    ("projects edit", Cli::Calls(&["edit_project"])),
    ("projects remove", Cli::Calls(&["remove_project"])),
    ("devices pair", Cli::Calls(&["pair_device"])),
    ("devices list", Cli::Calls(&["list_devices"])),
    ("devices revoke", Cli::Calls(&["revoke_device"])),
    ("devices log", Cli::Calls(&["list_access_events"])),
    ("sessions delete", Cli::Calls(&["delete_session"])),
    ("trace list", Cli::Calls(&["traces"])),
    ("trace show", Cli::Calls(&["trace"])),
    ("trace stats", Cli::Calls(&["trace_stats"])),
    ("trace call", Cli::Calls(&["trace_call"])),
    (
        "trace settings",
        Cli::Calls(&["trace_settings", "update_trace_settings"]),
    ),
    ("trace export", Cli::Calls(&["trace_case"])),
    (
        "replay",
        Cli::Apart(
            "a development tool of the standalone `echod` binary: a fresh engine in a scratch directory",
        ),
    ),
    ("rules list", Cli::Calls(&["list_rules"])),
    ("rules add", Cli::Calls(&["add_rule"])),
    ("rules remove", Cli::Calls(&["remove_rule"])),
    ("approvals list", Cli::Calls(&["approvals"])),
    ("approvals queue", Cli::Calls(&["approval_queue"])),
    ("approvals answer", Cli::Calls(&["answer_approval"])),
    ("automations list", Cli::Calls(&["automations"])),
    ("automations show", Cli::Calls(&["automation"])),
    ("automations add", Cli::Calls(&["add_automation"])),
    ("automations edit", Cli::Calls(&["edit_automation"])),
    ("automations remove", Cli::Calls(&["remove_automation"])),
    (
        "automations enable",
        Cli::Calls(&["set_automation_enabled", "set_all_automations_enabled"]),
    ),
    (
        "automations disable",
        Cli::Calls(&["set_automation_enabled", "set_all_automations_enabled"]),
    ),
    ("automations run", Cli::Calls(&["run_automation"])),
    ("automations runs", Cli::Calls(&["automation_runs"])),
    ("mcp list", Cli::Calls(&["mcp_servers"])),
    ("data delete-all", Cli::Calls(&["delete_all_data"])),
    ("data check", Cli::Calls(&["check_data"])),
    ("memory list", Cli::Calls(&["memory_list"])),
    ("memory search", Cli::Calls(&["memory_search"])),
    ("memory show", Cli::Calls(&["memory_show"])),
    ("memory add", Cli::Calls(&["memory_add"])),
    ("memory edit", Cli::Calls(&["memory_edit"])),
    ("memory pin", Cli::Calls(&["memory_pin"])),
    ("memory move", Cli::Calls(&["memory_move"])),
    ("memory unpin", Cli::Calls(&["memory_pin"])),
    ("memory forget", Cli::Calls(&["memory_forget"])),
    ("memory restore", Cli::Calls(&["memory_restore"])),
    ("memory undo", Cli::Calls(&["memory_undo"])),
    ("memory expire", Cli::Calls(&["memory_set_expiry"])),
    (
        "memory forget-session",
        Cli::Calls(&["memory_forget_session"]),
    ),
    (
        "memory delete",
        Cli::Calls(&["memory_delete", "memory_delete_all"]),
    ),
    ("memory conflicts", Cli::Calls(&["memory_conflicts"])),
    ("memory resolve", Cli::Calls(&["memory_resolve"])),
    ("memory sweep", Cli::Calls(&["memory_sweep"])),
    ("memory reindex", Cli::Calls(&["memory_reindex"])),
    ("memory export", Cli::Calls(&["memory_export"])),
    ("memory import", Cli::Calls(&["memory_import"])),
    (
        "memory settings",
        Cli::Calls(&["memory_settings", "update_memory_settings"]),
    ),
    ("memory proposals", Cli::Calls(&["memory_proposals"])),
    ("memory keep", Cli::Calls(&["memory_keep_proposal"])),
    ("memory discard", Cli::Calls(&["memory_discard_proposal"])),
    (
        "memory import-text",
        Cli::Calls(&["memory_import_preview", "memory_import_cards"]),
    ),
    (
        "bench overhead",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench research",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench memory",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench embed",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench context",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench automations",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench locomo",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
    (
        "bench local-model",
        Cli::Apart("a benchmark of the standalone `echod` binary, measured in process"),
    ),
];

/// Operations no `echod` command carries out, and why.
const NOT_IN_CLI: &[(&str, &str)] = &[
    ("cancel_turn", "Ctrl-C stops the CLI's own turn in process"),
    (
        "turn_memory",
        "the chat's line under an answer; `memory list` and `memory show` tell what a turn taught",
    ),
    (
        "pending_approvals",
        "the CLI asks its questions in the terminal as they come",
    ),
    (
        "automation_notices",
        "the desktop app's OS notifications and tray badge",
    ),
    (
        "preview_automation",
        "the automation form's live preview; `automations add` checks the spec whole",
    ),
    (
        "mcp_config",
        "the settings page; the CLI's MCP servers are config.toml's [[tools.mcp]]",
    ),
    (
        "set_mcp_config",
        "the settings page; the CLI's MCP servers are config.toml's [[tools.mcp]]",
    ),
    (
        "detect_ollama",
        "the settings page's suggestion; `provider set --kind ollama` names it",
    ),
    (
        "bootstrap_files",
        "the settings page's editor; the files are in the data directory",
    ),
    (
        "save_bootstrap_file",
        "the settings page's editor; the files are in the data directory",
    ),
    (
        "desktop_settings",
        "the desktop app's own settings (shortcut, tray)",
    ),
    (
        "memory_fading",
        "the memory page's fading chart; `memory show` gives the figures",
    ),
    ("memory_stats", "the memory page's header counts"),
];

/// Each operation of `operations.table` with its request type and the `Api` method its body
/// calls first.
fn api_method_of_each_operation() -> Vec<(String, (String, String))> {
    let table = read(&root().join("crates/echo-agent/src/operations.table"));
    let mut out = Vec::new();
    for entry in table.split(';') {
        let Some((head, body)) = entry.split_once("= |") else {
            continue;
        };
        let Some(line) = head
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty() && !l.starts_with("//"))
        else {
            continue;
        };
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let request = rest
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .map_or("", |(r, _)| r);
        let Some(after) = body.split_once("api.").map(|(_, rest)| rest) else {
            continue;
        };
        let method: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        out.push((name.trim().to_string(), (request.to_string(), method)));
    }
    out
}

#[test]
fn every_cli_command_is_an_operation_or_says_why_not() {
    let commands: BTreeSet<String> = echod::command_paths().into_iter().collect();
    let listed: BTreeSet<&str> = CLI_COMMANDS.iter().map(|(c, _)| *c).collect();
    let mut problems = Vec::new();
    for command in &commands {
        if !listed.contains(command.as_str()) {
            problems.push(format!(
                "`echod {command}` is not in CLI_COMMANDS: name the operations it calls or \
                 say why it has none"
            ));
        }
    }
    for command in &listed {
        if !commands.contains(*command) {
            problems.push(format!(
                "CLI_COMMANDS lists `echod {command}`, which echod does not parse"
            ));
        }
    }

    let methods: std::collections::BTreeMap<String, (String, String)> =
        api_method_of_each_operation().into_iter().collect();
    let ops = table();
    assert_eq!(
        methods.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        ops,
        "every operation of the table has one body that calls `api.…`"
    );
    let cli_source: String = std::fs::read_dir(root().join("crates/echod/src"))
        .expect("crates/echod/src")
        .map(|e| e.expect("entry").path())
        .filter(|p| !p.ends_with("serve.rs"))
        .map(|p| read(&p))
        .collect();
    let mut called = BTreeSet::new();
    for (command, what) in CLI_COMMANDS {
        let names = match what {
            Cli::Calls(names) => names,
            Cli::Apart(why) => {
                if why.trim().is_empty() {
                    problems.push(format!("`echod {command}` is apart without a reason"));
                }
                continue;
            }
        };
        for name in *names {
            called.insert(*name);
            match methods.get(*name) {
                None => problems.push(format!(
                    "`echod {command}` names `{name}`, which is no operation of the table"
                )),
                Some((request, method))
                    if !cli_source.contains(&format!(".{method}("))
                        && !cli_source.contains(&format!("{request} {{"))
                        && !cli_source.contains(&format!("{request}::from("))
                        && !cli_source.contains(&format!("{request}(")) =>
                {
                    problems.push(format!(
                        "`echod {command}` is said to carry out `{name}`, but crates/echod/src \
                         neither calls `Api::{method}` nor sends a `{request}`"
                    ))
                }
                Some(_) => {}
            }
        }
    }
    let apart: BTreeSet<&str> = NOT_IN_CLI.iter().map(|(n, _)| *n).collect();
    for op in &ops {
        match (called.contains(op), apart.contains(op)) {
            (false, false) => problems.push(format!(
                "operation `{op}` has no echod command: add one, or add it to NOT_IN_CLI with \
                 the reason"
            )),
            (true, true) => problems.push(format!(
                "operation `{op}` is in NOT_IN_CLI, but `echod` carries it out: remove it there"
            )),
            _ => {}
        }
    }
    for name in &apart {
        if !ops.contains(name) {
            problems.push(format!(
                "NOT_IN_CLI lists `{name}`, which is no operation of the table"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
