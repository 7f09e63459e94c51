//! The approval gate: "the model proposes, the system decides". Before every tool call the
//! gate looks, in this order, at hard-deny patterns (`rm -rf ~`, `mkfs`, writes to block
//! devices), the path policy (secrets are never read or written; writes only inside the
//! workspace roots; the assistant's own data directory is off limits), then the user's rules
//! (tool + argument pattern → allow / ask / deny), then the risk level (read-only calls run,
//! everything else asks). It decides from the [`echo_tools::Action`] the tool built from
//! validated arguments, never from text the model or a tool result wrote.
//!
//! Rules and every decision (the audit log) live in SQLite. Asking the user is the agent's
//! job; this crate only says *that* it must ask, and why.
//!
//! # The order of checks
//!
//! Hard-deny command patterns are parsed into simple commands through `sh -c`, `$(…)`, `sudo`,
//! `env` (`rm -r` of `/`, `~`, `$HOME`, system dirs; `mkfs`; `dd of=/dev/…`; `> /dev/sdX`; fork
//! bombs); every regex of the hard-deny and secret-masking lists is in one table (`patterns.rs`)
//! compiled all or nothing, and if it does not compile every command is refused and audited
//! arguments are masked whole. The path policy makes every path absolute, resolves `..` and
//! follows symlinks: secret dirs and files are never read or written, the data directory except
//! `skills/` is off limits, writes only inside the workspace roots. Among the user's rules the
//! strictest match wins (deny > ask > allow); an allow must cover every simple command of a
//! pipeline and every path; session rules only apply in their session. Then the risk default:
//! read-only runs, the rest asks, `dangerous` always asks.
#![deny(missing_docs)]

mod audit;
mod patterns;
mod policy;
mod rules;
mod shell;

pub use audit::{AuditEntry, AuditLog, NewAuditEntry, mask_secrets};
pub use policy::{DecidedBy, Policy, Request, RuleDecision, Verdict, parse_decision};
pub use rules::{NewRule, Rule, RuleBook, RuleScope, suggest_pattern};

/// What went wrong in the gate's storage or setup.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// A database operation failed.
    #[error("approval store: {0}")]
    Store(#[from] sqlx::Error),
    /// A rule or setting is malformed.
    #[error("{0}")]
    Invalid(String),
    /// No rule with this id.
    #[error("no rule with id {0}")]
    NoSuchRule(String),
}
