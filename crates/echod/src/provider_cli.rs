//! `echod provider show|set|test`: the model provider from a terminal, with the API key read
//! from stdin into the OS keychain (never from a flag, which would land in shell history).

use crate::cli::Vocab;
use crate::print::{self, Text};
use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::{
    GetProvider, KeySource, ProviderKind, ProviderUpdate, ProviderView, TestProvider,
    UpdateProvider,
};
use std::io::{BufRead, Write};

const KIND: Vocab<ProviderKind> = Vocab {
    what: "provider kind",
    names: ProviderKind::names(),
    parse: |word| ProviderKind::parse(&word.to_ascii_lowercase()),
};

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
        /// The server's protocol (any letter case).
        #[arg(long, value_parser = KIND)]
        kind: Option<ProviderKind>,
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
            print::call(api, GetProvider {}, json).await?;
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
            let mut settings = api.call(GetProvider {}).await?.settings;
            settings.kind = kind.unwrap_or(settings.kind);
            settings.base_url = base_url.unwrap_or(settings.base_url);
            settings.model = model.unwrap_or(settings.model);
            if let Some(list) = fallback_models {
                settings.fallback_models = list
                    .split(',')
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(String::from)
                    .collect();
            }
            let api_key = key_stdin.then(read_key).transpose()?;
            let update = ProviderUpdate {
                settings,
                api_key,
                clear_api_key: Some(clear_key),
            };
            print::call(api, UpdateProvider(update), false).await?;
            Ok(true)
        }
        ProviderCommand::Test { json } => {
            let settings = api.call(GetProvider {}).await?.settings;
            let update = ProviderUpdate {
                settings,
                api_key: None,
                clear_api_key: None,
            };
            let report = api.call(TestProvider(update)).await?;
            if json {
                print::json(&report)?;
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

/// One line from stdin: the API key, never echoed or logged.
pub(crate) fn read_key() -> std::io::Result<String> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim().to_string())
}

impl Text for ProviderView {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let s = &self.settings;
        writeln!(out, "kind      {}", s.kind.as_str())?;
        writeln!(out, "base url  {}", s.base_url)?;
        writeln!(out, "model     {}", s.model)?;
        if !s.fallback_models.is_empty() {
            writeln!(out, "fallbacks {}", s.fallback_models.join(", "))?;
        }
        let key = match self.key_source {
            KeySource::Environment => "from ECHO_LLM_API_KEY",
            KeySource::Keychain => "in the keychain",
            KeySource::None => "none",
        };
        writeln!(out, "api key   {key}")?;
        writeln!(out, "keychain  {}", self.keychain)?;
        if !self.env_overrides.is_empty() {
            writeln!(out, "overridden by {}", self.env_overrides.join(", "))?;
        }
        Ok(())
    }
}
