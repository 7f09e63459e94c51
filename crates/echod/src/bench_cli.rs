//! `echod bench …` carried out (docs/benchmarks.md): part of the standalone `echod` binary
//! only, so the desktop app, which the package installs, links no benchmark code.

use echo_agent::Api;
use echod::BenchCommand;

/// Runs a benchmark that needs no engine (the built-in model's, which runs the file alone);
/// `None` for the others.
pub(crate) async fn run_alone(
    command: &BenchCommand,
    model: &Option<String>,
) -> Option<anyhow::Result<()>> {
    match command {
        BenchCommand::LocalModel {
            runs,
            max_tokens,
            json,
        } => Some(crate::bench::local_model(model.clone(), *runs, *max_tokens, *json).await),
        _ => None,
    }
}

/// Runs a benchmark on the opened engine.
pub(crate) async fn run(api: &Api, command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Locomo {
            files,
            embedder,
            context_turns,
            undated,
        } => crate::bench::locomo(api, files, &embedder, context_turns, !undated).await,
        BenchCommand::Memory { sizes, queries } => crate::bench::memory(api, &sizes, queries).await,
        BenchCommand::Embed { sentences, batch } => {
            let dir = echo_bench::local_embedder_dir(api.config()).map_err(anyhow::Error::msg)?;
            let report = echo_bench::embed::throughput(&dir, sentences, batch)
                .await
                .map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        BenchCommand::Automations {
            dir,
            singles,
            burst,
            rules,
            files,
            idle_secs,
            settle_ms,
        } => {
            let plan = crate::bench_automations::Plan {
                singles,
                burst,
                rules,
                files,
                idle_secs,
                settle_ms,
            };
            crate::bench_automations::run(api, &dir, &plan).await
        }
        // Run before the engine opens (`run_alone`); never reaches here.
        BenchCommand::LocalModel { .. } => {
            anyhow::bail!("the built-in model's benchmark runs without the engine")
        }
        BenchCommand::Overhead { turns, per_session } => {
            crate::bench::overhead(api, turns, per_session).await
        }
        BenchCommand::Research { turns } => crate::bench_research::research(api, turns).await,
        BenchCommand::Context {
            messages,
            memories,
            turns,
        } => crate::bench::context(api, messages, memories, turns).await,
    }
}
