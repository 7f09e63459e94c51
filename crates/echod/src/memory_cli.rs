//! `echod memory …`: browse and curate long-term memory. Each command is one `Api` call.

use crate::cli::Vocab;
use crate::print::{self, Text};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use echo_agent::wire::{
    Conflict, ConflictId, FlushReport, Memory, MemoryAdd, MemoryConflicts, MemoryDelete,
    MemoryDeleteAll, MemoryDetail, MemoryEdit, MemoryExportFile, MemoryForget, MemoryForgetSession,
    MemoryId, MemoryImportFile, MemoryList, MemoryMove, MemoryPage, MemoryPin, MemoryReindex,
    MemoryResolve, MemoryRestore, MemorySearch, MemorySetExpiry, MemoryShow, MemorySort,
    MemoryStatus, MemorySweep, MemoryTier, MemoryUndo, PurgeReport, Recalled, SweepReport,
    WriteOutcome,
};
use echo_agent::{Api, DELETE_ALL_CONFIRMATION};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List memories (default: every status but deleted), newest first.
    List(ListArgs),
    /// Search memories, archived and superseded ones included.
    Search {
        /// What to look for.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// How many results.
        #[arg(long, default_value_t = 10)]
        limit: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one memory with its provenance, history and conflicts.
    Show {
        /// Memory id.
        id: MemoryId,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a memory in your own words (it counts as stated by you).
    Add(AddArgs),
    /// Replace a memory's text.
    Edit {
        /// Memory id.
        id: MemoryId,
        /// New text.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Move a memory into a project, or out to the global memories (one change: `undo`
    /// moves it back).
    Move {
        /// Memory id.
        id: MemoryId,
        /// The project it moves to.
        #[arg(long, required_unless_present = "global", conflicts_with = "global")]
        project: Option<String>,
        /// Move it to the global memories.
        #[arg(long)]
        global: bool,
    },
    /// Pin a memory (it never fades).
    Pin {
        /// Memory id.
        id: MemoryId,
    },
    /// Unpin a memory.
    Unpin {
        /// Memory id.
        id: MemoryId,
    },
    /// Forget a memory: out of prompts, search, vectors and the review queue, but restorable
    /// (`delete` removes it for good).
    Forget {
        /// Memory id.
        id: MemoryId,
    },
    /// Forget every memory learned in a session (one change: `undo` on any brings all back).
    ForgetSession {
        /// The session's name.
        session: String,
    },
    /// Set the date after which a memory no longer holds, or clear it.
    Expire {
        /// Memory id.
        id: MemoryId,
        /// YYYY-MM-DD or RFC 3339.
        #[arg(long, required_unless_present = "clear", conflicts_with = "clear")]
        until: Option<String>,
        /// Remove the expiry.
        #[arg(long)]
        clear: bool,
    },
    /// Delete memories for good, each with the older versions it replaced, its history and
    /// its conflicts; nothing of them stays on disk. Not reversible. Asks first unless --yes.
    Delete {
        /// Memory ids.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        ids: Vec<MemoryId>,
        /// Every memory.
        #[arg(long)]
        all: bool,
        /// Do not ask (needed when stdin is not a terminal).
        #[arg(long)]
        yes: bool,
    },
    /// Bring back an archived, superseded or deleted memory.
    Restore {
        /// Memory id.
        id: MemoryId,
    },
    /// Undo the last change to a memory (and to every memory that change touched), or, with
    /// `--change`, any change from its history (`echod memory history ID`).
    Undo {
        /// Memory id.
        id: MemoryId,
        /// The change to undo (its id from the history); only what it altered goes back.
        #[arg(long)]
        change: Option<String>,
    },
    /// Conflicts waiting for your decision.
    Conflicts {
        /// Include resolved ones.
        #[arg(long)]
        all: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Settle a conflict.
    Resolve(ResolveArgs),
    /// Archive what expired or faded.
    Sweep {
        /// Run as of this time (RFC 3339), e.g. to see what a month of disuse does.
        #[arg(long)]
        now: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rebuild the vector index from SQLite.
    Reindex,
    /// Write every memory to a JSON Lines file.
    Export {
        /// Output file.
        file: PathBuf,
    },
    /// Add the memories of an export file (through the write path).
    Import {
        /// Input file.
        file: PathBuf,
    },
    /// Show or change the memory settings.
    Settings {
        /// Ask before remembering: what memory work finds waits for keep or discard.
        #[arg(long, value_enum)]
        ask_before_remembering: Option<crate::proposals_cli::Switch>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// What memory work found and waits for a yes (ask before remembering).
    Proposals {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remember a proposal (through the write path).
    Keep {
        /// Proposal id.
        id: String,
    },
    /// Drop a proposal: nothing of it is remembered.
    Discard {
        /// Proposal id.
        id: String,
    },
    /// Bring another assistant's memory (ChatGPT's "Manage memories" list, Claude's memory
    /// export, any statements about you): read into cards, each reviewed here (keep, edit or
    /// drop, answered on stdin) before anything is written.
    ImportText {
        /// The pasted text, in a file.
        file: PathBuf,
        /// Cards about this project's work go to it (the rest stay global).
        #[arg(long)]
        project: Option<String>,
        /// No questions: keep every card that clashes with no memory there.
        #[arg(long)]
        yes: bool,
    },
}

/// `memory list`'s options.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// working, episodic, semantic or archival.
    #[arg(long, value_parser = TIER)]
    pub tier: Option<MemoryTier>,
    /// active, superseded, archived or deleted.
    #[arg(long, value_parser = STATUS)]
    pub status: Option<MemoryStatus>,
    /// Only memories whose text contains this.
    #[arg(long)]
    pub text: Option<String>,
    /// Only the memories of this project.
    #[arg(long, conflicts_with = "global")]
    pub project: Option<String>,
    /// Only global memories (in no project).
    #[arg(long)]
    pub global: bool,
    /// Memories to skip (paging).
    #[arg(long, default_value_t = 0)]
    pub offset: u32,
    /// Memories to show (at most 1000).
    #[arg(long, default_value_t = 100)]
    pub limit: u32,
    /// Order: created (default), updated, last_used, importance or effective (after decay).
    #[arg(long, value_parser = SORT)]
    pub sort: Option<MemorySort>,
    /// Print JSON (the memories of the page).
    #[arg(long)]
    pub json: bool,
}

/// `memory add`'s text and options.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The memory.
    #[arg(required = true, num_args = 1..)]
    pub text: Vec<String>,
    /// Slot, e.g. diet (a newer memory in the same slot replaces the older one).
    #[arg(long)]
    pub slot: Option<String>,
    /// Never let it fade.
    #[arg(long)]
    pub pin: bool,
    /// Keep it with this project's memories (recalled only in its conversations).
    #[arg(long)]
    pub project: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `memory resolve`'s conflict and decision.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// Conflict id.
    pub conflict_id: ConflictId,
    /// The memory id to keep, or `both`.
    #[arg(long)]
    pub keep: String,
    /// Edit into one: the kept memory's new text.
    #[arg(long)]
    pub merged: Option<String>,
}

const TIER: Vocab<MemoryTier> = Vocab {
    what: "tier",
    names: MemoryTier::names(),
    parse: MemoryTier::parse,
};
const STATUS: Vocab<MemoryStatus> = Vocab {
    what: "status",
    names: MemoryStatus::names(),
    parse: MemoryStatus::parse,
};
const SORT: Vocab<MemorySort> = Vocab {
    what: "sort",
    names: MemorySort::names(),
    parse: MemorySort::parse,
};

fn line(m: &Memory) -> String {
    let mut flags = Vec::new();
    if m.pinned {
        flags.push("pinned".to_string());
    }
    if m.status != MemoryStatus::Active {
        flags.push(m.status.to_string());
    }
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", flags.join(", "))
    };
    format!(
        "{}  {:<9} {:<12} {:.2}  {}{}{}",
        m.id,
        m.tier,
        m.source,
        m.effective_importance,
        m.slot
            .as_deref()
            .map(|s| format!("{s}: "))
            .unwrap_or_default(),
        m.content,
        flags
    )
}

/// Runs one memory command: one operation of the table each, its answer printed.
pub async fn run(api: &Api, command: MemoryCommand) -> anyhow::Result<()> {
    use MemoryCommand as C;
    match command {
        C::List(args) => list(api, args).await,
        C::Search { query, limit, json } => {
            let (query, k) = (query.join(" "), Some(limit));
            print::call(api, MemorySearch { query, k }, json).await
        }
        C::Show { id, json } => print::call(api, MemoryShow { id }, json).await,
        C::Add(args) => {
            let json = args.json;
            print::call(api, MemoryAdd::from(args), json).await
        }
        C::Move { id, project, .. } => print::call(api, MemoryMove { id, project }, false).await,
        C::Edit { id, text } => {
            let content = text.join(" ");
            print::call(api, MemoryEdit { id, content }, false).await
        }
        C::Pin { id } => print::call(api, MemoryPin { id, pinned: true }, false).await,
        C::Unpin { id } => print::call(api, MemoryPin { id, pinned: false }, false).await,
        C::Forget { id } => print::call(api, MemoryForget { id }, false).await,
        C::ForgetSession { session } => forget_session(api, session).await,
        C::Expire { id, until, .. } => {
            let request = MemorySetExpiry {
                id,
                valid_until: until,
            };
            print::call(api, request, false).await
        }
        C::Delete { ids, all, yes } => delete(api, ids, all, yes).await,
        C::Restore { id } => print::call(api, MemoryRestore { id }, false).await,
        C::Undo { id, change } => print::call(api, MemoryUndo { id, change }, false).await,
        C::Conflicts { all, json } => {
            print::call(api, MemoryConflicts { all: Some(all) }, json).await
        }
        C::Resolve(args) => print::call(api, MemoryResolve::from(args), false).await,
        C::Sweep { now, json } => print::call(api, MemorySweep { now }, json).await,
        C::Reindex => print::call(api, MemoryReindex {}, false).await,
        C::Export { file } => export_to(api, &file).await,
        C::Import { file } => import_from(api, &file).await,
        C::Settings {
            ask_before_remembering,
            json,
        } => crate::proposals_cli::settings(api, ask_before_remembering, json).await,
        C::Proposals { json } => crate::proposals_cli::list(api, json).await,
        C::Keep { id } => crate::proposals_cli::keep(api, id).await,
        C::Discard { id } => crate::proposals_cli::discard(api, id).await,
        C::ImportText { file, project, yes } => {
            crate::import_cli::import_text(api, &file, project, yes).await
        }
    }
}

/// `memory list`: `--json` prints the page's memories, the text says how to see more.
async fn list(api: &Api, args: ListArgs) -> anyhow::Result<()> {
    let request = MemoryList {
        tier: args.tier,
        status: args.status,
        text: args.text,
        project: args.project,
        global: Some(args.global),
        in_conflict: None,
        expiring_within_days: None,
        sort: args.sort,
        offset: Some(args.offset),
        limit: Some(args.limit),
    };
    let page = api.call(request).await?;
    if args.json {
        return print::json(&page.items);
    }
    let listed = Listed {
        page,
        offset: args.offset,
    };
    Ok(listed.text(&mut io::stdout().lock())?)
}

/// `memory forget-session NAME`: says so when nothing was learned there.
async fn forget_session(api: &Api, session: String) -> anyhow::Result<()> {
    let forgotten = api
        .call(MemoryForgetSession {
            session: session.clone(),
        })
        .await?;
    if forgotten.is_empty() {
        println!("nothing was learned in {session:?}");
    }
    print::show(&forgotten, false)
}

/// `memory delete`: asks first (unless `--yes`), then deletes for good.
async fn delete(api: &Api, ids: Vec<MemoryId>, all: bool, yes: bool) -> anyhow::Result<()> {
    let question = if all {
        "Delete every memory for good?".to_string()
    } else {
        format!("Delete {} memory(ies) for good?", ids.len())
    };
    let answer = if all { DELETE_ALL_CONFIRMATION } else { "yes" };
    if !yes && !confirmed(&question, answer)? {
        bail!("nothing deleted");
    }
    if all {
        let confirm = DELETE_ALL_CONFIRMATION.to_string();
        print::call(api, MemoryDeleteAll { confirm }, false).await
    } else {
        print::call(api, MemoryDelete { ids }, false).await
    }
}

impl From<AddArgs> for MemoryAdd {
    fn from(args: AddArgs) -> Self {
        MemoryAdd {
            content: args.text.join(" "),
            slot: args.slot,
            pinned: Some(args.pin),
            project: args.project,
        }
    }
}

impl From<ResolveArgs> for MemoryResolve {
    fn from(args: ResolveArgs) -> Self {
        MemoryResolve {
            conflict_id: args.conflict_id,
            keep: (args.keep != "both").then(|| MemoryId::from_string(args.keep)),
            merged: args.merged,
        }
    }
}

/// A page of `memory list` with where it starts, for the "more" hint.
struct Listed {
    page: MemoryPage,
    offset: u32,
}

impl Text for Listed {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.page.items.is_empty() {
            writeln!(out, "no memories")?;
        }
        for m in &self.page.items {
            writeln!(out, "{}", line(m))?;
        }
        let shown = u64::from(self.offset) + self.page.items.len() as u64;
        if shown < self.page.total {
            let total = self.page.total;
            writeln!(out, "({shown} of {total}; --offset {shown} for more)")?;
        }
        Ok(())
    }
}

impl Text for Memory {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", line(self))
    }
}

impl Text for Vec<Memory> {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.iter().try_for_each(|m| m.text(out))
    }
}

