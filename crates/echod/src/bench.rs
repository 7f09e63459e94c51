//! `echod bench overhead`: how much time a turn spends in our process, excluding the model
//! server's own time. Runs turns through the `Api` exactly as `ask` does, then reads each
//! turn's trace: overhead = turn wall time − the sum of its model-request spans (which cover
//! the HTTP exchange with the server). Run it against the mock model with zero latency
//! (`scripts/bench-overhead.sh`), so the model's share is as small as the network allows.

use echo_agent::wire::{EntryPoint, TurnStatus};
use echo_agent::{Api, EventHandler, TurnRequest};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Percentiles of one measure, in milliseconds.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    pub(crate) p50: f64,
    p95: f64,
    mean: f64,
    max: f64,
}

pub(crate) fn summarize(mut values: Vec<f64>) -> Summary {
    values.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        if values.is_empty() {
            return 0.0;
        }
        let idx = ((values.len() as f64 - 1.0) * q).round() as usize;
        values[idx.min(values.len() - 1)]
    };
    let mean = if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    };
    Summary {
        p50: pick(0.5),
        p95: pick(0.95),
        mean,
        max: values.last().copied().unwrap_or(0.0),
    }
}

#[derive(Debug, Serialize)]
struct Report {
    turns: usize,
    turns_per_session: usize,
    model_calls_per_turn: f64,
    /// Wall time of `Api::send` minus model-request time.
    overhead_ms: Summary,
    /// Time inside model-request spans (HTTP to the mock, including its own work).
    model_ms: Summary,
    /// Whole `Api::send` wall time.
    turn_ms: Summary,
    /// Turns whose memory recall ranked by meaning as well as by keywords (an embedder was
    /// in use); 0 when none was.
    recall_by_meaning: usize,
    /// Does a turn cost more as its session grows? The overhead of the first and of the last
    /// [`GROWTH_WINDOW`] turns of each session (sessions of at least twice that many turns).
    growth: Option<Growth>,
}

/// Turns at each end of a session that [`Growth`] compares.
const GROWTH_WINDOW: usize = 20;

/// Overhead early and late in a session, and their ratio.
#[derive(Debug, Serialize)]
struct Growth {
    /// Turns 1–20 of each session (around turn 10).
    early_ms: Summary,
    /// The last 20 turns of each session (around turn `turns_per_session`).
    late_ms: Summary,
    /// `late_ms.p50 / early_ms.p50`.
    late_over_early: f64,
}

impl Growth {
    /// `overhead[i]` is turn `i`'s, turns numbered in order and `per_session` to a session.
    fn of(overhead: &[f64], per_session: usize) -> Option<Growth> {
        if per_session < 2 * GROWTH_WINDOW {
            return None;
        }
        let at = |keep: &dyn Fn(usize) -> bool| -> Vec<f64> {
            overhead
                .iter()
                .enumerate()
                .filter(|(i, _)| keep(i % per_session))
                .map(|(_, v)| *v)
                .collect()
        };
        let early = summarize(at(&|pos| pos < GROWTH_WINDOW));
        let late = summarize(at(&|pos| pos >= per_session - GROWTH_WINDOW));
        let late_over_early = if early.p50 > 0.0 {
            late.p50 / early.p50
        } else {
            0.0
        };
        Some(Growth {
            early_ms: early,
            late_ms: late,
            late_over_early,
        })
    }
}

