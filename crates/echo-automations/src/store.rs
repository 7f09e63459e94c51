//! Automations, their runs and the approval queue of unattended runs, in SQLite (migration
//! 0012). The run queue is the `automation_runs` table: a run is claimed by one `UPDATE …
//! RETURNING` (so two processes never take the same one), events are de-duplicated by a key
//! (`dedup`), and the loop and rate checks happen in the same transaction as the insert.

use crate::AutomationError;
use crate::spec::Spec;
use chrono::{DateTime, Duration, Utc};
use echo_core::time::{now_rfc3339, to_rfc3339};
use echo_core::{
    AutomationId, AutomationState, FileEvent, QueuedApprovalStatus, Risk, RunCause, RunId,
    RunStatus,
};
use serde::Serialize;
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqlitePool};

mod notices;
mod questions;
mod runs;

pub use notices::{Notice, NoticeKind, Notices};

/// How many times a run that was waiting for approval when its process ended starts again
/// (each time taking its open question over) before it fails.
pub const WAITING_ATTEMPTS: i64 = 20;

/// Most runs kept per automation when older ones are pruned.
pub const RUNS_KEPT: i64 = 5000;

/// A stored automation.
#[derive(Clone, Debug, Serialize)]
pub struct Automation {
    /// Stable id.
    pub id: AutomationId,
    /// Unique name; its runs' sessions are named after it.
    pub name: String,
    /// Switched on.
    pub enabled: bool,
    /// The definition.
    pub spec: Spec,
    /// What its watcher/scheduler is doing.
    pub state: AutomationState,
    /// Why it is in `error` or `rate_limited`.
    pub state_reason: Option<String>,
    /// Schedules: the last fire time handled (RFC 3339).
    pub last_fire: Option<String>,
    /// Watch rules: file events up to this time were seen and queued (RFC 3339); what
    /// changed later while nothing watched is queued when a process takes the rule up.
    pub watched_until: Option<String>,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// One run of an automation.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// Stable id.
    pub id: RunId,
    /// Arrival order.
    pub seq: i64,
    /// Its automation.
    pub automation_id: AutomationId,
    /// Where it is.
    pub status: RunStatus,
    /// What set it off.
    pub cause: RunCause,
    /// The file event (file runs).
    pub event: Option<FileEvent>,
    /// The file (file runs).
    pub path: Option<String>,
    /// Where a renamed file was.
    pub old_path: Option<String>,
    /// The fire time (schedules), RFC 3339.
    pub fire_time: Option<String>,
    /// Automations whose runs led to this one.
    pub chain: Vec<AutomationId>,
    /// Why it was skipped, failed or requeued.
    pub reason: Option<String>,
    /// Its session (once it started).
    pub session: Option<String>,
    /// Its turn, which is also its trace (once it started).
    pub turn_id: Option<String>,
    /// How many times it was started (a run cut off by a quit starts again once).
    pub attempts: i64,
    /// Queued at (RFC 3339).
    pub created_at: String,
    /// Started at.
    pub started_at: Option<String>,
    /// Ended at.
    pub finished_at: Option<String>,
}

/// A run to queue.
#[derive(Clone, Debug)]
pub struct NewRun {
    /// What set it off.
    pub cause: RunCause,
    /// The file event.
    pub event: Option<FileEvent>,
    /// The file.
    pub path: Option<String>,
    /// Where a renamed file was.
    pub old_path: Option<String>,
    /// A schedule's fire time.
    pub fire_time: Option<DateTime<Utc>>,
    /// Queue an event once: the same key for the same automation is a duplicate.
    pub dedup: Option<String>,
    /// Automations whose runs led to this event.
    pub chain: Vec<AutomationId>,
}

impl NewRun {
    /// A run the person started.
    pub fn manual() -> NewRun {
        NewRun {
            cause: RunCause::Manual,
            event: None,
            path: None,
            old_path: None,
            fire_time: None,
            dedup: None,
            chain: Vec::new(),
        }
    }
}

