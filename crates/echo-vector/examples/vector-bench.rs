//! Benchmark of the vector index: for each size N given on the command line, inserts N random
//! unit vectors of dim 384 in batches of 1,000 through `upsert`, runs `optimize`, then times
//! 200 searches at k = 20. Prints one JSON line per size. Not run in CI; meaningful only in a
//! release build:
//!
//! ```text
//! cargo run --release -p echo-vector --example vector-bench -- 1000 10000 100000
//! ```
//!
//! Options:
//! - `--ef 200,400,800` repeats the queries with those HNSW search breadths
//!   (`VectorOptions::ann_ef`), one line each; the first line of a size uses the default.
//! - `--data clustered` draws vectors around N/100 random centres (cosine to the centre ≈ 0.8)
//!   instead of uniformly on the sphere. Uniform 384-d data is the worst case for any ANN index
//!   (all points nearly equidistant); clustered data is closer to real text embeddings.
//! - `--exact` never builds the ANN index, to time the exhaustive search at the same sizes.
//! - `--ranked` times `search_ranked` (no re-ranking on the full vectors) instead of `search`.
//! - `--dir PATH` keeps the table in PATH/<rows>-<data> and reuses it when it is already
//!   there, so repeated runs skip the load (the vectors are drawn the same way each time).
//!
//! Recall@20 is measured against an exact brute force over the same vectors (first 50 queries).

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use echo_vector::{VectorError, VectorIndex, VectorOptions};

const DIM: usize = 384;
const BATCH: usize = 1_000;
const QUERIES: usize = 200;
const RECALL_QUERIES: usize = 50;
const K: usize = 20;
const MODEL: &str = "bench-random";
/// Per-coordinate noise around a cluster centre, so that the noise vector has norm ≈ 0.75 and
/// a point's cosine to its centre is ≈ 0.8.
const CLUSTER_NOISE: f32 = 0.75;

/// Deterministic xorshift64* generator.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f32 {
        let u1 = self.uniform().max(1e-7);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
    }

    /// Uniform on the unit sphere.
    fn unit_vector(&mut self) -> Vec<f32> {
        normalize((0..DIM).map(|_| self.normal()).collect())
    }

    /// Near `centre`: centre plus Gaussian noise, normalised.
    fn near(&mut self, centre: &[f32]) -> Vec<f32> {
        let sigma = CLUSTER_NOISE / (DIM as f32).sqrt();
        normalize(centre.iter().map(|c| c + sigma * self.normal()).collect())
    }
}

