//! The file watcher of one watch rule: notify's OS watcher behind notify-debouncer-full
//! (which merges an editor's save dance into one event and pairs renames), then one more
//! step of our own that the debouncer cannot do: a file is handed over only once its size
//! and mtime have stayed the same for the rule's settle window, so a file still being
//! written (a download, a copy) is never read half-done.
//!
//! [`run`] watches until cancelled and reports settled events and its health on a channel:
//! a folder that vanishes or cannot be read puts the rule in `error` with the reason, and it
//! is watched again when it comes back. The OS's watch limit gives an error naming it.
//! It also reports a watermark (the time up to which every change was seen and handed over);
//! whenever watching starts it first hands over what changed since the last one
//! ([`catch_up`]), so files that arrived while nothing watched are not lost.

pub mod catch_up;

use crate::filter::FileFilter;
use crate::store::{AutomationStore, NewRun};
use crate::{Automation, AutomationError};
use chrono::{DateTime, Utc};
use echo_core::{AutomationState, FileEvent, RunCause};
use notify::event::{ModifyKind, RenameMode};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often the folders' health is checked (gone, unreadable, back).
const HEALTH_EVERY: Duration = Duration::from_secs(2);
/// Files whose last handed-over state is remembered (then the memory starts over).
const HANDED_KEPT: usize = 100_000;
/// How often the watermark moves on while the folders are watched.
const WATERMARK_EVERY: Duration = Duration::from_secs(30);
/// How far behind now the watermark stays: an event can wait this long in the debouncer
/// before the settle step sees it.
const WATERMARK_LAG: chrono::Duration = chrono::Duration::seconds(2);
/// A file that never stops changing is handed over after this long anyway.
const SETTLE_GIVE_UP: Duration = Duration::from_secs(30 * 60);

/// A file event that has settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled {
    /// What happened.
    pub kind: FileEvent,
    /// The file.
    pub path: PathBuf,
    /// Where a renamed file was.
    pub old_path: Option<PathBuf>,
    /// Its size once settled (`None` when it is gone).
    pub size: Option<u64>,
    /// Its mtime once settled, in nanoseconds since the epoch.
    pub mtime_ns: Option<i64>,
    /// When the event was seen.
    pub at: DateTime<Utc>,
}

/// What the watcher reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    /// A file event to queue.
    Event(Settled),
    /// Its health changed: `Active`, or `Error` with the reason.
    State(AutomationState, Option<String>),
    /// A file that changed while nothing watched (found when watching started): queue it
    /// unless a run for it at this size and mtime exists.
    CaughtUp(Settled),
    /// Every change before this time was reported: the rule's new watermark.
    Watched(DateTime<Utc>),
}

/// A file waiting to settle.
struct Pending {
    kind: FileEvent,
    old_path: Option<PathBuf>,
    seen: Option<(u64, i64)>,
    changed_at: Instant,
    first_at: Instant,
    at: DateTime<Utc>,
}

