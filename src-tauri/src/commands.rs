//! IPC commands. Every engine operation is a command generated from the operation table
//! (`crates/echo-agent/src/operations.table`): parse (Tauri deserialises the `request`
//! argument), call `Api`, return. The few written here are the turn (its events stream over
//! a channel) and the desktop's own window and shortcut commands. Errors cross as the same
//! `{"error": {"code", "message"}}` body the gateway sends.

use crate::shortcut;
use crate::state::Desk;
use crate::windows;
#[allow(clippy::wildcard_imports, unused_imports)]
use echo_agent::wire::*;
use echo_agent::wire::{ErrorBody, ErrorCode};
use echo_agent::wire::{EventEnvelope, SendTurn, ShortcutStatus};
use echo_agent::{ApiError, EventHandler, TurnRequest};
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use tokio_util::sync::CancellationToken;

type Answer<T> = Result<T, ErrorBody>;

fn failure(e: ApiError) -> ErrorBody {
    ErrorBody::from(&e)
}

macro_rules! operations {
    ($(
        $name:ident : $method:ident $path:literal ($request:ident) -> $response:ty
            = |$api:ident, $req:pat_param| $body:expr;
    )*) => {
        $(
            #[tauri::command]
            pub async fn $name(desk: State<'_, Desk>, request: $request) -> Answer<$response> {
                desk.api.call(request).await.map_err(failure)
            }
        )*

        /// The engine operations that are commands, in table order.
        pub const OPERATION_COMMANDS: &[&str] = &[$(stringify!($name)),*];

        /// Every command: the operations, then the turn and the desktop's own.
        pub fn handler<R: Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
            tauri::generate_handler![
                $($name,)*
                send_turn,
                quick_shortcut,
                set_quick_shortcut,
                open_in_main,
                dismiss_quick
            ]
        }
    };
}

include!("../../crates/echo-agent/src/operations.table");

/// The commands that are not engine operations, each with why (the parity test reads this).
pub const DESKTOP_COMMANDS: &[(&str, &str)] = &[
    (
        "send_turn",
        "a turn: its answer is a stream of events over a channel (HTTP: POST /api/turns, SSE)",
    ),
    (
        "quick_shortcut",
        "the global shortcut's registration lives in the desktop process",
    ),
    (
        "set_quick_shortcut",
        "registers the shortcut with the system before the engine saves it",
    ),
    ("open_in_main", "window management"),
    ("dismiss_quick", "window management"),
];

/// Runs a turn; its events stream over `on_event` and the call returns when it has ended.
#[tauri::command]
pub async fn send_turn(
    desk: State<'_, Desk>,
    request: SendTurn,
    quick: Option<bool>,
    on_event: Channel<EventEnvelope>,
) -> Answer<()> {
    let entry_point = if quick == Some(true) {
        EntryPoint::QuickAsk
    } else {
        EntryPoint::Desktop
    };
    let request = TurnRequest::sent(request, entry_point);
    desk.api.validate(&request).await.map_err(failure)?;
    let handler: EventHandler = Arc::new(move |envelope: EventEnvelope| {
        if let Err(e) = on_event.send(envelope) {
            tracing::debug!(error = %e, "turn event not delivered (window gone)");
        }
    });
    // A window that goes away does not stop the turn: it finishes and is saved.
    desk.api
        .send(request, handler, CancellationToken::new())
        .await
        .map_err(failure)?;
    Ok(())
}

/// The quick-ask shortcut and whether it is registered (or why not).
#[tauri::command]
pub fn quick_shortcut(desk: State<'_, Desk>) -> ShortcutStatus {
    desk.shortcut_status()
}

/// Registers a new quick-ask shortcut and saves it; a taken or invalid one is refused with
/// the reason and the old one stays.
#[tauri::command]
pub fn set_quick_shortcut<R: Runtime>(
    app: AppHandle<R>,
    desk: State<'_, Desk>,
    shortcut: String,
) -> Answer<ShortcutStatus> {
    shortcut::change(&app, &desk, &shortcut)
        .map_err(|message| ErrorBody::new(ErrorCode::InvalidInput, message))
}

/// Shows a session in the main window (from quick ask's Enter) and closes quick ask.
#[tauri::command]
pub fn open_in_main<R: Runtime>(app: AppHandle<R>, session: String) -> Answer<()> {
    windows::open_in_main(&app, &session)
        .map_err(|e| ErrorBody::new(ErrorCode::InvalidInput, e.to_string()))
}

/// Closes the quick-ask window (Esc); its WebKit process goes with it.
#[tauri::command]
pub fn dismiss_quick<R: Runtime>(app: AppHandle<R>) {
    windows::close_quick(&app);
}