impl Text for WriteOutcome {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.memory.text(out)
    }
}

impl Text for Vec<Recalled> {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.is_empty() {
            writeln!(out, "nothing found")?;
        }
        self.iter().try_for_each(|r| r.memory.text(out))
    }
}

impl Text for MemoryDetail {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let m = &self.memory;
        writeln!(out, "{}", line(m))?;
        writeln!(
            out,
            "  kind {} · subject {} · confidence {:.2} · importance {:.2} (effective {:.2}) · half-life {:.0} d · used {} times",
            m.kind,
            m.subject,
            m.confidence,
            m.importance,
            m.effective_importance,
            m.stability,
            m.access_count
        )?;
        writeln!(
            out,
            "  created {} · valid {} … {}",
            m.created_at,
            m.valid_from.as_deref().unwrap_or("-"),
            m.valid_until.as_deref().unwrap_or("-")
        )?;
        writeln!(
            out,
            "  from session {} turn {} message {}",
            m.source_session_id.as_deref().unwrap_or("-"),
            m.source_turn_id.as_deref().unwrap_or("-"),
            m.source_message_id.as_deref().unwrap_or("-")
        )?;
        if let Some(e) = &m.evidence {
            writeln!(out, "  evidence: {e:?}")?;
        }
        if let Some(w) = &self.superseded_by_memory {
            writeln!(out, "  superseded by: {}", line(w))?;
        }
        for s in &self.supersedes {
            writeln!(out, "  supersedes:    {}", line(s))?;
        }
        for c in &self.conflicts {
            let why = c.explanation.as_deref().unwrap_or("");
            let (id, status, a, b) = (&c.id, c.status, &c.memory_a, &c.memory_b);
            writeln!(out, "  conflict {id} [{status}] {a} vs {b}: {why}")?;
        }
        writeln!(out, "  history:")?;
        for h in &self.history {
            let reason = h.reason.as_deref().map(|r| format!(" ({r})"));
            let (at, action, actor) = (&h.at, h.action, h.actor);
            let (reason, change) = (reason.unwrap_or_default(), &h.change_id);
            writeln!(
                out,
                "    {at} {action} by {actor}{reason} [change {change}]"
            )?;
        }
        Ok(())
    }
}

