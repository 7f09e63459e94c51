//! The run queue: queuing an event (de-duplicated, with the loop and rate checks), claiming
//! the next run, recording how runs end, taking over runs of ended processes, and the files
//! runs wrote.

use super::*;

impl AutomationStore {
    // ---- runs ----

    /// Queues an event for `automation`, unless it was queued before, it would loop (the
    /// automation is in the event's chain) or the automation is over its rate limit; the
    /// last two are recorded as skipped runs with the reason.
    pub async fn enqueue(
        &self,
        automation: &Automation,
        run: NewRun,
    ) -> Result<Enqueued, AutomationError> {
        self.queue_or_skip(automation, run, None).await
    }

    /// [`Self::enqueue`], or, with `skip`, a run recorded as skipped for that reason (still
    /// once per `dedup` key).
    async fn queue_or_skip(
        &self,
        automation: &Automation,
        run: NewRun,
        skip: Option<&str>,
    ) -> Result<Enqueued, AutomationError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        if run.cause != RunCause::Manual {
            // The watcher or scheduler may not have seen a pause or an edit yet.
            let current: Option<(bool, String)> =
                sqlx::query_as("SELECT enabled, updated_at FROM automations WHERE id = ?")
                    .bind(automation.id.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
            if current.is_none_or(|(on, at)| !on || at != automation.updated_at) {
                return Ok(Enqueued::Stale);
            }
        }
        if let Some(key) = &run.dedup {
            let seen =
                sqlx::query("SELECT 1 FROM automation_runs WHERE automation_id = ? AND dedup = ?")
                    .bind(automation.id.as_str())
                    .bind(key)
                    .fetch_optional(&mut *tx)
                    .await?;
            if seen.is_some() {
                return Ok(Enqueued::Duplicate);
            }
        }
        let hour_ago = to_rfc3339(Utc::now() - Duration::hours(1));
        let mut skip: Option<String> = skip.map(str::to_string);
        if skip.is_none() && run.chain.contains(&automation.id) {
            skip = Some(if run.chain.len() == 1 && run.chain[0] == automation.id {
                "loop: the file was written by a run of this automation".to_string()
            } else {
                format!(
                    "loop: the file was written by a chain of runs that started with this automation ({} automations)",
                    run.chain.len()
                )
            });
        }
        if skip.is_none() {
            let recent: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM automation_runs WHERE automation_id = ? \
                 AND status != 'skipped' AND created_at >= ?",
            )
            .bind(automation.id.as_str())
            .bind(&hour_ago)
            .fetch_one(&mut *tx)
            .await?;
            if recent >= i64::from(automation.spec.max_runs_per_hour) {
                skip = Some(format!(
                    "rate limit: {recent} runs in the last hour (the limit is {})",
                    automation.spec.max_runs_per_hour
                ));
            } else if let Some(path) = &run.path {
                let same: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM automation_runs WHERE automation_id = ? \
                     AND path = ? AND status != 'skipped' AND created_at >= ?",
                )
                .bind(automation.id.as_str())
                .bind(path)
                .bind(&hour_ago)
                .fetch_one(&mut *tx)
                .await?;
                if same >= i64::from(automation.spec.max_runs_per_file_per_hour) {
                    skip = Some(format!(
                        "rate limit: {same} runs for this file in the last hour (the limit is {})",
                        automation.spec.max_runs_per_file_per_hour
                    ));
                }
            }
        }
        let id = RunId::new();
        let status = if skip.is_some() {
            RunStatus::Skipped
        } else {
            RunStatus::Queued
        };
        let now = now_rfc3339();
        sqlx::query(
            "INSERT INTO automation_runs (id, automation_id, status, cause, event, path, \
             old_path, fire_time, dedup, chain, reason, created_at, finished_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id.as_str())
        .bind(automation.id.as_str())
        .bind(status.as_str())
        .bind(run.cause.as_str())
        .bind(run.event.map(FileEvent::as_str))
        .bind(&run.path)
        .bind(&run.old_path)
        .bind(run.fire_time.map(to_rfc3339))
        .bind(&run.dedup)
        .bind(chain_json(&run.chain))
        .bind(&skip)
        .bind(&now)
        .bind(skip.as_ref().map(|_| now.clone()))
        .execute(&mut *tx)
        .await?;
        let rate_limited = skip.as_deref().is_some_and(|r| r.starts_with("rate limit"));
        if rate_limited {
            sqlx::query(
                "UPDATE automations SET state = 'rate_limited', state_reason = ? \
                 WHERE id = ? AND enabled = 1",
            )
            .bind(&skip)
            .bind(automation.id.as_str())
            .execute(&mut *tx)
            .await?;
        } else if skip.is_none() {
            sqlx::query(
                "UPDATE automations SET state = 'active', state_reason = NULL \
                 WHERE id = ? AND state = 'rate_limited'",
            )
            .bind(automation.id.as_str())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        let stored = self.run(&id).await?;
        Ok(if skip.is_some() {
            Enqueued::Skipped(stored)
        } else {
            Enqueued::Queued(stored)
        })
    }

    /// Records a run that will not happen (a missed schedule under the `skip` policy).
    pub async fn record_skipped(
        &self,
        automation: &Automation,
        run: NewRun,
        reason: &str,
    ) -> Result<Option<Run>, AutomationError> {
        match self.queue_or_skip(automation, run, Some(reason)).await? {
            Enqueued::Skipped(run) | Enqueued::Queued(run) => Ok(Some(run)),
            Enqueued::Duplicate | Enqueued::Stale => Ok(None),
        }
    }

    /// Takes the oldest queued run of `automation` for `owner`, if fewer than `concurrency`
    /// of its runs are under way. One statement: no two processes take the same run.
    pub async fn claim_next(
        &self,
        automation: &AutomationId,
        owner: &str,
        concurrency: u8,
    ) -> Result<Option<Run>, AutomationError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE automation_runs SET status = 'running', owner = ?1, started_at = ?2, \
             attempts = attempts + 1 \
             WHERE seq = (SELECT seq FROM automation_runs WHERE automation_id = ?3 \
                          AND status = 'queued' ORDER BY seq LIMIT 1) \
               AND (SELECT count(*) FROM automation_runs WHERE automation_id = ?3 \
                    AND status IN ('running', 'waiting_for_approval')) < ?4 \
             RETURNING {RUN_COLUMNS}"
        )))
        .bind(owner)
        .bind(now_rfc3339())
        .bind(automation.as_str())
        .bind(i64::from(concurrency))
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(run_from).transpose()
    }

    /// Records the session and turn a run started.
    pub async fn run_started(
        &self,
        run: &RunId,
        session: &str,
        turn_id: &str,
    ) -> Result<(), AutomationError> {
        sqlx::query("UPDATE automation_runs SET session = ?, turn_id = ? WHERE id = ?")
            .bind(session)
            .bind(turn_id)
            .bind(run.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Moves a run between `running` and `waiting_for_approval`.
    pub async fn set_waiting(&self, run: &RunId, waiting: bool) -> Result<(), AutomationError> {
        let (from, to) = if waiting {
            (RunStatus::Running, RunStatus::WaitingForApproval)
        } else {
            (RunStatus::WaitingForApproval, RunStatus::Running)
        };
        sqlx::query("UPDATE automation_runs SET status = ? WHERE id = ? AND status = ?")
            .bind(to.as_str())
            .bind(run.as_str())
            .bind(from.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Ends a run (`done`, `failed`).
    pub async fn finish_run(
        &self,
        run: &RunId,
        status: RunStatus,
        reason: Option<&str>,
    ) -> Result<(), AutomationError> {
        sqlx::query(
            "UPDATE automation_runs SET status = ?, reason = ?, finished_at = ? WHERE id = ?",
        )
        .bind(status.as_str())
        .bind(reason)
        .bind(now_rfc3339())
        .bind(run.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Runs a process left under way when it ended: queued again once (the turn was cut
    /// off; it starts over), failed the second time. Their pending questions expire.
    /// Returns how many were requeued and how many failed.
    pub async fn recover(
        &self,
        is_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<(u64, u64), AutomationError> {
        let owners: Vec<Option<String>> = sqlx::query_scalar(
            "SELECT DISTINCT owner FROM automation_runs \
             WHERE status IN ('running', 'waiting_for_approval')",
        )
        .fetch_all(&self.pool)
        .await?;
        if owners.iter().all(|o| o.as_deref().is_some_and(is_alive)) {
            return Ok((0, 0));
        }
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query(
            "SELECT id, owner, attempts, status FROM automation_runs \
             WHERE status IN ('running', 'waiting_for_approval')",
        )
        .fetch_all(&mut *tx)
        .await?;
        let (mut requeued, mut failed) = (0, 0);
        for row in rows {
            let id: String = row.try_get("id")?;
            let owner: Option<String> = row.try_get("owner")?;
            if owner.as_deref().is_some_and(is_alive) {
                continue;
            }
            let attempts: i64 = row.try_get("attempts")?;
            let status: String = row.try_get("status")?;
            if status == RunStatus::WaitingForApproval.as_str() && attempts < WAITING_ATTEMPTS {
                // It was waiting, not failing: it starts again and takes its open question
                // over when it reaches the same call (`queue_question`); an answer given
                // meanwhile stands.
                sqlx::query(
                    "UPDATE automation_runs SET status = 'queued', owner = NULL, \
                     reason = 'its process ended while it waited for approval; queued again \
                     (the question stays open)' WHERE id = ?",
                )
                .bind(&id)
                .execute(&mut *tx)
                .await?;
                requeued += 1;
                continue;
            }
            if attempts < 2 {
                sqlx::query(
                    "UPDATE automation_runs SET status = 'queued', owner = NULL, \
                     reason = 'its process ended during the run; queued again' WHERE id = ?",
                )
                .bind(&id)
                .execute(&mut *tx)
                .await?;
                requeued += 1;
            } else {
                sqlx::query(
                    "UPDATE automation_runs SET status = 'failed', finished_at = ?, \
                     reason = 'its process ended during the run twice; not retried' WHERE id = ?",
                )
                .bind(now_rfc3339())
                .bind(&id)
                .execute(&mut *tx)
                .await?;
                failed += 1;
            }
            sqlx::query(
                "UPDATE approval_queue SET status = 'expired', answered_at = ? \
                 WHERE run_id = ? AND status = 'pending'",
            )
            .bind(now_rfc3339())
            .bind(&id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok((requeued, failed))
    }

    /// One run.
    pub async fn run(&self, id: &RunId) -> Result<Run, AutomationError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS} FROM automation_runs WHERE id = ?"
        )))
        .bind(id.as_str())
        .fetch_optional(&self.pool)
        .await?;
        match row {
            Some(row) => run_from(&row),
            None => Err(not_found("run", id.as_str())),
        }
    }

    /// An automation's runs, newest first.
    pub async fn runs(
        &self,
        automation: &AutomationId,
        limit: u32,
    ) -> Result<Vec<Run>, AutomationError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {RUN_COLUMNS} FROM automation_runs WHERE automation_id = ? \
             ORDER BY seq DESC LIMIT ?"
        )))
        .bind(automation.as_str())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(run_from).collect()
    }

    /// How many runs of `automation` are in each status.
    pub async fn counts(
        &self,
        automation: &AutomationId,
    ) -> Result<Vec<(RunStatus, i64)>, AutomationError> {
        let rows = sqlx::query(
            "SELECT status, count(*) AS n FROM automation_runs WHERE automation_id = ? \
             GROUP BY status",
        )
        .bind(automation.as_str())
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::new();
        for row in rows {
            let status: String = row.try_get("status")?;
            if let Some(s) = RunStatus::parse(&status) {
                out.push((s, row.try_get("n")?));
            }
        }
        Ok(out)
    }

    /// Drops the oldest finished runs beyond [`RUNS_KEPT`] per automation.
    pub async fn prune_runs(&self) -> Result<u64, AutomationError> {
        let done = sqlx::query(
            "DELETE FROM automation_runs WHERE status IN ('done', 'failed', 'skipped') \
             AND seq IN (SELECT seq FROM (SELECT seq, row_number() OVER \
               (PARTITION BY automation_id ORDER BY seq DESC) AS r FROM automation_runs) \
               WHERE r > ?)",
        )
        .bind(RUNS_KEPT)
        .execute(&self.pool)
        .await?;
        sqlx::query("DELETE FROM automation_writes WHERE written_at < ?")
            .bind(to_rfc3339(Utc::now() - Duration::days(7)))
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// Whether a run was queued for this file at this size and mtime, for any event kind
    /// (a catch-up after a restart must not queue again what the watcher already did).
    pub async fn seen_file(
        &self,
        automation: &AutomationId,
        path: &str,
        size: u64,
        mtime_ns: i64,
    ) -> Result<bool, AutomationError> {
        // The dedup key ends in `:SIZE:MTIME` (digits and `-` only: no LIKE wildcards).
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM automation_runs WHERE automation_id = ? AND path = ? \
             AND dedup LIKE ? LIMIT 1",
        )
        .bind(automation.as_str())
        .bind(path)
        .bind(format!("%:{size}:{mtime_ns}"))
        .fetch_optional(&self.pool)
        .await?;
        Ok(found.is_some())
    }

    // ---- what runs wrote ----

    /// Records a file a run wrote, as it is right after the write.
    pub async fn record_write(
        &self,
        path: &str,
        run: &RunId,
        chain: &[AutomationId],
        size: Option<u64>,
        mtime_ns: Option<i64>,
    ) -> Result<(), AutomationError> {
        sqlx::query(
            "INSERT INTO automation_writes (path, run_id, chain, size, mtime_ns, written_at) \
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(path)
        .bind(run.as_str())
        .bind(chain_json(chain))
        .bind(size.map(|s| s as i64))
        .bind(mtime_ns)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The chain of the run that last wrote `path`, if the file is still as that run left
    /// it (`size`/`mtime_ns` `None`: it is gone, and a write within the last minute counts).
    pub async fn writer_chain(
        &self,
        path: &str,
        size: Option<u64>,
        mtime_ns: Option<i64>,
    ) -> Result<Option<Vec<AutomationId>>, AutomationError> {
        let row = sqlx::query(
            "SELECT chain, size, mtime_ns, written_at FROM automation_writes WHERE path = ? \
             ORDER BY written_at DESC, rowid DESC LIMIT 1",
        )
        .bind(path)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let same = match (size, mtime_ns) {
            (Some(s), Some(m)) => {
                row.try_get::<Option<i64>, _>("size")? == Some(s as i64)
                    && row.try_get::<Option<i64>, _>("mtime_ns")? == Some(m)
            }
            _ => {
                let at: String = row.try_get("written_at")?;
                at >= to_rfc3339(Utc::now() - Duration::minutes(1))
            }
        };
        if !same {
            return Ok(None);
        }
        let chain: String = row.try_get("chain")?;
        Ok(Some(parse_chain(&chain)))
    }
}

pub(super) fn run_from(row: &SqliteRow) -> Result<Run, AutomationError> {
    let status: String = row.try_get("status")?;
    let cause: String = row.try_get("cause")?;
    let event: Option<String> = row.try_get("event")?;
    let chain: String = row.try_get("chain")?;
    let id: String = row.try_get("id")?;
    let corrupt = |what: &str| AutomationError::Corrupt {
        id: id.clone(),
        message: format!("unknown {what}"),
    };
    Ok(Run {
        seq: row.try_get("seq")?,
        automation_id: AutomationId::from_string(row.try_get::<String, _>("automation_id")?),
        status: RunStatus::parse(&status).ok_or_else(|| corrupt("status"))?,
        cause: RunCause::parse(&cause).ok_or_else(|| corrupt("cause"))?,
        event: event.as_deref().and_then(FileEvent::parse),
        path: row.try_get("path")?,
        old_path: row.try_get("old_path")?,
        fire_time: row.try_get("fire_time")?,
        chain: parse_chain(&chain),
        reason: row.try_get("reason")?,
        session: row.try_get("session")?,
        turn_id: row.try_get("turn_id")?,
        attempts: row.try_get("attempts")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        id: RunId::from_string(id.clone()),
    })
}