/// Watches `filter`'s folders until `cancel`, sending settled events, health changes and
/// watermarks to `out`; `since` is the last watermark (`None`: never watched, nothing to
/// catch up on). Returns when cancelled or when `out` is closed.
pub async fn run(
    filter: FileFilter,
    settle: Duration,
    since: Option<DateTime<Utc>>,
    out: mpsc::Sender<Report>,
    cancel: CancellationToken,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<DebounceEventResult>();
    // Coalescing only: the settle step below decides when a file is done.
    // Its own thread wakes every `debounce / 2` per rule, so it is not made shorter than
    // 100 ms: idle rules should cost next to nothing.
    let debounce = (settle / 2).clamp(Duration::from_millis(100), Duration::from_secs(1));
    let mut debouncer = match new_debouncer(
        debounce,
        Some(debounce / 2),
        move |r: DebounceEventResult| {
            let _ = tx.send(r);
        },
    ) {
        Ok(d) => d,
        Err(e) => {
            let _ = out
                .send(Report::State(
                    AutomationState::Error,
                    Some(watch_error(None, &e)),
                ))
                .await;
            return;
        }
    };
    let mode = if filter.recursive {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    };
    // Which folders are being watched right now.
    let mut watching: HashMap<PathBuf, bool> =
        filter.folders.iter().map(|f| (f.clone(), false)).collect();
    let mut last_state: Option<(AutomationState, Option<String>)> = None;
    let mut pending: HashMap<PathBuf, Pending> = HashMap::new();
    // Each file's size and mtime when it was last handed over.
    let mut handed: HashMap<PathBuf, (u64, i64)> = HashMap::new();
    let tick = (settle / 4).clamp(Duration::from_millis(20), Duration::from_millis(500));
    let mut settle_timer = tokio::time::interval(tick);
    settle_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut health = tokio::time::interval(HEALTH_EVERY);
    health.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut watermark = since;
    // Files the catch-up found, settling like any change (one may still be being written).
    let mut caught: HashSet<PathBuf> = HashSet::new();
    let mut watermark_timer = tokio::time::interval_at(
        tokio::time::Instant::now() + WATERMARK_EVERY,
        WATERMARK_EVERY,
    );
    watermark_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            _ = health.tick() => {
                let state = check_folders(&mut debouncer, &mut watching, mode);
                if last_state.as_ref() != Some(&state) {
                    let started = state.0 == AutomationState::Active;
                    if out.send(Report::State(state.0, state.1.clone())).await.is_err() {
                        break;
                    }
                    last_state = Some(state);
                    // Watching (re)started: first what changed while nothing watched.
                    if started {
                        let Some(mark) = catch_up(&filter, watermark, &mut pending, &mut caught, &out).await else {
                            break;
                        };
                        watermark = Some(mark);
                    }
                }
            }
            _ = watermark_timer.tick(), if watermark.is_some()
                && last_state.as_ref().is_some_and(|s| s.0 == AutomationState::Active) => {
                // It never moves back (a file still settling holds it where it is).
                let mark = watermark_now(&pending).max(watermark.unwrap_or_default());
                if out.send(Report::Watched(mark)).await.is_err() {
                    break;
                }
                watermark = Some(mark);
            }
            Some(batch) = rx.recv() => match batch {
                Ok(events) => {
                    for e in events {
                        // The debouncer delays each event by `debounce`; it does not say the
                        // file has been quiet since, so the settle window starts now.
                        note_event(&filter, &mut pending, &e.event.kind, &e.event.paths, Instant::now());
                    }
                }
                Err(errors) => {
                    for e in errors {
                        tracing::debug!(error = %e, "file watcher");
                        if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) {
                            let reason = watch_error(None, &e);
                            let _ = out.send(Report::State(AutomationState::Error, Some(reason.clone()))).await;
                            last_state = Some((AutomationState::Error, Some(reason)));
                        }
                    }
                }
            },
            _ = settle_timer.tick(), if !pending.is_empty() => {
                for s in settled(&mut pending, settle) {
                    // Late events about a change already handed over are not a new change.
                    let stat = s.size.zip(s.mtime_ns);
                    if s.kind == FileEvent::Deleted {
                        handed.remove(&s.path);
                    } else if s.kind != FileEvent::Renamed
                        && stat.is_some()
                        && handed.get(&s.path) == stat.as_ref()
                    {
                        continue;
                    } else if let Some(stat) = stat {
                        if handed.len() >= HANDED_KEPT {
                            handed.clear();
                        }
                        handed.insert(s.path.clone(), stat);
                    }
                    let report = if caught.remove(&s.path) {
                        Report::CaughtUp(s)
                    } else {
                        Report::Event(s)
                    };
                    if out.send(report).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
    debouncer.stop_nonblocking();
}

/// Puts what changed since `since` (if any) among the files waiting to settle (a file still
/// being written is not handed over half-done), marked as caught up, and reports the
/// watermark, which it returns; `None` when `out` is closed. With files found the watermark
/// stays where it was until they are handed over (the periodic report moves it then).
async fn catch_up(
    filter: &FileFilter,
    since: Option<DateTime<Utc>>,
    pending: &mut HashMap<PathBuf, Pending>,
    caught: &mut HashSet<PathBuf>,
    out: &mpsc::Sender<Report>,
) -> Option<DateTime<Utc>> {
    // Taken before the walk, which covers everything that changed until then (a change
    // still in the debouncer included); what changes during it is seen by the watcher,
    // already on. No lag here: a first watermark must not reach back before the rule.
    let now = Utc::now();
    let mut mark = now;
    if let Some(since) = since {
        let scan = filter.clone();
        let found = tokio::task::spawn_blocking(move || catch_up::changed_since(&scan, since))
            .await
            .unwrap_or_default();
        if !found.is_empty() {
            tracing::info!(
                files = found.len(),
                "files changed while nothing watched: handing them over once they settle"
            );
            mark = since;
        }
        let seen_now = Instant::now();
        for s in found {
            caught.insert(s.path.clone());
            pending.entry(s.path.clone()).or_insert(Pending {
                kind: s.kind,
                old_path: None,
                seen: s.size.zip(s.mtime_ns),
                changed_at: seen_now,
                first_at: seen_now,
                at: s.at,
            });
        }
    }
    out.send(Report::Watched(mark)).await.ok()?;
    Some(mark)
}

/// The watermark now: every change before it was handed over, or is still settling.
fn watermark_now(pending: &HashMap<PathBuf, Pending>) -> DateTime<Utc> {
    let lagged = Utc::now() - WATERMARK_LAG;
    pending
        .values()
        .map(|p| p.at)
        .min()
        .map_or(lagged, |oldest| oldest.min(lagged))
}

/// Watches the folders that exist and are not watched yet; reports the first problem.
fn check_folders<W: notify::Watcher, C: notify_debouncer_full::FileIdCache>(
    debouncer: &mut notify_debouncer_full::Debouncer<W, C>,
    watching: &mut HashMap<PathBuf, bool>,
    mode: RecursiveMode,
) -> (AutomationState, Option<String>) {
    let mut problem = None;
    for (folder, watched) in watching.iter_mut() {
        let readable = std::fs::read_dir(folder).map(|_| ());
        match readable {
            Err(e) => {
                if *watched {
                    let _ = debouncer.unwatch(folder);
                    *watched = false;
                }
                let why = match e.kind() {
                    std::io::ErrorKind::NotFound => "it does not exist (any more)".to_string(),
                    std::io::ErrorKind::PermissionDenied => {
                        "it cannot be read (permission denied)".to_string()
                    }
                    _ => e.to_string(),
                };
                problem.get_or_insert(format!(
                    "folder {}: {why}; watching resumes when it is back",
                    folder.display()
                ));
            }
            Ok(()) if !*watched => match debouncer.watch(folder, mode) {
                Ok(()) => *watched = true,
                Err(e) => {
                    problem.get_or_insert(watch_error(Some(folder), &e));
                }
            },
            Ok(()) => {}
        }
    }
    match problem {
        Some(p) => (AutomationState::Error, Some(p)),
        None => (AutomationState::Active, None),
    }
}

fn watch_error(folder: Option<&Path>, e: &notify::Error) -> String {
    let place = folder
        .map(|f| format!("folder {}: ", f.display()))
        .unwrap_or_default();
    match e.kind {
        notify::ErrorKind::MaxFilesWatch => format!(
            "{place}the system's limit on watched folders is reached (on Linux: \
             fs.inotify.max_user_watches, see `sysctl fs.inotify.max_user_watches`); raise it \
             or watch fewer folders"
        ),
        _ => format!("{place}cannot watch it: {e}"),
    }
}

/// Adds a debounced event to the files waiting to settle; the file has not changed since
/// `quiet_since` (as far as the watcher saw), and its size and mtime are taken now.
fn note_event(
    filter: &FileFilter,
    pending: &mut HashMap<PathBuf, Pending>,
    kind: &EventKind,
    paths: &[PathBuf],
    quiet_since: Instant,
) {
    let (event, path, old) = match kind {
        EventKind::Create(_) => (FileEvent::Created, paths.first(), None),
        EventKind::Remove(_) => (FileEvent::Deleted, paths.first(), None),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if paths.len() >= 2 => {
            (FileEvent::Renamed, paths.last(), paths.first().cloned())
        }
        // Moved in from elsewhere / moved away to elsewhere.
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
            (FileEvent::Created, paths.first(), None)
        }
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
            (FileEvent::Deleted, paths.first(), None)
        }
        EventKind::Modify(ModifyKind::Metadata(m))
            if !matches!(
                m,
                notify::event::MetadataKind::WriteTime | notify::event::MetadataKind::Any
            ) =>
        {
            return;
        }
        EventKind::Modify(_) => (FileEvent::Modified, paths.first(), None),
        _ => return,
    };
    let Some(path) = path else { return };
    // A rename out of the rule's files is a deletion for it, one into them a creation.
    let (event, old) = match (event, &old) {
        (FileEvent::Renamed, Some(o)) if !filter.matches(o) => (FileEvent::Created, None),
        (FileEvent::Renamed, Some(o)) if !filter.matches(path) => {
            note_event(
                filter,
                pending,
                &EventKind::Remove(notify::event::RemoveKind::Any),
                std::slice::from_ref(o),
                quiet_since,
            );
            return;
        }
        _ => (event, old),
    };
    if !filter.matches(path) || (event != FileEvent::Deleted && path.is_dir()) {
        return;
    }
    let now = Instant::now();
    let stat = if event == FileEvent::Deleted {
        None
    } else {
        file_stat(path)
    };
    match pending.get_mut(path) {
        Some(p) => {
            // A file created and then written is still "created"; a later deletion wins.
            p.kind = match (p.kind, event) {
                (FileEvent::Created, FileEvent::Modified) => FileEvent::Created,
                (FileEvent::Renamed, FileEvent::Modified) => FileEvent::Renamed,
                (_, e) => e,
            };
            if old.is_some() {
                p.old_path = old;
            }
            if stat != p.seen {
                p.seen = stat;
                p.changed_at = p.changed_at.max(quiet_since);
            }
        }
        None => {
            pending.insert(
                path.clone(),
                Pending {
                    kind: event,
                    old_path: old,
                    seen: stat,
                    changed_at: quiet_since,
                    first_at: now,
                    at: Utc::now(),
                },
            );
        }
    }
}

