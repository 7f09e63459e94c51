//! Telling the person what automations did while they looked elsewhere: an OS notification
//! (Tauri's notification plugin) when a run finishes, fails or needs their approval, and the
//! tray's count of questions waiting. The store is read, so runs of `echod serve` on the same
//! data count too; only what happens after the app started is news.

use crate::state::Desk;
use crate::tray::{Tray, TrayLook, chinese};
use echo_agent::wire::{AutomationNotice, AutomationNoticeKind};
use std::path::Path;
use std::time::Duration;
use tauri::{AppHandle, Manager, Runtime};
use tauri_plugin_notification::NotificationExt;

/// How often the store is asked for news.
const EVERY: Duration = Duration::from_secs(2);
/// Longest body shown (characters).
const BODY_MAX: usize = 180;

/// Starts looking for news in the background, for as long as the app runs.
pub fn watch<R: Runtime>(app: AppHandle<R>) {
    let Some(desk) = app.try_state::<Desk>() else {
        return;
    };
    let api = desk.api.clone();
    let zh = chinese();
    tauri::async_runtime::spawn(async move {
        let mut cursor: Option<String> = None;
        let mut shown: Option<TrayLook> = None;
        loop {
            match api.automation_notices(cursor.as_deref()).await {
                Ok(news) => {
                    for notice in &news.notices {
                        let (title, body) = notice_text(zh, notice);
                        if let Err(e) = app.notification().builder().title(title).body(body).show()
                        {
                            tracing::debug!(error = %e, "no desktop notification");
                        }
                    }
                    cursor = Some(news.cursor);
                    let look =
                        TrayLook::new(zh, news.pending_approvals, news.enabled, news.automations);
                    if shown.as_ref() != Some(&look) {
                        if let Some(tray) = app.try_state::<Tray<R>>()
                            && let Err(e) = tray.show(&look)
                        {
                            tracing::debug!(error = %e, "cannot update the tray");
                        }
                        shown = Some(look);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "automation notices"),
            }
            tokio::time::sleep(EVERY).await;
        }
    });
}

/// A notice's title and body.
pub fn notice_text(zh: bool, n: &AutomationNotice) -> (String, String) {
    let name = &n.automation;
    let file = n
        .path
        .as_deref()
        .and_then(|p| Path::new(p).file_name())
        .map(|f| f.to_string_lossy().into_owned());
    match (n.kind, zh) {
        (AutomationNoticeKind::Done, false) => (
            format!("“{name}” finished"),
            file.unwrap_or_else(|| "Its run is on the Automations page.".into()),
        ),
        (AutomationNoticeKind::Done, true) => (
            format!("“{name}”已完成"),
            file.unwrap_or_else(|| "运行记录在“自动化”页面。".into()),
        ),
        (AutomationNoticeKind::Failed, false) => (
            format!("“{name}” failed"),
            clip(
                n.detail
                    .as_deref()
                    .unwrap_or("Its run is on the Automations page."),
            ),
        ),
        (AutomationNoticeKind::Failed, true) => (
            format!("“{name}”失败"),
            clip(n.detail.as_deref().unwrap_or("运行记录在“自动化”页面。")),
        ),
        (AutomationNoticeKind::NeedsApproval, false) => (
            format!("“{name}” needs your approval"),
            clip(&format!(
                "{}: {}",
                n.tool.as_deref().unwrap_or("a tool"),
                n.detail.as_deref().unwrap_or_default()
            )),
        ),
        (AutomationNoticeKind::NeedsApproval, true) => (
            format!("“{name}”需要你的批准"),
            clip(&format!(
                "{}：{}",
                n.tool.as_deref().unwrap_or("工具"),
                n.detail.as_deref().unwrap_or_default()
            )),
        ),
    }
}

/// One line, at most [`BODY_MAX`] characters.
fn clip(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= BODY_MAX {
        return line;
    }
    let mut cut: String = line.chars().take(BODY_MAX - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use echo_core::{AutomationId, RunId};

    fn notice(kind: AutomationNoticeKind) -> AutomationNotice {
        AutomationNotice {
            kind,
            automation_id: AutomationId::new(),
            automation: "Inbox PDFs".into(),
            run_id: RunId::new(),
            path: Some("/home/me/Inbox/report.pdf".into()),
            detail: Some(format!("write_file ~/Notes/report.md\n{}", "x".repeat(400))),
            tool: Some("write_file".into()),
            question_id: None,
            session: None,
            turn_id: None,
            at: "2026-12-03T10:00:00.000Z".into(),
        }
    }

    #[test]
    fn notices_read_as_one_short_line_each() {
        let (title, body) = notice_text(false, &notice(AutomationNoticeKind::Done));
        assert_eq!(
            (title.as_str(), body.as_str()),
            ("“Inbox PDFs” finished", "report.pdf")
        );
        let (title, body) = notice_text(false, &notice(AutomationNoticeKind::NeedsApproval));
        assert_eq!(title, "“Inbox PDFs” needs your approval");
        assert!(
            body.starts_with("write_file: write_file ~/Notes/report.md x"),
            "{body}"
        );
        assert!(
            !body.contains('\n') && body.chars().count() == BODY_MAX,
            "{body}"
        );
        let (title, _) = notice_text(true, &notice(AutomationNoticeKind::Failed));
        assert_eq!(title, "“Inbox PDFs”失败");
    }
}
