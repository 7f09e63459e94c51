//! Command-line interface: argument parsing and one handler per command.

use crate::print;
use crate::tools_cli::{Lines, Prompter};
use anyhow::Context;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use echo_agent::wire::{EntryPoint, TemporaryChat, TurnStatus};
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
    Ask(AskArgs),
    /// Chat interactively (one line per message; /exit or Ctrl-D to leave).
    Chat {
        /// Session name (default: `default`, or `project:NAME` with `--project`).
        #[arg(long, short)]
        session: Option<String>,
        /// A temporary chat: a new session deleted with its traces when you leave, which
        /// teaches memory nothing; `--temporary=recall` lets it read memory.
        #[arg(long, value_name = "KIND", num_args = 0..=1, require_equals = true,
              default_missing_value = "sealed", value_parser = TEMPORARY,
              conflicts_with = "session")]
        temporary: Option<TemporaryChat>,
        /// Chat in this project: its memories and instructions, its folders as the workspace.
        #[arg(long)]
        project: Option<String>,
    },
    /// Devices that reach `echod serve` with tokens of their own: pair, list, revoke, log.
    Devices {
        #[command(subcommand)]
        command: crate::devices_cli::DevicesCommand,
    },
    /// Projects: conversations and memories kept apart from other projects'.
    Projects {
        #[command(subcommand)]
        command: crate::projects_cli::ProjectsCommand,
    },
    /// Sessions.
    Sessions {
        #[command(subcommand)]
        command: crate::sessions_cli::SessionsCommand,
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
    /// Serve the engine over HTTP on 127.0.0.1 (bearer token, loopback Host/Origin only), or
    /// over HTTPS on another address with `--listen`.
    Serve(crate::serve::ServeArgs),
    /// The model provider (kind, base URL, models) and its API key in the OS keychain.
    Provider {
        #[command(subcommand)]
        command: crate::provider_cli::ProviderCommand,
    },
    /// The web search service behind `web_search` and research, and its API key in the OS
    /// keychain.
    Search {
        #[command(subcommand)]
        command: crate::search_cli::SearchCommand,
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
        command: crate::sessions_cli::DataCommand,
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

/// `ask`'s message and options.
#[derive(Debug, clap::Args)]
pub(crate) struct AskArgs {
    /// Session name (default: `default`, or `project:NAME` with `--project`).
    #[arg(long, short)]
    session: Option<String>,
    /// Print the turn's events as JSON lines instead of the answer text.
    #[arg(long)]
    events: bool,
    /// Research the question: plan, search and read the web, answer with a cited report
    /// (needs a search service, `[search]`).
    #[arg(long, conflicts_with = "quick")]
    research: bool,
    /// Answer quickly, never as research.
    #[arg(long)]
    quick: bool,
    /// Resume the unfinished research that turn TURN of the session left (a killed
    /// process, a stopped run); the message is the run's question.
    #[arg(long, value_name = "TURN", conflicts_with = "quick")]
    resume: Option<String>,
    /// A temporary chat: a new session that is deleted with its trace after the answer,
    /// and teaches memory nothing; `--temporary=recall` lets it read memory.
    #[arg(long, value_name = "KIND", num_args = 0..=1, require_equals = true,
          default_missing_value = "sealed", value_parser = TEMPORARY,
          conflicts_with_all = ["session", "resume"])]
    temporary: Option<TemporaryChat>,
    /// Ask in this project: its memories and instructions, its folders as the workspace.
    #[arg(long)]
    project: Option<String>,
    /// The message (words are joined with spaces); `-` reads it from stdin.
    #[arg(required_unless_present = "resume", num_args = 0..)]
    text: Vec<String>,
}

const TEMPORARY: Vocab<TemporaryChat> = Vocab {
    what: "temporary chat",
    names: TemporaryChat::names(),
    parse: TemporaryChat::parse,
};

/// A temporary chat's session: a name no other session has.
fn temporary_session() -> String {
    format!("temporary-{}", uuid::Uuid::new_v4().simple())
}

/// A closed vocabulary's word as clap takes it: one of `names` (listed in `--help`), else an
/// error naming the word and what is expected (`expected allow, ask or deny`).
#[derive(Clone)]
pub(crate) struct Vocab<T> {
    /// What a word names, for the error: `tier`.
    pub what: &'static str,
    /// Every accepted word.
    pub names: &'static [&'static str],
    /// A word to its value.
    pub parse: fn(&str) -> Option<T>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Vocab<T> {
    type Value = T;

    fn parse_ref(
        &self,
        _: &clap::Command,
        _: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let word = value.to_string_lossy();
        (self.parse)(&word).ok_or_else(|| {
            let expected = match self.names {
                [rest @ .., last] if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                names => names.join(""),
            };
            let what = self.what;
            let message = format!("unknown {what} {word:?}; expected {expected}\n");
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, message)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.names.iter().map(PossibleValue::new)))
    }
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
        Command::Ask { .. } | Command::Chat { .. } | Command::Serve(_)
    ) && let Some(note) = api.provider_note()
    {
        eprintln!("{note}");
    }
    let code = dispatch(&api, cli.command, dev).await?;
    api.close().await;
    Ok(code)
}

