//! `mcp-test-server`: the test MCP server as its own process. Serves stdio by default; with
//! `--http ADDR` serves streamable HTTP at `http://ADDR/mcp` instead, printing the bound
//! address (`127.0.0.1:PORT`) as the first line on stdout. With `--exit-on-stdin-eof` the HTTP
//! server exits when its standard input closes (the parent test has gone). With
//! `--hang-on-list` (stdio) it never answers a request for its tools; with
//! `--describe-echo TEXT` (stdio) its `echo` tool is described by TEXT. With `--script FILE`
//! it is no MCP server at all but a scripted one that answers anything (see [`scripted`]).

use std::io::{BufRead, Write};
use std::net::SocketAddr;

use anyhow::{Context, bail};
use echo_mcp_test_server::{CrashMode, TestServer, serve_http};
use rmcp::ServiceExt;
use tokio::io::AsyncReadExt;

const USAGE: &str = "usage: mcp-test-server [--hang-on-list] [--describe-echo TEXT] | --http ADDR [--exit-on-stdin-eof] | --script FILE";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut http: Option<SocketAddr> = None;
    let mut exit_on_stdin_eof = false;
    let mut hang_on_list = false;
    let mut echo_description = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => {
                let value = args.next().context(USAGE)?;
                http = Some(
                    value
                        .parse()
                        .with_context(|| format!("bad address {value:?}"))?,
                );
            }
            "--exit-on-stdin-eof" => exit_on_stdin_eof = true,
            "--hang-on-list" => hang_on_list = true,
            "--describe-echo" => echo_description = Some(args.next().context(USAGE)?),
            "--script" => return scripted(&args.next().context(USAGE)?),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other:?}\n{USAGE}"),
        }
    }

    let Some(addr) = http else {
        let mut server = TestServer::new(CrashMode::ExitProcess);
        if hang_on_list {
            server = server.hanging_on_list();
        }
        if let Some(text) = echo_description {
            server = server.describing_echo(text);
        }
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .context("starting the stdio server")?;
        running.waiting().await.context("serving stdio")?;
        return Ok(());
    };

    if !addr.ip().is_loopback() {
        bail!("--http must be a loopback address, not {addr}");
    }
    let server = serve_http(addr, CrashMode::ExitProcess)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", server.addr())?;
    stdout.flush()?;
    drop(stdout);

    let stdin_closed = async move {
        if exit_on_stdin_eof {
            let mut stdin = tokio::io::stdin();
            let mut buf = [0u8; 256];
            while !matches!(stdin.read(&mut buf).await, Ok(0) | Err(_)) {}
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = stdin_closed => {}
    }
    server.stop().await;
    Ok(())
}

/// Answers the Nth request it reads on stdin with the Nth entry of the script in `path` (a
/// JSON array of arrays of lines): each line is written as it is, with `$ID` replaced by the
/// request's id, whatever it says. Notifications and answers from the client get nothing;
/// once the script is used up, requests get no answer until stdin closes. For tests of a
/// client facing a hostile or broken server.
fn scripted(path: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let script: Vec<Vec<String>> =
        serde_json::from_str(&text).with_context(|| format!("{path} is not a script"))?;
    let mut replies = script.into_iter();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        let (Some(id), Some(_)) = (message.get("id"), message.get("method")) else {
            continue;
        };
        let Some(reply) = replies.next() else {
            continue;
        };
        for line in reply {
            writeln!(out, "{}", line.replace("$ID", &id.to_string()))?;
        }
        out.flush()?;
    }
    Ok(())
}
