//! The memory scale benchmark: for each size N, write N synthetic memories through the write
//! path (write throughput), embed them into the vector index with a stand-in embedder (random
//! unit vectors: latency does not depend on what the vectors mean), then time hybrid recall
//! (BM25 + vector + fusion + row fetch) for a set of queries, for the same naming a day, and
//! for paraphrases (queries sharing no word with any memory), and one sweep over everything.
//! The real embedder's query time is measured on its own, so the two add up honestly.

use echo_memory::echo_embed::{EmbedError, Embedder};
use echo_memory::{
    MemoryActor, MemorySource, MemoryStore, NewMemory, RecallOptions, SemanticIndex, WriteOptions,
};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

const WORDS: &[&str] = &[
    "coffee",
    "tea",
    "garden",
    "bicycle",
    "python",
    "rust",
    "piano",
    "violin",
    "hiking",
    "paris",
    "berlin",
    "tokyo",
    "sister",
    "brother",
    "daughter",
    "project",
    "deadline",
    "budget",
    "recipe",
    "vegetarian",
    "fish",
    "allergy",
    "meeting",
    "doctor",
    "dentist",
    "flight",
    "hotel",
    "birthday",
    "anniversary",
    "novel",
    "podcast",
    "running",
    "marathon",
    "yoga",
    "chess",
    "photography",
    "camera",
    "laptop",
    "keyboard",
    "monitor",
    "invoice",
    "tax",
    "insurance",
    "apartment",
    "lease",
    "neighbour",
    "dog",
    "cat",
    "parrot",
    "weekend",
    "holiday",
    "museum",
];

/// Query words that no memory contains: a query made of them is a paraphrase, found by the
/// vector search alone.
const OTHER_WORDS: &[&str] = &[
    "orchestra",
    "lighthouse",
    "volcano",
    "glacier",
    "saxophone",
    "telescope",
    "harbour",
    "quilt",
    "kayak",
    "lantern",
    "meadow",
    "pottery",
];

/// Figures for one size.
#[derive(Debug, Serialize)]
pub struct SizeReport {
    /// Memories in the store.
    pub memories: usize,
    /// Memories written per second through the write path (validation, conflict search,
    /// history, outbox).
    pub writes_per_sec: f64,
    /// Vectors embedded (stand-in embedder) and written to LanceDB per second.
    pub vectors_per_sec: f64,
    /// Hybrid recall latency, milliseconds, excluding query embedding.
    pub recall_p50_ms: f64,
    /// 95th percentile.
    pub recall_p95_ms: f64,
    /// Hybrid recall p50 for a query that shares no word with any memory (a paraphrase):
    /// every vector hit's row is read after the search, the slowest path.
    pub recall_paraphrase_p50_ms: f64,
    /// Hybrid recall p50 for an ordinary query that also names a day every memory is from
    /// ("… today"): BM25 read 1,000 deep and every candidate looked up by its day, the worst
    /// case of a dated query.
    pub recall_dated_p50_ms: f64,
    /// BM25-only recall latency p50, milliseconds.
    pub bm25_p50_ms: f64,
    /// Vector search alone for the 20 nearest (what recall of 10 asks for), ranking only as
    /// recall does, p50 ms.
    pub vector_k20_p50_ms: f64,
    /// The same with exact similarities (re-ranked on the full vectors), as the write path's
    /// conflict search does.
    pub vector_k20_exact_p50_ms: f64,
    /// One sweep over every memory, milliseconds.
    pub sweep_ms: f64,
    /// Building the BM25 index from every row, as a process does on its first search.
    pub search_index_build_ms: f64,
}

/// A deterministic embedder for benchmarks: a pseudo-random unit vector per text.
struct StandIn;

#[async_trait::async_trait]
impl Embedder for StandIn {
    fn model_id(&self) -> &str {
        "bench-random-384"
    }
    fn dim(&self) -> usize {
        384
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| unit_vector(t)).collect())
    }
}

fn unit_vector(text: &str) -> Vec<f32> {
    let mut rng = fastrand::Rng::with_seed(text.bytes().fold(1469598103934665603u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(1099511628211)
    }));
    let v: Vec<f32> = (0..384).map(|_| rng.f32() - 0.5).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.into_iter().map(|x| x / norm).collect()
}

