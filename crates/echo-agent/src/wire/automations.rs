//! Automations as front ends see them: stored automations, runs, queued approvals and
//! notices (from `echo_automations`'s rows).

use echo_core::config::TaskType;
use echo_core::vocab::{AutomationState, QueuedApprovalStatus, Risk, RunCause, RunStatus};
use echo_core::{AutomationId, FileEvent, MissedRuns, RunId};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// A stored automation.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct Automation {
    /// Stable id.
    pub id: AutomationId,
    /// Unique name; its runs' sessions are named after it.
    pub name: String,
    /// Switched on.
    pub enabled: bool,
    /// The definition.
    pub spec: AutomationSpec,
    /// What its watcher/scheduler is doing.
    pub state: AutomationState,
    /// Why it is in `error` or `rate_limited`.
    #[ts(optional)]
    pub state_reason: Option<String>,
    /// Schedules: the last fire time handled (RFC 3339).
    #[ts(optional)]
    pub last_fire: Option<String>,
    /// Watch rules: file events up to this time were seen and queued (RFC 3339); what
    /// changed later while nothing watched is queued when a process takes the rule up.
    #[ts(optional)]
    pub watched_until: Option<String>,
    /// When it was made (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
}

/// One run of an automation.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct AutomationRun {
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
    #[ts(optional)]
    pub event: Option<FileEvent>,
    /// The file (file runs).
    #[ts(optional)]
    pub path: Option<String>,
    /// Where a renamed file was.
    #[ts(optional)]
    pub old_path: Option<String>,
    /// The fire time (schedules), RFC 3339.
    #[ts(optional)]
    pub fire_time: Option<String>,
    /// Automations whose runs led to this one.
    pub chain: Vec<AutomationId>,
    /// Why it was skipped, failed or requeued.
    #[ts(optional)]
    pub reason: Option<String>,
    /// Its session (once it started).
    #[ts(optional)]
    pub session: Option<String>,
    /// Its turn, which is also its trace (once it started).
    #[ts(optional)]
    pub turn_id: Option<String>,
    /// How many times it was started (a run cut off by a quit starts again once).
    pub attempts: i64,
    /// Queued at (RFC 3339).
    pub created_at: String,
    /// Started at.
    #[ts(optional)]
    pub started_at: Option<String>,
    /// Ended at.
    #[ts(optional)]
    pub finished_at: Option<String>,
}

/// A question of an unattended run, waiting in the approval queue (or answered).
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
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
    #[ts(optional)]
    pub suggested_pattern: Option<String>,
    /// Where it is.
    pub status: QueuedApprovalStatus,
    /// Asked at (RFC 3339).
    pub created_at: String,
    /// Expires at (RFC 3339); then the call is denied.
    pub expires_at: String,
    /// Answered or expired at.
    #[ts(optional)]
    pub answered_at: Option<String>,
}

/// An automation with what its page shows beside it.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct AutomationView {
    /// The automation.
    pub automation: Automation,
    /// Schedules: the next fire times (RFC 3339 in the schedule's zone).
    pub next_fires: Vec<String>,
    /// Its runs by status.
    pub runs: RunCounts,
}

/// How many runs are in each status.
#[derive(Clone, Debug, Default, Serialize, TS, ToSchema)]
pub struct RunCounts {
    /// Waiting for a slot.
    pub queued: i64,
    /// Under way.
    pub running: i64,
    /// Paused on a queued approval question.
    pub waiting_for_approval: i64,
    /// Completed.
    pub done: i64,
    /// Failed or stopped.
    pub failed: i64,
    /// Never ran (a loop, the rate limit, a missed schedule).
    pub skipped: i64,
}

/// What a spec would do, before it is saved.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct AutomationPreview {
    /// Schedules: the cron expression in force (a phrase's translation).
    #[ts(optional)]
    pub cron: Option<String>,
    /// Schedules: the zone it is read in.
    #[ts(optional)]
    pub time_zone: Option<String>,
    /// Schedules: the next fire times (RFC 3339 in that zone).
    pub next_fires: Vec<String>,
    /// Watch rules: the folders, `~` expanded.
    pub folders: Vec<String>,
    /// Watch rules: folders that do not exist now (the rule will wait for them).
    pub missing_folders: Vec<String>,
}

