//! The local embedder's throughput (`echod bench embed`): short sentences, the length of
//! memory snippets, embedded in batches as the semantic index embeds its outbox, beside the
//! same sentences one at a time (the baseline of the same run).

use echo_memory::echo_embed::{Embedder, MiniLmEmbedder};
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// What `echod bench embed` prints.
#[derive(Debug, Serialize)]
pub struct EmbedReport {
    /// The model's id.
    pub model: String,
    /// Sentences embedded by each of the two ways.
    pub sentences: usize,
    /// Threads the machine offers.
    pub threads: usize,
    /// Loading the weights and tokenizer, in milliseconds.
    pub load_ms: f64,
    /// Inputs per forward pass of the batched run.
    pub batch_size: usize,
    /// Sentences per second in batches of `batch_size`.
    pub batched_per_second: f64,
    /// Sentences per second one at a time.
    pub one_at_a_time_per_second: f64,
    /// `batched_per_second / one_at_a_time_per_second`.
    pub batched_over_one: f64,
}

/// Embeds `n` sentences in batches of `batch`, then one at a time, with the model in `dir`
/// (one untimed batch first, to warm up).
pub async fn throughput(dir: &Path, n: usize, batch: usize) -> Result<EmbedReport, String> {
    let started = Instant::now();
    let model = MiniLmEmbedder::load(dir)
        .map_err(|e| e.to_string())?
        .with_batch_size(batch);
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let texts = sentences(n.max(1));
    let embed = |texts: &[String]| {
        let texts = texts.to_vec();
        let model = &model;
        async move { model.embed(&texts).await.map_err(|e| e.to_string()) }
    };
    embed(&texts[..batch.clamp(1, texts.len())]).await?;

    let started = Instant::now();
    for chunk in texts.chunks(batch.max(1)) {
        embed(chunk).await?;
    }
    let batched = texts.len() as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    for one in texts.chunks(1) {
        embed(one).await?;
    }
    let one_at_a_time = texts.len() as f64 / started.elapsed().as_secs_f64();
    Ok(EmbedReport {
        model: model.model_id().to_string(),
        sentences: texts.len(),
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        load_ms: round(load_ms, 1),
        batch_size: batch.max(1),
        batched_per_second: round(batched, 1),
        one_at_a_time_per_second: round(one_at_a_time, 1),
        batched_over_one: round(batched / one_at_a_time, 2),
    })
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// `n` distinct short sentences (7–12 words), the length of typical memory snippets.
pub fn sentences(n: usize) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentences_are_distinct_and_snippet_sized() {
        let all = sentences(500);
        let distinct: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(distinct.len(), 500);
        let long = all
            .iter()
            .find(|s| !(7..=12).contains(&s.split_whitespace().count()));
        assert_eq!(long, None);
    }
}
