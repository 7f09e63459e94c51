//! Running automations in a long-running process (the app, `echod serve`).
//!
//! [`serve`] is one loop: it takes up the enabled automations no live process owns (the
//! store decides, so the app and `echod serve` never both run one), keeps a file watcher per
//! watch rule and fires schedules, and starts queued runs in order within the limits (each
//! automation's `concurrency`, `[automations] concurrency` over all). A run is a normal turn
//! through the turn service ([`Engine::run_turn`]): its own session named after the automation, entry point
//! `automation`, approvals through the persistent queue ([`crate::approval`]), traced like
//! any turn. The files a run writes are recorded ([`RunContext::record_writes`]) so that they never set
//! off the automation that wrote them, nor a chain that leads back to it.
//!
//! # The loop
//!
//! Every half second (or when woken) the loop claims the enabled automations whose owner
//! process is gone (`claim_owned`, `BEGIN IMMEDIATE`; the instance locks say who is alive),
//! keeps one watcher per watch rule it owns (restarted when the automation's `updated_at`
//! changes), queues schedule fire times (`missed` policy after a gap: `run_once` runs the latest
//! missed time once, `skip` records one skipped run saying how many were missed), and starts
//! queued runs oldest first. A run's session is "NAME · run N"; its request carries the
//! `RunContext` (`turn/run.rs`): the tools it may use (others are neither offered nor allowed),
//! its pre-approvals (session rules, after hard-deny and the path policy like every rule), its
//! chain. Runs a process left under way when it ended are queued again once (`recover`), then
//! failed; runs left waiting for approval are queued again (up to `WAITING_ATTEMPTS`) with their
//! questions left open.
//!
//! # Nothing lost while nothing watched
//!
//! Each watch rule has a watermark (`watched_until`): the watcher reports it every 30 s (the
//! oldest change still settling holds it back; it never moves back), and whenever watching
//! starts (process start, edit, folder back) it first walks the folders for files whose mtime
//! or ctime is later (echo-automations' `watch/catch_up.rs`) and puts them through the settle
//! step like any change, then queues them unless a run for that file at that size and mtime
//! exists. A rule never watched has no watermark; switching a rule on or off moves it to now (a
//! pause is not replayed). Events of a watcher older than the automation's `updated_at` are not
//! queued (`Enqueued::Stale`).
//!
//! # No loops, approvals, notices
//!
//! After a call that writes succeeds, each written file is recorded with its size, mtime and the
//! run's chain; a settled event on a file still in that state inherits the chain, and an
//! automation already in its event's chain is skipped (`loop: …`), so A → A and A → B → A stop
//! at the first repeat. Shell commands' writes are not known; the rate limits bound those
//! (`max_runs_per_hour`, `max_runs_per_file_per_hour`, state `rate_limited`). A call the gate
//! would ask about is written to `approval_queue` and the run waits, polling its row; any
//! process answers it. Expiry (`[automations] approval_expiry_hours`, 24) or a stopped turn
//! denies; `allow_automation` adds a pre-approval to the spec. A run started again after its
//! process ended takes over its earlier attempt's question for the same tool and detail.
//! `automation_notices(after)` returns runs that finished or failed and questions asked after a
//! cursor, plus the counts a badge needs; the desktop app polls it.

use crate::approval::ApprovalMode;
use crate::engine::Engine;
use crate::turn::request::{TurnOutcome, TurnRequest};
use crate::turn::run::RunContext;
use chrono::{DateTime, Utc};
use echo_automations::schedule::Schedule as CompiledSchedule;
use echo_automations::template::Vars;
use echo_automations::watch::{self, Report};
use echo_automations::{Automation, AutomationStore, Checked, CheckedTrigger, NewRun, Run};
use echo_core::store::TurnStatus;
use echo_core::{AutomationId, AutomationState, EntryPoint, MissedRuns, RunCause, RunStatus};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// How often the loop looks at the store without being woken (another process's edits, fire
/// times, owners that went away).
const TICK: Duration = Duration::from_millis(500);
/// How often (in ticks) runs and automations of ended processes are taken over.
const RECOVER_EVERY: u32 = 10;
/// How often (in ticks) old runs are pruned: hourly.
const PRUNE_EVERY: u32 = 7200;
/// A fire time this close to now is a normal fire, not a missed one.
const FIRE_GRACE: chrono::Duration = chrono::Duration::seconds(90);