fn sentence(rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(6..14);
    let words: Vec<&str> = (0..n).map(|_| WORDS[rng.usize(..WORDS.len())]).collect();
    format!("The user mentioned {}", words.join(" "))
}

fn paraphrase(rng: &mut fastrand::Rng) -> String {
    let words: Vec<&str> = (0..3)
        .map(|_| OTHER_WORDS[rng.usize(..OTHER_WORDS.len())])
        .collect();
    format!("tell me about {}", words.join(" "))
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

/// Runs the benchmark for each size (each in a fresh temporary data directory).
pub async fn memory_scale(sizes: &[usize], queries: usize) -> Result<Vec<SizeReport>, String> {
    let mut out = Vec::new();
    for &size in sizes {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let store = echo_core::Store::open_in(dir.path())
            .await
            .map_err(|e| e.to_string())?;
        let memory = MemoryStore::new(
            store.pool().clone(),
            echo_core::config::MemoryConfig::default(),
        );
        let mut rng = fastrand::Rng::with_seed(7);
        let started = Instant::now();
        for _ in 0..size {
            let draft = NewMemory {
                tier: Some(echo_memory::MemoryTier::Episodic),
                content: sentence(&mut rng),
                source: Some(MemorySource::Consolidated),
                ..Default::default()
            };
            memory
                .remember(draft, WriteOptions::plain(MemoryActor::Import))
                .await
                .map_err(|e| e.to_string())?;
        }
        let writes_per_sec = size as f64 / started.elapsed().as_secs_f64();
        let started = Instant::now();
        let (index, _) =
            SemanticIndex::open(&dir.path().join("vectors"), Arc::new(StandIn), &memory)
                .await
                .map_err(|e| e.to_string())?;
        index.flush(&memory).await.map_err(|e| e.to_string())?;
        index.optimize().await.map_err(|e| e.to_string())?;
        let vectors_per_sec = size as f64 / started.elapsed().as_secs_f64();

        let t = time_queries(&memory, &index, queries, &mut rng, size).await?;
        let started = Instant::now();
        memory
            .sweep(chrono::Utc::now())
            .await
            .map_err(|e| e.to_string())?;
        let sweep_ms = started.elapsed().as_secs_f64() * 1000.0;
        // Another process's first search: its index is built from the rows.
        let fresh = MemoryStore::new(
            store.pool().clone(),
            echo_core::config::MemoryConfig::default(),
        );
        let started = Instant::now();
        fresh.warm_search_index().await.map_err(|e| e.to_string())?;
        let search_index_build_ms = started.elapsed().as_secs_f64() * 1000.0;
        out.push(SizeReport {
            memories: size,
            writes_per_sec,
            vectors_per_sec,
            recall_p50_ms: percentile(&t.hybrid, 0.5),
            recall_p95_ms: percentile(&t.hybrid, 0.95),
            recall_paraphrase_p50_ms: percentile(&t.paraphrased, 0.5),
            recall_dated_p50_ms: percentile(&t.dated, 0.5),
            bm25_p50_ms: percentile(&t.bm25, 0.5),
            vector_k20_p50_ms: percentile(&t.vector_ranked, 0.5),
            vector_k20_exact_p50_ms: percentile(&t.vector_exact, 0.5),
            sweep_ms,
            search_index_build_ms,
        });
        store.close().await;
    }
    Ok(out)
}

/// Each query path's times, milliseconds, sorted.
#[derive(Default)]
struct Timings {
    hybrid: Vec<f64>,
    bm25: Vec<f64>,
    paraphrased: Vec<f64>,
    dated: Vec<f64>,
    vector_ranked: Vec<f64>,
    vector_exact: Vec<f64>,
}

/// Times `queries` queries of each kind against a store of `size` memories.
async fn time_queries(
    memory: &MemoryStore,
    index: &SemanticIndex,
    queries: usize,
    rng: &mut fastrand::Rng,
    size: usize,
) -> Result<Timings, String> {
    let opts = &RecallOptions::top(10);
    let mut t = Timings::default();
    let ms = |started: Instant| started.elapsed().as_secs_f64() * 1000.0;
    let recall = |q: String, vector: Option<Vec<f32>>| async move {
        let neighbours = vector.map(|vector| PreEmbedded { index, vector });
        let started = Instant::now();
        let (found, _) = memory
            .recall(&q, opts, neighbours.as_ref().map(|n| n as _))
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>((found, ms(started)))
    };
    for _ in 0..queries {
        let q = sentence(rng);
        let v = unit_vector(&q);
        let started = Instant::now();
        index.rank_vector(&v, 20).await.map_err(|e| e.to_string())?;
        t.vector_ranked.push(ms(started));
        let started = Instant::now();
        index
            .search_vector(&v, 20)
            .await
            .map_err(|e| e.to_string())?;
        t.vector_exact.push(ms(started));
        t.hybrid.push(recall(q.clone(), Some(v.clone())).await?.1);
        t.bm25.push(recall(q.clone(), None).await?.1);
        let (found, took) = recall(format!("{q} today"), Some(v)).await?;
        t.dated.push(took);
        if !found.iter().any(|r| r.dated_rank.is_some()) {
            return Err(format!("{q:?} today should find memories from today"));
        }
        let q = paraphrase(rng);
        let v = unit_vector(&q);
        let (found, took) = recall(q.clone(), Some(v)).await?;
        t.paraphrased.push(took);
        if found.iter().any(|r| r.bm25_rank.is_some()) || found.len() < opts.k.min(size) {
            return Err(format!("paraphrase {q:?} should be found by vectors alone"));
        }
    }
    for times in [
        &mut t.hybrid,
        &mut t.bm25,
        &mut t.paraphrased,
        &mut t.dated,
        &mut t.vector_ranked,
        &mut t.vector_exact,
    ] {
        times.sort_by(f64::total_cmp);
    }
    Ok(t)
}

/// Vector search with a query vector made beforehand (query embedding is timed separately).
struct PreEmbedded<'a> {
    index: &'a SemanticIndex,
    vector: Vec<f32>,
}

