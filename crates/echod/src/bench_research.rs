//! `echod bench research`: what a research turn costs in our own process, by node, beside a
//! quick turn of the same run. Runs `turns` pairs of turns through the `Api` as `ask` does
//! (a quick turn, then a research turn, each in a session of its own), against a zero-latency
//! mock model and a search service and page server that answer at once
//! (`scripts/bench-research.sh`), then reads each turn's trace. A turn's overhead is its wall
//! time minus the time some model request was in flight (the union of its `model_request`
//! spans: the research graph's calls overlap); a node's own time is its span minus the model
//! requests and the search or fetch calls inside it, which are reported apart.

use crate::bench::{Summary, summarize};
use chrono::{DateTime, Utc};
use echo_agent::wire::{EntryPoint, SpanKind, SpanRecord, TurnStatus};
use echo_agent::{Api, EventHandler, TurnRequest};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The research graph's nodes, in the order they run.
const NODES: [&str; 6] = ["plan", "recall", "search", "read", "write", "check"];

#[derive(Debug, Serialize)]
struct Report {
    turns: usize,
    /// Quick turns (the ReAct path, one model call): the baseline.
    quick: PathFigures,
    research: PathFigures,
    /// `research.overhead_ms.p50 / quick.overhead_ms.p50`.
    research_over_quick: f64,
    /// Per node kind: how many ran in a turn and their times.
    nodes: BTreeMap<&'static str, NodeFigures>,
}

#[derive(Debug, Serialize)]
struct PathFigures {
    model_calls_per_turn: f64,
    /// Wall time of `Api::send` minus the time a model request was in flight.
    overhead_ms: Summary,
    /// Time some model request was in flight.
    model_ms: Summary,
    /// Whole `Api::send` wall time.
    turn_ms: Summary,
}

#[derive(Debug, Serialize)]
struct NodeFigures {
    per_turn: f64,
    /// The node's span minus the model requests and tool calls inside it, per node.
    own_ms: Summary,
    /// The `web_search` / `web_fetch` calls inside it (HTTP to the loopback server, parsing
    /// and page extraction), per node; zeros for nodes that make none.
    tool_ms: Summary,
    /// Model requests inside it, per node.
    model_ms: Summary,
}

/// One measured turn: its wall time and trace.
struct Measured {
    wall_ms: f64,
    spans: Vec<SpanRecord>,
}

