//! `echod sessions …`, `echod history` and `echod data …`: conversations and the data
//! directory as a whole. Each command sends its operation's request through `Api::call`.

use crate::print;
use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::{
    CheckData, DeleteAllData, DeleteSession, History, LearnedMemories, ListSessions, MoveSession,
    RenameSession,
};
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Delete all your data for good: every conversation with its traces, every memory,
    /// automations and their runs, approval rules and decisions, and USER.md. Settings and
    /// keys stay. Nothing of it stays on disk. Asks first unless --yes.
    DeleteAll {
        /// Do not ask (needed when stdin is not a terminal).
        #[arg(long)]
        yes: bool,
    },
    /// Check the data directory: SQLite's integrity, nothing a crash left running or
    /// claimed, and the search indexes agreeing with SQLite. Exits 1 when something is wrong.
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, most recent first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rename a session.
    Rename {
        /// Current name.
        name: String,
        /// New name.
        new_name: String,
    },
    /// Move a conversation into a project (its next turns recall, work and file memories
    /// there), or out of any without --project.
    Move {
        /// Session name.
        name: String,
        /// The project's name.
        #[arg(long)]
        project: Option<String>,
    },
    /// Delete a session with its history, traces and captured model requests, and say what
    /// becomes of the memories learned in it (asked when not given and stdin is a terminal).
    Delete {
        /// Session name.
        name: String,
        /// keep, forget (restorable) or delete (for good) the memories learned in it.
        #[arg(long, value_parser = parse_learned)]
        memories: Option<LearnedMemories>,
    },
}

fn parse_learned(text: &str) -> Result<LearnedMemories, String> {
    LearnedMemories::parse(text)
        .ok_or_else(|| format!("expected one of {}", LearnedMemories::expected()))
}

/// Asks what becomes of the memories learned in a conversation being deleted.
fn ask_learned(name: &str) -> anyhow::Result<LearnedMemories> {
    use std::io::{BufRead, IsTerminal};
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "say what becomes of the memories learned in {name:?}: --memories {}",
            LearnedMemories::names().join("|")
        );
    }
    eprint!(
        "Delete {name:?}. The memories learned in it: keep, forget (restorable) or delete (for good)? "
    );
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    LearnedMemories::parse(&line.to_lowercase()).ok_or_else(|| {
        anyhow::anyhow!(
            "nothing deleted: {:?} is none of keep, forget, delete",
            line.trim()
        )
    })
}

/// Runs one `sessions` command.
pub async fn sessions(api: &Api, command: SessionsCommand) -> anyhow::Result<()> {
    match command {
        SessionsCommand::List { json } => print::call(api, ListSessions {}, json).await,
        SessionsCommand::Rename { name, new_name } => {
            let request = RenameSession {
                name: name.clone(),
                new_name,
            };
            let renamed = api.call(request).await?;
            println!("renamed {name} to {}", renamed.name);
            Ok(())
        }
        SessionsCommand::Move { name, project } => {
            let moved = api.call(MoveSession { name, project }).await?;
            match moved.project {
                Some(p) => println!("{} is in project {p}", moved.name),
                None => println!("{} is in no project", moved.name),
            }
            Ok(())
        }
        SessionsCommand::Delete { name, memories } => {
            let memories = match memories {
                Some(m) => m,
                None => ask_learned(&name)?,
            };
            let request = DeleteSession {
                name: name.clone(),
                memories,
            };
            let deleted = api.call(request).await?.memories;
            match memories {
                LearnedMemories::Keep => println!("deleted session {name}; its memories stay"),
                LearnedMemories::Forget => {
                    println!("deleted session {name}; forgot {deleted} memory(ies) learned in it")
                }
                LearnedMemories::Delete => {
                    println!("deleted session {name} and {deleted} memory(ies) learned in it")
                }
            }
            Ok(())
        }
    }
}

/// `history SESSION`.
pub async fn history(api: &Api, session: String, json: bool) -> anyhow::Result<()> {
    print::call(api, History { session }, json).await
}

/// Runs one `data` command; `data check` exits 1 when something is wrong.
pub async fn data(api: &Api, command: DataCommand) -> anyhow::Result<ExitCode> {
    match command {
        DataCommand::DeleteAll { yes } => {
            let confirm = echo_agent::DELETE_ALL_DATA_CONFIRMATION;
            if !yes && !crate::memory_cli::confirmed("Delete all your data for good?", confirm)? {
                anyhow::bail!("nothing deleted");
            }
            let d = api
                .call(DeleteAllData {
                    confirm: confirm.into(),
                })
                .await?;
            let notes = if d.user_notes {
                "; USER.md is back to its default"
            } else {
                ""
            };
            println!(
                "deleted {} conversation(s), {} memory(ies) and {} other record(s){notes}",
                d.sessions, d.memories, d.rows
            );
            Ok(ExitCode::SUCCESS)
        }
        DataCommand::Check { json } => {
            let check = api.call(CheckData {}).await?;
            print::show(&check, json)?;
            Ok(crate::cli::exit_code(check.problems.is_empty()))
        }
    }
}
