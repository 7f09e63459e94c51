//! `echod trace …`: turns and their spans, what a model call sent and received, and a turn
//! exported as a regression case (replayed by `echod replay`, `replay_cli.rs`).

use crate::print;
use anyhow::Context;
use clap::{Args, Subcommand};

use echo_agent::Api;
use echo_agent::wire::{
    GetTrace, GetTraceSettings, ListTraces, SpanId, TraceCall, TraceCase, TraceStats, TurnId,
    TurnStatus, UpdateTraceSettings,
};

use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// List recent turns, newest first.
    List(ListArgs),
    /// Show one turn's spans.
    Show {
        /// Turn id.
        turn_id: TurnId,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// How often turns fell back (retries, fallback models, cut requests, skipped research
    /// steps, partial reports, …), each fallback counted on its own.
    Stats {
        /// Turns accepted at or after this time (RFC 3339); default: a day ago.
        #[arg(long)]
        since: Option<String>,
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
        /// From which share of the last day's turns falling back the app says so (0–1; 0:
        /// never).
        #[arg(long)]
        notice_rate: Option<f64>,
    },
    /// Write a turn as a self-contained regression case for `echod replay`.
    Export {
        /// Turn id.
        turn_id: TurnId,
        /// The case file to write.
        file: PathBuf,
    },
}

/// `trace list`'s filters.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// How many turns.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Only this session.
    #[arg(long)]
    pub session: Option<String>,
    /// Only this status (accepted, running, completed, failed, interrupted).
    #[arg(long, value_parser = parse_status)]
    pub status: Option<TurnStatus>,
    /// Only degraded turns.
    #[arg(long)]
    pub degraded: bool,
    /// Only turns this model answered.
    #[arg(long)]
    pub model: Option<String>,
    /// Only turns that asked for approval.
    #[arg(long)]
    pub asked: bool,
    /// Only turns accepted at or after this time (RFC 3339).
    #[arg(long)]
    pub since: Option<String>,
    /// Only turns accepted before this time (RFC 3339).
    #[arg(long)]
    pub until: Option<String>,
}

impl From<ListArgs> for ListTraces {
    fn from(args: ListArgs) -> Self {
        ListTraces {
            limit: Some(args.limit),
            session: args.session,
            status: args.status,
            degraded: args.degraded.then_some(true),
            model: args.model,
            has_approvals: args.asked.then_some(true),
            since: args.since,
            until: args.until,
        }
    }
}

fn parse_status(text: &str) -> Result<TurnStatus, String> {
    TurnStatus::parse(text).ok_or_else(|| format!("expected one of {}", TurnStatus::expected()))
}

/// Runs a `trace` subcommand: one operation of the table each.
pub async fn trace(api: &Api, command: TraceCommand) -> anyhow::Result<()> {
    match command {
        TraceCommand::List(args) => {
            let json = args.json;
            print::call(api, ListTraces::from(args), json).await
        }
        TraceCommand::Show { turn_id, json } => print::call(api, GetTrace { turn_id }, json).await,
        TraceCommand::Stats { since, json } => print::call(api, TraceStats { since }, json).await,
        TraceCommand::Call { turn_id, span_id } => {
            print::json(&api.call(TraceCall { turn_id, span_id }).await?)
        }
        TraceCommand::Settings {
            capture,
            retention_days,
            notice_rate,
        } => {
            let now = api.call(GetTraceSettings {}).await?;
            let settings = if capture.is_some() || retention_days.is_some() || notice_rate.is_some()
            {
                let capture = capture.unwrap_or(now.capture);
                let retention_days = retention_days.unwrap_or(now.retention_days);
                let request = UpdateTraceSettings {
                    capture,
                    retention_days,
                    notice_rate,
                };
                api.call(request).await?
            } else {
                now
            };
            print::json(&settings)
        }
        TraceCommand::Export { turn_id, file } => {
            let case = api.call(TraceCase { turn_id }).await?;
            let text = serde_json::to_string_pretty(&case)?;
            std::fs::write(&file, text + "\n")
                .with_context(|| format!("cannot write {}", file.display()))?;
            let (replies, calls) = (case.replies.len(), case.tool_calls.len());
            println!(
                "wrote {} ({replies} model replies, {calls} tool calls)",
                file.display()
            );
            Ok(())
        }
    }
}
