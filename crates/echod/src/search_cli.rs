//! `echod search show|set|test`: the web search service from a terminal (the service behind
//! `web_search` and research), with an API key read from stdin into the OS keychain (never
//! from a flag, which would land in shell history).

use crate::cli::Vocab;
use crate::print::{self, Text};
use crate::provider_cli::read_key;
use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::{
    GetSearch, KeySource, SearchKind, SearchUpdate, SearchView, TestSearch, UpdateSearch,
};
use std::io::Write;

const KIND: Vocab<SearchKind> = Vocab {
    what: "search service",
    names: SearchKind::names(),
    parse: |word| SearchKind::parse(&word.to_ascii_lowercase()),
};

/// `echod search …`.
#[derive(Debug, Subcommand)]
pub enum SearchCommand {
    /// The web search service in force, where its key comes from, and whether it works.
    Show {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change and save the service (unset flags keep their value); applies to the next turn.
    Set {
        /// The service: none, searxng, brave or tavily (any letter case).
        #[arg(long, value_parser = KIND)]
        kind: Option<SearchKind>,
        /// Its URL (a SearXNG instance; a proxy for Brave or Tavily); `""` for the service's
        /// own.
        #[arg(long)]
        url: Option<String>,
        /// Most results one search returns (1–20).
        #[arg(long)]
        max_results: Option<u32>,
        /// Read the service's API key from stdin (one line) into the OS keychain.
        #[arg(long, conflicts_with = "clear_key")]
        key_stdin: bool,
        /// Remove the service's key from the keychain.
        #[arg(long)]
        clear_key: bool,
    },
    /// Send one search with the service in force and report what came back.
    Test {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs one `search` command; a service that does not answer makes `test` fail.
pub async fn run(api: &Api, command: SearchCommand) -> anyhow::Result<bool> {
    match command {
        SearchCommand::Show { json } => {
            print::call(api, GetSearch {}, json).await?;
            Ok(true)
        }
        SearchCommand::Set {
            kind,
            url,
            max_results,
            key_stdin,
            clear_key,
        } => {
            let now = api.call(GetSearch {}).await?;
            let update = SearchUpdate {
                kind: kind.unwrap_or(now.kind),
                url: url.or(now.url),
                max_results,
                api_key: key_stdin.then(read_key).transpose()?,
                clear_api_key: Some(clear_key),
            };
            print::call(api, UpdateSearch(update), false).await?;
            Ok(true)
        }
        SearchCommand::Test { json } => {
            let now = api.call(GetSearch {}).await?;
            let update = SearchUpdate {
                kind: now.kind,
                url: now.url,
                max_results: Some(now.max_results),
                api_key: None,
                clear_api_key: None,
            };
            let report = api.call(TestSearch(update)).await?;
            if json {
                print::json(&report)?;
            } else if report.ok {
                println!("ok: {}", report.message);
            } else {
                println!("failed: {}", report.message);
            }
            Ok(report.ok)
        }
    }
}

impl Text for SearchView {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "service     {}", self.kind.as_str())?;
        if let Some(url) = &self.service_url {
            writeln!(out, "url         {url}")?;
        }
        writeln!(out, "max results {}", self.max_results)?;
        if self.needs_key {
            let key = match self.key_source {
                KeySource::Environment => "from ECHO_SEARCH_API_KEY",
                KeySource::Keychain => "in the keychain",
                KeySource::None => "none",
            };
            writeln!(out, "api key     {key}")?;
            writeln!(out, "keychain    {}", self.keychain)?;
        }
        let state = match (&self.problem, self.available) {
            (Some(problem), _) => format!("unavailable: {problem}"),
            (None, true) => "available to web_search and research".to_string(),
            (None, false) => "off: no web_search tool and no research (echod search set \
                              --kind searxng --url URL)"
                .to_string(),
        };
        writeln!(out, "state       {state}")?;
        if !self.env_overrides.is_empty() {
            writeln!(out, "set by      {}", self.env_overrides.join(", "))?;
        }
        Ok(())
    }
}
