//! Automations: define, edit, switch on and off, run now, read the run history and the
//! approval queue. The service that watches, schedules and runs them is
//! [`crate::automations`], started by [`Api::start_automations`].

use super::Api;
use crate::error::ApiError;
use crate::wire::{
    self, Automation, AutomationNotices, AutomationRun, AutomationSpec, QueuedApproval,
};
use crate::wire::{AutomationPreview, AutomationView, RunCounts};
use chrono::Utc;
use echo_automations::{CheckedTrigger, NewRun, Spec};
use echo_core::RunStatus;

/// Fire times shown for a schedule.
const UPCOMING: usize = 5;

impl Api {
    /// Starts watching, scheduling and running automations in this process (long-running
    /// front ends: the app, `echod serve`), unless `[automations] enabled` is off. The store
    /// decides which process runs an automation, so starting it in several is safe.
    pub fn start_automations(&self) {
        if !self.config().automations.enabled {
            return;
        }
        let shutdown = self.shutdown_token().clone();
        self.spawn_service(
            "automations",
            crate::automations::serve(self.inner.clone(), shutdown),
        );
    }

    /// Every automation, by name.
    pub async fn automations(&self) -> Result<Vec<AutomationView>, ApiError> {
        let all = self.automation_store().list().await?;
        let mut out = Vec::with_capacity(all.len());
        for a in all {
            out.push(self.view(a).await?);
        }
        Ok(out)
    }

    /// One automation, by id or name.
    pub async fn automation(&self, id_or_name: &str) -> Result<AutomationView, ApiError> {
        let a = self.automation_store().get(id_or_name).await?;
        self.view(a).await
    }

    /// Checks a spec and says what it would do (next fire times, folders).
    pub fn preview_automation(&self, spec: &AutomationSpec) -> Result<AutomationPreview, ApiError> {
        let checked = Spec::from(spec.clone()).check()?;
        Ok(match &checked.trigger {
            CheckedTrigger::Schedule(s) => AutomationPreview {
                cron: Some(s.expression.clone()),
                time_zone: Some(s.zone.name().to_string()),
                next_fires: s
                    .upcoming(Utc::now(), UPCOMING)
                    .into_iter()
                    .map(|t| t.with_timezone(&s.zone).to_rfc3339())
                    .collect(),
                folders: Vec::new(),
                missing_folders: Vec::new(),
            },
            CheckedTrigger::Watch(f) => AutomationPreview {
                cron: None,
                time_zone: None,
                next_fires: Vec::new(),
                folders: f.folders.iter().map(|p| p.display().to_string()).collect(),
                missing_folders: f
                    .folders
                    .iter()
                    .filter(|p| !p.is_dir())
                    .map(|p| p.display().to_string())
                    .collect(),
            },
        })
    }

    /// Saves a new automation (checked whole first).
    pub async fn add_automation(
        &self,
        name: &str,
        spec: &AutomationSpec,
        enabled: bool,
    ) -> Result<AutomationView, ApiError> {
        let spec = Spec::from(spec.clone());
        self.check_spec(&spec)?;
        self.check_project(&spec).await?;
        let a = self.automation_store().create(name, &spec, enabled).await?;
        self.view(a).await
    }

    /// Renames an automation and/or replaces its definition.
    pub async fn edit_automation(
        &self,
        id_or_name: &str,
        name: Option<&str>,
        spec: Option<&AutomationSpec>,
    ) -> Result<AutomationView, ApiError> {
        let spec = spec.map(|s| Spec::from(s.clone()));
        if let Some(spec) = &spec {
            self.check_spec(spec)?;
            self.check_project(spec).await?;
        }
        let id = self.automation_store().get(id_or_name).await?.id;
        let a = self
            .automation_store()
            .update(&id, name, spec.as_ref())
            .await?;
        self.view(a).await
    }

    /// Removes an automation and its run history (sessions and traces of its runs stay).
    pub async fn remove_automation(&self, id_or_name: &str) -> Result<Automation, ApiError> {
        let id = self.automation_store().get(id_or_name).await?.id;
        Ok(self.automation_store().remove(&id).await?.into())
    }

