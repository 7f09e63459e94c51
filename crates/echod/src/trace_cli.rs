//! `echod trace …`: turns and their spans, what a model call sent and received, and a turn
//! exported as a regression case (replayed by `echod replay`, `replay_cli.rs`).

use crate::print;
use anyhow::Context;
use clap::Subcommand;

use echo_agent::wire::{SpanId, TurnId, TurnStatus};
use echo_agent::{Api, TurnFilter};

use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// List recent turns, newest first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// How many turns.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Only this status (accepted, running, completed, failed, interrupted).
        #[arg(long, value_parser = parse_status)]
        status: Option<TurnStatus>,
        /// Only degraded turns.
        #[arg(long)]
        degraded: bool,
        /// Only turns this model answered.
        #[arg(long)]
        model: Option<String>,
        /// Only turns that asked for approval.
        #[arg(long)]
        asked: bool,
        /// Only turns accepted at or after this time (RFC 3339).
        #[arg(long)]
        since: Option<String>,
        /// Only turns accepted before this time (RFC 3339).
        #[arg(long)]
        until: Option<String>,
    },
    /// Show one turn's spans.
    Show {
        /// Turn id.
        turn_id: TurnId,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// What one model call sent and received (JSON).
    Call {
        /// Turn id.
        turn_id: TurnId,
        /// The model call's span id (from `trace show --json`).
        span_id: SpanId,
    },
    /// Show or change `[trace]`: whether model calls are captured and for how long (JSON).
    Settings {
        /// Keep each model call's request and response (`true`/`false`).
        #[arg(long)]
        capture: Option<bool>,
        /// Days to keep them.
        #[arg(long)]
        retention_days: Option<u32>,
    },
    /// Write a turn as a self-contained regression case for `echod replay`.
    Export {
        /// Turn id.
        turn_id: TurnId,
        /// The case file to write.
        file: PathBuf,
    },
}

fn parse_status(text: &str) -> Result<TurnStatus, String> {
    TurnStatus::parse(text).ok_or_else(|| format!("expected one of {}", TurnStatus::expected()))
}

/// Runs a `trace` subcommand.
pub async fn trace(api: &Api, command: TraceCommand) -> anyhow::Result<()> {
    match command {
        TraceCommand::List {
            json,
            limit,
            session,
            status,
            degraded,
            model,
            asked,
            since,
            until,
        } => {
            let filter = TurnFilter {
                session,
                status,
                degraded: degraded.then_some(true),
                model,
                has_approvals: asked.then_some(true),
                since,
                until,
            };
            print::show(&api.traces(&filter, limit).await?, json)?;
        }
        TraceCommand::Show { turn_id, json } => {
            print::show(&api.trace(&turn_id).await?, json)?;
        }
        TraceCommand::Call { turn_id, span_id } => {
            print::json(&api.trace_call(&turn_id, &span_id).await?)?;
        }
        TraceCommand::Settings {
            capture,
            retention_days,
        } => {
            let now = api.trace_settings();
            let settings = if capture.is_some() || retention_days.is_some() {
                api.update_trace_settings(
                    capture.unwrap_or(now.capture),
                    retention_days.unwrap_or(now.retention_days),
                )?
            } else {
                now
            };
            print::json(&settings)?;
        }
        TraceCommand::Export { turn_id, file } => {
            let case = api.trace_case(&turn_id).await?;
            let text = serde_json::to_string_pretty(&case)?;
            std::fs::write(&file, text + "\n")
                .with_context(|| format!("cannot write {}", file.display()))?;
            println!(
                "wrote {} ({} model replies, {} tool calls)",
                file.display(),
                case.replies.len(),
                case.tool_calls.len()
            );
        }
    }
    Ok(())
}
