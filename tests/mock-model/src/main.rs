//! `mock-model`: the scripted mock model server for tests (docs/mock-model.md). Reads the
//! script, binds a loopback port, prints `mock-model listening on http://ADDR` and serves
//! until SIGTERM/SIGINT, or until stdin closes with `--exit-on-stdin-eof`.

use echo_mock_model::server;

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;
use tokio::sync::oneshot;

/// Scripted mock model server speaking the OpenAI and Anthropic protocols.
#[derive(Debug, Parser)]
#[command(name = "mock-model")]
struct Cli {
    /// The script: JSON `{"steps": [...], "default": {...}}`.
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// Port to listen on; 0 or absent picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Loopback address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Exit when standard input reaches end of file (the parent test has gone).
    #[arg(long)]
    exit_on_stdin_eof: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if !cli.host.is_loopback() {
        bail!("--host must be a loopback address, not {}", cli.host);
    }
    let text = std::fs::read_to_string(&cli.script)
        .with_context(|| format!("reading the script {}", cli.script.display()))?;
    let script = server::Script::from_json_str(&text)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("invalid script {}", cli.script.display()))?;

    let listener = tokio::net::TcpListener::bind((cli.host, cli.port))
        .await
        .with_context(|| format!("binding {}:{}", cli.host, cli.port))?;
    let address = listener.local_addr()?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "mock-model listening on http://{address}")?;
    stdout.flush()?;
    drop(stdout);

    let exit_on_eof = cli.exit_on_stdin_eof;
    let stdin_closed = async move {
        if exit_on_eof {
            let _ = stdin_eof().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        served = axum::serve(listener, server::router(script)) => served.context("serving")?,
        () = stdin_closed => {}
        () = terminated() => {}
    }
    Ok(())
}

/// Resolves when stdin reaches end of file (or fails). A plain thread reads it, so a read
/// still pending at exit does not hold the runtime up.
fn stdin_eof() -> oneshot::Receiver<()> {
    let (closed, receiver) = oneshot::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 1024];
        let mut stdin = std::io::stdin().lock();
        while matches!(stdin.read(&mut buffer), Ok(n) if n > 0) {}
        let _ = closed.send(());
    });
    receiver
}

/// Resolves on SIGINT, or SIGTERM on Unix; a signal that cannot be watched never comes.
async fn terminated() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