/// A watch rule's watcher, stopped when dropped.
struct Watching {
    updated_at: String,
    stop: CancellationToken,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Runs automations until `shutdown`; gives them up (for another process) when it ends.
pub(crate) async fn serve(engine: Arc<Engine>, shutdown: CancellationToken) {
    let store = engine.automations.clone();
    let me = engine.instance.id().to_string();
    let concurrency = usize::from(engine.config.automations.concurrency.max(1));
    let slots = Arc::new(Semaphore::new(concurrency));
    let wake = Arc::new(Notify::new());
    let mut watchers: HashMap<AutomationId, Watching> = HashMap::new();
    let mut compiled: HashMap<AutomationId, (String, Arc<Checked>)> = HashMap::new();
    let mut ticks = 0u32;
    loop {
        if ticks.is_multiple_of(RECOVER_EVERY) {
            let alive = |owner: &str| engine.instance.is_alive(owner);
            match store.recover(&alive).await {
                Ok((0, 0)) => {}
                Ok((requeued, failed)) => {
                    tracing::info!(requeued, failed, "took over runs of an ended process");
                }
                Err(e) => tracing::warn!(error = %e, "automation recovery"),
            }
        }
        if ticks.is_multiple_of(PRUNE_EVERY)
            && let Err(e) = store.prune_runs().await
        {
            tracing::warn!(error = %e, "pruning automation runs");
        }
        ticks = ticks.wrapping_add(1);
        if let Err(e) = tick(
            &engine,
            &store,
            &me,
            &slots,
            &wake,
            &mut watchers,
            &mut compiled,
            &shutdown,
        )
        .await
        {
            tracing::warn!(error = %e, "automations");
        }
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = wake.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
    watchers.clear();
    if let Err(e) = store.release(&me).await {
        tracing::warn!(error = %e, "releasing automations");
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "the loop's state, passed down once"
)]
async fn tick(
    engine: &Arc<Engine>,
    store: &AutomationStore,
    me: &str,
    slots: &Arc<Semaphore>,
    wake: &Arc<Notify>,
    watchers: &mut HashMap<AutomationId, Watching>,
    compiled: &mut HashMap<AutomationId, (String, Arc<Checked>)>,
    shutdown: &CancellationToken,
) -> Result<(), echo_automations::AutomationError> {
    let alive = |owner: &str| engine.instance.is_alive(owner);
    let owned = store.claim_owned(me, &alive).await?;
    let all = store.list().await?;
    let mine: Vec<&Automation> = all
        .iter()
        .filter(|a| a.enabled && owned.contains(&a.id))
        .collect();
    watchers.retain(|id, w| {
        mine.iter()
            .any(|a| &a.id == id && a.updated_at == w.updated_at)
    });
    compiled.retain(|id, _| mine.iter().any(|a| &a.id == id));
    let now = Utc::now();
    for automation in &mine {
        let checked = match compiled.get(&automation.id) {
            Some((at, c)) if *at == automation.updated_at => c.clone(),
            _ => match automation.spec.check() {
                Ok(c) => {
                    let c = Arc::new(c);
                    compiled.insert(
                        automation.id.clone(),
                        (automation.updated_at.clone(), c.clone()),
                    );
                    c
                }
                Err(e) => {
                    store
                        .set_state(&automation.id, AutomationState::Error, Some(&e.to_string()))
                        .await?;
                    continue;
                }
            },
        };
        match &checked.trigger {
            CheckedTrigger::Watch(filter) => {
                if !watchers.contains_key(&automation.id) {
                    let stop = shutdown.child_token();
                    start_watcher(engine, automation, filter.clone(), &checked, wake, &stop);
                    watchers.insert(
                        automation.id.clone(),
                        Watching {
                            updated_at: automation.updated_at.clone(),
                            stop,
                        },
                    );
                }
            }
            CheckedTrigger::Schedule(schedule) => {
                fire_schedule(store, automation, &checked, schedule, now).await?;
            }
        }
    }
    // Start queued runs, oldest first, while there are slots.
    let queued = store.with_queued_runs().await?;
    for automation in mine.iter().filter(|a| queued.contains(&a.id)) {
        let Some((_, checked)) = compiled.get(&automation.id) else {
            continue;
        };
        loop {
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                return Ok(());
            };
            let Some(run) = store
                .claim_next(&automation.id, me, automation.spec.concurrency)
                .await?
            else {
                break;
            };
            let (engine, automation, checked, wake) = (
                engine.clone(),
                (*automation).clone(),
                checked.clone(),
                wake.clone(),
            );
            engine.clone().spawn_service("automation run", async move {
                execute(&engine, &automation, &checked, run).await;
                drop(permit);
                wake.notify_one();
            });
        }
    }
    Ok(())
}

/// Starts the watcher of one watch rule and the task that queues what it reports.
fn start_watcher(
    engine: &Arc<Engine>,
    automation: &Automation,
    filter: echo_automations::filter::FileFilter,
    checked: &Arc<Checked>,
    wake: &Arc<Notify>,
    stop: &CancellationToken,
) {
    let settle = match &checked.spec.trigger {
        echo_automations::Trigger::Watch(w) => Duration::from_millis(w.settle_ms),
        echo_automations::Trigger::Schedule(_) => return,
    };
    let since = automation
        .watched_until
        .as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    let (tx, mut rx) = mpsc::channel::<Report>(1024);
    engine.spawn_service(
        "automation watcher",
        watch::run(filter.clone(), settle, since, tx, stop.clone()),
    );
    let store = engine.automations.clone();
    let automation = automation.clone();
    let wake = wake.clone();
    engine.spawn_service("automation events", async move {
        while let Some(report) = rx.recv().await {
            let result = match report {
                Report::State(state, reason) => {
                    store
                        .set_state(&automation.id, state, reason.as_deref())
                        .await
                }
                Report::Watched(at) => store.set_watched_until(&automation, at).await,
                Report::CaughtUp(event) => queue_caught_up(&store, &automation, &event).await,
                Report::Event(event) => {
                    if !watch::wanted(&automation, &filter, &event) {
                        continue;
                    }
                    match watch::run_for(&store, &event).await {
                        Ok(run) => store.enqueue(&automation, run).await.map(|_| ()),
                        Err(e) => Err(e),
                    }
                }
            };
            match result {
                Ok(()) => wake.notify_one(),
                Err(e) => tracing::warn!(error = %e, "queuing a file event"),
            }
        }
    });
}

/// Queues a file that changed while nothing watched, unless a run for it at this size and
/// mtime exists (the watcher saw it before the process ended).
async fn queue_caught_up(
    store: &AutomationStore,
    automation: &Automation,
    event: &watch::Settled,
) -> Result<(), echo_automations::AutomationError> {
    if let (Some(size), Some(mtime)) = (event.size, event.mtime_ns)
        && store
            .seen_file(&automation.id, &event.path.to_string_lossy(), size, mtime)
            .await?
    {
        return Ok(());
    }
    let run = watch::run_for(store, event).await?;
    store.enqueue(automation, run).await.map(|_| ())
}

/// Queues a schedule's fire time when it has come; on the first look after a gap, applies
/// the automation's missed-run policy.
async fn fire_schedule(
    store: &AutomationStore,
    automation: &Automation,
    checked: &Checked,
    schedule: &CompiledSchedule,
    now: DateTime<Utc>,
) -> Result<(), echo_automations::AutomationError> {
    if automation.state != AutomationState::Active {
        store
            .set_state(&automation.id, AutomationState::Active, None)
            .await?;
    }
    let since = automation
        .last_fire
        .as_deref()
        .or(Some(automation.created_at.as_str()))
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map_or(now, |t| t.with_timezone(&Utc));
    let Some(missed) = schedule.missed(since, now) else {
        return Ok(());
    };
    let policy = match &checked.spec.trigger {
        echo_automations::Trigger::Schedule(s) => s.missed,
        echo_automations::Trigger::Watch(_) => MissedRuns::RunOnce,
    };
    let on_time = missed.count == 1 && now - missed.latest <= FIRE_GRACE;
    let run = NewRun {
        fire_time: Some(missed.latest),
        dedup: Some(format!("fire:{}", missed.latest.to_rfc3339())),
        cause: RunCause::Schedule,
        ..NewRun::manual()
    };
    if on_time || policy == MissedRuns::RunOnce {
        store.enqueue(automation, run).await?;
    } else {
        let reason = format!(
            "missed {} fire time(s) while no process ran automations (the latest at {}); \
             the policy is to skip them",
            missed.count,
            missed.latest.to_rfc3339()
        );
        store.record_skipped(automation, run, &reason).await?;
    }
    store.set_last_fire(&automation.id, missed.latest).await
}

/// Runs one claimed run as a turn and records how it ended.
async fn execute(engine: &Arc<Engine>, automation: &Automation, checked: &Checked, run: Run) {
    let store = &engine.automations;
    let result = run_turn(engine, automation, checked, &run).await;
    let (status, reason) = match result {
        Ok(outcome) if outcome.status == TurnStatus::Completed => (RunStatus::Done, None),
        Ok(outcome) => (
            RunStatus::Failed,
            Some(
                outcome
                    .error
                    .unwrap_or_else(|| format!("the turn ended {}", outcome.status.as_str())),
            ),
        ),
        Err(e) => (RunStatus::Failed, Some(e)),
    };
    if let Err(e) = store.finish_run(&run.id, status, reason.as_deref()).await {
        tracing::error!(error = %e, run = %run.id, "cannot record the end of a run");
    }
}

async fn run_turn(
    engine: &Arc<Engine>,
    automation: &Automation,
    checked: &Checked,
    run: &Run,
) -> Result<TurnOutcome, String> {
    let vars = vars_for(run);
    let input = checked.template.render(&vars).map_err(|e| e.to_string())?;
    let mut chain = run.chain.clone();
    chain.push(automation.id.clone());
    let session = format!("{} · run {}", automation.name, run.seq);
    let allow = automation
        .spec
        .allow
        .iter()
        .enumerate()
        .map(|(i, a)| echo_gate::Rule {
            id: format!("{}#allow{}", automation.id, i + 1),
            tool: a.tool.clone(),
            pattern: a.pattern.clone(),
            decision: echo_gate::RuleDecision::Allow,
            scope: echo_gate::RuleScope::Session,
            session_id: None,
            created_by: format!("automation {}", automation.name),
            created_at: automation.updated_at.clone(),
        })
        .collect();
    let context = RunContext {
        automation_id: automation.id.clone(),
        run_id: run.id.clone(),
        chain,
        tools: checked.spec.tools.clone(),
        allow,
        expiry: Duration::from_secs_f64(
            engine.config.automations.approval_expiry_hours.max(0.0) * 3600.0,
        ),
        store: engine.automations.clone(),
    };
    let request = TurnRequest::new(session, input, EntryPoint::Automation)
        .approvals(ApprovalMode::Queue)
        .task(checked.spec.task)
        .project(checked.spec.project.clone())
        .for_run(Arc::new(context));
    engine
        .run_turn(
            request,
            Arc::new(|_| {}),
            engine.shutdown_token().child_token(),
        )
        .await
        .map_err(|e| e.to_string())
}

/// The template's variables for a run.
fn vars_for(run: &Run) -> Vars {
    let path = run.path.clone().unwrap_or_default();
    let p = PathBuf::from(&path);
    let time = run
        .fire_time
        .as_deref()
        .unwrap_or(run.created_at.as_str())
        .to_string();
    let time = DateTime::parse_from_rfc3339(&time)
        .map(|t| t.with_timezone(&chrono::Local).to_rfc3339())
        .unwrap_or(time);
    Vars {
        name: p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        ext: p
            .extension()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        event: match (run.event, run.cause) {
            (Some(e), _) => e.as_str().to_string(),
            (None, cause) => cause.as_str().to_string(),
        },
        old_path: run.old_path.clone().unwrap_or_default(),
        path,
        time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use echo_automations::{Schedule, Spec, Trigger};

    const LAST_FIRE: &str = "2026-12-01T09:00:00Z";

    /// An hourly UTC schedule with `missed` that last fired at [`LAST_FIRE`]; the temp dir and
    /// store stay alive as long as the returned value.
    struct Hourly {
        _dir: tempfile::TempDir,
        _db: echo_core::Store,
        store: AutomationStore,
        checked: Checked,
        last: DateTime<Utc>,
    }

    impl Hourly {
        async fn new(missed: MissedRuns) -> Hourly {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = echo_core::Store::open_in(dir.path()).await.expect("store");
            let store = AutomationStore::new(db.pool().clone());
            let spec = Spec::new(
                Trigger::Schedule(Schedule {
                    time_zone: Some("UTC".into()),
                    missed,
                    ..Schedule::new("0 * * * *")
                }),
                "brief me",
            );
            let created = store.create("Hourly", &spec, true).await.expect("create");
            let last = DateTime::parse_from_rfc3339(LAST_FIRE)
                .expect("time")
                .with_timezone(&Utc);
            store
                .set_last_fire(&created.id, last)
                .await
                .expect("last fire");
            Hourly {
                _dir: dir,
                _db: db,
                store,
                checked: spec.check().expect("valid"),
                last,
            }
        }

        /// One look of the scheduler at `now`; returns the runs so far.
        async fn look(&self, now: DateTime<Utc>) -> Vec<Run> {
            let automation = self.store.get("Hourly").await.expect("get");
            let CheckedTrigger::Schedule(schedule) = &self.checked.trigger else {
                panic!("a schedule");
            };
            fire_schedule(&self.store, &automation, &self.checked, schedule, now)
                .await
                .expect("fire");
            self.store.runs(&automation.id, 10).await.expect("runs")
        }
    }

    /// A process coming back three hours after an hourly schedule last fired.
    async fn after_a_gap(missed: MissedRuns) -> Vec<Run> {
        let h = Hourly::new(missed).await;
        let now = h.last + chrono::Duration::minutes(3 * 60 + 10);
        h.look(now).await;
        // The next look, a moment later, finds nothing new.
        let runs = h.look(now + chrono::Duration::seconds(5)).await;
        assert_eq!(
            h.store
                .get("Hourly")
                .await
                .expect("get")
                .last_fire
                .as_deref(),
            Some("2026-12-01T12:00:00.000Z")
        );
        runs
    }

    #[tokio::test]
    async fn missed_fire_times_run_once_or_are_skipped_by_policy() {
        let runs = after_a_gap(MissedRuns::RunOnce).await;
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].status, RunStatus::Queued);
        assert_eq!(
            runs[0].fire_time.as_deref(),
            Some("2026-12-01T12:00:00.000Z")
        );

        let runs = after_a_gap(MissedRuns::Skip).await;
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].status, RunStatus::Skipped);
        let why = runs[0].reason.as_deref().unwrap_or_default();
        assert!(why.contains("missed 3 fire time"), "{why}");
    }

    #[tokio::test]
    async fn a_fire_time_that_just_came_runs_whatever_the_policy() {
        let h = Hourly::new(MissedRuns::Skip).await;
        let runs = h
            .look(h.last + chrono::Duration::minutes(60) + chrono::Duration::seconds(2))
            .await;
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].status, RunStatus::Queued);
    }
}
