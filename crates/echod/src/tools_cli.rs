//! `echod rules …` and `echod approvals …`: the approval gate's rules and its audit log, and
//! the terminal prompt that answers approval questions during a turn.

use crate::cli::Vocab;
use crate::print::{self, Text};
use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::{
    AddRule, AnswerApproval, ApprovalAnswer, ApprovalId, AuditEntry, ListApprovals, ListRules,
    McpServerStatus, McpServers, RemoveRule, Rule, RuleDecision, RuleId, RuleScope,
};
use echo_agent::wire::{EventEnvelope, TurnEvent};
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// List every rule.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a rule: calls of TOOL (matching PATTERN, if given) are allowed, asked about or denied.
    Add {
        /// Tool name, or a glob over names (`github__*`).
        #[arg(long)]
        tool: String,
        /// Command prefix (shell), path glob (file tools), host (web_fetch) or server (MCP).
        #[arg(long)]
        pattern: Option<String>,
        /// What the rule decides.
        #[arg(long, value_parser = DECISION)]
        decision: RuleDecision,
        /// How long it holds.
        #[arg(long, value_parser = SCOPE, default_value = "always")]
        scope: RuleScope,
        /// Session name (for --scope session).
        #[arg(long)]
        session: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a rule by id.
    Remove {
        /// Rule id (from `echod rules list`).
        id: RuleId,
    },
}