/// The files whose size and mtime stayed the same for `settle`.
fn settled(pending: &mut HashMap<PathBuf, Pending>, settle: Duration) -> Vec<Settled> {
    let now = Instant::now();
    let mut done = Vec::new();
    for (path, p) in pending.iter_mut() {
        let stat = file_stat(path);
        if p.kind != FileEvent::Deleted {
            if stat != p.seen {
                p.seen = stat;
                p.changed_at = now;
            }
            if stat.is_none() {
                // Gone before it settled: nothing to hand over.
                if now.duration_since(p.changed_at) >= settle {
                    done.push((path.clone(), None));
                }
                continue;
            }
        }
        let quiet = now.duration_since(p.changed_at) >= settle;
        let given_up = now.duration_since(p.first_at) >= SETTLE_GIVE_UP;
        if quiet || given_up {
            done.push((path.clone(), Some(stat)));
        }
    }
    let mut out = Vec::new();
    for (path, stat) in done {
        let Some(p) = pending.remove(&path) else {
            continue;
        };
        let Some(stat) = stat else { continue };
        out.push(Settled {
            kind: p.kind,
            path,
            old_path: p.old_path,
            size: stat.map(|s| s.0),
            mtime_ns: stat.map(|s| s.1),
            at: p.at,
        });
    }
    out.sort_by_key(|s| s.at);
    out
}

