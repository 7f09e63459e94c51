//! [`RunContext`]: what a turn that is an automation's run carries about that run: the tools it
//! may use, its pre-approvals, where its approval questions queue, and the chain its writes
//! are recorded under (so that they never set off the automation that wrote them).

use echo_automations::AutomationStore;
use echo_automations::watch;
use echo_core::{AutomationId, RunId};
use std::path::PathBuf;
use std::time::Duration;

/// What a run's turn needs to know about its automation.
#[derive(Debug)]
pub struct RunContext {
    pub(crate) automation_id: AutomationId,
    pub(crate) run_id: RunId,
    /// The run's chain plus its own automation: what its writes carry.
    pub(crate) chain: Vec<AutomationId>,
    /// The tools it may use; `None`: all.
    pub(crate) tools: Option<Vec<String>>,
    /// Its pre-approvals, as session rules of the run's session.
    pub(crate) allow: Vec<echo_gate::Rule>,
    /// How long a queued question waits.
    pub(crate) expiry: Duration,
    pub(crate) store: AutomationStore,
}

impl RunContext {
    /// Whether the automation may use `tool`.
    pub(crate) fn may_use(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == tool))
    }

    /// Records the files a call of the run wrote, as they are now.
    pub(crate) async fn record_writes(&self, writes: &[PathBuf]) {
        for path in writes {
            let stat = watch::file_stat(path);
            let text = path.to_string_lossy();
            if let Err(e) = self
                .store
                .record_write(
                    &text,
                    &self.run_id,
                    &self.chain,
                    stat.map(|s| s.0),
                    stat.map(|s| s.1),
                )
                .await
            {
                tracing::warn!(error = %e, "recording an automation's write");
            }
        }
    }
}
