//! `echod automations …` and `echod approvals queue|answer`: define and inspect automations
//! and answer the questions their unattended runs queued. Each command builds its request
//! from the flags and makes one `Api` call; `echod serve` (or the app) runs them.

use crate::cli::Vocab;
use crate::print::{self, Text};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use echo_agent::Api;
use echo_agent::wire::{
    AddAutomation, AnswerApproval, ApprovalAnswer, ApprovalId, ApprovalQueue, AutomationRun,
    AutomationRuns, AutomationSpec, AutomationTrigger, AutomationView, EditAutomation, FileEvent,
    GetAutomation, ListAutomations, MissedRuns, PreApproval, QueuedApproval, RemoveAutomation,
    RunAutomation, Schedule, SetAllAutomationsEnabled, SetAutomationEnabled, TaskType, Watch,
};
use std::io::Write;

#[derive(Debug, Subcommand)]
pub enum AutomationsCommand {
    /// Every automation with its state and runs.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// One automation: its definition, state, next fire times and run counts.
    Show {
        /// Name or id.
        automation: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a watch rule (`--watch DIR`) or a schedule (`--cron EXPR`).
    Add {
        /// Unique name; its runs' sessions are named after it.
        #[arg(long)]
        name: String,
        #[command(flatten)]
        spec: SpecArgs,
        /// Save it switched off.
        #[arg(long)]
        disabled: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change an automation: each flag given replaces that part.
    Edit {
        /// Name or id.
        automation: String,
        /// A new name.
        #[arg(long)]
        rename: Option<String>,
        #[command(flatten)]
        spec: SpecArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove an automation and its run history.
    Remove {
        /// Name or id.
        automation: String,
    },
    /// Switch an automation on (or every one with --all).
    Enable {
        /// Name or id.
        automation: Option<String>,
        /// Every automation.
        #[arg(long)]
        all: bool,
    },
    /// Pause an automation (or every one with --all).
    Disable {
        /// Name or id.
        automation: Option<String>,
        /// Every automation.
        #[arg(long)]
        all: bool,
    },
    /// Queue a run now (a running `echod serve` or the app starts it).
    Run {
        /// Name or id.
        automation: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// An automation's runs, newest first.
    Runs {
        /// Name or id.
        automation: String,
        /// How many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The parts of a definition, as flags.
#[derive(Debug, Args)]
pub struct SpecArgs {
    /// A folder to watch (repeat for more; `~` is the home folder).
    #[arg(long = "watch", value_name = "DIR")]
    watch: Vec<String>,
    /// Only files matching this glob inside the folder (repeatable): `*.pdf`.
    #[arg(long = "glob", value_name = "GLOB")]
    glob: Vec<String>,
    /// Leave files matching this glob alone (repeatable).
    #[arg(long = "exclude", value_name = "GLOB")]
    exclude: Vec<String>,
    /// Event kinds: created, modified, deleted, renamed (comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = EVENT)]
    events: Vec<FileEvent>,
    /// Watch only the folder itself, not its subfolders.
    #[arg(long)]
    flat: bool,
    /// Milliseconds a file must stay unchanged before a run gets it.
    #[arg(long)]
    settle_ms: Option<u64>,
    /// Hidden files too.
    #[arg(long)]
    include_hidden: bool,
    /// A cron expression or a phrase ("every weekday at 8:00").
    #[arg(long)]
    cron: Option<String>,
    /// IANA time zone for --cron (default: the computer's).
    #[arg(long = "tz")]
    time_zone: Option<String>,
    /// Fire times missed while nothing ran it: run_once (default) or skip.
    #[arg(long, value_parser = MISSED)]
    missed: Option<MissedRuns>,
    /// The message each run sends; a template over {{path}}, {{name}}, {{ext}}, {{event}},
    /// {{old_path}}, {{time}}.
    #[arg(long)]
    prompt: Option<String>,
    /// The tools runs may use (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    tools: Vec<String>,
    /// A call runs may make without asking: TOOL or TOOL=PATTERN (repeatable), e.g.
    /// `write_file=~/Notes/**`.
    #[arg(long = "allow", value_name = "TOOL[=PATTERN]")]
    allow: Vec<String>,
    /// Route runs as this task type.
    #[arg(long, value_parser = TASK)]
    task: Option<TaskType>,
    /// Runs belong to this project: its memories, instructions and folders.
    #[arg(long)]
    project: Option<String>,
    /// Runs at a time (1–4).
    #[arg(long)]
    concurrency: Option<u8>,
    /// Most runs queued per hour.
    #[arg(long)]
    max_runs_per_hour: Option<u32>,
    /// Most runs per hour for one and the same file.
    #[arg(long)]
    max_runs_per_file: Option<u32>,
}

const EVENT: Vocab<FileEvent> = Vocab {
    what: "event",
    names: FileEvent::names(),
    parse: FileEvent::parse,
};
const MISSED: Vocab<MissedRuns> = Vocab {
    what: "policy",
    names: MissedRuns::names(),
    parse: MissedRuns::parse,
};
const TASK: Vocab<TaskType> = Vocab {
    what: "task",
    names: TaskType::names(),
    parse: TaskType::parse,
};

impl SpecArgs {
    /// The definition these flags give, over `base` (an edit) or from nothing (an add).
    fn apply(mut self, base: Option<AutomationSpec>) -> anyhow::Result<AutomationSpec> {
        let trigger = self.trigger(base.as_ref().map(|b| &b.trigger))?;
        let prompt = match (self.prompt.take(), &base) {
            (Some(p), _) => p,
            (None, Some(b)) => b.prompt.clone(),
            (None, None) => bail!("an automation needs --prompt TEMPLATE"),
        };
        let mut spec = match base {
            Some(b) => AutomationSpec {
                trigger,
                prompt,
                ..b
            },
            None => AutomationSpec::new(trigger, prompt),
        };
        if !self.tools.is_empty() {
            spec.tools = Some(self.tools);
        }
        if !self.allow.is_empty() {
            spec.allow = self.allow.iter().map(|a| pre_approval(a)).collect();
        }
        if self.task.is_some() {
            spec.task = self.task;
        }
        if self.project.is_some() {
            spec.project = self.project;
        }
        if let Some(c) = self.concurrency {
            spec.concurrency = c;
        }
        if let Some(n) = self.max_runs_per_hour {
            spec.max_runs_per_hour = n;
        }
        if let Some(n) = self.max_runs_per_file {
            spec.max_runs_per_file_per_hour = n;
        }
        Ok(spec)
    }

    /// The trigger: new folders or a new schedule, or `base`'s, with the flags applied.
    fn trigger(&mut self, base: Option<&AutomationTrigger>) -> anyhow::Result<AutomationTrigger> {
        if !self.watch.is_empty() && self.cron.is_some() {
            bail!("give --watch or --cron, not both");
        }
        let mut trigger = match (base, self.watch.is_empty(), &self.cron) {
            // New folders keep the rest of the old rule unless flags say otherwise.
            (Some(AutomationTrigger::Watch(old)), false, _) => AutomationTrigger::Watch(Watch {
                folders: self.watch.clone(),
                ..old.clone()
            }),
            (_, false, _) => AutomationTrigger::Watch(Watch::new(self.watch.clone())),
            (_, true, Some(cron)) => AutomationTrigger::Schedule(Schedule::new(cron.clone())),
            (Some(b), true, None) => b.clone(),
            (None, true, None) => bail!("an automation needs --watch DIR or --cron EXPR"),
        };
        match &mut trigger {
            AutomationTrigger::Watch(w) => self.watch_flags(w)?,
            AutomationTrigger::Schedule(s) => self.schedule_flags(s)?,
        }
        Ok(trigger)
    }

    /// Applies the watch-rule flags; refuses the schedule-only ones.
    fn watch_flags(&mut self, w: &mut Watch) -> anyhow::Result<()> {
        if self.time_zone.is_some() || self.missed.is_some() {
            bail!("--tz and --missed are for schedules (--cron)");
        }
        if !self.glob.is_empty() {
            w.include = std::mem::take(&mut self.glob);
        }
        if !self.exclude.is_empty() {
            w.exclude = std::mem::take(&mut self.exclude);
        }
        if !self.events.is_empty() {
            w.events = std::mem::take(&mut self.events);
        }
        if self.flat {
            w.recursive = false;
        }
        if let Some(ms) = self.settle_ms {
            w.settle_ms = ms;
        }
        if self.include_hidden {
            w.include_hidden = true;
        }
        Ok(())
    }

    /// Applies the schedule flags; refuses the watch-only ones.
    fn schedule_flags(&mut self, s: &mut Schedule) -> anyhow::Result<()> {
        let watch_flags = !self.glob.is_empty()
            || !self.exclude.is_empty()
            || !self.events.is_empty()
            || self.flat
            || self.settle_ms.is_some()
            || self.include_hidden;
        if watch_flags {
            bail!(
                "--glob, --exclude, --events, --flat, --settle-ms and --include-hidden are for watch rules (--watch)"
            );
        }
        if let Some(tz) = self.time_zone.take() {
            s.time_zone = Some(tz);
        }
        if let Some(m) = self.missed {
            s.missed = m;
        }
        Ok(())
    }
}

/// `--allow TOOL` or `--allow TOOL=PATTERN`.
fn pre_approval(arg: &str) -> PreApproval {
    match arg.split_once('=') {
        Some((tool, pattern)) => PreApproval {
            tool: tool.trim().to_string(),
            pattern: Some(pattern.trim().to_string()),
        },
        None => PreApproval {
            tool: arg.trim().to_string(),
            pattern: None,
        },
    }
}

/// Runs `echod automations …`.
pub async fn automations(api: &Api, command: AutomationsCommand) -> anyhow::Result<()> {
    use AutomationsCommand as C;
    match command {
        C::List { json } => print::call(api, ListAutomations {}, json).await,
        C::Show { automation, json } => show(&api.call(GetAutomation { automation }).await?, json),
        C::Add {
            name,
            spec,
            disabled,
            json,
        } => add(api, name, spec, disabled, json).await,
        C::Edit {
            automation,
            rename,
            spec,
            json,
        } => edit(api, automation, rename, spec, json).await,
        C::Remove { automation } => {
            let a = api.call(RemoveAutomation { automation }).await?;
            println!("removed {}", a.name);
            Ok(())
        }
        C::Enable { automation, all } => switch(api, automation, all, true).await,
        C::Disable { automation, all } => switch(api, automation, all, false).await,
        C::Run { automation, json } => {
            let run = api.call(RunAutomation { automation }).await?;
            if json {
                return print::json(&run);
            }
            let (seq, id) = (run.seq, &run.id);
            println!("queued run {seq} ({id}); a running `echod serve` or the app starts it");
            Ok(())
        }
        C::Runs {
            automation,
            limit,
            json,
        } => {
            let request = AutomationRuns {
                automation,
                limit: Some(limit),
            };
            print::call(api, request, json).await
        }
    }
}

/// `echod automations add`.
async fn add(
    api: &Api,
    name: String,
    spec: SpecArgs,
    disabled: bool,
    json: bool,
) -> anyhow::Result<()> {
    let request = AddAutomation {
        name,
        spec: spec.apply(None)?,
        enabled: Some(!disabled),
    };
    show(&api.call(request).await?, json)
}

/// `echod automations edit`: the flags over the automation's definition as it is now.
async fn edit(
    api: &Api,
    automation: String,
    name: Option<String>,
    spec: SpecArgs,
    json: bool,
) -> anyhow::Result<()> {
    let current = api.call(GetAutomation {
        automation: automation.clone(),
    });
    let spec = Some(spec.apply(Some(current.await?.automation.spec))?);
    let request = EditAutomation {
        automation,
        name,
        spec,
    };
    show(&api.call(request).await?, json)
}

impl Text for Vec<AutomationView> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no automations (add one with `echod automations add`)")?;
        }
        for v in self {
            let a = &v.automation;
            writeln!(
                out,
                "{:<28} {:<12} {:<40} runs: {} done, {} failed, {} queued, {} waiting",
                a.name,
                a.state.as_str(),
                print::clip(&trigger_text(&a.spec.trigger), 40),
                v.runs.done,
                v.runs.failed,
                v.runs.queued,
                v.runs.waiting_for_approval
            )?;
        }
        Ok(())
    }
}

impl Text for Vec<AutomationRun> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no runs yet")?;
        }
        for r in self {
            let what = match (&r.path, &r.fire_time) {
                (Some(p), _) => format!("{} {p}", r.event.map_or("", |e| e.as_str())),
                (None, Some(t)) => format!("fired {t}"),
                (None, None) => r.cause.as_str().to_string(),
            };
            let why = r.reason.as_deref().map(|why| format!("  ({why})"));
            writeln!(
                out,
                "#{:<6} {:<21} {}  {}  {}{}",
                r.seq,
                r.status.as_str(),
                r.created_at,
                print::clip(&what, 60),
                r.session.as_deref().unwrap_or(""),
                why.unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

async fn switch(api: &Api, automation: Option<String>, all: bool, on: bool) -> anyhow::Result<()> {
    let word = if on { "enabled" } else { "paused" };
    match (automation, all) {
        (None, true) => {
            let n = api.call(SetAllAutomationsEnabled { enabled: on }).await?;
            println!("{word} {n} automation(s)");
        }
        (Some(automation), false) => {
            let request = SetAutomationEnabled {
                automation,
                enabled: on,
            };
            let v = api.call(request).await?;
            println!("{word} {}", v.automation.name);
        }
        _ => bail!("name one automation, or give --all"),
    }
    Ok(())
}

fn trigger_text(trigger: &AutomationTrigger) -> String {
    match trigger {
        AutomationTrigger::Watch(w) => {
            let globs = if w.include.is_empty() {
                String::new()
            } else {
                format!(" ({})", w.include.join(", "))
            };
            format!("watch {}{globs}", w.folders.join(", "))
        }
        AutomationTrigger::Schedule(s) => format!("cron {}", s.cron),
    }
}

fn show(v: &AutomationView, json: bool) -> anyhow::Result<()> {
    if json {
        return print::json(v);
    }
    let a = &v.automation;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}  ({})", a.name, a.id)?;
    writeln!(
        out,
        "state:    {}{}",
        a.state.as_str(),
        a.state_reason
            .as_deref()
            .map(|r| format!(" — {r}"))
            .unwrap_or_default()
    )?;
    writeln!(out, "trigger:  {}", trigger_text(&a.spec.trigger))?;
    if let AutomationTrigger::Watch(w) = &a.spec.trigger {
        let events: Vec<&str> = w.events.iter().map(|e| e.as_str()).collect();
        writeln!(
            out,
            "          events {}, settle {} ms{}{}",
            events.join(","),
            w.settle_ms,
            if w.recursive { ", recursive" } else { "" },
            if w.exclude.is_empty() {
                String::new()
            } else {
                format!(", excluding {}", w.exclude.join(", "))
            }
        )?;
    }
    writeln!(out, "prompt:   {}", print::clip(&a.spec.prompt, 200))?;
    if let Some(tools) = &a.spec.tools {
        writeln!(out, "tools:    {}", tools.join(", "))?;
    }
    for p in &a.spec.allow {
        writeln!(
            out,
            "allowed:  {} {}",
            p.tool,
            p.pattern.as_deref().unwrap_or("*")
        )?;
    }
    for t in &v.next_fires {
        writeln!(out, "next:     {t}")?;
    }
    writeln!(
        out,
        "runs:     {} done, {} failed, {} skipped, {} queued, {} running, {} waiting for approval",
        v.runs.done,
        v.runs.failed,
        v.runs.skipped,
        v.runs.queued,
        v.runs.running,
        v.runs.waiting_for_approval
    )?;
    Ok(())
}

/// `echod approvals queue`.
pub async fn queue(api: &Api, all: bool, json: bool) -> anyhow::Result<()> {
    print::call(api, ApprovalQueue { all: Some(all) }, json).await
}

impl Text for Vec<QueuedApproval> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no questions waiting")?;
        }
        for q in self {
            writeln!(
                out,
                "{}  [{}] {} wants {} ({}): {}  expires {}",
                q.id,
                q.status.as_str(),
                q.automation,
                q.tool,
                q.risk.as_str(),
                print::clip(&q.detail, 80),
                q.expires_at
            )?;
        }
        Ok(())
    }
}

/// `echod approvals answer ID ANSWER`.
pub async fn answer(api: &Api, id: &str, answer: &str) -> anyhow::Result<()> {
    let parsed = ApprovalAnswer::parse(answer).with_context(|| {
        format!(
            "unknown answer {answer:?}; expected allow_once, allow_automation, allow_session, allow_always or deny"
        )
    })?;
    let request_id = ApprovalId::from_string(id);
    api.call(AnswerApproval {
        request_id,
        answer: parsed,
    })
    .await?;
    println!("answered {id}: {answer}");
    Ok(())
}
