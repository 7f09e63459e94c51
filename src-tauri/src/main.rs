//! The `echo-desk` binary: logging, the configuration, then the app (`echo_desk_shell::run`).
//! Started under the name `echod` (the installed package's `/usr/bin/echod` does that), it is
//! `echod` instead: the package carries one engine binary, not two copies of it.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use echo_agent::{Config, Overrides, ProcessEnv};
use echo_desk_shell::Launch;
use std::process::ExitCode;

const USAGE: &str = "Usage: echo-desk [--quick-ask]

Echo Desk, the desktop app. A second start on the same data directory hands its request to
the app already running there.

Options:
  --quick-ask   open the quick-ask window (in the app already running, if there is one)
  -h, --help    print this help
  -V, --version print the version

Data directory: $ECHO_DESK_HOME, else the platform's (~/.local/share/echo-desk).
Started as `echod`, this program is echod (`echod --help`).";

fn main() -> ExitCode {
    // As `echod`, or as the built-in model's worker process (which echod's main runs).
    if invoked_as_echod() || echo_agent::local_worker::is_worker() {
        return echod::main();
    }
    let mut launch = Launch::Show;
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("--quick-ask") => launch = Launch::QuickAsk,
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            Some("-V" | "--version") => {
                println!("echo-desk {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            // Launchers and WebDriver may pass arguments of their own: said, not fatal.
            _ => eprintln!("echo-desk: ignoring the argument {arg:?} (echo-desk --help)"),
        }
    }
    echo_agent::crash::harden("echo-desk");
    echo_agent::allocator::return_freed_memory();
    let started = std::time::Instant::now();
    let filter = tracing_subscriber::EnvFilter::try_from_env("ECHO_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let config = match Config::load(&Overrides::default(), &ProcessEnv) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("echo-desk: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(threads) = config.llm.threads {
        echo_agent::threads::set(threads);
    }
    // The built-in model runs in a child process of this program (see `echod::main`), so an
    // abort inside llama.cpp ends one answer, not the app.
    match std::env::current_exe() {
        Ok(exe) => echo_agent::local_worker::run_workers_in(exe),
        Err(e) => tracing::warn!("the built-in model runs in this process: {e}"),
    }
    match echo_desk_shell::run(config, started, launch) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo-desk: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the program was started under the name `echod` (`exec -a echod`, or a link).
fn invoked_as_echod() -> bool {
    std::env::args_os()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(std::path::Path::file_name)
        .is_some_and(|name| name == "echod")
}