/// Size and mtime (ns) of a file, `None` when it is not there.
pub fn file_stat(path: &Path) -> Option<(u64, i64)> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    Some((meta.len(), mtime))
}

/// The run a settled event becomes: its dedup key (so the same event queues once, whichever
/// process saw it) and its chain (the runs that wrote the file, so a run's own writes never
/// start it again).
pub async fn run_for(store: &AutomationStore, event: &Settled) -> Result<NewRun, AutomationError> {
    let path = event.path.to_string_lossy().into_owned();
    let chain = store
        .writer_chain(&path, event.size, event.mtime_ns)
        .await?
        .unwrap_or_default();
    let dedup = match (event.size, event.mtime_ns) {
        (Some(size), Some(mtime)) => format!("{}:{path}:{size}:{mtime}", event.kind),
        _ => format!("{}:{path}:{}", event.kind, event.at.timestamp_millis()),
    };
    Ok(NewRun {
        cause: RunCause::File,
        event: Some(event.kind),
        path: Some(path),
        old_path: event
            .old_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        fire_time: None,
        dedup: Some(dedup),
        chain,
    })
}

/// Whether `automation`'s filter wants this settled event.
pub fn wanted(automation: &Automation, filter: &FileFilter, event: &Settled) -> bool {
    automation.enabled && filter.wants(event.kind, &event.path)
}