impl From<echo_automations::Automation> for Automation {
    fn from(v: echo_automations::Automation) -> Self {
        Self {
            id: v.id,
            name: v.name,
            enabled: v.enabled,
            spec: v.spec.into(),
            state: v.state,
            state_reason: v.state_reason,
            last_fire: v.last_fire,
            watched_until: v.watched_until,
            created_at: v.created_at,
            updated_at: v.updated_at,
        }
    }
}

impl From<echo_automations::Run> for AutomationRun {
    fn from(v: echo_automations::Run) -> Self {
        Self {
            id: v.id,
            seq: v.seq,
            automation_id: v.automation_id,
            status: v.status,
            cause: v.cause,
            event: v.event,
            path: v.path,
            old_path: v.old_path,
            fire_time: v.fire_time,
            chain: v.chain,
            reason: v.reason,
            session: v.session,
            turn_id: v.turn_id,
            attempts: v.attempts,
            created_at: v.created_at,
            started_at: v.started_at,
            finished_at: v.finished_at,
        }
    }
}

impl From<echo_automations::QueuedApproval> for QueuedApproval {
    fn from(v: echo_automations::QueuedApproval) -> Self {
        Self {
            id: v.id,
            run_id: v.run_id,
            automation_id: v.automation_id,
            automation: v.automation,
            turn_id: v.turn_id,
            call_id: v.call_id,
            tool: v.tool,
            risk: v.risk,
            detail: v.detail,
            reason: v.reason,
            suggested_pattern: v.suggested_pattern,
            status: v.status,
            created_at: v.created_at,
            expires_at: v.expires_at,
            answered_at: v.answered_at,
        }
    }
}
/// What a notice is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AutomationNoticeKind {
    /// A run finished.
    Done,
    /// A run failed.
    Failed,
    /// A run waits for the person's answer.
    NeedsApproval,
}

/// One thing to tell the person.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct AutomationNotice {
    /// What happened.
    pub kind: AutomationNoticeKind,
    /// The automation.
    pub automation_id: AutomationId,
    /// Its name.
    pub automation: String,
    /// The run.
    pub run_id: RunId,
    /// The file that set the run off.
    #[ts(optional)]
    pub path: Option<String>,
    /// Failed: why. Needs approval: the exact action.
    #[ts(optional)]
    pub detail: Option<String>,
    /// Needs approval: the tool that asks.
    #[ts(optional)]
    pub tool: Option<String>,
    /// Needs approval: the question's id.
    #[ts(optional)]
    pub question_id: Option<String>,
    /// The run's session.
    #[ts(optional)]
    pub session: Option<String>,
    /// The run's turn (and trace).
    #[ts(optional)]
    pub turn_id: Option<String>,
    /// When it happened (RFC 3339).
    pub at: String,
}

/// Notices since a cursor, with what a badge shows.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct AutomationNotices {
    /// Oldest first.
    pub notices: Vec<AutomationNotice>,
    /// Pass it back to get only what came later.
    pub cursor: String,
    /// Questions waiting for an answer.
    pub pending_approvals: i64,
    /// Automations switched on.
    pub enabled: i64,
    /// All automations.
    pub automations: i64,
}

impl From<echo_automations::NoticeKind> for AutomationNoticeKind {
    fn from(v: echo_automations::NoticeKind) -> Self {
        match v {
            echo_automations::NoticeKind::Done => Self::Done,
            echo_automations::NoticeKind::Failed => Self::Failed,
            echo_automations::NoticeKind::NeedsApproval => Self::NeedsApproval,
        }
    }
}

impl From<echo_automations::Notice> for AutomationNotice {
    fn from(v: echo_automations::Notice) -> Self {
        Self {
            kind: v.kind.into(),
            automation_id: v.automation_id,
            automation: v.automation,
            run_id: v.run_id,
            path: v.path,
            detail: v.detail,
            tool: v.tool,
            question_id: v.question_id,
            session: v.session,
            turn_id: v.turn_id,
            at: v.at,
        }
    }
}