/// Carries out a command that needs the engine: each is one room's `run`, or a turn.
async fn dispatch(
    api: &Api,
    command: Command,
    dev: Option<&dyn crate::dev::DevTools>,
) -> anyhow::Result<ExitCode> {
    let done = |()| ExitCode::SUCCESS;
    match command {
        Command::Ask(args) => ask(api, args).await,
        Command::Chat {
            session,
            temporary,
            project,
        } => chat(api, session, temporary, project).await,
        Command::Projects { command } => crate::projects_cli::run(api, command).await.map(done),
        Command::Devices { command } => crate::devices_cli::run(api, command).await.map(done),
        Command::Sessions { command } => {
            crate::sessions_cli::sessions(api, command).await.map(done)
        }
        Command::Data { command } => crate::sessions_cli::data(api, command).await,
        Command::History { session, json } => crate::sessions_cli::history(api, session, json)
            .await
            .map(done),
        Command::Trace { command } => crate::trace_cli::trace(api, command).await.map(done),
        // Carried out before the engine opens (a replay needs none of the data directory).
        Command::Replay { .. } => Err(crate::dev::missing("replay")),
        Command::Rules { command } => crate::tools_cli::rules(api, command).await.map(done),
        Command::Serve(args) => {
            api.warm_memory_search();
            api.start_automations();
            let listen = args.listen();
            crate::serve::run(api.clone(), listen, args.ui)
                .await
                .map(done)
        }
        Command::Model { command } => crate::model_cli::run(api, command).await.map(exit_code),
        Command::Mcp { command } => crate::tools_cli::mcp(api, command).await.map(done),
        Command::Provider { command } => {
            crate::provider_cli::run(api, command).await.map(exit_code)
        }
        Command::Search { command } => crate::search_cli::run(api, command).await.map(exit_code),
        Command::Approvals { command } => crate::tools_cli::approvals(api, command).await.map(done),
        Command::Automations { command } => crate::automations_cli::automations(api, *command)
            .await
            .map(done),
        Command::Memory { command } => crate::memory_cli::run(api, command).await.map(done),
        Command::Bench { command } => {
            let dev = dev.ok_or_else(|| crate::dev::missing("bench"))?;
            dev.bench(api, command).await.map(done)
        }
    }
}

/// The path `ask` asks for: research (`--research`, `--resume`), quick (`--quick`), or the
/// router's choice.
fn turn_path(research: bool, quick: bool) -> Option<bool> {
    match (research, quick) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    }
}

/// Success, or exit 1: a command that found something wrong.
pub(crate) fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
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

/// `ask`'s message: its words joined with spaces, or stdin for `-`.
fn read_text(text: Vec<String>) -> anyhow::Result<String> {
    if text.len() == 1 && text[0] == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .context("cannot read the message from stdin")?;
        Ok(s)
    } else {
        Ok(text.join(" "))
    }
}

/// The session a turn goes to: the one named, a fresh temporary chat, `project:NAME` in a
/// project, or `default`.
fn session_for(
    session: Option<String>,
    temporary: Option<TemporaryChat>,
    project: Option<&str>,
) -> String {
    match (session, temporary, project) {
        (Some(session), _, _) => session,
        (None, Some(_), _) => temporary_session(),
        (None, None, Some(project)) => format!("project:{project}"),
        (None, None, None) => "default".into(),
    }
}

async fn ask(api: &Api, args: AskArgs) -> anyhow::Result<ExitCode> {
    let path = turn_path(args.research || args.resume.is_some(), args.quick);
    let session = session_for(args.session, args.temporary, args.project.as_deref());
    let request = TurnRequest::new(session, read_text(args.text)?, EntryPoint::Cli)
        .research(path)
        .resuming(args.resume)
        .temporary(args.temporary)
        .project(args.project);
    // Approval questions are answered on the terminal when there is one.
    let prompter = std::io::stdin()
        .is_terminal()
        .then(|| Prompter::new(api.clone(), Lines::stdin()));
    let outcome = run_turn(api, request, args.events, prompter.as_ref()).await?;
    let wait = Duration::from_secs_f64(api.config().agent.background_wait_secs.max(0.0));
    api.wait_background(wait).await;
    Ok(outcome)
}

/// Runs one turn with Ctrl-C as its stop button, printing events as they come.
/// With a `prompter`, approval questions are asked on the terminal; without one, anything
/// that would ask is denied (nobody could answer).
async fn run_turn(
    api: &Api,
    request: TurnRequest,
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
    let request = request.approvals(if prompter.is_some() {
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

async fn chat(
    api: &Api,
    session: Option<String>,
    temporary: Option<TemporaryChat>,
    project: Option<String>,
) -> anyhow::Result<ExitCode> {
    api.warm_memory_search();
    let session = session_for(session, temporary, project.as_deref());
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        let what = match temporary {
            None => format!("session {session:?}"),
            Some(_) => "temporary chat, deleted when you leave".to_string(),
        };
        eprintln!("Echo Desk · {what} · /exit or Ctrl-D to leave, Ctrl-C stops an answer");
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
        let request = TurnRequest::new(&session, text, EntryPoint::Cli)
            .temporary(temporary)
            .project(project.clone());
        last = run_turn(api, request, false, prompter.as_ref()).await?;
    }
    if interactive {
        eprintln!();
    }
    Ok(last)
}