pub(crate) async fn research(api: &Api, turns: usize) -> anyhow::Result<()> {
    let mut quick = Vec::with_capacity(turns);
    let mut research = Vec::with_capacity(turns);
    for i in 0..turns {
        quick.push(turn(api, format!("bench-quick-{i}"), Some(false)).await?);
        let measured = turn(api, format!("bench-research-{i}"), Some(true)).await?;
        if !measured.spans.iter().any(|s| s.name == "research:check") {
            anyhow::bail!(
                "research turn {i} took no research path (is a search service configured?)"
            );
        }
        research.push(measured);
    }
    api.wait_background(std::time::Duration::from_secs(30))
        .await;

    let nodes = NODES
        .iter()
        .map(|&node| (node, node_figures(&research, node)))
        .collect();
    let quick = path_figures(&quick);
    let research = path_figures(&research);
    let report = Report {
        turns,
        research_over_quick: if quick.overhead_ms.p50 > 0.0 {
            research.overhead_ms.p50 / quick.overhead_ms.p50
        } else {
            0.0
        },
        quick,
        research,
        nodes,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

async fn turn(api: &Api, session: String, research: Option<bool>) -> anyhow::Result<Measured> {
    let handler: EventHandler = Arc::new(|_| {});
    let input = "plan three days in kyoto with two kids, under 900 EUR, at most an hour on \
                 trains a day, and compare the family hotels near the station";
    let request = TurnRequest::new(session, input, EntryPoint::Bench).research(research);
    let started = Instant::now();
    let outcome = api.send(request, handler, CancellationToken::new()).await?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    if outcome.status != TurnStatus::Completed {
        anyhow::bail!(
            "a turn ended {:?}: {}",
            outcome.status,
            outcome.error.unwrap_or_default()
        );
    }
    let spans = api.trace(&outcome.turn_id).await?.spans;
    Ok(Measured { wall_ms, spans })
}

fn path_figures(turns: &[Measured]) -> PathFigures {
    let mut calls = 0;
    let (mut overhead, mut model, mut wall) = (Vec::new(), Vec::new(), Vec::new());
    for t in turns {
        let requests: Vec<&SpanRecord> = in_turn(&t.spans)
            .into_iter()
            .filter(|s| s.kind == SpanKind::Model)
            .collect();
        calls += requests.len();
        let in_flight = union_ms(&requests);
        model.push(in_flight);
        overhead.push(t.wall_ms - in_flight);
        wall.push(t.wall_ms);
    }
    PathFigures {
        model_calls_per_turn: calls as f64 / turns.len().max(1) as f64,
        overhead_ms: summarize(overhead),
        model_ms: summarize(model),
        turn_ms: summarize(wall),
    }
}

fn node_figures(turns: &[Measured], node: &str) -> NodeFigures {
    let (mut own, mut tool, mut model) = (Vec::new(), Vec::new(), Vec::new());
    for t in turns {
        for span in t.spans.iter().filter(|s| node_of(&s.name) == Some(node)) {
            let inside = descendants(&t.spans, &span.id);
            let sum = |kind: SpanKind| -> f64 {
                inside
                    .iter()
                    .filter(|s| s.kind == kind)
                    .filter_map(|s| s.duration_ms)
                    .fold(0.0, |a, b| a + b)
            };
            let in_model = sum(SpanKind::Model);
            let in_tools = sum(SpanKind::Tool);
            own.push(span.duration_ms.unwrap_or(0.0) - in_model - in_tools);
            tool.push(in_tools);
            model.push(in_model);
        }
    }
    NodeFigures {
        per_turn: own.len() as f64 / turns.len().max(1) as f64,
        own_ms: summarize(own),
        tool_ms: summarize(tool),
        model_ms: summarize(model),
    }
}

/// `research:read#1.2` → `read`.
fn node_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("research:")?;
    Some(rest.split_once('#').map_or(rest, |(kind, _)| kind))
}

/// The spans of the turn itself: not the work after it (`background:*`: the session title,
/// memory extraction, the side model's jobs), which does not hold up the answer.
fn in_turn(spans: &[SpanRecord]) -> Vec<&SpanRecord> {
    let after: Vec<&str> = spans
        .iter()
        .filter(|s| s.name.starts_with("background:"))
        .flat_map(|s| {
            descendants(spans, &s.id)
                .into_iter()
                .chain([s])
                .map(|s| s.id.as_str())
        })
        .collect();
    spans
        .iter()
        .filter(|s| !after.contains(&s.id.as_str()))
        .collect()
}

/// Every span below `id`, at any depth.
fn descendants<'a>(spans: &'a [SpanRecord], id: &str) -> Vec<&'a SpanRecord> {
    let mut found = Vec::new();
    let mut parents = vec![id.to_string()];
    while let Some(parent) = parents.pop() {
        for span in spans
            .iter()
            .filter(|s| s.parent_id.as_deref() == Some(&parent))
        {
            parents.push(span.id.clone());
            found.push(span);
        }
    }
    found
}

/// Milliseconds covered by at least one of `spans` (start times have millisecond precision).
fn union_ms(spans: &[&SpanRecord]) -> f64 {
    let mut intervals: Vec<(f64, f64)> = spans
        .iter()
        .filter_map(|s| {
            let start = s.started_at.parse::<DateTime<Utc>>().ok()?;
            let start = start.timestamp_micros() as f64 / 1000.0;
            Some((start, start + s.duration_ms?))
        })
        .collect();
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (start, end) in intervals {
        match current {
            Some((from, to)) if start <= to => current = Some((from, to.max(end))),
            _ => {
                total += current.map_or(0.0, |(from, to)| to - from);
                current = Some((start, end));
            }
        }
    }
    total + current.map_or(0.0, |(from, to)| to - from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_map_to_their_kind() {
        assert_eq!(node_of("research:read#1.2"), Some("read"));
        assert_eq!(node_of("research:plan"), Some("plan"));
        assert_eq!(node_of("model_request"), None);
    }
}
