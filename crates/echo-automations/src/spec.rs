//! What an automation is: its trigger (a watch rule or a schedule), the prompt template a
//! run sends, the tools it may use and what it may do without asking. [`Spec::check`]
//! validates all of it at once, compiling every glob, the cron expression, the time zone and
//! the template, so a bad automation is refused when it is saved, never half-run later.

use crate::AutomationError;
use crate::filter::FileFilter;
use crate::schedule::Schedule as CompiledSchedule;
use crate::template::Template;
use echo_core::config::TaskType;
use echo_core::{FileEvent, MissedRuns};
use serde::{Deserialize, Serialize};

/// Longest prompt template, in bytes.
const MAX_PROMPT_BYTES: usize = 16 * 1024;
/// Most runs of one automation at a time.
pub const MAX_CONCURRENCY: u8 = 4;

/// An automation's definition, as the person wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// What sets a run off.
    pub trigger: Trigger,
    /// The message each run sends, a template over `{{path}}`, `{{name}}`, `{{ext}}`,
    /// `{{event}}`, `{{old_path}}` (renames) and `{{time}}`.
    pub prompt: String,
    /// The tools a run may use (names from the registry); absent: every tool.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Calls this automation may make without asking (its runs only). Hard-deny patterns and
    /// secret paths still apply.
    #[serde(default)]
    pub allow: Vec<PreApproval>,
    /// The task type its runs are routed as (`[routing]`); absent: judged from the prompt.
    #[serde(default)]
    pub task: Option<TaskType>,
    /// The project its runs' conversations belong to (by name): they recall its memories,
    /// keep what they learn there and work in its folders. Absent: no project.
    #[serde(default)]
    pub project: Option<String>,
    /// Runs of this automation at a time (1–4). Runs start in the order their events came.
    #[serde(default = "defaults::concurrency")]
    pub concurrency: u8,
    /// Most runs queued in one hour; past it, events are skipped (with that reason) and the
    /// automation shows `rate_limited`.
    #[serde(default = "defaults::max_runs_per_hour")]
    pub max_runs_per_hour: u32,
    /// Most runs for one and the same file in one hour (a file rewritten over and over).
    #[serde(default = "defaults::max_runs_per_file_per_hour")]
    pub max_runs_per_file_per_hour: u32,
}

/// A call an automation may make without asking: a tool and an argument pattern, as in
/// approval rules (`write_file` under `~/Notes/**`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreApproval {
    /// Tool name (or a glob over names).
    pub tool: String,
    /// Argument pattern (a path glob for file tools, a command prefix for `shell`); absent:
    /// every call of the tool.
    #[serde(default)]
    pub pattern: Option<String>,
}

/// What sets a run off.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Trigger {
    /// Files changing in folders.
    Watch(Watch),
    /// Times from a cron expression.
    Schedule(Schedule),
}

/// A watch rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watch {
    /// Folders to watch (`~` is the home folder).
    pub folders: Vec<String>,
    /// Subfolders too.
    #[serde(default = "defaults::yes")]
    pub recursive: bool,
    /// Globs over the path inside the folder (`*.pdf`, `notes/**`); absent or empty:
    /// every file.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs of files to leave alone.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Which events start a run.
    #[serde(default = "defaults::events")]
    pub events: Vec<FileEvent>,
    /// How long a file must stay unchanged (size and mtime) before it is handed over, in
    /// milliseconds; also the debounce window of the watcher.
    #[serde(default = "defaults::settle_ms")]
    pub settle_ms: u64,
    /// Hidden files (and files in hidden folders) too; editors' temp and swap files never.
    #[serde(default)]
    pub include_hidden: bool,
}

/// A schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// A cron expression (`0 8 * * 1-5`: weekdays at 8:00; 5 or 6 fields, `@daily`…).
    pub cron: String,
    /// IANA time zone (`Europe/Berlin`); absent: the computer's zone.
    #[serde(default)]
    pub time_zone: Option<String>,
    /// What happens to fire times missed while nothing ran it.
    #[serde(default = "defaults::missed")]
    pub missed: MissedRuns,
}

/// What a field left out of a spec means: serde's defaults here and in the wire types that
/// mirror the spec (`echo_agent::wire::AutomationSpec`), so both read a spec the same way.
pub mod defaults {
    use echo_core::{FileEvent, MissedRuns};

    /// Watch subfolders.
    pub fn yes() -> bool {
        true
    }
    /// A file created or modified starts a run.
    pub fn events() -> Vec<FileEvent> {
        vec![FileEvent::Created, FileEvent::Modified]
    }
    /// A file settles after a second unchanged.
    pub fn settle_ms() -> u64 {
        1000
    }
    /// Fire times missed while nothing ran: one catch-up run.
    pub fn missed() -> MissedRuns {
        MissedRuns::RunOnce
    }
    /// One run at a time.
    pub fn concurrency() -> u8 {
        1
    }
    /// Runs queued in an hour, at most.
    pub fn max_runs_per_hour() -> u32 {
        2000
    }
    /// Runs for one file in an hour, at most.
    pub fn max_runs_per_file_per_hour() -> u32 {
        10
    }
}

/// A spec with everything compiled: what the watcher, the scheduler and the runner use.
#[derive(Debug)]
pub struct Checked {
    /// The spec as given.
    pub spec: Spec,
    /// The prompt template.
    pub template: Template,
    /// What sets it off, compiled.
    pub trigger: CheckedTrigger,
}

/// A compiled trigger.
#[derive(Debug)]
pub enum CheckedTrigger {
    /// Folders and the filter over their files.
    Watch(FileFilter),
    /// The cron expression in its zone.
    Schedule(CompiledSchedule),
}

