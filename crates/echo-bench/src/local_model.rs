//! The built-in model's speed on one GGUF file (`echod bench local-model`): prompt processing
//! and generation tokens/s, the time to the first token of a first turn and of a follow-up
//! turn that reuses the prompt cache, a schema-constrained call's tokens/s, the load time and
//! the process's peak RSS. Timings come from the worker ([`echo_local::Timings`]), so they
//! hold the model's work and nothing of the caller's.
//!
//! Each run starts its prompt with its own number, so no run's prompt is in the cache of an
//! earlier one; the figures say how many prompt tokens were processed and at which cache
//! depth the answer was generated, so `scripts/bench-local.sh` can ask `llama-bench` for the
//! same.

use echo_local::{ChatMessage, ChatRole, Event, LocalModel, Next, Outcome, Request, ToolDef};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// What to measure.
#[derive(Clone, Debug)]
pub struct LocalOptions {
    /// The GGUF file.
    pub model: PathBuf,
    /// Measured runs (each: a first turn, its follow-up, a forced call).
    pub runs: usize,
    /// Most tokens each answer generates.
    pub max_tokens: usize,
}

/// One run's figures.
#[derive(Clone, Debug, Serialize)]
pub struct LocalRun {
    /// Prompt tokens of the first turn processed (not taken from the cache).
    pub prompt_tokens: usize,
    /// Their processing speed.
    pub prompt_tokens_per_s: f64,
    /// Tokens the first turn generated.
    pub generated_tokens: usize,
    /// The cache depth generation started at (the first turn's whole prompt).
    pub generation_depth: usize,
    /// Generation speed.
    pub generation_tokens_per_s: f64,
    /// The first turn's time to its first token, measured by the caller.
    pub first_turn_ttft_ms: f64,
    /// The follow-up turn's prompt tokens, and how many came from the cache.
    pub follow_up_prompt_tokens: usize,
    /// Of those, from the cache.
    pub follow_up_cached_tokens: usize,
    /// The follow-up turn's time to its first token, measured by the caller.
    pub follow_up_ttft_ms: f64,
    /// Tokens of the forced (schema-constrained) call.
    pub forced_tokens: usize,
    /// Their generation speed, grammar masks included.
    pub forced_tokens_per_s: f64,
    /// The same conversation answered as text, as many tokens, without the tools: the speed
    /// the masks are measured against (at about the same cache depth).
    pub unforced_tokens_per_s: f64,
}

/// The whole report: the model, the load, each run and the medians.
#[derive(Clone, Debug, Serialize)]
pub struct LocalReport {
    /// `general.name` of the file.
    pub model: String,
    /// The file.
    pub path: PathBuf,
    /// Threads the model computes with.
    pub threads: usize,
    /// Reading the weights (the first request).
    pub load_ms: f64,
    /// The first request as the caller sees it: the worker process started, the file's
    /// header and tokenizer read, the weights loaded, one token generated.
    pub first_request_ms: f64,
    /// This process's peak resident memory after the runs, in MiB.
    pub peak_rss_mib: f64,
    /// The model worker process's, when the model runs in one.
    pub worker_peak_rss_mib: Option<f64>,
    /// Each run.
    pub runs: Vec<LocalRun>,
    /// Median of each figure over the runs.
    pub median: LocalRun,
}

struct Timed {
    outcome: Outcome,
    first_ms: f64,
    text: String,
}

async fn timed(model: &LocalModel, request: Request) -> Result<Timed, String> {
    let started = Instant::now();
    let mut first = None;
    let mut text = String::new();
    let mut generation = model.start(request);
    loop {
        match generation.next().await {
            Next::Event(e) => {
                first.get_or_insert_with(|| started.elapsed());
                match e {
                    Event::Text(t) => text.push_str(&t),
                    Event::ToolCall(c) => text.push_str(&c.arguments),
                }
            }
            Next::Done(result) => {
                let outcome = result.map_err(|e| e.to_string())?;
                let first = first.unwrap_or_else(|| started.elapsed());
                return Ok(Timed {
                    outcome,
                    first_ms: first.as_secs_f64() * 1000.0,
                    text,
                });
            }
        }
    }
}

/// A system block of the size the engine sends (identity, rules, memories), opened by the
/// run's number.
fn system(run: usize) -> String {
    let mut s =
        format!("Run {run}. You are a helpful assistant. Here is what you know about the user:\n");
    for i in 0..40 {
        s.push_str(&format!(
            "- Fact {i}: the user once mentioned item number {i} in a list of things they like.\n"
        ));
    }
    s
}

fn per_second(tokens: usize, secs: f64) -> f64 {
    if secs > 0.0 {
        tokens as f64 / secs
    } else {
        0.0
    }
}

