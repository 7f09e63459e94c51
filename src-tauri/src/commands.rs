//! IPC commands: each one a thin call into `Api`, mirroring `echod serve`'s routes so the
//! UI's two transports behave alike. Errors cross as `{code, message}`.

use crate::desktop::{self, Desk};
use echo_agent::echo_gate::{AuditEntry, Rule};
use echo_agent::echo_mcp::ServerStatus;
use echo_agent::{
    ApiError, ApprovalAnswer, ApprovalMode, BootstrapFile, ConnectionReport, EventHandler,
    OllamaInfo, ProviderUpdate, ProviderView, RuleRequest, TurnRequest,
};
use echo_core::EventEnvelope;
use echo_core::config::McpServerConfig;
use echo_core::store::{SessionSummary, StoredMessage};
use serde::Serialize;
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};
use tokio_util::sync::CancellationToken;

/// An error as the UI's `TransportError` takes it.
#[derive(Debug, Serialize)]
pub struct Failure {
    code: String,
    message: String,
}

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure {
            code: e.code().to_string(),
            message: e.to_string(),
        }
    }
}

impl Failure {
    fn invalid(message: impl Into<String>) -> Self {
        Failure {
            code: "invalid_input".into(),
            message: message.into(),
        }
    }
}

type Answer<T> = Result<T, Failure>;

#[tauri::command]
pub async fn list_sessions(desk: State<'_, Desk>) -> Answer<Vec<SessionSummary>> {
    Ok(desk.api.sessions().await?)
}

#[tauri::command]
pub async fn history(desk: State<'_, Desk>, session: String) -> Answer<Vec<StoredMessage>> {
    Ok(desk.api.history(&session).await?)
}

#[tauri::command]
pub async fn rename_session(
    desk: State<'_, Desk>,
    name: String,
    new_name: String,
) -> Answer<SessionSummary> {
    Ok(desk.api.rename_session(&name, &new_name).await?)
}

#[tauri::command]
pub async fn delete_session(desk: State<'_, Desk>, name: String) -> Answer<()> {
    Ok(desk.api.delete_session(&name).await?)
}

/// Runs a turn; its events stream over `on_event` and the call returns when it has ended.
#[tauri::command]
pub async fn send_turn(
    desk: State<'_, Desk>,
    session: String,
    input: String,
    quick: Option<bool>,
    replace_from: Option<String>,
    on_event: Channel<EventEnvelope>,
) -> Answer<()> {
    let entry_point = if quick == Some(true) {
        "quick_ask"
    } else {
        "desktop"
    };
    let request = TurnRequest {
        session,
        input,
        entry_point: entry_point.into(),
        approvals: ApprovalMode::Ask,
        replace_from,
    };
    desk.api.validate(&request).await?;
    let handler: EventHandler = Arc::new(move |envelope: EventEnvelope| {
        if let Err(e) = on_event.send(envelope) {
            tracing::debug!(error = %e, "turn event not delivered (window gone)");
        }
    });
    // A window that goes away does not stop the turn: it finishes and is saved.
    desk.api
        .send(request, handler, CancellationToken::new())
        .await?;
    Ok(())
}

#[tauri::command]
pub fn cancel_turn(desk: State<'_, Desk>, turn_id: String) -> Answer<()> {
    Ok(desk.api.cancel_turn(&turn_id)?)
}

#[tauri::command]
pub fn answer_approval(
    desk: State<'_, Desk>,
    request_id: String,
    answer: ApprovalAnswer,
) -> Answer<()> {
    Ok(desk.api.answer_approval(&request_id, answer)?)
}

#[tauri::command]
pub async fn list_rules(desk: State<'_, Desk>) -> Answer<Vec<Rule>> {
    Ok(desk.api.rules().await?)
}

#[tauri::command]
pub async fn add_rule(desk: State<'_, Desk>, rule: RuleRequest) -> Answer<Rule> {
    Ok(desk.api.add_rule_request(&rule, "desktop").await?)
}

#[tauri::command]
pub async fn remove_rule(desk: State<'_, Desk>, id: String) -> Answer<Rule> {
    Ok(desk.api.remove_rule(&id).await?)
}

#[tauri::command]
pub async fn mcp_servers(desk: State<'_, Desk>) -> Answer<Vec<ServerStatus>> {
    Ok(desk.api.mcp_servers(std::time::Duration::ZERO).await)
}

#[tauri::command]
pub fn mcp_config(desk: State<'_, Desk>) -> Vec<McpServerConfig> {
    desk.api.mcp_config()
}

#[tauri::command]
pub async fn set_mcp_config(
    desk: State<'_, Desk>,
    servers: Vec<McpServerConfig>,
) -> Answer<Vec<ServerStatus>> {
    Ok(desk.api.set_mcp_config(servers).await?)
}

#[tauri::command]
pub async fn approvals(desk: State<'_, Desk>, limit: u32) -> Answer<Vec<AuditEntry>> {
    Ok(desk.api.approvals(limit).await?)
}

#[tauri::command]
pub async fn provider(desk: State<'_, Desk>) -> Answer<ProviderView> {
    Ok(desk.api.provider().await)
}

#[tauri::command]
pub async fn update_provider(
    desk: State<'_, Desk>,
    update: ProviderUpdate,
) -> Answer<ProviderView> {
    Ok(desk.api.update_provider(update).await?)
}

#[tauri::command]
pub async fn test_provider(
    desk: State<'_, Desk>,
    update: ProviderUpdate,
) -> Answer<ConnectionReport> {
    Ok(desk.api.test_provider(update).await?)
}

/// AGENTS.md, SOUL.md, USER.md and TOOLS.md: each file's text, or its default.
#[tauri::command]
pub fn bootstrap_files(desk: State<'_, Desk>) -> Answer<Vec<BootstrapFile>> {
    Ok(desk.api.bootstrap_files()?)
}

/// Saves a bootstrap file; `content: null` restores its default.
#[tauri::command]
pub fn save_bootstrap_file(
    desk: State<'_, Desk>,
    name: String,
    content: Option<String>,
) -> Answer<BootstrapFile> {
    Ok(desk.api.save_bootstrap_file(&name, content.as_deref())?)
}

#[tauri::command]
pub async fn detect_ollama(desk: State<'_, Desk>) -> Answer<Option<OllamaInfo>> {
    Ok(desk.api.detect_ollama().await)
}

/// The quick-ask shortcut and whether it is registered (or why not).
#[tauri::command]
pub fn quick_shortcut(desk: State<'_, Desk>) -> desktop::ShortcutStatus {
    desk.shortcut_status()
}

/// Registers a new quick-ask shortcut and saves it; a taken or invalid one is refused with
/// the reason and the old one stays.
#[tauri::command]
pub fn set_quick_shortcut(
    app: AppHandle,
    desk: State<'_, Desk>,
    shortcut: String,
) -> Answer<desktop::ShortcutStatus> {
    desktop::change_shortcut(&app, &desk, &shortcut).map_err(Failure::invalid)
}

/// Shows a session in the main window (from quick ask's Enter) and closes quick ask.
#[tauri::command]
pub fn open_in_main(app: AppHandle, session: String) -> Answer<()> {
    desktop::open_in_main(&app, &session).map_err(|e| Failure::invalid(e.to_string()))
}

/// Closes the quick-ask window (Esc); its WebKit process goes with it.
#[tauri::command]
pub fn dismiss_quick(app: AppHandle) {
    desktop::close_quick(&app);
}
