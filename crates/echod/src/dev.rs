//! The development tools' seam: `echod replay` and `echod bench …` are parsed here, with
//! every other command, but carried out by the standalone `echod` binary (`src/main.rs` and
//! the modules it declares), which hands [`DevTools`] to [`crate::main_with`]. The desktop
//! app's binary, which the package installs under both names, has none: it links neither the
//! benchmarks nor the scripted mock model a replay plays its recording from.

use async_trait::async_trait;
use clap::Subcommand;
use echo_agent::Api;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The benchmarks (docs/benchmarks.md).
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Memory at scale: write throughput, hybrid recall latency, sweep time (use a release build).
    Memory {
        /// Store sizes, comma-separated.
        #[arg(long, default_value = "1000,10000,100000", value_delimiter = ',')]
        sizes: Vec<usize>,
        /// Queries per size.
        #[arg(long, default_value_t = 200)]
        queries: usize,
    },
    /// The local embedder's throughput: short sentences in batches, beside the same sentences
    /// one at a time (use a release build).
    Embed {
        /// Sentences embedded each way.
        #[arg(long, default_value_t = 1000)]
        sentences: usize,
        /// Inputs per forward pass of the batched run.
        #[arg(long, default_value_t = 32)]
        batch: usize,
    },
    /// LoCoMo retrieval recall over the evidence turns of every question (categories 1–4).
    Locomo {
        /// LoCoMo-format JSON files.
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// `local` (all-MiniLM-L6-v2) or `none` (BM25 only).
        #[arg(long, default_value = "local")]
        embedder: String,
        /// Neighbouring turns on each side indexed as search context.
        #[arg(long, default_value_t = 2)]
        context_turns: usize,
        /// Write the turns without the time their session took place (as if all were said
        /// now), so a date in a question finds nothing: recall as it was before dates counted.
        #[arg(long)]
        undated: bool,
    },
    /// Automations: event → run start for single files and a burst, idle CPU and memory while
    /// watching (use a fresh --home; `scripts/bench-automations.sh`).
    Automations {
        /// Where the watched folders are made.
        #[arg(long)]
        dir: PathBuf,
        /// Files dropped one at a time.
        #[arg(long, default_value_t = 30)]
        singles: usize,
        /// Files in the burst.
        #[arg(long, default_value_t = 1000)]
        burst: usize,
        /// Idle watch rules.
        #[arg(long, default_value_t = 10)]
        rules: usize,
        /// Files under the idle rules, in all.
        #[arg(long, default_value_t = 10_000)]
        files: usize,
        /// Seconds of each idle measurement.
        #[arg(long, default_value_t = 20)]
        idle_secs: u64,
        /// The rules' settle window, in milliseconds.
        #[arg(long, default_value_t = 200)]
        settle_ms: u64,
    },
    /// The built-in model's speed on one GGUF file: prompt and generation tokens/s, time to
    /// first token with and without the prompt cache, a forced call's tokens/s, load time,
    /// peak RSS (use a release build; `scripts/bench-local.sh` compares it with llama-bench).
    /// The file is the global `--model FILE`, else `ECHO_LOCAL_MODEL`.
    LocalModel {
        /// Measured runs.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Most tokens each answer generates.
        #[arg(long, default_value_t = 128)]
        max_tokens: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Per-turn time spent in Echo Desk itself, excluding the model server (use a fresh --home).
    Overhead {
        /// Number of turns.
        #[arg(long, default_value_t = 200)]
        turns: usize,
        /// Turns per session (history grows within a session).
        #[arg(long, default_value_t = 20)]
        per_session: usize,
    },
    /// What a research turn costs in Echo Desk itself, by node, beside a quick turn (use a fresh
    /// --home with a search service configured; scripts/bench-research.sh).
    Research {
        /// Number of research turns, each after a quick turn.
        #[arg(long, default_value_t = 20)]
        turns: usize,
    },
    /// Context assembly time (the `context` span of each turn) in a long session with many
    /// memories; use a fresh --home whose config keeps compression off (scripts/bench-context.sh).
    Context {
        /// Messages in the session before measuring (two per turn).
        #[arg(long, default_value_t = 1000)]
        messages: usize,
        /// Long-term memories in the store.
        #[arg(long, default_value_t = 10_000)]
        memories: usize,
        /// Measured turns.
        #[arg(long, default_value_t = 100)]
        turns: usize,
    },
}

/// What the standalone `echod` binary adds to the commands.
#[async_trait]
pub trait DevTools: Sync {
    /// `echod replay FILE`: runs a case through a fresh engine in a scratch directory.
    async fn replay(&self, file: &Path, json: bool) -> anyhow::Result<ExitCode>;
    /// A benchmark that runs without the engine (the built-in model's); `None` for the others.
    async fn bench_alone(
        &self,
        command: &BenchCommand,
        model: &Option<String>,
    ) -> Option<anyhow::Result<()>>;
    /// A benchmark on the opened engine.
    async fn bench(&self, api: &Api, command: BenchCommand) -> anyhow::Result<()>;
}

/// The answer to a development command in a binary without the tools (the installed app).
pub(crate) fn missing(command: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "`echod {command}` is a development tool: it is in the `echod` binary a source build \
         makes (cargo build -p echod), not in the installed app"
    )
}