impl From<echo_automations::Notices> for AutomationNotices {
    fn from(v: echo_automations::Notices) -> Self {
        Self {
            notices: v.notices.into_iter().map(Into::into).collect(),
            cursor: v.cursor,
            pending_approvals: v.pending_approvals,
            enabled: v.enabled,
            automations: v.automations,
        }
    }
}

// The definition, both ways: front ends send it, and read it back.

/// An automation's definition, as the person wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationSpec {
    /// What sets a run off.
    pub trigger: AutomationTrigger,
    /// The message each run sends, a template over `{{path}}`, `{{name}}`, `{{ext}}`,
    /// `{{event}}`, `{{old_path}}` (renames) and `{{time}}`.
    pub prompt: String,
    /// The tools a run may use (names from the registry); absent: every tool.
    #[serde(default)]
    #[ts(optional)]
    pub tools: Option<Vec<String>>,
    /// Calls this automation may make without asking (its runs only). Hard-deny patterns and
    /// secret paths still apply.
    #[serde(default)]
    pub allow: Vec<PreApproval>,
    /// The task type its runs are routed as (`[routing]`); absent: judged from the prompt.
    #[serde(default)]
    #[ts(optional)]
    pub task: Option<TaskType>,
    /// The project its runs' conversations belong to (by name); absent: no project.
    #[serde(default)]
    #[ts(optional)]
    pub project: Option<String>,
    /// Runs of this automation at a time (1–4). Runs start in the order their events came.
    #[serde(default = "echo_automations::spec::defaults::concurrency")]
    pub concurrency: u8,
    /// Most runs queued in one hour; past it, events are skipped (with that reason) and the
    /// automation shows `rate_limited`.
    #[serde(default = "echo_automations::spec::defaults::max_runs_per_hour")]
    pub max_runs_per_hour: u32,
    /// Most runs for one and the same file in one hour (a file rewritten over and over).
    #[serde(default = "echo_automations::spec::defaults::max_runs_per_file_per_hour")]
    pub max_runs_per_file_per_hour: u32,
}

/// A call an automation may make without asking: a tool and an argument pattern, as in
/// approval rules (`write_file` under `~/Notes/**`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreApproval {
    /// Tool name (or a glob over names).
    pub tool: String,
    /// Argument pattern (a path glob for file tools, a command prefix for `shell`); absent:
    /// every call of the tool.
    #[serde(default)]
    #[ts(optional)]
    pub pattern: Option<String>,
}

/// What sets a run off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AutomationTrigger {
    /// Files changing in folders.
    Watch(Watch),
    /// Times from a cron expression.
    Schedule(Schedule),
}

/// A watch rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// Folders to watch (`~` is the home folder).
    pub folders: Vec<String>,
    /// Subfolders too.
    #[serde(default = "echo_automations::spec::defaults::yes")]
    pub recursive: bool,
    /// Globs over the path inside the folder (`*.pdf`, `notes/**`); absent or empty:
    /// every file.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs of files to leave alone.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Which events start a run.
    #[serde(default = "echo_automations::spec::defaults::events")]
    pub events: Vec<FileEvent>,
    /// How long a file must stay unchanged (size and mtime) before it is handed over, in
    /// milliseconds; also the debounce window of the watcher.
    #[serde(default = "echo_automations::spec::defaults::settle_ms")]
    pub settle_ms: u64,
    /// Hidden files (and files in hidden folders) too; editors' temp and swap files never.
    #[serde(default)]
    pub include_hidden: bool,
}

/// A schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// A cron expression (`0 8 * * 1-5`: weekdays at 8:00; 5 or 6 fields, `@daily`…).
    pub cron: String,
    /// IANA time zone (`Europe/Berlin`); absent: the computer's zone.
    #[serde(default)]
    #[ts(optional)]
    pub time_zone: Option<String>,
    /// What happens to fire times missed while nothing ran it.
    #[serde(default = "echo_automations::spec::defaults::missed")]
    pub missed: MissedRuns,
}