/// Runs the benchmark.
pub async fn local_model(opts: &LocalOptions) -> Result<LocalReport, String> {
    let model = LocalModel::open(&opts.model, None).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let warm = timed(
        &model,
        Request {
            messages: vec![ChatMessage::new(ChatRole::User, "Hi")],
            tools: Vec::new(),
            forced: None,
            max_tokens: 1,
            temperature: Some(0.0),
            seed: None,
        },
    )
    .await?;
    let first_request_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut runs = Vec::with_capacity(opts.runs);
    for run in 0..opts.runs {
        let first = Request {
            messages: vec![
                ChatMessage::new(ChatRole::System, system(run)),
                ChatMessage::new(
                    ChatRole::User,
                    "Tell me a long story about a lighthouse keeper and her cat.",
                ),
            ],
            tools: Vec::new(),
            forced: None,
            max_tokens: opts.max_tokens,
            temperature: Some(0.0),
            seed: None,
        };
        let a = timed(&model, first.clone()).await?;
        let mut follow = first;
        follow
            .messages
            .push(ChatMessage::new(ChatRole::Assistant, a.text.clone()));
        follow
            .messages
            .push(ChatMessage::new(ChatRole::User, "Now make it sadder."));
        follow.max_tokens = 16;
        let b = timed(&model, follow).await?;
        let extract = Request {
            messages: vec![
                ChatMessage::new(ChatRole::System, "Extract facts about the user."),
                ChatMessage::new(
                    ChatRole::User,
                    format!("Run {run}: I live in Lisbon, I have two cats and I work as a nurse."),
                ),
            ],
            tools: vec![ToolDef {
                name: "extract".into(),
                description: "Record facts".into(),
                parameters: serde_json::json!({
                    "type": "object",
                    "properties": {"facts": {"type": "array", "items": {"type": "string"}, "maxItems": 5}},
                    "required": ["facts"],
                    "additionalProperties": false
                }),
            }],
            forced: Some("extract".into()),
            max_tokens: opts.max_tokens,
            temperature: Some(0.0),
            seed: None,
        };
        let forced = timed(&model, extract.clone()).await?;
        let unforced = timed(
            &model,
            Request {
                // No tools: the model must not start a (constrained) call of its own.
                tools: Vec::new(),
                forced: None,
                max_tokens: forced.outcome.output_tokens.max(1),
                ..extract
            },
        )
        .await?;
        let o = &a.outcome;
        let processed = o.prompt_tokens - o.cached_tokens;
        runs.push(LocalRun {
            prompt_tokens: processed,
            prompt_tokens_per_s: per_second(processed, o.timings.prompt.as_secs_f64()),
            generated_tokens: o.output_tokens,
            generation_depth: o.prompt_tokens,
            generation_tokens_per_s: per_second(o.output_tokens, o.timings.generate.as_secs_f64()),
            first_turn_ttft_ms: a.first_ms,
            follow_up_prompt_tokens: b.outcome.prompt_tokens,
            follow_up_cached_tokens: b.outcome.cached_tokens,
            follow_up_ttft_ms: b.first_ms,
            forced_tokens: forced.outcome.output_tokens,
            forced_tokens_per_s: per_second(
                forced.outcome.output_tokens,
                forced.outcome.timings.generate.as_secs_f64(),
            ),
            unforced_tokens_per_s: per_second(
                unforced.outcome.output_tokens,
                unforced.outcome.timings.generate.as_secs_f64(),
            ),
        });
    }
    let median = median_run(&runs).ok_or("no runs: --runs must be at least 1")?;
    Ok(LocalReport {
        model: model.info().name.clone(),
        path: model.info().path.clone(),
        threads: echo_local::threads::in_use(),
        load_ms: warm.outcome.timings.load.as_secs_f64() * 1000.0,
        first_request_ms,
        peak_rss_mib: peak_rss_mib("self").unwrap_or(0.0),
        worker_peak_rss_mib: model
            .worker_pid()
            .and_then(|pid| peak_rss_mib(&pid.to_string())),
        runs,
        median,
    })
}

fn median_run(runs: &[LocalRun]) -> Option<LocalRun> {
    fn mid<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<T> {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        v.get(v.len() / 2).copied()
    }
    let f = |g: fn(&LocalRun) -> f64| mid(runs.iter().map(g).collect());
    let n = |g: fn(&LocalRun) -> usize| mid(runs.iter().map(g).collect());
    Some(LocalRun {
        prompt_tokens: n(|r| r.prompt_tokens)?,
        prompt_tokens_per_s: f(|r| r.prompt_tokens_per_s)?,
        generated_tokens: n(|r| r.generated_tokens)?,
        generation_depth: n(|r| r.generation_depth)?,
        generation_tokens_per_s: f(|r| r.generation_tokens_per_s)?,
        first_turn_ttft_ms: f(|r| r.first_turn_ttft_ms)?,
        follow_up_prompt_tokens: n(|r| r.follow_up_prompt_tokens)?,
        follow_up_cached_tokens: n(|r| r.follow_up_cached_tokens)?,
        follow_up_ttft_ms: f(|r| r.follow_up_ttft_ms)?,
        forced_tokens: n(|r| r.forced_tokens)?,
        forced_tokens_per_s: f(|r| r.forced_tokens_per_s)?,
        unforced_tokens_per_s: f(|r| r.unforced_tokens_per_s)?,
    })
}

/// `VmHWM` of `/proc/PROCESS/status`, in MiB.
fn peak_rss_mib(process: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