/// What queuing an event did.
#[derive(Clone, Debug)]
pub enum Enqueued {
    /// It waits for a slot.
    Queued(Run),
    /// The same event was queued before (by this process or another).
    Duplicate,
    /// Recorded as skipped (a loop or the rate limit); the run says why.
    Skipped(Run),
    /// Not queued: the automation was paused or changed after the watcher or scheduler that
    /// saw the event started. An event that comes while it is paused is not kept for later;
    /// after an edit, the new watcher's catch-up hands the file over again. (Runs started
    /// by hand are always queued.)
    Stale,
}

/// A question of an unattended run, waiting in the approval queue (or answered).
#[derive(Clone, Debug, Serialize)]
pub struct QueuedApproval {
    /// The question's id (answer it with `answer_approval`).
    pub id: String,
    /// The run that waits.
    pub run_id: RunId,
    /// Its automation.
    pub automation_id: AutomationId,
    /// The automation's name.
    pub automation: String,
    /// The run's turn (and trace).
    pub turn_id: String,
    /// The tool call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its risk.
    pub risk: Risk,
    /// The exact action (command, path, diff).
    pub detail: String,
    /// Why the gate asks.
    pub reason: String,
    /// The argument pattern "always" would allow.
    pub suggested_pattern: Option<String>,
    /// Where it is.
    pub status: QueuedApprovalStatus,
    /// Asked at (RFC 3339).
    pub created_at: String,
    /// Expires at (RFC 3339); then the call is denied.
    pub expires_at: String,
    /// Answered or expired at.
    pub answered_at: Option<String>,
}

/// A question to queue.
#[derive(Clone, Debug)]
pub struct NewQueuedApproval<'a> {
    /// The run.
    pub run_id: &'a RunId,
    /// Its turn.
    pub turn_id: &'a str,
    /// The tool call.
    pub call_id: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// Its risk.
    pub risk: Risk,
    /// The exact action.
    pub detail: &'a str,
    /// Why the gate asks.
    pub reason: &'a str,
    /// What "always" would allow.
    pub suggested_pattern: Option<&'a str>,
    /// How long it waits.
    pub expires_in: std::time::Duration,
}

/// Automations, runs and queued questions.
#[derive(Clone, Debug)]
pub struct AutomationStore {
    pool: SqlitePool,
}

const AUTOMATION_COLUMNS: &str = "id, name, enabled, spec, state, state_reason, last_fire, watched_until, created_at, updated_at";
const RUN_COLUMNS: &str = "seq, id, automation_id, status, cause, event, path, old_path, \
     fire_time, chain, reason, session, turn_id, attempts, created_at, started_at, finished_at";

impl AutomationStore {
    /// The store over the engine's database (already migrated).
    pub fn new(pool: SqlitePool) -> AutomationStore {
        AutomationStore { pool }
    }

    // ---- automations ----

    /// Saves a new automation; `spec` must have passed [`Spec::check`].
    pub async fn create(
        &self,
        name: &str,
        spec: &Spec,
        enabled: bool,
    ) -> Result<Automation, AutomationError> {
        check_name(name)?;
        let id = AutomationId::new();
        let now = now_rfc3339();
        let state = switched(enabled);
        let result = sqlx::query(
            "INSERT INTO automations (id, name, enabled, spec, state, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id.as_str())
        .bind(name.trim())
        .bind(enabled)
        .bind(spec_json(spec))
        .bind(state.as_str())
        .bind(&now)
        .bind(&now)
        .execute(&self.pool)
        .await;
        match result {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(AutomationError::NameTaken(name.trim().to_string()))
            }
            Err(e) => Err(e.into()),
            Ok(_) => self.get(id.as_str()).await,
        }
    }

