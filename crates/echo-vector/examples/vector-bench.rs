//! Benchmark of the vector index: for each size N given on the command line, inserts N random
//! unit vectors of dim 384 in batches through `upsert`, runs `optimize`, then times 200
//! searches at k = 20. Prints one JSON line per size. Not run in CI; meaningful in release:
//!
//! ```text
//! cargo run --release -p echo-vector --example vector-bench -- 1000 10000 100000
//! ```
//!
//! `--ef 100,200,400` also repeats the queries with those HNSW search breadths
//! (`VectorOptions::ann_ef`), one line each; the first line of a size uses the default.
//!
//! Recall@20 is measured against an exact brute force over the same vectors (for the first
//! 50 queries, to keep the check cheap).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use echo_vector::{VectorError, VectorIndex, VectorOptions};

const DIM: usize = 384;
const BATCH: usize = 1_000;
const QUERIES: usize = 200;
const RECALL_QUERIES: usize = 50;
const K: usize = 20;
const MODEL: &str = "bench-random-unit";

/// Deterministic xorshift64* generator.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn unit_vector(&mut self) -> Vec<f32> {
        loop {
            let v: Vec<f32> = (0..DIM).map(|_| self.next_f32()).collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 1e-3 {
                return v.into_iter().map(|x| x / norm).collect();
            }
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Exact top-k ids by dot product (the vectors are unit length, so this is cosine).
fn exact_top_k(data: &[Vec<f32>], query: &[f32]) -> Vec<usize> {
    let mut scored: Vec<(usize, f32)> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v.iter().zip(query).map(|(a, b)| a * b).sum()))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.into_iter().take(K).map(|(i, _)| i).collect()
}

/// What one size measured while loading.
struct Load {
    insert: Duration,
    optimize: Duration,
    ann: Option<String>,
}

async fn load(dir: &Path, data: &[Vec<f32>]) -> Result<Load, VectorError> {
    let index = VectorIndex::open(dir, DIM, MODEL).await?;
    let started = Instant::now();
    for (b, chunk) in data.chunks(BATCH).enumerate() {
        let items: Vec<(String, Vec<f32>)> = chunk
            .iter()
            .enumerate()
            .map(|(i, v)| (id(b * BATCH + i), v.clone()))
            .collect();
        index.upsert(&items).await?;
    }
    let insert = started.elapsed();
    let started = Instant::now();
    index.optimize().await?;
    let optimize = started.elapsed();
    let ann = index.ann_status().await?.map(|status| status.kind);
    Ok(Load {
        insert,
        optimize,
        ann,
    })
}

/// Latency percentiles (ms) and recall of `QUERIES` searches through a handle with `ef`.
async fn query(
    dir: &Path,
    data: &[Vec<f32>],
    queries: &[Vec<f32>],
    ef: Option<usize>,
) -> Result<(f64, f64, f64), VectorError> {
    let mut options = VectorOptions::new(DIM, MODEL);
    options.ann_ef = ef;
    let index = VectorIndex::open_with(dir, options).await?;
    // One warm-up query so the first measured one does not pay for opening files.
    index.search(&queries[0], K).await?;
    let mut latencies = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    for (q, query) in queries.iter().enumerate() {
        let started = Instant::now();
        let hits = index.search(query, K).await?;
        latencies.push(ms(started.elapsed()));
        if q < RECALL_QUERIES {
            let got: HashSet<String> = hits.into_iter().map(|(id, _)| id).collect();
            found += exact_top_k(data, query)
                .into_iter()
                .filter(|i| got.contains(&id(*i)))
                .count();
        }
    }
    latencies.sort_by(f64::total_cmp);
    let checked = RECALL_QUERIES.min(queries.len()) * K.min(data.len());
    Ok((
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        found as f64 / checked as f64,
    ))
}

fn id(i: usize) -> String {
    format!("m{i:08}")
}

async fn run(n: usize, efs: &[Option<usize>], rng: &mut Rng) -> Result<(), String> {
    let tmp = tempfile::TempDir::new().map_err(|e| format!("temporary directory: {e}"))?;
    let dir = tmp.path().join("vectors");
    let data: Vec<Vec<f32>> = (0..n).map(|_| rng.unit_vector()).collect();
    let queries: Vec<Vec<f32>> = (0..QUERIES).map(|_| rng.unit_vector()).collect();
    let loaded = load(&dir, &data).await.map_err(|e| e.to_string())?;
    for ef in efs {
        let (p50, p95, recall) = query(&dir, &data, &queries, *ef)
            .await
            .map_err(|e| e.to_string())?;
        println!(
            concat!(
                "{{\"build\":\"{}\",\"rows\":{},\"dim\":{},\"batch\":{},\"insert_s\":{:.3},",
                "\"insert_rows_per_s\":{:.0},\"optimize_s\":{:.3},\"ann_index\":{},",
                "\"ef\":{},\"queries\":{},\"k\":{},\"p50_ms\":{:.3},\"p95_ms\":{:.3},",
                "\"recall_at_k\":{:.3}}}"
            ),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            n,
            DIM,
            BATCH,
            loaded.insert.as_secs_f64(),
            n as f64 / loaded.insert.as_secs_f64(),
            loaded.optimize.as_secs_f64(),
            match &loaded.ann {
                Some(kind) => format!("\"{kind}\""),
                None => "null".to_owned(),
            },
            match ef {
                Some(ef) => ef.to_string(),
                None => "\"default\"".to_owned(),
            },
            QUERIES,
            K,
            p50,
            p95,
            recall,
        );
    }
    Ok(())
}

fn parse_args() -> Result<(Vec<usize>, Vec<Option<usize>>), String> {
    let mut sizes = Vec::new();
    let mut efs = vec![None];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--ef" {
            let list = args.next().ok_or("--ef needs a list such as 100,200,400")?;
            for ef in list.split(',') {
                let ef = ef.parse().map_err(|_| format!("bad --ef value {ef:?}"))?;
                efs.push(Some(ef));
            }
        } else {
            match arg.parse() {
                Ok(n) if n > 0 => sizes.push(n),
                _ => return Err(format!("sizes must be positive integers, got {arg:?}")),
            }
        }
    }
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000];
    }
    Ok((sizes, efs))
}

#[tokio::main]
async fn main() {
    let (sizes, efs) = match parse_args() {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("vector-bench: {e}");
            std::process::exit(2);
        }
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for n in sizes {
        if let Err(e) = run(n, &efs, &mut rng).await {
            eprintln!("vector-bench: {e}");
            std::process::exit(1);
        }
    }
}