fn normalize(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.into_iter().map(|x| x / norm).collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Data {
    Uniform,
    Clustered,
}

struct Config {
    sizes: Vec<usize>,
    efs: Vec<Option<usize>>,
    data: Data,
    exact: bool,
    ranked: bool,
    dir: Option<std::path::PathBuf>,
}

/// `n` data vectors and `QUERIES` query vectors drawn the same way.
fn generate(rng: &mut Rng, data: Data, n: usize) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    match data {
        Data::Uniform => (
            (0..n).map(|_| rng.unit_vector()).collect(),
            (0..QUERIES).map(|_| rng.unit_vector()).collect(),
        ),
        Data::Clustered => {
            let centres: Vec<Vec<f32>> =
                (0..(n / 100).max(10)).map(|_| rng.unit_vector()).collect();
            let pick = |rng: &mut Rng| {
                let c = (rng.next_u64() % centres.len() as u64) as usize;
                rng.near(&centres[c])
            };
            let points = (0..n).map(|_| pick(rng)).collect();
            let queries = (0..QUERIES).map(|_| pick(rng)).collect();
            (points, queries)
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

fn id(i: usize) -> String {
    format!("m{i:08}")
}

fn options(ef: Option<usize>, exact: bool) -> VectorOptions {
    let mut options = VectorOptions::new(DIM, MODEL);
    options.ann_ef = ef;
    if exact {
        options.ann_min_rows = usize::MAX;
    }
    options
}

/// What one size measured while loading.
struct Load {
    insert: Duration,
    optimize: Duration,
    ann: Option<String>,
}

async fn load(dir: &Path, data: &[Vec<f32>], exact: bool) -> Result<Load, VectorError> {
    let index = VectorIndex::open_with(dir, options(None, exact)).await?;
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

async fn search(
    index: &VectorIndex,
    query: &[f32],
    ranked: bool,
) -> Result<Vec<(String, f32)>, VectorError> {
    if ranked {
        index.search_ranked(query, K).await
    } else {
        index.search(query, K).await
    }
}

/// Latency percentiles (ms) and recall of the queries through a handle with `ef`.
async fn query(
    dir: &Path,
    data: &[Vec<f32>],
    queries: &[Vec<f32>],
    ef: Option<usize>,
    config: &Config,
) -> Result<(f64, f64, f64), VectorError> {
    let index = VectorIndex::open_with(dir, options(ef, config.exact)).await?;
    // One warm-up query so the first measured one does not pay for opening files.
    search(&index, &queries[0], config.ranked).await?;
    let mut latencies = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    for (q, query) in queries.iter().enumerate() {
        let started = Instant::now();
        let hits = search(&index, query, config.ranked).await?;
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

async fn run(n: usize, config: &Config, rng: &mut Rng) -> Result<(), String> {
    let tmp = tempfile::TempDir::new().map_err(|e| format!("temporary directory: {e}"))?;
    let (data, queries) = generate(rng, config.data, n);
    let (dir, loaded) = match &config.dir {
        Some(base) => {
            let name = format!(
                "{n}-{}{}",
                match config.data {
                    Data::Uniform => "uniform",
                    Data::Clustered => "clustered",
                },
                if config.exact { "-exact" } else { "" }
            );
            let dir = base.join(name);
            let reused = dir.exists();
            let loaded = if reused {
                let index = VectorIndex::open_with(&dir, options(None, config.exact))
                    .await
                    .map_err(|e| e.to_string())?;
                Load {
                    insert: Duration::ZERO,
                    optimize: Duration::ZERO,
                    ann: index
                        .ann_status()
                        .await
                        .map_err(|e| e.to_string())?
                        .map(|status| status.kind),
                }
            } else {
                load(&dir, &data, config.exact)
                    .await
                    .map_err(|e| e.to_string())?
            };
            (dir, loaded)
        }
        None => {
            let dir = tmp.path().join("vectors");
            let loaded = load(&dir, &data, config.exact)
                .await
                .map_err(|e| e.to_string())?;
            (dir, loaded)
        }
    };
    for ef in &config.efs {
        let (p50, p95, recall) = query(&dir, &data, &queries, *ef, config)
            .await
            .map_err(|e| e.to_string())?;
        println!(
            concat!(
                "{{\"build\":\"{}\",\"data\":\"{}\",\"rows\":{},\"dim\":{},\"batch\":{},",
                "\"insert_s\":{:.3},\"insert_rows_per_s\":{:.0},\"optimize_s\":{:.3},",
                "\"ann_index\":{},\"search\":\"{}\",\"ef\":{},\"queries\":{},\"k\":{},\"p50_ms\":{:.3},",
                "\"p95_ms\":{:.3},\"recall_at_k\":{:.3}}}"
            ),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            match config.data {
                Data::Uniform => "uniform",
                Data::Clustered => "clustered",
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
            if config.ranked { "ranked" } else { "exact" },
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

fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        sizes: Vec::new(),
        efs: vec![None],
        data: Data::Uniform,
        exact: false,
        ranked: false,
        dir: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--ef" => {
                let list = args.next().ok_or("--ef needs a list such as 200,400")?;
                for ef in list.split(',') {
                    let ef = ef.parse().map_err(|_| format!("bad --ef value {ef:?}"))?;
                    config.efs.push(Some(ef));
                }
            }
            "--data" => {
                config.data = match args.next().as_deref() {
                    Some("uniform") => Data::Uniform,
                    Some("clustered") => Data::Clustered,
                    other => return Err(format!("--data takes uniform|clustered, got {other:?}")),
                };
            }
            "--exact" => config.exact = true,
            "--ranked" => config.ranked = true,
            "--dir" => config.dir = Some(args.next().ok_or("--dir needs a path")?.into()),
            _ => match arg.parse() {
                Ok(n) if n > 0 => config.sizes.push(n),
                _ => return Err(format!("sizes must be positive integers, got {arg:?}")),
            },
        }
    }
    if config.sizes.is_empty() {
        config.sizes = vec![1_000, 10_000];
    }
    Ok(config)
}

#[tokio::main]
async fn main() {
    let config = match parse_args() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("vector-bench: {e}");
            std::process::exit(2);
        }
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for &n in &config.sizes {
        if let Err(e) = run(n, &config, &mut rng).await {
            eprintln!("vector-bench: {e}");
            std::process::exit(1);
        }
    }
}