const DECISION: Vocab<RuleDecision> = Vocab {
    what: "decision",
    names: RuleDecision::names(),
    parse: RuleDecision::parse,
};
const SCOPE: Vocab<RuleScope> = Vocab {
    what: "scope",
    names: RuleScope::names(),
    parse: RuleScope::parse,
};

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// The gate's most recent decisions, newest first.
    List {
        /// How many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Questions automations' unattended runs are waiting on.
    Queue {
        /// Answered and expired ones too.
        #[arg(long)]
        all: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Answer a queued question: allow_once, allow_automation (this and later calls like it,
    /// for that automation only), allow_always or deny.
    Answer {
        /// The question's id (from `echod approvals queue`).
        id: String,
        /// The answer.
        answer: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Configured MCP servers and their state (waits a few seconds for servers still starting).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `echod mcp …`.
pub async fn mcp(api: &Api, command: McpCommand) -> anyhow::Result<()> {
    let McpCommand::List { json } = command;
    print::call(
        api,
        McpServers {
            settle_secs: Some(10),
        },
        json,
    )
    .await
}

impl Text for Vec<McpServerStatus> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(
                out,
                "no MCP servers configured ([[tools.mcp]] in config.toml)"
            )?;
        }
        let word = |value: serde_json::Result<serde_json::Value>| {
            let value = value.ok();
            value
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        for s in self {
            let (state, transport) = (
                word(serde_json::to_value(s.state)),
                word(serde_json::to_value(s.transport)),
            );
            let error = s.error.as_deref().map(|e| format!("  {e}"));
            writeln!(
                out,
                "{:<16} {:<5} {:<10} {:>3} tools  {} restarts{}",
                s.name,
                transport,
                state,
                s.tools,
                s.restarts,
                error.unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

/// Asks on the terminal until the person answers (the end of input denies), then sends the
/// answer; a question that closed meanwhile is said so.
async fn ask(api: Api, lines: Lines, request_id: ApprovalId) {
    loop {
        eprint!("Allow? [y]es once / [s]ession / [a]lways / [n]o: ");
        let answer = match lines.next().await {
            Some(Ok(line)) => match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => ApprovalAnswer::AllowOnce,
                "s" | "session" => ApprovalAnswer::AllowSession,
                "a" | "always" => ApprovalAnswer::AllowAlways,
                "n" | "no" => ApprovalAnswer::Deny,
                _ => {
                    eprintln!("please answer y, s, a or n");
                    continue;
                }
            },
            _ => ApprovalAnswer::Deny,
        };
        let request = AnswerApproval { request_id, answer };
        if api.call(request).await.is_err() {
            eprintln!("(that question had already closed)");
        }
        return;
    }
}

/// Runs `echod rules …`.
pub async fn rules(api: &Api, command: RulesCommand) -> anyhow::Result<()> {
    match command {
        RulesCommand::List { json } => print::call(api, ListRules {}, json).await?,
        RulesCommand::Add {
            tool,
            pattern,
            decision,
            scope,
            session,
            json,
        } => {
            if scope == RuleScope::Session && session.is_none() {
                anyhow::bail!("--scope session needs --session NAME");
            }
            let scope = Some(scope);
            let rule = api
                .call(AddRule {
                    tool,
                    pattern,
                    decision,
                    scope,
                    session,
                })
                .await?;
            if json {
                return crate::print::json(&rule);
            }
            println!("added rule {}", rule.id);
        }
        RulesCommand::Remove { id } => {
            let rule = api.call(RemoveRule { id }).await?;
            let (id, decision, tool) = (&rule.id, rule.decision, &rule.tool);
            println!("removed rule {id} ({decision} {tool})");
        }
    }
    Ok(())
}

/// Runs `echod approvals …`.
pub async fn approvals(api: &Api, command: ApprovalsCommand) -> anyhow::Result<()> {
    let (limit, json) = match command {
        ApprovalsCommand::List { limit, json } => (limit, json),
        ApprovalsCommand::Queue { all, json } => {
            return crate::automations_cli::queue(api, all, json).await;
        }
        ApprovalsCommand::Answer { id, answer } => {
            return crate::automations_cli::answer(api, &id, &answer).await;
        }
    };
    print::call(api, ListApprovals { limit: Some(limit) }, json).await
}

impl Text for Vec<Rule> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no rules; every call that is not read-only asks first")?;
        }
        for r in self {
            let pattern = r.pattern.as_deref().unwrap_or("*");
            let session = r.session_id.as_deref().map(|s| format!(" ({s})"));
            writeln!(
                out,
                "{}  {:<5} {:<14} {:<30} {}{}",
                r.id,
                r.decision.as_str(),
                r.tool,
                pattern,
                r.scope.as_str(),
                session.unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

impl Text for Vec<AuditEntry> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no decisions yet")?;
        }
        for e in self {
            writeln!(
                out,
                "{}  {:<5} {:<14} by {:<15} {}  {}",
                e.created_at,
                e.decision,
                e.tool,
                e.decided_by,
                print::clip(&e.arguments, 60),
                e.reason
            )?;
        }
        Ok(())
    }
}

/// Lines typed on stdin, read by one thread and shared by whoever needs the next one (the chat
/// loop between turns, the approval prompt during a turn).
#[derive(Clone)]
pub struct Lines {
    rx: Arc<tokio::sync::Mutex<mpsc::Receiver<std::io::Result<String>>>>,
}

impl Lines {
    /// Starts the reader thread.
    pub fn stdin() -> Self {
        let (tx, rx) = mpsc::channel(1);
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::stdin().lock().lines() {
                if tx.blocking_send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            rx: Arc::new(tokio::sync::Mutex::new(rx)),
        }
    }

    /// The next line; `None` at end of input.
    pub async fn next(&self) -> Option<std::io::Result<String>> {
        self.rx.lock().await.recv().await
    }
}

/// Answers approval questions from the terminal: shows the exact action, streams the
/// explanation under it, and reads y / s / a / n.
#[derive(Clone)]
pub struct Prompter {
    api: Api,
    lines: Lines,
    waiting: Arc<Mutex<HashMap<String, tokio::task::JoinHandle<()>>>>,
}

impl Prompter {
    /// A prompter answering through `api` with lines from `lines`.
    pub fn new(api: Api, lines: Lines) -> Self {
        Self {
            api,
            lines,
            waiting: Arc::default(),
        }
    }

    /// Handles the approval events of a turn; other events are ignored.
    pub fn event(&self, envelope: &EventEnvelope) {
        match &envelope.event {
            TurnEvent::ApprovalRequested {
                request_id,
                tool,
                risk,
                detail,
                reason,
                suggested_pattern,
                timeout_secs,
                ..
            } => {
                eprintln!("\n┌ {tool} wants to run ({risk}): {reason}");
                for line in detail.lines() {
                    eprintln!("│ {line}");
                }
                if let Some(p) = suggested_pattern {
                    eprintln!("│ (session/always rules cover: {tool} {p})");
                }
                eprintln!("└ answer within {timeout_secs}s, or it is denied");
                let (api, lines, id) = (
                    self.api.clone(),
                    self.lines.clone(),
                    ApprovalId::from_string(request_id.clone()),
                );
                let task = tokio::spawn(ask(api, lines, id));
                self.waiting
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(request_id.clone(), task);
            }
            TurnEvent::ApprovalExplanation { text, .. } => eprint!("{text}"),
            TurnEvent::ApprovalResolved {
                request_id,
                tool,
                decision,
                decided_by,
                reason,
                ..
            } => {
                // A question that closed without a typed answer (timeout, stop) must not eat
                // the next line the person types.
                if let Some(task) = self
                    .waiting
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(request_id)
                {
                    task.abort();
                }
                eprintln!("\n  {tool}: {decision} ({decided_by}): {reason}");
            }
            _ => {}
        }
    }
}
