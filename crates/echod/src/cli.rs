//! Command-line interface: argument parsing and one handler per command.

use crate::print;
use crate::tools_cli::{Lines, Prompter};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use echo_agent::wire::{EntryPoint, LearnedMemories, TurnStatus};
use echo_agent::{Api, ApprovalMode, EventHandler, TurnRequest};
use echo_agent::{Config, ConfigError, Overrides, ProcessEnv};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Exit code of a turn the user interrupted (as a shell reports SIGINT).
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug, Parser)]
#[command(
    name = "echod",
    version,
    about = "Echo Desk without a window: ask, chat, and inspect sessions and traces."
)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Args)]
struct GlobalArgs {
    /// Data directory (default: $ECHO_DESK_HOME, then the platform's data directory).
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Model server protocol: openai, anthropic, ollama or local (overrides ECHO_LLM_KIND).
    #[arg(long, global = true, value_name = "KIND")]
    provider: Option<String>,
    /// Model server base URL (overrides ECHO_LLM_BASE_URL).
    #[arg(long, global = true, value_name = "URL")]
    base_url: Option<String>,
    /// Model name (overrides ECHO_LLM_MODEL).
    #[arg(long, global = true)]
    model: Option<String>,
    /// Fallback models on the same server, comma-separated (overrides ECHO_LLM_FALLBACK_MODELS).
    #[arg(long, global = true, value_name = "LIST")]
    fallback_models: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one turn and stream the answer to stdout.
    Ask {
        /// Session name.
        #[arg(long, short, default_value = "default")]
        session: String,
        /// Print the turn's events as JSON lines instead of the answer text.
        #[arg(long)]
        events: bool,
        /// The message (words are joined with spaces); `-` reads it from stdin.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Chat interactively (one line per message; /exit or Ctrl-D to leave).
    Chat {
        /// Session name.
        #[arg(long, short, default_value = "default")]
        session: String,
    },
    /// Sessions.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// A session's messages.
    History {
        /// Session name.
        session: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Turn traces: list, show, what a model call sent, export a turn as a replay case.
    Trace {
        #[command(subcommand)]
        command: crate::trace_cli::TraceCommand,
    },
    /// Re-run a case exported by `trace export` through the engine, the model's replies and
    /// the tools' results served from the recording; exit 1 when the new run diverges.
    Replay {
        /// The case file.
        file: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Approval rules: which tool calls run without asking, ask, or are refused.
    Rules {
        #[command(subcommand)]
        command: crate::tools_cli::RulesCommand,
    },
    /// Serve the engine over HTTP on 127.0.0.1 (bearer token, loopback Host/Origin only).
    Serve {
        /// Port (default: a free one, printed at start).
        #[arg(long)]
        port: Option<u16>,
        /// Serve the UI from this directory instead of the one built into echod (`ui/dist`
        /// when echod was built).
        #[arg(long, value_name = "DIR")]
        ui: Option<PathBuf>,
    },
    /// The model provider (kind, base URL, models) and its API key in the OS keychain.
    Provider {
        #[command(subcommand)]
        command: crate::provider_cli::ProviderCommand,
    },
    /// The built-in model: recommended models, downloads, choosing one.
    Model {
        #[command(subcommand)]
        command: crate::model_cli::ModelCommand,
    },
    /// MCP servers from the settings and their state.
    Mcp {
        #[command(subcommand)]
        command: crate::tools_cli::McpCommand,
    },
    /// The approval gate's decisions (audit log).
    Approvals {
        #[command(subcommand)]
        command: crate::tools_cli::ApprovalsCommand,
    },
    /// Automations: watch rules and schedules that run the assistant unattended (`echod
    /// serve` or the app runs them).
    Automations {
        #[command(subcommand)]
        command: Box<crate::automations_cli::AutomationsCommand>,
    },
    /// All of the person's data at once.
    Data {
        #[command(subcommand)]
        command: DataCommand,
    },
    /// Long-term memory: browse, search, edit, review conflicts.
    Memory {
        #[command(subcommand)]
        command: crate::memory_cli::MemoryCommand,
    },
    /// Benchmarks (see docs/benchmarks.md).
    Bench {
        #[command(subcommand)]
        command: crate::dev::BenchCommand,
    },
}

#[derive(Debug, Subcommand)]
enum DataCommand {
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
enum SessionsCommand {
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

impl Cli {
    /// Loads the configuration with this command line's flags over the file and the
    /// environment (before the async runtime starts: see `main`).
    pub fn config(&self) -> Result<Config, ConfigError> {
        let g = &self.global;
        let overrides = Overrides {
            home: g.home.clone(),
            kind: g.provider.clone(),
            base_url: g.base_url.clone(),
            model: g.model.clone(),
            fallback_models: g.fallback_models.clone(),
        };
        Config::load(&overrides, &ProcessEnv)
    }
}

/// Runs the parsed command with the configuration `Cli::config` loaded (`replay` needs none).
pub async fn run(
    cli: Cli,
    config: Result<Config, ConfigError>,
    dev: Option<&dyn crate::dev::DevTools>,
) -> anyhow::Result<ExitCode> {
    if let Some(done) = without_the_engine(&cli, dev).await {
        return done;
    }
    let config = config?;
    let api = Api::open(config).await.context("cannot open the engine")?;
    if matches!(
        cli.command,
        Command::Ask { .. } | Command::Chat { .. } | Command::Serve { .. }
    ) && let Some(note) = api.provider_note()
    {
        eprintln!("{note}");
    }
    let code = match cli.command {
        Command::Ask {
            session,
            events,
            text,
        } => ask(&api, session, text, events).await?,
        Command::Chat { session } => {
            api.warm_memory_search();
            chat(&api, session).await?
        }
        Command::Sessions {
            command: SessionsCommand::List { json },
        } => {
            print::sessions(&api.sessions().await?, json)?;
            ExitCode::SUCCESS
        }
        Command::Sessions {
            command: SessionsCommand::Rename { name, new_name },
        } => {
            let s = api.rename_session(&name, &new_name).await?;
            println!("renamed {name} to {}", s.name);
            ExitCode::SUCCESS
        }
        Command::Sessions {
            command: SessionsCommand::Delete { name, memories },
        } => {
            let memories = match memories {
                Some(m) => m,
                None => ask_learned(&name)?,
            };
            let deleted = api.delete_session(&name, memories).await?;
            match memories {
                LearnedMemories::Keep => println!("deleted session {name}; its memories stay"),
                LearnedMemories::Forget => println!(
                    "deleted session {name}; forgot {} memory(ies) learned in it",
                    deleted.memories
                ),
                LearnedMemories::Delete => println!(
                    "deleted session {name} and {} memory(ies) learned in it",
                    deleted.memories
                ),
            }
            ExitCode::SUCCESS
        }
        Command::Data {
            command: DataCommand::DeleteAll { yes },
        } => {
            let confirm = echo_agent::DELETE_ALL_DATA_CONFIRMATION;
            if !yes && !crate::memory_cli::confirmed("Delete all your data for good?", confirm)? {
                anyhow::bail!("nothing deleted");
            }
            let d = api.delete_all_data(confirm).await?;
            println!(
                "deleted {} conversation(s), {} memory(ies) and {} other record(s){}",
                d.sessions,
                d.memories,
                d.rows,
                if d.user_notes {
                    "; USER.md is back to its default"
                } else {
                    ""
                }
            );
            ExitCode::SUCCESS
        }
        Command::Data {
            command: DataCommand::Check { json },
        } => {
            let check = api.check_data().await?;
            print::data_check(&check, json)?;
            if check.problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::History { session, json } => {
            print::history(&api.history(&session).await?, json)?;
            ExitCode::SUCCESS
        }
        Command::Trace { command } => {
            crate::trace_cli::trace(&api, command).await?;
            ExitCode::SUCCESS
        }
        // Carried out before the engine opens (a replay needs none of the data directory).
        Command::Replay { .. } => return Err(crate::dev::missing("replay")),
        Command::Rules { command } => {
            crate::tools_cli::rules(&api, command).await?;
            ExitCode::SUCCESS
        }
        Command::Serve { port, ui } => {
            api.warm_memory_search();
            api.start_automations();
            crate::serve::run(api.clone(), port.unwrap_or(0), ui).await?;
            ExitCode::SUCCESS
        }
        Command::Model { command } => {
            if crate::model_cli::run(&api, command).await? {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Mcp { command } => {
            crate::tools_cli::mcp(&api, command).await?;
            ExitCode::SUCCESS
        }
        Command::Provider { command } => {
            if crate::provider_cli::run(&api, command).await? {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Approvals { command } => {
            crate::tools_cli::approvals(&api, command).await?;
            ExitCode::SUCCESS
        }
        Command::Automations { command } => {
            crate::automations_cli::automations(&api, *command).await?;
            ExitCode::SUCCESS
        }
        Command::Memory { command } => {
            crate::memory_cli::run(&api, command).await?;
            ExitCode::SUCCESS
        }
        Command::Bench { command } => {
            let dev = dev.ok_or_else(|| crate::dev::missing("bench"))?;
            dev.bench(&api, command).await?;
            ExitCode::SUCCESS
        }
    };
    api.close().await;
    Ok(code)
}

/// The development commands that need no engine: a replay (a scratch data directory of its
/// own) and the built-in model's benchmark; without the tools, every development command.
async fn without_the_engine(
    cli: &Cli,
    dev: Option<&dyn crate::dev::DevTools>,
) -> Option<anyhow::Result<ExitCode>> {
    match (&cli.command, dev) {
        (Command::Replay { file, json }, Some(dev)) => Some(dev.replay(file, *json).await),
        (Command::Replay { .. }, None) => Some(Err(crate::dev::missing("replay"))),
        (Command::Bench { .. }, None) => Some(Err(crate::dev::missing("bench"))),
        (Command::Bench { command }, Some(dev)) => dev
            .bench_alone(command, &cli.global.model)
            .await
            .map(|done| done.map(|()| ExitCode::SUCCESS)),
        _ => None,
    }
}

async fn ask(
    api: &Api,
    session: String,
    text: Vec<String>,
    events: bool,
) -> anyhow::Result<ExitCode> {
    let input = if text.len() == 1 && text[0] == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .context("cannot read the message from stdin")?;
        s
    } else {
        text.join(" ")
    };
    // Approval questions are answered on the terminal when there is one.
    let prompter = std::io::stdin()
        .is_terminal()
        .then(|| Prompter::new(api.clone(), Lines::stdin()));
    let outcome = run_turn(api, &session, input, events, prompter.as_ref()).await?;
    let wait = Duration::from_secs_f64(api.config().agent.background_wait_secs.max(0.0));
    api.wait_background(wait).await;
    Ok(outcome)
}

/// Runs one turn with Ctrl-C as its stop button, printing events as they come.
/// With a `prompter`, approval questions are asked on the terminal; without one, anything
/// that would ask is denied (nobody could answer).
async fn run_turn(
    api: &Api,
    session: &str,
    input: String,
    as_json: bool,
    prompter: Option<&Prompter>,
) -> anyhow::Result<ExitCode> {
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let print: EventHandler = if as_json {
        Arc::new(print::json_event)
    } else {
        let printer = print::TurnPrinter::new(std::io::stderr().is_terminal());
        Arc::new(move |event| printer.event(&event))
    };
    let handler: EventHandler = match prompter.cloned() {
        Some(prompter) => Arc::new(move |event| {
            prompter.event(&event);
            print(event);
        }),
        None => print,
    };
    let request =
        TurnRequest::new(session, input, EntryPoint::Cli).approvals(if prompter.is_some() {
            ApprovalMode::Ask
        } else {
            ApprovalMode::NoOneToAsk
        });
    let outcome = api.send(request, handler, cancel).await;
    watcher.abort();
    let outcome = outcome?;
    Ok(match outcome.status {
        TurnStatus::Completed => ExitCode::SUCCESS,
        TurnStatus::Interrupted => {
            eprintln!("echod: interrupted: {}", outcome.error.unwrap_or_default());
            ExitCode::from(EXIT_INTERRUPTED)
        }
        _ => {
            eprintln!(
                "echod: turn {} failed: {}",
                outcome.turn_id,
                outcome.error.unwrap_or_else(|| "unknown error".into())
            );
            ExitCode::from(1)
        }
    })
}

async fn chat(api: &Api, session: String) -> anyhow::Result<ExitCode> {
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        eprintln!(
            "Echo Desk · session {session:?} · /exit or Ctrl-D to leave, Ctrl-C stops an answer"
        );
    }
    let lines = Lines::stdin();
    let prompter = interactive.then(|| Prompter::new(api.clone(), lines.clone()));
    let mut last = ExitCode::SUCCESS;
    loop {
        if interactive {
            eprint!("> ");
            let _ = std::io::stderr().flush();
        }
        let line = tokio::select! {
            line = lines.next() => line,
            _ = tokio::signal::ctrl_c() => None,
        };
        let Some(line) = line else { break };
        let line = line.context("cannot read from stdin")?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if text == "/exit" || text == "/quit" {
            break;
        }
        last = run_turn(api, &session, text.to_string(), false, prompter.as_ref()).await?;
    }
    if interactive {
        eprintln!();
    }
    Ok(last)
}
