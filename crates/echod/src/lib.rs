//! `echod`: Echo Desk without a window. A thin front end over `echo_agent::Api`: it parses
//! arguments, sends one operation's wire request through `Api::call`, prints the answer
//! (`print.rs`: `--json` as serde gives it, else the answer type's `Text`), and maps errors
//! to exit codes in one place. One file per room of commands: `cli.rs` (parsing, `ask`,
//! `chat`, dispatch), `sessions_cli.rs`, `memory_cli.rs`, `trace_cli.rs`, `tools_cli.rs`,
//! `automations_cli.rs`, `provider_cli.rs`, `model_cli.rs`.
//!
//! A library with one entry point, [`main`], so that two binaries run it: `echod` itself
//! (`src/main.rs`), and the desktop app's `echo-desk` when it is started under the name
//! `echod` (the installed package ships one engine binary under both names).
//!
//! # serve
//!
//! `echod serve` (`serve.rs`) puts `Api` on loopback HTTP with axum: one generic route per
//! operation of the table, a bearer token (compared in constant time; the serve-token file's,
//! or the per-process one a page gets for the one-time `#pair=` code of the printed address, so
//! no lasting token reaches a browser), Host/Origin checks, SSE turns, `/api/openapi.json`, and
//! the web UI (`ui/dist` built into the binary with rust-embed; `--ui DIR` for another).
//! `listen.rs` accepts its connections with hyper directly: at most 512 at once, 10 s to send a
//! request head.
#![deny(missing_docs)]

mod access;
mod automations_cli;
mod cli;
mod dev;
mod devices_cli;
mod import_cli;
mod listen;
mod memory_cli;
mod model_cli;
mod print;
mod projects_cli;
mod proposals_cli;
mod provider_cli;
mod search_cli;
mod serve;
mod sessions_cli;
mod tls;
mod tools_cli;
mod trace_cli;

pub use dev::{BenchCommand, DevTools};
pub use print::json as print_json;
pub use serve::stop_signal;

use clap::Parser;
use std::process::ExitCode;

/// Runs `echod` on the process's arguments, without the development tools (the desktop app
/// started as `echod`); the exit code says how it went.
pub fn main() -> ExitCode {
    main_with(None)
}

/// Runs `echod` on the process's arguments with `dev` carrying out `replay` and `bench` (the
/// standalone `echod` binary); without it those commands are refused with a clear error.
pub fn main_with(dev: Option<&dyn DevTools>) -> ExitCode {
    echo_agent::crash::harden("echod");
    let log = || {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_env("ECHO_LOG")
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
            )
            .init()
    };
    // Started by this same program (echod or the app) to run the built-in model.
    if echo_agent::local_worker::is_worker() {
        log();
        return echo_agent::local_worker::main();
    }
    echo_agent::allocator::return_freed_memory();
    let cli = cli::Cli::parse();
    log();
    // The built-in model runs in a child process of this program, so an abort inside
    // llama.cpp ends one answer, not echod.
    match std::env::current_exe() {
        Ok(exe) => echo_agent::local_worker::run_workers_in(exe),
        Err(e) => tracing::warn!("the built-in model runs in this process: {e}"),
    }
    let config = cli.config();
    if let Ok(config) = &config
        && let Some(threads) = config.llm.threads
    {
        echo_agent::threads::set(threads);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("echod: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(cli::run(cli, config, dev));
    // A tool stuck in blocking I/O must not keep the process alive after the turn ended.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("echod: {}", one_line(&e));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause.to_string().replace('\n', " ");
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// Every command `echod` parses, as its words (`memory list`, `ask`): what the parity check
/// compares with the operation table.
pub fn command_paths() -> Vec<String> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    for command in cli::Cli::command().get_subcommands() {
        let name = command.get_name();
        let mut subs = command.get_subcommands().peekable();
        if subs.peek().is_none() {
            out.push(name.to_string());
        }
        out.extend(subs.map(|sub| format!("{name} {}", sub.get_name())));
    }
    out
}
