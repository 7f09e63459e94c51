//! The approval queue of unattended runs: a question is written here, its run waits on the
//! row, and any process answers it.

use super::*;

impl AutomationStore {
    // ---- the approval queue ----

    /// Queues a question of an unattended run and marks the run waiting. When an earlier
    /// attempt of the same run (its process ended while it waited) asked about the same
    /// action (tool and exact detail), that question is taken over instead: still open, the
    /// run waits on it; answered meanwhile, the answer stands. Each is taken over once.
    pub async fn queue_question(
        &self,
        q: NewQueuedApproval<'_>,
    ) -> Result<String, AutomationError> {
        let now = Utc::now();
        let expires =
            now + Duration::from_std(q.expires_in).unwrap_or_else(|_| Duration::days(36500));
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let earlier: Option<String> = sqlx::query_scalar(
            "SELECT id FROM approval_queue WHERE run_id = ? AND tool = ? AND detail = ? \
             AND turn_id != ? AND status IN ('pending', 'allowed', 'denied') \
             ORDER BY created_at LIMIT 1",
        )
        .bind(q.run_id.as_str())
        .bind(q.tool)
        .bind(q.detail)
        .bind(q.turn_id)
        .fetch_optional(&mut *tx)
        .await?;
        let id = match earlier {
            Some(id) => {
                sqlx::query("UPDATE approval_queue SET turn_id = ?, call_id = ? WHERE id = ?")
                    .bind(q.turn_id)
                    .bind(q.call_id)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                id
            }
            None => {
                let id = uuid::Uuid::now_v7().to_string();
                insert_question(&mut tx, &id, &q, now, expires).await?;
                id
            }
        };
        sqlx::query(
            "UPDATE automation_runs SET status = 'waiting_for_approval' \
             WHERE id = ? AND status = 'running'",
        )
        .bind(q.run_id.as_str())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Records the person's answer to a pending question. `false`: it is not pending any
    /// more (answered, expired) or does not exist.
    pub async fn answer_question(
        &self,
        id: &str,
        status: QueuedApprovalStatus,
        answer: &str,
    ) -> Result<bool, AutomationError> {
        let done = sqlx::query(
            "UPDATE approval_queue SET status = ?, answer = ?, answered_at = ? \
             WHERE id = ? AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(answer)
        .bind(now_rfc3339())
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A question's status and the answer given (`allow_once`, `allow_automation`, `deny`…).
    pub async fn question_state(
        &self,
        id: &str,
    ) -> Result<Option<(QueuedApprovalStatus, Option<String>)>, AutomationError> {
        let row = sqlx::query("SELECT status, answer FROM approval_queue WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let status: String = row.try_get("status")?;
        let status = QueuedApprovalStatus::parse(&status).unwrap_or(QueuedApprovalStatus::Expired);
        Ok(Some((status, row.try_get("answer")?)))
    }

    /// Questions, pending ones (oldest first) or all (newest first, at most `limit`).
    pub async fn questions(
        &self,
        pending_only: bool,
        limit: u32,
    ) -> Result<Vec<QueuedApproval>, AutomationError> {
        let filter = if pending_only {
            "WHERE q.status = 'pending' ORDER BY q.created_at"
        } else {
            "ORDER BY q.created_at DESC"
        };
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT q.*, a.name AS automation FROM approval_queue q \
             JOIN automations a ON a.id = q.automation_id {filter} LIMIT ?"
        )))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(question_from).collect()
    }
}

fn question_from(row: &SqliteRow) -> Result<QueuedApproval, AutomationError> {
    let status: String = row.try_get("status")?;
    let risk: String = row.try_get("risk")?;
    Ok(QueuedApproval {
        id: row.try_get("id")?,
        run_id: RunId::from_string(row.try_get::<String, _>("run_id")?),
        automation_id: AutomationId::from_string(row.try_get::<String, _>("automation_id")?),
        automation: row.try_get("automation")?,
        turn_id: row.try_get("turn_id")?,
        call_id: row.try_get("call_id")?,
        tool: row.try_get("tool")?,
        risk: Risk::parse(&risk).unwrap_or(Risk::Dangerous),
        detail: row.try_get("detail")?,
        reason: row.try_get("reason")?,
        suggested_pattern: row.try_get("suggested_pattern")?,
        status: QueuedApprovalStatus::parse(&status).unwrap_or(QueuedApprovalStatus::Expired),
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        answered_at: row.try_get("answered_at")?,
    })
}

/// Writes a new question.
async fn insert_question(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    id: &str,
    q: &NewQueuedApproval<'_>,
    now: chrono::DateTime<Utc>,
    expires: chrono::DateTime<Utc>,
) -> Result<(), AutomationError> {
    sqlx::query(
        "INSERT INTO approval_queue (id, run_id, automation_id, turn_id, call_id, tool, \
             risk, detail, reason, suggested_pattern, created_at, expires_at) \
             SELECT ?, id, automation_id, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM automation_runs \
             WHERE id = ?",
    )
    .bind(id)
    .bind(q.turn_id)
    .bind(q.call_id)
    .bind(q.tool)
    .bind(q.risk.as_str())
    .bind(q.detail)
    .bind(q.reason)
    .bind(q.suggested_pattern)
    .bind(to_rfc3339(now))
    .bind(to_rfc3339(expires))
    .bind(q.run_id.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(())
}