/// `echod bench locomo`: prints one JSON object with pooled recall.
pub async fn locomo(
    api: &Api,
    files: Vec<std::path::PathBuf>,
    embedder: &str,
    context_turns: usize,
    dated: bool,
) -> anyhow::Result<()> {
    let embedder = match embedder {
        "none" => None,
        "local" => Some(echo_bench::local_embedder(api.config()).map_err(anyhow::Error::msg)?),
        other => anyhow::bail!("--embedder {other:?}: expected local or none"),
    };
    let opts = echo_bench::locomo::LocomoOptions {
        files,
        embedder,
        context_turns,
        dated,
        memory: api.config().memory.clone(),
    };
    let report = echo_bench::locomo::locomo(&opts)
        .await
        .map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// `echod bench local-model`: the built-in model's speed on one file (`--model FILE`, else
/// `ECHO_LOCAL_MODEL`), as JSON or a table.
pub async fn local_model(
    model: Option<String>,
    runs: usize,
    max_tokens: usize,
    json: bool,
) -> anyhow::Result<()> {
    let model = model
        .or_else(|| std::env::var("ECHO_LOCAL_MODEL").ok())
        .ok_or_else(|| {
            anyhow::anyhow!("say which GGUF file to measure: --model FILE (or ECHO_LOCAL_MODEL)")
        })?;
    let opts = echo_bench::local_model::LocalOptions {
        model: model.into(),
        runs,
        max_tokens,
    };
    let report = echo_bench::local_model::local_model(&opts)
        .await
        .map_err(anyhow::Error::msg)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    println!(
        "{} on {} threads: weights loaded in {:.0} ms, first request {:.0} ms; peak RSS {:.0} MiB, \
         its worker process's {}",
        report.model,
        report.threads,
        report.load_ms,
        report.first_request_ms,
        report.peak_rss_mib,
        report
            .worker_peak_rss_mib
            .map_or("(none: in this process)".to_string(), |m| format!(
                "{m:.0} MiB"
            )),
    );
    for (i, r) in report.runs.iter().chain([&report.median]).enumerate() {
        let label = if i == report.runs.len() {
            "median".to_string()
        } else {
            format!("run {i}")
        };
        println!(
            "{label}: prompt {} tok at {:.0} tok/s, generation {} tok at depth {} at {:.1} tok/s, \
             first token {:.0} ms; follow-up {} tok ({} cached), first token {:.0} ms; \
             forced call {} tok at {:.1} tok/s (unforced: {:.1})",
            r.prompt_tokens,
            r.prompt_tokens_per_s,
            r.generated_tokens,
            r.generation_depth,
            r.generation_tokens_per_s,
            r.first_turn_ttft_ms,
            r.follow_up_prompt_tokens,
            r.follow_up_cached_tokens,
            r.follow_up_ttft_ms,
            r.forced_tokens,
            r.forced_tokens_per_s,
            r.unforced_tokens_per_s,
        );
    }
    Ok(())
}

/// `echod bench memory`: one JSON line per size, then the local embedder's query time.
pub async fn memory(api: &Api, sizes: &[usize], queries: usize) -> anyhow::Result<()> {
    for report in echo_bench::memory::memory_scale(sizes, queries)
        .await
        .map_err(anyhow::Error::msg)?
    {
        println!("{}", serde_json::to_string(&report)?);
    }
    match echo_bench::local_embedder(api.config()) {
        Ok(embedder) => {
            let ms = echo_bench::memory::query_embedding_ms(embedder.as_ref(), queries.min(100))
                .await
                .map_err(anyhow::Error::msg)?;
            println!(
                "{}",
                serde_json::json!({ "query_embedding_p50_ms": ms, "model": embedder.model_id() })
            );
        }
        Err(e) => println!(
            "{}",
            serde_json::json!({ "query_embedding": format!("not measured: {e}") })
        ),
    }
    Ok(())
}

/// Runs `turns` turns, `per_session` per session, and prints a JSON report.
pub async fn overhead(api: &Api, turns: usize, per_session: usize) -> anyhow::Result<()> {
    let handler: EventHandler = Arc::new(|_| {});
    let per_session = per_session.max(1);
    let mut walls = Vec::with_capacity(turns);
    for i in 0..turns {
        let request = TurnRequest::new(
            format!("bench-{}", i / per_session),
            format!("benchmark message number {i}: please answer briefly"),
            EntryPoint::Bench,
        );
        let started = Instant::now();
        let outcome = api
            .send(request, handler.clone(), CancellationToken::new())
            .await?;
        let wall = started.elapsed().as_secs_f64() * 1000.0;
        if outcome.status != TurnStatus::Completed {
            anyhow::bail!(
                "turn {i} ended {:?}: {}",
                outcome.status,
                outcome.error.unwrap_or_default()
            );
        }
        walls.push((outcome.turn_id, wall));
    }
    api.wait_background(std::time::Duration::from_secs(30))
        .await;

    let mut overhead = Vec::with_capacity(turns);
    let mut model = Vec::with_capacity(turns);
    let mut calls = 0usize;
    let mut by_meaning = 0usize;
    for (turn_id, wall) in &walls {
        let trace = api.trace(turn_id).await?;
        by_meaning += usize::from(trace.spans.iter().any(|s| {
            s.name == "memory_recall" && s.attrs.get("semantic") == Some(&serde_json::json!(true))
        }));
        let model_spans: Vec<f64> = trace
            .spans
            .iter()
            .filter(|s| s.name == "model_request")
            .filter_map(|s| s.duration_ms)
            .collect();
        calls += model_spans.len();
        let in_model: f64 = model_spans.iter().sum();
        model.push(in_model);
        overhead.push(wall - in_model);
    }
    let report = Report {
        turns,
        turns_per_session: per_session,
        model_calls_per_turn: calls as f64 / turns.max(1) as f64,
        recall_by_meaning: by_meaning,
        growth: Growth::of(&overhead, per_session),
        overhead_ms: summarize(overhead),
        model_ms: summarize(model),
        turn_ms: summarize(walls.iter().map(|w| w.1).collect()),
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

/// Words the context benchmark's messages and memories are made of.
const WORDS: &[&str] = &[
    "budget", "garden", "flight", "invoice", "dentist", "marathon", "camera", "lease", "recipe",
    "python", "tokyo", "sister", "podcast", "deadline", "keyboard", "holiday",
];

fn words(rng: &mut u64, n: usize) -> String {
    (0..n)
        .map(|_| {
            // xorshift: deterministic and dependency-free.
            *rng ^= *rng << 13;
            *rng ^= *rng >> 7;
            *rng ^= *rng << 17;
            WORDS[(*rng % WORDS.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Debug, Serialize)]
struct ContextReport {
    /// Messages in the session when the first measured turn started.
    session_messages: usize,
    memories: usize,
    turns: usize,
    /// The `context` span: history load, memory snapshot and recall, bootstrap files, request
    /// build and token counting, compression decision.
    context_ms: Summary,
    /// Tokens of the first request of the last measured turn.
    request_tokens: u64,
}

/// `echod bench context`: fills a session with `messages` messages and the store with
/// `memories` memories, then times ContextStage over `turns` more turns of that session.
pub async fn context(
    api: &Api,
    messages: usize,
    memories: usize,
    turns: usize,
) -> anyhow::Result<()> {
    let handler: EventHandler = Arc::new(|_| {});
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..memories {
        let text = format!("The user mentioned {}", words(&mut rng, 10));
        api.memory_add(&text, None, false, None).await?;
    }
    let session = "bench-context";
    let send = |input: String| {
        let request = TurnRequest::new(session, input, EntryPoint::Bench);
        api.send(request, handler.clone(), CancellationToken::new())
    };
    for i in 0..messages / 2 {
        let outcome = send(format!("note {i}: {}", words(&mut rng, 30))).await?;
        if outcome.status != TurnStatus::Completed {
            anyhow::bail!("filling turn {i} ended {:?}", outcome.status);
        }
    }
    let session_messages = api.history(session).await?.len();
    let mut times = Vec::with_capacity(turns);
    let mut request_tokens = 0;
    for i in 0..turns {
        let outcome = send(format!(
            "question {i}: what about the {}?",
            words(&mut rng, 3)
        ))
        .await?;
        if outcome.status != TurnStatus::Completed {
            anyhow::bail!("turn {i} ended {:?}", outcome.status);
        }
        let trace = api.trace(&outcome.turn_id).await?;
        let Some(span) = trace.spans.iter().find(|s| s.name == "context") else {
            anyhow::bail!("turn {i} has no context span");
        };
        times.extend(span.duration_ms);
        request_tokens = trace
            .spans
            .iter()
            .find(|s| s.name == "inference#1")
            .and_then(|s| s.attrs["tokens_estimated"].as_u64())
            .unwrap_or(0);
    }
    let report = ContextReport {
        session_messages,
        memories,
        turns,
        context_ms: summarize(times),
        request_tokens,
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