impl Spec {
    /// Validates and compiles the whole spec; the error names the field and what is wrong.
    pub fn check(&self) -> Result<Checked, AutomationError> {
        let invalid =
            |what: &'static str, message: String| AutomationError::Invalid { what, message };
        if self.prompt.trim().is_empty() {
            return Err(invalid("prompt", "it is empty".into()));
        }
        if self.prompt.len() > MAX_PROMPT_BYTES {
            return Err(invalid(
                "prompt",
                format!(
                    "it is {} bytes; the limit is {MAX_PROMPT_BYTES}",
                    self.prompt.len()
                ),
            ));
        }
        let template = Template::compile(&self.prompt)?;
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(invalid(
                "concurrency",
                format!("{} is outside 1–{MAX_CONCURRENCY}", self.concurrency),
            ));
        }
        if self.max_runs_per_hour == 0 || self.max_runs_per_file_per_hour == 0 {
            return Err(invalid(
                "rate limit",
                "a limit of 0 runs would never run; pause the automation instead".into(),
            ));
        }
        if let Some(tools) = &self.tools
            && tools.iter().any(|t| t.trim().is_empty())
        {
            return Err(invalid("tools", "a tool name is empty".into()));
        }
        for a in &self.allow {
            if a.tool.trim().is_empty() {
                return Err(invalid("allow", "a pre-approval names no tool".into()));
            }
        }
        let trigger = match &self.trigger {
            Trigger::Watch(w) => {
                if w.folders.is_empty() {
                    return Err(invalid("folders", "a watch rule needs a folder".into()));
                }
                if w.events.is_empty() {
                    return Err(invalid("events", "no event kind is chosen".into()));
                }
                if w.settle_ms < 50 || w.settle_ms > 10 * 60 * 1000 {
                    return Err(invalid(
                        "settle_ms",
                        format!("{} ms is outside 50 ms – 10 minutes", w.settle_ms),
                    ));
                }
                CheckedTrigger::Watch(FileFilter::new(w)?)
            }
            Trigger::Schedule(s) => {
                CheckedTrigger::Schedule(CompiledSchedule::new(&s.cron, s.time_zone.as_deref())?)
            }
        };
        Ok(Checked {
            spec: self.clone(),
            template,
            trigger,
        })
    }

    /// The watch rule, if this is one.
    pub fn watch(&self) -> Option<&Watch> {
        match &self.trigger {
            Trigger::Watch(w) => Some(w),
            Trigger::Schedule(_) => None,
        }
    }
}

impl Watch {
    /// A watch rule over `folders` with every default.
    pub fn new(folders: Vec<String>) -> Watch {
        Watch {
            folders,
            recursive: true,
            include: Vec::new(),
            exclude: Vec::new(),
            events: defaults::events(),
            settle_ms: defaults::settle_ms(),
            include_hidden: false,
        }
    }
}

impl Spec {
    /// A spec with `trigger` and `prompt` and every default.
    pub fn new(trigger: Trigger, prompt: impl Into<String>) -> Spec {
        Spec {
            trigger,
            prompt: prompt.into(),
            tools: None,
            allow: Vec::new(),
            task: None,
            project: None,
            concurrency: defaults::concurrency(),
            max_runs_per_hour: defaults::max_runs_per_hour(),
            max_runs_per_file_per_hour: defaults::max_runs_per_file_per_hour(),
        }
    }
}

impl Schedule {
    /// A schedule with the computer's zone and the default missed-run policy.
    pub fn new(cron: impl Into<String>) -> Schedule {
        Schedule {
            cron: cron.into(),
            time_zone: None,
            missed: defaults::missed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in_and_unknown_fields_are_refused() {
        let spec: Spec = serde_json::from_value(serde_json::json!({
            "trigger": {"kind": "watch", "folders": ["/tmp/in"]},
            "prompt": "Summarise {{path}}"
        }))
        .expect("a minimal spec parses");
        let w = spec.watch().expect("a watch rule");
        assert!(w.recursive);
        assert_eq!(w.events, vec![FileEvent::Created, FileEvent::Modified]);
        assert_eq!(spec.concurrency, 1);
        spec.check().expect("the minimal spec is valid");

        let bad = serde_json::from_value::<Spec>(serde_json::json!({
            "trigger": {"kind": "watch", "folders": ["/tmp/in"], "recursiv": false},
            "prompt": "x"
        }));
        assert!(bad.is_err(), "a misspelt field is an error, not a default");
    }

    #[test]
    fn a_bad_part_is_refused_with_its_name() {
        let mut spec = Spec::new(Trigger::Watch(Watch::new(vec!["/tmp".into()])), "{{ path");
        let e = spec.check().expect_err("an unclosed tag").to_string();
        assert!(e.contains("prompt"), "{e}");
        spec.prompt = "{{ nonsense }}".into();
        let e = spec.check().expect_err("an unknown variable").to_string();
        assert!(e.contains("nonsense"), "{e}");
        spec.prompt = "ok {{ name }}".into();
        spec.concurrency = 9;
        assert!(spec.check().is_err());
        spec.concurrency = 1;
        spec.trigger = Trigger::Watch(Watch {
            include: vec!["[".into()],
            ..Watch::new(vec!["/tmp".into()])
        });
        let e = spec.check().expect_err("a bad glob").to_string();
        assert!(e.contains("include"), "{e}");
        spec.trigger = Trigger::Schedule(Schedule::new("61 * * * *"));
        let e = spec.check().expect_err("a bad cron").to_string();
        assert!(e.contains("cron"), "{e}");
        spec.trigger = Trigger::Schedule(Schedule {
            time_zone: Some("Mars/Olympus".into()),
            ..Schedule::new("0 8 * * *")
        });
        let e = spec.check().expect_err("a bad zone").to_string();
        assert!(e.contains("Mars/Olympus"), "{e}");
    }
}
