//! The standalone `echod` binary: the library's commands ([`echod::main_with`]) plus the
//! development tools, `echod replay` and `echod bench …`, which live in this binary's own
//! modules so that the desktop app (which the package installs as `echo-desk` and `echod`)
//! links neither the benchmarks nor the scripted mock model.

mod bench;
mod bench_automations;
mod bench_cli;
mod bench_research;
mod replay_cli;

use async_trait::async_trait;
use echo_agent::Api;
use echod::{BenchCommand, DevTools};
use std::path::Path;
use std::process::ExitCode;

/// The development tools of this binary.
struct Tools;

#[async_trait]
impl DevTools for Tools {
    async fn replay(&self, file: &Path, json: bool) -> anyhow::Result<ExitCode> {
        replay_cli::replay(file, json).await
    }
    async fn bench_alone(
        &self,
        command: &BenchCommand,
        model: &Option<String>,
    ) -> Option<anyhow::Result<()>> {
        bench_cli::run_alone(command, model).await
    }
    async fn bench(&self, api: &Api, command: BenchCommand) -> anyhow::Result<()> {
        bench_cli::run(api, command).await
    }
}

fn main() -> ExitCode {
    echod::main_with(Some(&Tools))
}
