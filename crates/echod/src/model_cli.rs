//! `echod model list|fetch|use`: the built-in model's catalog from a terminal.

use crate::print::{self, Text};
use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::{Checksum, FetchLocalModel, ListLocalModels, LocalModels, UseLocalModel};
use std::io::Write;
use std::time::Duration;

/// `echod model …`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Recommended models, which are installed, and which is in use.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download a recommended model (checked against its SHA-256; an interrupted download
    /// resumes) and print its path.
    Fetch {
        /// Catalog id (see `echod model list`).
        #[arg(default_value = echo_local_default())]
        id: String,
    },
    /// Make the built-in model the provider, with a catalog model or a GGUF file.
    Use {
        /// Catalog id or path to a `.gguf` file.
        model: String,
    },
}

fn echo_local_default() -> &'static str {
    echo_agent::DEFAULT_LOCAL_MODEL
}

/// Runs one `model` command; a failed download makes it fail.
pub async fn run(api: &Api, command: ModelCommand) -> anyhow::Result<bool> {
    match command {
        ModelCommand::List { json } => {
            print::call(api, ListLocalModels {}, json).await?;
            Ok(true)
        }
        ModelCommand::Fetch { id } => fetch(api, &id).await,
        ModelCommand::Use { model } => {
            let view = api.call(UseLocalModel { model }).await?;
            println!("provider: built-in model {}", view.settings.model);
            Ok(true)
        }
    }
}

impl Text for LocalModels {
    fn text(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        for m in &self.models {
            let state = match (&m.path, m.in_use) {
                (Some(_), true) => "in use",
                (Some(_), false) => "installed",
                (None, _) => "-",
            };
            let checksum = match m.checksum {
                Checksum::Pinned => "sha256 pinned",
                Checksum::PublishedByHost => "sha256 from host",
            };
            writeln!(
                out,
                "{:<14} {:>8}  {:<10} {:<16} {} — {}",
                m.id,
                megabytes(m.size_bytes),
                state,
                checksum,
                m.name,
                m.note
            )?;
        }
        writeln!(out, "models directory: {}", self.dir)?;
        writeln!(
            out,
            "threads: {} (llm.threads; the physical cores when unset)",
            self.threads
        )
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

async fn fetch(api: &Api, id: &str) -> anyhow::Result<bool> {
    api.call(FetchLocalModel { id: id.into() }).await?;
    let mut stderr = std::io::stderr();
    loop {
        let models = api.call(ListLocalModels {}).await?;
        let Some(entry) = models.models.iter().find(|m| m.id == id) else {
            anyhow::bail!("{id} left the catalog");
        };
        if let Some(d) = &entry.download {
            let total = d.total.unwrap_or(entry.size_bytes).max(1);
            let _ = write!(
                stderr,
                "\rdownloading {}: {:>3}% ({} of {})",
                entry.name,
                d.done.saturating_mul(100) / total,
                megabytes(d.done),
                megabytes(total)
            );
            let _ = stderr.flush();
            if d.finished {
                let _ = writeln!(stderr);
                return Ok(match (&d.error, &entry.path) {
                    (None, Some(path)) => {
                        println!("{path}");
                        true
                    }
                    (Some(e), _) => {
                        eprintln!("{e}");
                        false
                    }
                    (None, None) => {
                        eprintln!("the download ended but the model is not in {}", models.dir);
                        false
                    }
                });
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
