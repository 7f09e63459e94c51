//! The desktop app's commands on Tauri's mock runtime (no window, no WebKit): the app is
//! built from the same `builder` the real one uses, with its real capabilities, and IPC
//! requests go through Tauri's permission check and the generated commands into `Api`.

use echo_agent::{Config, Overrides, ProcessEnv};
use echo_desk_shell::{Desk, builder};
use serde_json::{Value, json};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};

fn app(home: &std::path::Path) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let config = Config::load(
        &Overrides {
            home: Some(home.to_path_buf()),
            ..Overrides::default()
        },
        &ProcessEnv,
    )
    .expect("config");
    let api = tauri::async_runtime::block_on(echo_agent::Api::open(config)).expect("engine");
    let app = builder(mock_builder())
        .manage(Desk::new(api))
        .build(tauri::generate_context!(test = true))
        .expect("the app builds on the mock runtime");
    let window = app
        .get_webview_window("main")
        .or_else(|| {
            tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
                .build()
                .ok()
        })
        .expect("the main window");
    (app, window)
}

fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        window,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().expect("url"),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Value>().expect("a JSON answer"))
}

#[test]
fn generated_commands_reach_the_engine_and_errors_are_typed() {
    let home = tempfile::tempdir().expect("tempdir");
    let (_app, window) = app(home.path());

    let sessions = invoke(&window, "list_sessions", json!({ "request": {} })).expect("ok");
    assert_eq!(sessions, json!([]));

    let added = invoke(
        &window,
        "memory_add",
        json!({ "request": { "content": "I live in Lisbon" } }),
    )
    .expect("a memory is added through IPC");
    let id = added["memory"]["id"].as_str().expect("id").to_string();
    let listed = invoke(&window, "memory_list", json!({ "request": {} })).expect("ok");
    assert!(listed.to_string().contains(&id), "{listed}");

    // A missing session is the engine's typed error, in the same body the gateway sends.
    let error = invoke(
        &window,
        "history",
        json!({ "request": { "session": "nowhere" } }),
    )
    .expect_err("no such session");
    assert_eq!(error["error"]["code"], "not_found", "{error}");

    // A malformed request never reaches the engine.
    let error = invoke(&window, "memory_pin", json!({ "request": { "id": id } }))
        .expect_err("pinned is required");
    assert!(error.to_string().contains("pinned"), "{error}");
}

#[test]
fn the_main_window_may_not_call_the_quick_windows_commands() {
    let home = tempfile::tempdir().expect("tempdir");
    let (_app, window) = app(home.path());
    let refused = invoke(&window, "dismiss_quick", json!({}));
    assert!(
        refused.is_err(),
        "dismiss_quick is granted only to the quick-ask window: {refused:?}"
    );
}
