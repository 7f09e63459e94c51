//! `echod provider show|set|test`: the model provider from a terminal, with the API key read
//! from stdin into the OS keychain (never from a flag, which would land in shell history).

use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::ProviderKind;
use echo_agent::wire::{KeySource, ProviderUpdate, ProviderView};
use std::io::BufRead;

/// `echod provider …`.
#[derive(Debug, Subcommand)]
pub enum ProviderCommand {
    /// The provider in force and where its key comes from.
    Show {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change and save the provider (unset flags keep their value); applies to the next turn.
    Set {
        /// `openai`, `anthropic`, `ollama` or `local`.
        #[arg(long)]
        kind: Option<String>,
        /// Server base URL.
        #[arg(long)]
        base_url: Option<String>,
        /// Main model.
        #[arg(long)]
        model: Option<String>,
        /// Fallback models, comma-separated (`""` for none).
        #[arg(long)]
        fallback_models: Option<String>,
        /// Read the API key for this server from stdin (one line) into the OS keychain.
        #[arg(long, conflicts_with = "clear_key")]
        key_stdin: bool,
        /// Remove this server's key from the keychain.
        #[arg(long)]
        clear_key: bool,
    },
    /// Send one tiny request with the provider in force and report what happened.
    Test {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `provider` command; an unreachable or refusing server makes `test` fail.
pub async fn run(api: &Api, command: ProviderCommand) -> anyhow::Result<bool> {
    match command {
        ProviderCommand::Show { json } => {
            let view = api.provider().await;
            if json {
                crate::print::json(&view)?;
            } else {
                show(&view);
            }
            Ok(true)
        }
        ProviderCommand::Set {
            kind,
            base_url,
            model,
            fallback_models,
            key_stdin,
            clear_key,
        } => {
            let mut settings = api.provider().await.settings;
            if let Some(kind) = kind {
                settings.kind = ProviderKind::parse(&kind).ok_or_else(|| {
                    anyhow::anyhow!("--kind: {kind:?} is not openai, anthropic, ollama or local")
                })?;
            }
            if let Some(url) = base_url {
                settings.base_url = url;
            }
            if let Some(model) = model {
                settings.model = model;
            }
            if let Some(list) = fallback_models {
                settings.fallback_models = list
                    .split(',')
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(String::from)
                    .collect();
            }
            let api_key = if key_stdin {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                Some(line.trim().to_string())
            } else {
                None
            };
            let view = api
                .update_provider(ProviderUpdate {
                    settings,
                    api_key,
                    clear_api_key: Some(clear_key),
                })
                .await?;
            show(&view);
            Ok(true)
        }
        ProviderCommand::Test { json } => {
            let settings = api.provider().await.settings;
            let report = api
                .test_provider(ProviderUpdate {
                    settings,
                    api_key: None,
                    clear_api_key: None,
                })
                .await?;
            if json {
                crate::print::json(&report)?;
            } else if report.ok {
                println!("ok: {}", report.message);
            } else {
                let code = report.code.map_or("unknown", |c| c.as_str());
                println!("failed ({code}): {}", report.message);
            }
            Ok(report.ok)
        }
    }
}

fn show(view: &ProviderView) {
    let s = &view.settings;
    println!("kind      {}", s.kind.as_str());
    println!("base url  {}", s.base_url);
    println!("model     {}", s.model);
    if !s.fallback_models.is_empty() {
        println!("fallbacks {}", s.fallback_models.join(", "));
    }
    let key = match view.key_source {
        KeySource::Environment => "from ECHO_LLM_API_KEY",
        KeySource::Keychain => "in the keychain",
        KeySource::None => "none",
    };
    println!("api key   {key}");
    println!("keychain  {}", view.keychain);
    if !view.env_overrides.is_empty() {
        println!("overridden by {}", view.env_overrides.join(", "));
    }
}