impl AutomationSpec {
    /// A spec with every limit at its default.
    pub fn new(trigger: AutomationTrigger, prompt: impl Into<String>) -> Self {
        echo_automations::Spec::new(trigger.into(), prompt).into()
    }
}

impl Watch {
    /// A watch of `folders` with every other field at its default.
    pub fn new(folders: Vec<String>) -> Self {
        echo_automations::Watch::new(folders).into()
    }
}

impl Schedule {
    /// A schedule from a cron expression, in the computer's zone, catching up once.
    pub fn new(cron: impl Into<String>) -> Self {
        echo_automations::Schedule::new(cron).into()
    }
}

impl From<echo_automations::Spec> for AutomationSpec {
    fn from(v: echo_automations::Spec) -> Self {
        Self {
            trigger: v.trigger.into(),
            prompt: v.prompt,
            tools: v.tools,
            allow: v.allow.into_iter().map(Into::into).collect(),
            task: v.task,
            project: v.project,
            concurrency: v.concurrency,
            max_runs_per_hour: v.max_runs_per_hour,
            max_runs_per_file_per_hour: v.max_runs_per_file_per_hour,
        }
    }
}

impl From<echo_automations::PreApproval> for PreApproval {
    fn from(v: echo_automations::PreApproval) -> Self {
        Self {
            tool: v.tool,
            pattern: v.pattern,
        }
    }
}

impl From<echo_automations::Trigger> for AutomationTrigger {
    fn from(v: echo_automations::Trigger) -> Self {
        match v {
            echo_automations::Trigger::Watch(x) => Self::Watch(x.into()),
            echo_automations::Trigger::Schedule(x) => Self::Schedule(x.into()),
        }
    }
}

impl From<echo_automations::Watch> for Watch {
    fn from(v: echo_automations::Watch) -> Self {
        Self {
            folders: v.folders,
            recursive: v.recursive,
            include: v.include,
            exclude: v.exclude,
            events: v.events,
            settle_ms: v.settle_ms,
            include_hidden: v.include_hidden,
        }
    }
}

impl From<echo_automations::Schedule> for Schedule {
    fn from(v: echo_automations::Schedule) -> Self {
        Self {
            cron: v.cron,
            time_zone: v.time_zone,
            missed: v.missed,
        }
    }
}

impl From<AutomationSpec> for echo_automations::Spec {
    fn from(v: AutomationSpec) -> Self {
        Self {
            trigger: v.trigger.into(),
            prompt: v.prompt,
            tools: v.tools,
            allow: v.allow.into_iter().map(Into::into).collect(),
            task: v.task,
            project: v.project,
            concurrency: v.concurrency,
            max_runs_per_hour: v.max_runs_per_hour,
            max_runs_per_file_per_hour: v.max_runs_per_file_per_hour,
        }
    }
}

impl From<PreApproval> for echo_automations::PreApproval {
    fn from(v: PreApproval) -> Self {
        Self {
            tool: v.tool,
            pattern: v.pattern,
        }
    }
}

impl From<AutomationTrigger> for echo_automations::Trigger {
    fn from(v: AutomationTrigger) -> Self {
        match v {
            AutomationTrigger::Watch(x) => Self::Watch(x.into()),
            AutomationTrigger::Schedule(x) => Self::Schedule(x.into()),
        }
    }
}

impl From<Watch> for echo_automations::Watch {
    fn from(v: Watch) -> Self {
        Self {
            folders: v.folders,
            recursive: v.recursive,
            include: v.include,
            exclude: v.exclude,
            events: v.events,
            settle_ms: v.settle_ms,
            include_hidden: v.include_hidden,
        }
    }
}

impl From<Schedule> for echo_automations::Schedule {
    fn from(v: Schedule) -> Self {
        Self {
            cron: v.cron,
            time_zone: v.time_zone,
            missed: v.missed,
        }
    }
}
