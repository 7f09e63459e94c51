//! What a person should hear about (a desktop notification, a badge): runs that finished or
//! failed and questions that wait, since a cursor. Any process's runs count, so the app
//! notifies about the runs `echod serve` did too.

use super::*;

/// What a notice is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// A run finished.
    Done,
    /// A run failed.
    Failed,
    /// A run waits for the person's answer.
    NeedsApproval,
}

/// One thing to tell the person.
#[derive(Clone, Debug, Serialize)]
pub struct Notice {
    /// What happened.
    pub kind: NoticeKind,
    /// The automation.
    pub automation_id: AutomationId,
    /// Its name.
    pub automation: String,
    /// The run.
    pub run_id: RunId,
    /// The file that set the run off.
    pub path: Option<String>,
    /// Failed: why. Needs approval: the exact action.
    pub detail: Option<String>,
    /// Needs approval: the tool that asks.
    pub tool: Option<String>,
    /// Needs approval: the question's id.
    pub question_id: Option<String>,
    /// The run's session.
    pub session: Option<String>,
    /// The run's turn (and trace).
    pub turn_id: Option<String>,
    /// When it happened (RFC 3339).
    pub at: String,
}

/// Notices since a cursor, with what a badge shows.
#[derive(Clone, Debug, Serialize)]
pub struct Notices {
    /// Oldest first.
    pub notices: Vec<Notice>,
    /// Pass it back to get only what came later.
    pub cursor: String,
    /// Questions waiting for an answer.
    pub pending_approvals: i64,
    /// Automations switched on.
    pub enabled: i64,
    /// All automations.
    pub automations: i64,
}

/// Most notices returned by one call (the rest come with the next).
const NOTICES_MAX: i64 = 50;
/// Rows younger than this are left for the next call: one written in the same millisecond
/// as the cursor is then never skipped.
const SETTLED: Duration = Duration::seconds(1);

impl AutomationStore {
    /// Notices after `cursor` (`None`: start now, nothing older is news).
    pub async fn notices(&self, cursor: Option<&str>) -> Result<Notices, AutomationError> {
        let mut notices = Vec::new();
        // Nothing that happened before the first look is news.
        let mut next = now_rfc3339();
        if let Some(after) = cursor {
            let upto = to_rfc3339(Utc::now() - SETTLED).max(after.to_string());
            next.clone_from(&upto);
            let runs = sqlx::query(
                "SELECT r.*, a.name AS automation FROM automation_runs r \
                 JOIN automations a ON a.id = r.automation_id \
                 WHERE r.status IN ('done', 'failed') AND r.finished_at > ? \
                 AND r.finished_at <= ? ORDER BY r.finished_at LIMIT ?",
            )
            .bind(after)
            .bind(&upto)
            .bind(NOTICES_MAX)
            .fetch_all(&self.pool)
            .await?;
            for row in &runs {
                let run = runs::run_from(row)?;
                notices.push(Notice {
                    kind: if run.status == RunStatus::Done {
                        NoticeKind::Done
                    } else {
                        NoticeKind::Failed
                    },
                    automation: row.try_get("automation")?,
                    automation_id: run.automation_id,
                    run_id: run.id,
                    path: run.path,
                    detail: run.reason,
                    tool: None,
                    question_id: None,
                    session: run.session,
                    turn_id: run.turn_id,
                    at: run.finished_at.unwrap_or_default(),
                });
            }
            let asked = sqlx::query(
                "SELECT q.id, q.run_id, q.automation_id, q.tool, q.detail, q.turn_id, \
                 q.created_at, a.name AS automation, r.path, r.session \
                 FROM approval_queue q JOIN automations a ON a.id = q.automation_id \
                 LEFT JOIN automation_runs r ON r.id = q.run_id \
                 WHERE q.created_at > ? AND q.created_at <= ? ORDER BY q.created_at LIMIT ?",
            )
            .bind(after)
            .bind(&upto)
            .bind(NOTICES_MAX)
            .fetch_all(&self.pool)
            .await?;
            for row in &asked {
                notices.push(Notice {
                    kind: NoticeKind::NeedsApproval,
                    automation_id: AutomationId::from_string(
                        row.try_get::<String, _>("automation_id")?,
                    ),
                    automation: row.try_get("automation")?,
                    run_id: RunId::from_string(row.try_get::<String, _>("run_id")?),
                    path: row.try_get("path")?,
                    detail: row.try_get("detail")?,
                    tool: row.try_get("tool")?,
                    question_id: row.try_get("id")?,
                    session: row.try_get("session")?,
                    turn_id: row.try_get("turn_id")?,
                    at: row.try_get("created_at")?,
                });
            }
            // A full page of either kind: stop the cursor at its last row (the rest come
            // with the next call).
            let page_end = |kind: &[NoticeKind], rows: usize| {
                (rows as i64 == NOTICES_MAX)
                    .then(|| {
                        notices
                            .iter()
                            .filter(|n| kind.contains(&n.kind))
                            .map(|n| n.at.clone())
                            .max()
                    })
                    .flatten()
            };
            let ends = [
                page_end(&[NoticeKind::Done, NoticeKind::Failed], runs.len()),
                page_end(&[NoticeKind::NeedsApproval], asked.len()),
            ];
            if let Some(end) = ends.into_iter().flatten().min() {
                notices.retain(|n| n.at <= end);
                next = end;
            }
            notices.sort_by(|a, b| a.at.cmp(&b.at).then((a.kind as u8).cmp(&(b.kind as u8))));
        }
        let pending_approvals: i64 =
            sqlx::query_scalar("SELECT count(*) FROM approval_queue WHERE status = 'pending'")
                .fetch_one(&self.pool)
                .await?;
        let (enabled, automations): (i64, i64) =
            sqlx::query_as("SELECT coalesce(sum(enabled), 0), count(*) FROM automations")
                .fetch_one(&self.pool)
                .await?;
        Ok(Notices {
            notices,
            cursor: next,
            pending_approvals,
            enabled,
            automations,
        })
    }
}
