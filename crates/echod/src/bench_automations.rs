//! `echod bench automations`: how fast a dropped file becomes a run, and what watching costs
//! when nothing happens. In one process (the engine runs its automations as `echod serve`
//! does) against a model server (`scripts/bench-automations.sh` starts the mock):
//!
//! - event → run start, one file at a time: from the moment a file is written to the
//!   moment its run's turn starts (`started_at`), which includes the rule's settle window;
//! - the same for a burst of files written at once (queueing included);
//! - idle CPU and memory of the process with `rules` watch rules over `files` files, against
//!   the same process before its automations started (a baseline in the same run).

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use echo_agent::Api;
use echo_agent::wire::{AutomationSpec, AutomationTrigger, Watch};
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// Settings of one benchmark run.
pub struct Plan {
    /// Files dropped one at a time.
    pub singles: usize,
    /// Files in the burst.
    pub burst: usize,
    /// Idle watch rules.
    pub rules: usize,
    /// Files under the idle rules, in all.
    pub files: usize,
    /// Seconds of idle measurement (each of baseline and watching).
    pub idle_secs: u64,
    /// The rules' settle window.
    pub settle_ms: u64,
}

#[derive(Debug, Serialize)]
struct Idle {
    cpu_percent: f64,
    rss_mib: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    settle_ms: u64,
    single_file_ms: crate::bench::Summary,
    burst_files: usize,
    burst_file_ms: crate::bench::Summary,
    burst_all_started_ms: f64,
    idle_rules: usize,
    idle_files: usize,
    idle_baseline: Idle,
    idle_watching: Idle,
}

/// Runs the benchmark in `dir` (its folders are created there) and prints one JSON report.
pub async fn run(api: &Api, dir: &Path, plan: &Plan) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let per_rule = plan.files / plan.rules.max(1);
    for r in 0..plan.rules {
        let folder = dir.join(format!("idle-{r}"));
        std::fs::create_dir_all(&folder)?;
        for f in 0..per_rule {
            std::fs::write(folder.join(format!("file-{f:05}.txt")), "x")?;
        }
    }
    let idle_baseline = idle(plan.idle_secs).await?;

    let watch = |folder: &str, glob: &str| {
        let mut w = Watch::new(vec![dir.join(folder).display().to_string()]);
        w.include = vec![glob.into()];
        w.settle_ms = plan.settle_ms;
        w
    };
    for r in 0..plan.rules {
        let spec = AutomationSpec::new(
            AutomationTrigger::Watch(watch(&format!("idle-{r}"), "*.never")),
            "{{path}}",
        );
        api.add_automation(&format!("idle {r}"), &spec, true)
            .await?;
    }
    std::fs::create_dir_all(dir.join("single"))?;
    std::fs::create_dir_all(dir.join("burst"))?;
    let single = AutomationSpec::new(
        AutomationTrigger::Watch(watch("single", "*.txt")),
        "{{name}}",
    );
    api.add_automation("single", &single, true).await?;
    let mut burst = AutomationSpec::new(
        AutomationTrigger::Watch(watch("burst", "*.txt")),
        "{{name}}",
    );
    burst.concurrency = 2;
    api.add_automation("burst", &burst, true).await?;
    api.start_automations();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let all = api.automations().await?;
        if all
            .iter()
            .all(|v| v.automation.state == echo_agent::wire::AutomationState::Active)
        {
            break;
        }
        if Instant::now() > deadline {
            bail!("the automations did not all start watching within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let idle_watching = idle(plan.idle_secs).await?;

    let mut singles = Vec::new();
    for i in 0..plan.singles {
        let path = dir.join("single").join(format!("s{i:04}.txt"));
        let written = Utc::now();
        std::fs::write(&path, format!("file {i}"))?;
        let started = wait_started(api, "single", &[path], Duration::from_secs(60)).await?;
        singles.push(ms(started[0] - written));
        wait_done(api, "single", i + 1).await?;
    }

    let mut written = Vec::new();
    let t0 = Instant::now();
    let mut paths = Vec::new();
    for i in 0..plan.burst {
        let path = dir.join("burst").join(format!("b{i:05}.txt"));
        written.push(Utc::now());
        std::fs::write(&path, format!("file {i}"))?;
        paths.push(path);
    }
    let started = wait_started(api, "burst", &paths, Duration::from_secs(1800)).await?;
    let all_started = t0.elapsed().as_secs_f64() * 1000.0;
    let burst_ms: Vec<f64> = started
        .iter()
        .zip(&written)
        .map(|(s, w)| ms(*s - *w))
        .collect();
    let report = Report {
        settle_ms: plan.settle_ms,
        single_file_ms: crate::bench::summarize(singles),
        burst_files: plan.burst,
        burst_file_ms: crate::bench::summarize(burst_ms),
        burst_all_started_ms: all_started,
        idle_rules: plan.rules,
        idle_files: per_rule * plan.rules,
        idle_baseline,
        idle_watching,
    };
    echod::print_json(&report)
}

fn ms(d: chrono::TimeDelta) -> f64 {
    d.num_microseconds()
        .map_or(f64::MAX, |us| us as f64 / 1000.0)
}

/// When each file's run started.
async fn wait_started(
    api: &Api,
    automation: &str,
    files: &[std::path::PathBuf],
    limit: Duration,
) -> anyhow::Result<Vec<DateTime<Utc>>> {
    let deadline = Instant::now() + limit;
    loop {
        let runs = api.automation_runs(automation, 5000).await?;
        let mut out = Vec::with_capacity(files.len());
        for f in files {
            let text = f.display().to_string();
            let started = runs
                .iter()
                .find(|r| r.path.as_deref() == Some(text.as_str()))
                .and_then(|r| r.started_at.as_deref())
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
            match started {
                Some(t) => out.push(t.with_timezone(&Utc)),
                None => break,
            }
        }
        if out.len() == files.len() {
            return Ok(out);
        }
        if Instant::now() > deadline {
            bail!("{} of {} runs started in time", out.len(), files.len());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_done(api: &Api, automation: &str, n: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let view = api.automation(automation).await?;
        let ended = view.runs.done + view.runs.failed;
        if ended as usize >= n {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("run {n} of {automation} did not end in time");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The process's CPU share and resident memory over `secs` of doing nothing.
async fn idle(secs: u64) -> anyhow::Result<Idle> {
    let (cpu0, t0) = (cpu_seconds()?, Instant::now());
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let (cpu1, wall) = (cpu_seconds()?, t0.elapsed().as_secs_f64());
    Ok(Idle {
        cpu_percent: (cpu1 - cpu0) / wall * 100.0,
        rss_mib: rss_kib()? as f64 / 1024.0,
    })
}

/// User + system CPU time of this process (`/proc/self/stat`, in clock ticks of 1/100 s).
fn cpu_seconds() -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").context("reading /proc/self/stat")?;
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| -> anyhow::Result<f64> {
        Ok(fields
            .get(i)
            .context("short /proc/self/stat")?
            .parse::<f64>()?)
    };
    // Fields 14 and 15 of the line; 12 and 13 after "pid (comm) state".
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}

fn rss_kib() -> anyhow::Result<u64> {
    let status =
        std::fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no VmRSS in /proc/self/status")
}
