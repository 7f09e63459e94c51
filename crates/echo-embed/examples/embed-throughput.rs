//! Throughput of the local embedder: embeds N short sentences (default 1000) in batches of B
//! (default 32) and prints one JSON object with sentences per second.
//!
//! ```text
//! cargo run --release -p echo-embed --example embed-throughput -- [--n 1000] [--batch 32] [--model-dir DIR]
//! ```
//!
//! The model comes from `--model-dir`, else `$ECHO_EMBED_MODEL_DIR`, else
//! `~/.cache/echo-desk-models/all-MiniLM-L6-v2` (`bash scripts/fetch-embed-model.sh`).

use echo_embed::{Embedder, MODEL_DIR_ENV, MiniLmEmbedder, is_model_dir};
use std::path::PathBuf;
use std::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

struct Args {
    n: usize,
    batch: usize,
    model_dir: Option<PathBuf>,
}

fn parse_args() -> Result<Args, BoxError> {
    let mut args = Args {
        n: 1000,
        batch: 32,
        model_dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => args.n = value.parse()?,
            "--batch" => args.batch = value.parse()?,
            "--model-dir" => args.model_dir = Some(PathBuf::from(value)),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    Ok(args)
}

/// `n` distinct short sentences (5–9 words), the length of typical memory snippets.
fn sentences(n: usize) -> Vec<String> {
    const WHO: [&str; 6] = [
        "My sister",
        "The user",
        "Tom",
        "Our team",
        "A neighbour",
        "Grandma",
    ];
    const DOES: [&str; 6] = [
        "likes",
        "is learning",
        "forgot about",
        "asked me about",
        "wants to try",
        "talked about",
    ];
    const WHAT: [&str; 7] = [
        "Italian cooking",
        "the trip to Lisbon",
        "quantum computing",
        "the dentist appointment",
        "jazz piano",
        "the quarterly report",
        "growing tomatoes",
    ];
    (0..n)
        .map(|i| {
            format!(
                "{} {} {} on day {}.",
                WHO[i % WHO.len()],
                DOES[(i / WHO.len()) % DOES.len()],
                WHAT[(i / 7) % WHAT.len()],
                i
            )
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = parse_args()?;
    let dir = match args.model_dir {
        Some(d) => d,
        None => match std::env::var_os(MODEL_DIR_ENV).filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/echo-desk-models/all-MiniLM-L6-v2"),
        },
    };
    if !is_model_dir(&dir) {
        return Err(format!(
            "no model in {}: run `bash scripts/fetch-embed-model.sh` or pass --model-dir",
            dir.display()
        )
        .into());
    }
    let load_start = Instant::now();
    let model = MiniLmEmbedder::load(&dir)?.with_batch_size(args.batch);
    let load_secs = load_start.elapsed().as_secs_f64();
    let texts = sentences(args.n);

    // Warm-up: one batch, not timed.
    model.embed(&texts[..args.batch.min(texts.len())]).await?;

    let start = Instant::now();
    let mut embedded = 0;
    for chunk in texts.chunks(args.batch) {
        embedded += model.embed(chunk).await?.len();
    }
    let secs = start.elapsed().as_secs_f64();
    let report = serde_json::json!({
        "benchmark": "embed-throughput",
        "model": model.model_id(),
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "sentences": embedded,
        "batch_size": args.batch,
        "threads": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "load_seconds": (load_secs * 1000.0).round() / 1000.0,
        "seconds": (secs * 1000.0).round() / 1000.0,
        "sentences_per_second": (embedded as f64 / secs * 10.0).round() / 10.0,
    });
    println!("{report}");
    Ok(())
}
