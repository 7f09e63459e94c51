//! `echod replay FILE`: a case exported by `trace export` run again through a fresh engine,
//! the model's replies played from the recording by the scripted mock model in process.
//! Part of the standalone `echod` binary only, so the desktop app links no mock model.

use anyhow::Context;
use echo_agent::replay;
use echo_agent::wire::ReplayCase;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `echod replay FILE`: plays the case's recorded replies from a local mock model on
/// loopback and runs the turn in a scratch data directory; exit 1 on divergence.
pub async fn replay(file: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let case: ReplayCase = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a replay case", file.display()))?;
    let script =
        echo_mock_model::server::Script::from_json_str(&replay::mock_script(&case).to_string())
            .map_err(anyhow::Error::msg)
            .context("the case's replies do not make a mock script")?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .context("cannot bind a loopback port for the replay model")?;
    let address = listener.local_addr()?;
    let server = tokio::spawn(async move {
        axum::serve(listener, echo_mock_model::server::router(script)).await
    });
    let home = tempfile::tempdir().context("cannot create a scratch data directory")?;
    let report = replay::replay(&case, &format!("http://{address}/v1"), home.path()).await;
    server.abort();
    let report = report?;

    if as_json {
        echod::print_json(&report)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "replayed turn {}: {} of {} recorded tool calls made",
            report.turn_id,
            report.replayed_calls.len(),
            report.recorded_calls
        )?;
        match &report.divergence {
            None => writeln!(out, "same trajectory and final text")?,
            Some(d) => writeln!(out, "DIVERGED: {d}")?,
        }
    }
    Ok(if report.divergence.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