impl Text for Vec<Conflict> {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no conflicts")?;
        }
        for c in self {
            writeln!(
                out,
                "{} [{}] {}: {} vs {} — {}",
                c.id,
                c.status,
                c.verdict,
                c.memory_a,
                c.memory_b,
                c.explanation.as_deref().unwrap_or("")
            )?;
        }
        Ok(())
    }
}

impl Text for Conflict {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let resolution = self.resolution.as_deref().unwrap_or_default();
        writeln!(out, "{} {resolution}", self.id)
    }
}

impl Text for PurgeReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.deleted
            .iter()
            .try_for_each(|id| writeln!(out, "deleted {id}"))
    }
}

impl Text for SweepReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        let (checked, expired, faded) = (self.checked, self.expired.len(), self.faded.len());
        writeln!(out, "checked {checked} · expired {expired} · faded {faded}")
    }
}

impl Text for FlushReport {
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "reindexed: {} memories embedded", self.embedded)
    }
}

/// Asks on the terminal; the person must type `answer`. Without a terminal nobody can be
/// asked, which is an error telling them about `--yes`.
pub(crate) fn confirmed(question: &str, answer: &str) -> anyhow::Result<bool> {
    use std::io::{BufRead, IsTerminal};
    if !std::io::stdin().is_terminal() {
        anyhow::bail!("not deleting without --yes: nobody can be asked (stdin is not a terminal)");
    }
    eprint!("{question} Type {answer:?} to confirm: ");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim() == answer)
}

/// `memory export FILE`: the memory page's download, written to a file (a partial file never
/// takes the name of a finished one); how many memories it holds.
async fn export_to(api: &Api, file: &Path) -> anyhow::Result<()> {
    let export = api.call(MemoryExportFile {}).await?;
    let partial = file.with_extension("partial");
    std::fs::write(&partial, export.text)
        .and_then(|()| std::fs::rename(&partial, file))
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!("exported {} memories to {}", export.count, file.display());
    Ok(())
}

/// `memory import FILE`: the memory page's upload, read from a file.
async fn import_from(api: &Api, file: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let r = api
        .call(MemoryImportFile { text })
        .await
        .with_context(|| file.display().to_string())?;
    println!(
        "imported {} new, {} already known, {} inactive skipped",
        r.created, r.duplicates, r.skipped_inactive
    );
    if r.outside_projects > 0 {
        println!(
            "{} memories of projects the file does not describe are global now",
            r.outside_projects
        );
    }
    if r.outside_sessions > 0 {
        println!(
            "{} working notes of conversations that are not here were left out",
            r.outside_sessions
        );
    }
    Ok(())
}