    /// Replaces an automation's name and/or definition.
    pub async fn update(
        &self,
        id: &AutomationId,
        name: Option<&str>,
        spec: Option<&Spec>,
    ) -> Result<Automation, AutomationError> {
        let current = self.get(id.as_str()).await?;
        let name = name.map(str::trim).unwrap_or(&current.name);
        check_name(name)?;
        let spec = spec.unwrap_or(&current.spec);
        let result =
            sqlx::query("UPDATE automations SET name = ?, spec = ?, updated_at = ? WHERE id = ?")
                .bind(name)
                .bind(spec_json(spec))
                .bind(now_rfc3339())
                .bind(id.as_str())
                .execute(&self.pool)
                .await;
        match result {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(AutomationError::NameTaken(name.to_string()))
            }
            Err(e) => Err(e.into()),
            Ok(_) => self.get(id.as_str()).await,
        }
    }

    /// Switches an automation on or off.
    pub async fn set_enabled(
        &self,
        id: &AutomationId,
        enabled: bool,
    ) -> Result<Automation, AutomationError> {
        let state = switched(enabled);
        // The catch-up starts from now: what changed while it was paused is not replayed.
        let now = now_rfc3339();
        let done = sqlx::query(
            "UPDATE automations SET enabled = ?, state = ?, state_reason = NULL, updated_at = ?, \
             watched_until = ? WHERE id = ?",
        )
        .bind(enabled)
        .bind(state.as_str())
        .bind(&now)
        .bind(&now)
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(not_found("automation", id.as_str()));
        }
        self.get(id.as_str()).await
    }

    /// Switches every automation on or off; returns how many changed.
    pub async fn set_all_enabled(&self, enabled: bool) -> Result<u64, AutomationError> {
        let state = switched(enabled);
        // The catch-up starts from now: what changed while it was paused is not replayed.
        let now = now_rfc3339();
        let done = sqlx::query(
            "UPDATE automations SET enabled = ?, state = ?, state_reason = NULL, updated_at = ?, \
             watched_until = ? WHERE enabled != ?",
        )
        .bind(enabled)
        .bind(state.as_str())
        .bind(&now)
        .bind(&now)
        .bind(enabled)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Removes an automation with its runs; its queued questions expire (their runs end).
    pub async fn remove(&self, id: &AutomationId) -> Result<Automation, AutomationError> {
        let found = self.get(id.as_str()).await?;
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "UPDATE approval_queue SET status = 'expired', answered_at = ? \
             WHERE automation_id = ? AND status = 'pending'",
        )
        .bind(now_rfc3339())
        .bind(id.as_str())
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM automation_runs WHERE automation_id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM automations WHERE id = ?")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(found)
    }

    /// An automation by id or by name.
    pub async fn get(&self, id_or_name: &str) -> Result<Automation, AutomationError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {AUTOMATION_COLUMNS} FROM automations WHERE id = ?1 OR name = ?1"
        )))
        .bind(id_or_name.trim())
        .fetch_optional(&self.pool)
        .await?;
        match row {
            Some(row) => automation_from(&row),
            None => Err(not_found("automation", id_or_name)),
        }
    }

    /// Every automation, by name.
    pub async fn list(&self) -> Result<Vec<Automation>, AutomationError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {AUTOMATION_COLUMNS} FROM automations ORDER BY name COLLATE NOCASE"
        )))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(automation_from).collect()
    }

    /// Records what the watcher/scheduler sees (`error` with its reason, `active`…).
    pub async fn set_state(
        &self,
        id: &AutomationId,
        state: AutomationState,
        reason: Option<&str>,
    ) -> Result<(), AutomationError> {
        sqlx::query(
            "UPDATE automations SET state = ?, state_reason = ? WHERE id = ? AND enabled = 1",
        )
        .bind(state.as_str())
        .bind(reason)
        .bind(id.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Takes the automations this process should run: enabled ones nobody alive owns.
    /// Returns the ids this process owns afterwards.
    pub async fn claim_owned(
        &self,
        me: &str,
        is_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<AutomationId>, AutomationError> {
        // Most looks change nothing: read first, and take the write lock only to change.
        let rows = sqlx::query("SELECT id, owner, enabled FROM automations")
            .fetch_all(&self.pool)
            .await?;
        let mut unchanged = Vec::new();
        let mut needs_write = false;
        for row in &rows {
            let owner: Option<String> = row.try_get("owner")?;
            let enabled: bool = row.try_get("enabled")?;
            match (enabled, owner.as_deref()) {
                (true, Some(o)) if o == me => {
                    unchanged.push(AutomationId::from_string(row.try_get::<String, _>("id")?));
                }
                (true, Some(o)) if is_alive(o) => {}
                (true, _) => needs_write = true,
                (false, Some(o)) if o == me => needs_write = true,
                (false, _) => {}
            }
        }
        if !needs_write {
            return Ok(unchanged);
        }
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let rows = sqlx::query("SELECT id, owner FROM automations WHERE enabled = 1")
            .fetch_all(&mut *tx)
            .await?;
        let mut mine = Vec::new();
        for row in rows {
            let id: String = row.try_get("id")?;
            let owner: Option<String> = row.try_get("owner")?;
            let take = match owner.as_deref() {
                Some(o) if o == me => true,
                Some(o) => !is_alive(o),
                None => true,
            };
            if take {
                if owner.as_deref() != Some(me) {
                    sqlx::query("UPDATE automations SET owner = ? WHERE id = ?")
                        .bind(me)
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                }
                mine.push(AutomationId::from_string(id));
            }
        }
        sqlx::query("UPDATE automations SET owner = NULL WHERE enabled = 0 AND owner = ?")
            .bind(me)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(mine)
    }

    /// Automations with runs waiting in the queue.
    pub async fn with_queued_runs(&self) -> Result<Vec<AutomationId>, AutomationError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT automation_id FROM automation_runs WHERE status = 'queued'",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(ids.into_iter().map(AutomationId::from_string).collect())
    }

    /// Gives up every automation this process owns (it is closing).
    pub async fn release(&self, me: &str) -> Result<(), AutomationError> {
        sqlx::query(
            "UPDATE automations SET owner = NULL, \
             state = CASE WHEN enabled = 1 THEN 'idle' ELSE 'paused' END, state_reason = NULL \
             WHERE owner = ?",
        )
        .bind(me)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records that a watch rule's file events up to `at` were seen and queued (by the
    /// watcher of this version of it: a stale watcher's word does not count).
    pub async fn set_watched_until(
        &self,
        automation: &Automation,
        at: DateTime<Utc>,
    ) -> Result<(), AutomationError> {
        sqlx::query(
            "UPDATE automations SET watched_until = ? \
             WHERE id = ? AND enabled = 1 AND updated_at = ?",
        )
        .bind(to_rfc3339(at))
        .bind(automation.id.as_str())
        .bind(&automation.updated_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records the last fire time a schedule handled.
    pub async fn set_last_fire(
        &self,
        id: &AutomationId,
        at: DateTime<Utc>,
    ) -> Result<(), AutomationError> {
        sqlx::query("UPDATE automations SET last_fire = ? WHERE id = ?")
            .bind(to_rfc3339(at))
            .bind(id.as_str())
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// The state an automation is in right after it is switched on (no process took it up yet)
/// or off.
fn switched(enabled: bool) -> AutomationState {
    if enabled {
        AutomationState::Idle
    } else {
        AutomationState::Paused
    }
}

fn check_name(name: &str) -> Result<(), AutomationError> {
    let name = name.trim();
    let bad = |message: &str| {
        Err(AutomationError::Invalid {
            what: "name",
            message: message.into(),
        })
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.chars().count() > 80 {
        return bad("it is longer than 80 characters");
    }
    if name.chars().any(char::is_control) {
        return bad("it contains control characters");
    }
    Ok(())
}

fn not_found(what: &'static str, id: &str) -> AutomationError {
    AutomationError::NotFound {
        what,
        id: id.to_string(),
    }
}

fn spec_json(spec: &Spec) -> String {
    serde_json::to_string(spec).unwrap_or_else(|_| "{}".into())
}

fn chain_json(chain: &[AutomationId]) -> String {
    serde_json::to_string(chain).unwrap_or_else(|_| "[]".into())
}

fn parse_chain(text: &str) -> Vec<AutomationId> {
    serde_json::from_str(text).unwrap_or_default()
}

fn automation_from(row: &SqliteRow) -> Result<Automation, AutomationError> {
    let id: String = row.try_get("id")?;
    let spec: String = row.try_get("spec")?;
    let spec: Spec = serde_json::from_str(&spec).map_err(|e| AutomationError::Corrupt {
        id: id.clone(),
        message: e.to_string(),
    })?;
    let state: String = row.try_get("state")?;
    Ok(Automation {
        id: AutomationId::from_string(id),
        name: row.try_get("name")?,
        enabled: row.try_get("enabled")?,
        spec,
        state: AutomationState::parse(&state).unwrap_or(AutomationState::Idle),
        state_reason: row.try_get("state_reason")?,
        last_fire: row.try_get("last_fire")?,
        watched_until: row.try_get("watched_until")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}
