//! "Ask before remembering" on the terminal: `echod memory settings
//! [--ask-before-remembering on|off]`, `echod memory proposals` (what memory work found and
//! waits for a yes), `echod memory keep ID` and `echod memory discard ID`.

use crate::print::{self, Text};
use echo_agent::Api;
use echo_agent::wire::{
    GetMemorySettings, MemoryDiscardProposal, MemoryKeepProposal, MemoryProposal, MemoryProposals,
    MemorySettings, UpdateMemorySettings,
};
use std::io::{self, Write};

/// On or off.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

/// `memory settings`: shows them, or saves the one given.
pub async fn settings(api: &Api, ask: Option<Switch>, json: bool) -> anyhow::Result<()> {
    match ask {
        None => print::call(api, GetMemorySettings {}, json).await,
        Some(switch) => {
            let ask_before_remembering = matches!(switch, Switch::On);
            let request = UpdateMemorySettings {
                ask_before_remembering,
            };
            print::call(api, request, json).await
        }
    }
}

/// `memory proposals`.
pub async fn list(api: &Api, json: bool) -> anyhow::Result<()> {
    print::call(api, MemoryProposals {}, json).await
}

/// `memory keep ID`: written through the write path.
pub async fn keep(api: &Api, id: String) -> anyhow::Result<()> {
    print::call(api, MemoryKeepProposal { id }, false).await
}

/// `memory discard ID`.
pub async fn discard(api: &Api, id: String) -> anyhow::Result<()> {
    api.call(MemoryDiscardProposal { id: id.clone() }).await?;
    println!("discarded {id}");
    Ok(())
}

impl Text for MemorySettings {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let state = if self.ask_before_remembering {
            "on: what memory work finds waits for keep or discard (echod memory proposals)"
        } else {
            "off: what memory work finds is remembered at once"
        };
        writeln!(out, "ask before remembering: {state}")
    }
}

impl Text for Vec<MemoryProposal> {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.is_empty() {
            return writeln!(out, "no memory waits for a yes");
        }
        for p in self {
            writeln!(out, "{}  {}  [{}, {}]", p.id, p.content, p.source, p.scope)?;
        }
        Ok(())
    }
}
