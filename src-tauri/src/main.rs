//! The `echo-desk` binary: logging, the configuration, then the app (`echo_desk_shell::run`).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use echo_agent::{Config, Overrides, ProcessEnv};
use std::process::ExitCode;

fn main() -> ExitCode {
    echo_agent::crash::harden("echo-desk");
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
    // Before the app starts any thread (candle reads the count once, from the environment).
    if let Some(threads) = config.llm.threads
        && let Err(e) = echo_agent::threads::set(threads)
    {
        eprintln!("echo-desk: llm.threads ({threads}) not applied: {e}");
    }
    match echo_desk_shell::run(config, started) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo-desk: {e:#}");
            ExitCode::FAILURE
        }
    }
}