#[async_trait::async_trait]
impl echo_memory::Neighbours for PreEmbedded<'_> {
    async fn similar(
        &self,
        _text: &str,
        k: usize,
    ) -> Result<Vec<(String, f32)>, echo_memory::NeighboursError> {
        Ok(self.index.search_vector(&self.vector, k).await?)
    }

    async fn ranked(
        &self,
        _text: &str,
        k: usize,
    ) -> Result<Vec<String>, echo_memory::NeighboursError> {
        Ok(self.index.rank_vector(&self.vector, k).await?)
    }
}

/// Median time to embed one query with `embedder`, milliseconds.
pub async fn query_embedding_ms(embedder: &dyn Embedder, queries: usize) -> Result<f64, String> {
    let mut rng = fastrand::Rng::with_seed(11);
    let mut times = Vec::new();
    for _ in 0..queries.max(1) {
        let q = sentence(&mut rng);
        let started = Instant::now();
        embedder.embed(&[q]).await.map_err(|e| e.to_string())?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    Ok(percentile(&times, 0.5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_small_run_measures_every_path() {
        let reports = memory_scale(&[300], 5).await.expect("bench");
        let [report] = reports.as_slice() else {
            panic!("one size asked, got {reports:?}");
        };
        assert_eq!(report.memories, 300);
        for (name, value) in [
            ("writes/s", report.writes_per_sec),
            ("vectors/s", report.vectors_per_sec),
            ("hybrid p50", report.recall_p50_ms),
            ("paraphrase p50", report.recall_paraphrase_p50_ms),
            ("dated p50", report.recall_dated_p50_ms),
            ("bm25 p50", report.bm25_p50_ms),
            ("vector p50", report.vector_k20_p50_ms),
        ] {
            assert!(value > 0.0, "{name} = {value}");
        }
        // The synthetic query words are disjoint from the memories' (else the paraphrase
        // figure would time the ordinary path).
        assert!(OTHER_WORDS.iter().all(|w| !WORDS.contains(w)));
    }
}
