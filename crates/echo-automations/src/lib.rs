//! Automations: watch rules and schedules that run the assistant unattended.
//!
//! - [`spec`]: what an automation is, validated and compiled in one place ([`Spec::check`]).
//! - [`filter`], [`template`], [`schedule`]: the compiled parts (which files, what message,
//!   when).
//! - [`store`]: automations, the run queue (SQLite: nothing lost across restarts, nothing run
//!   twice, the same event queued once whichever process saw it), the files runs wrote (so
//!   a run's own writes never loop back), and the approval queue of unattended runs.
//! - [`watch`]: the file watcher (notify through notify-debouncer-full) that turns settled
//!   file events into runs.
//!
//! Running a run (a turn through the agent's `Api`) is the agent's business: this crate knows
//! nothing about models or tools beyond their names.
#![deny(missing_docs)]

pub mod filter;
pub mod schedule;
pub mod spec;
pub mod store;
pub mod template;
pub mod watch;

pub use spec::{Checked, CheckedTrigger, PreApproval, Schedule, Spec, Trigger, Watch};
pub use store::{
    Automation, AutomationStore, Enqueued, NewQueuedApproval, NewRun, Notice, NoticeKind, Notices,
    QueuedApproval, Run,
};

/// What can go wrong with an automation.
#[derive(Debug, thiserror::Error)]
pub enum AutomationError {
    /// A part of the definition is wrong.
    #[error("invalid {what}: {message}")]
    Invalid {
        /// Which part.
        what: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// No such automation, run or question.
    #[error("no {what} {id:?}")]
    NotFound {
        /// What was looked for.
        what: &'static str,
        /// Under which id or name.
        id: String,
    },
    /// The name is taken.
    #[error("an automation named {0:?} already exists")]
    NameTaken(String),
    /// The database failed.
    #[error("automation store: {0}")]
    Store(#[from] sqlx::Error),
    /// A stored definition no longer parses.
    #[error("stored automation {id} is unreadable: {message}")]
    Corrupt {
        /// The automation.
        id: String,
        /// Why.
        message: String,
    },
}