    /// Switches an automation on (it resumes) or off (it is paused; queued runs wait).
    pub async fn set_automation_enabled(
        &self,
        id_or_name: &str,
        enabled: bool,
    ) -> Result<AutomationView, ApiError> {
        let id = self.automation_store().get(id_or_name).await?.id;
        let a = self.automation_store().set_enabled(&id, enabled).await?;
        self.view(a).await
    }

    /// Pauses or resumes every automation; returns how many changed.
    pub async fn set_all_automations_enabled(&self, enabled: bool) -> Result<u64, ApiError> {
        Ok(self.automation_store().set_all_enabled(enabled).await?)
    }

    /// Queues a run now (it starts when a process running automations has a slot).
    pub async fn run_automation(&self, id_or_name: &str) -> Result<AutomationRun, ApiError> {
        let a = self.automation_store().get(id_or_name).await?;
        match self
            .automation_store()
            .enqueue(&a, NewRun::manual())
            .await?
        {
            echo_automations::Enqueued::Queued(run) | echo_automations::Enqueued::Skipped(run) => {
                Ok(run.into())
            }
            echo_automations::Enqueued::Duplicate => Err(ApiError::Busy {
                message: "that run is already queued".into(),
            }),
            // Not for runs started by hand; kept so every outcome has its answer.
            echo_automations::Enqueued::Stale => Err(ApiError::Busy {
                message: "the automation changed meanwhile".into(),
            }),
        }
    }

    /// An automation's runs, newest first.
    pub async fn automation_runs(
        &self,
        id_or_name: &str,
        limit: u32,
    ) -> Result<Vec<AutomationRun>, ApiError> {
        let id = self.automation_store().get(id_or_name).await?.id;
        let runs = self.automation_store().runs(&id, limit.clamp(1, 5000));
        Ok(wire::list(runs.await?))
    }

    /// Approval questions of unattended runs: pending ones, or all recent ones.
    pub async fn approval_queue(&self, all: bool) -> Result<Vec<QueuedApproval>, ApiError> {
        let limit = if all { 200 } else { 1000 };
        let questions = self.automation_store().questions(!all, limit).await?;
        Ok(wire::list(questions))
    }

    /// What happened since `after` that a person should hear about (runs that finished or
    /// failed, questions asked; any process's), with the pending questions and how many
    /// automations are on. `None`: start now.
    pub async fn automation_notices(
        &self,
        after: Option<&str>,
    ) -> Result<AutomationNotices, ApiError> {
        if let Some(cursor) = after
            && chrono::DateTime::parse_from_rfc3339(cursor).is_err()
        {
            return Err(ApiError::InvalidInput {
                what: "after",
                message: format!("{cursor:?} is not a cursor this call returned"),
            });
        }
        Ok(self.automation_store().notices(after).await?.into())
    }

    fn check_spec(&self, spec: &Spec) -> Result<(), ApiError> {
        spec.check()?;
        if let Some(tools) = &spec.tools {
            let known: Vec<String> = self
                .tool_registry()
                .specs_where(|_, _| true)
                .into_iter()
                .map(|t| t.name)
                .collect();
            if let Some(unknown) = tools.iter().find(|t| !known.contains(t)) {
                return Err(ApiError::InvalidInput {
                    what: "tools",
                    message: format!(
                        "there is no tool {unknown:?}; the tools are {}",
                        known.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }

    async fn view(
        &self,
        automation: echo_automations::Automation,
    ) -> Result<AutomationView, ApiError> {
        let mut runs = RunCounts::default();
        for (status, n) in self.automation_store().counts(&automation.id).await? {
            *match status {
                RunStatus::Queued => &mut runs.queued,
                RunStatus::Running => &mut runs.running,
                RunStatus::WaitingForApproval => &mut runs.waiting_for_approval,
                RunStatus::Done => &mut runs.done,
                RunStatus::Failed => &mut runs.failed,
                RunStatus::Skipped => &mut runs.skipped,
            } += n;
        }
        let next_fires = match automation.spec.check().map(|c| c.trigger) {
            Ok(CheckedTrigger::Schedule(s)) if automation.enabled => s
                .upcoming(Utc::now(), UPCOMING)
                .into_iter()
                .map(|t| t.with_timezone(&s.zone).to_rfc3339())
                .collect(),
            _ => Vec::new(),
        };
        Ok(AutomationView {
            automation: automation.into(),
            next_fires,
            runs,
        })
    }
}
