//! `echod memory …`: browse and curate long-term memory. Each command is one `Api` call.

use anyhow::{Context, bail};
use clap::Subcommand;
use echo_agent::wire::{
    ConflictId, ImportReport, Memory, MemoryExportFile, MemoryId, MemoryImportFile, MemorySort,
    MemoryStatus, MemoryTier,
};
use echo_agent::{Api, DELETE_ALL_CONFIRMATION, ListFilter};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List memories (default: every status but deleted), newest first.
    List {
        /// working, episodic, semantic or archival.
        #[arg(long)]
        tier: Option<String>,
        /// active, superseded, archived or deleted.
        #[arg(long)]
        status: Option<String>,
        /// Only memories whose text contains this.
        #[arg(long)]
        text: Option<String>,
        /// Memories to skip (paging).
        #[arg(long, default_value_t = 0)]
        offset: u32,
        /// Memories to show (at most 1000).
        #[arg(long, default_value_t = 100)]
        limit: u32,
        /// Order: created (default), updated, last_used, importance or effective (after decay).
        #[arg(long)]
        sort: Option<String>,
        /// Print JSON (the memories of the page).
        #[arg(long)]
        json: bool,
    },
    /// Search memories, archived and superseded ones included.
    Search {
        /// What to look for.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// How many results.
        #[arg(long, default_value_t = 10)]
        limit: usize,
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
    Add {
        /// The memory.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// Slot, e.g. diet (a newer memory in the same slot replaces the older one).
        #[arg(long)]
        slot: Option<String>,
        /// Never let it fade.
        #[arg(long)]
        pin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace a memory's text.
    Edit {
        /// Memory id.
        id: MemoryId,
        /// New text.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
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
    Resolve {
        /// Conflict id.
        conflict_id: ConflictId,
        /// The memory id to keep, or `both`.
        #[arg(long)]
        keep: String,
        /// Edit into one: the kept memory's new text.
        #[arg(long)]
        merged: Option<String>,
    },
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
}

fn parse_tier(s: Option<String>) -> anyhow::Result<Option<MemoryTier>> {
    s.map(|s| {
        MemoryTier::parse(&s).with_context(|| {
            format!(
                "unknown tier {s:?}; expected one of {}",
                MemoryTier::names().join(", ")
            )
        })
    })
    .transpose()
}

fn parse_status(s: Option<String>) -> anyhow::Result<Option<MemoryStatus>> {
    s.map(|s| {
        MemoryStatus::parse(&s).with_context(|| {
            format!(
                "unknown status {s:?}; expected one of {}",
                MemoryStatus::names().join(", ")
            )
        })
    })
    .transpose()
}

/// A sort by its wire name (the same names the gateway takes).
fn parse_sort(s: Option<String>) -> anyhow::Result<MemorySort> {
    let Some(s) = s else {
        return Ok(MemorySort::default());
    };
    serde_json::from_value(serde_json::Value::String(s.clone())).map_err(|_| {
        anyhow::anyhow!(
            "unknown sort {s:?}; expected one of created, updated, last_used, importance, effective"
        )
    })
}

fn json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

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

/// Runs one memory command.
pub async fn run(api: &Api, command: MemoryCommand) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match command {
        MemoryCommand::List {
            tier,
            status,
            text,
            offset,
            limit,
            sort,
            json: as_json,
        } => {
            let page = api
                .memory_list(&ListFilter {
                    tier: parse_tier(tier)?,
                    status: parse_status(status)?,
                    text,
                    offset,
                    limit: Some(limit),
                    sort: parse_sort(sort)?.into(),
                    ..ListFilter::default()
                })
                .await?;
            if as_json {
                return json(&page.items);
            }
            if page.items.is_empty() {
                writeln!(out, "no memories")?;
            }
            for m in &page.items {
                writeln!(out, "{}", line(m))?;
            }
            let shown = u64::from(offset) + page.items.len() as u64;
            if shown < page.total {
                writeln!(
                    out,
                    "({shown} of {}; --offset {shown} for more)",
                    page.total
                )?;
            }
        }
        MemoryCommand::Search {
            query,
            limit,
            json: as_json,
        } => {
            let found = api.memory_search(&query.join(" "), limit).await?;
            if as_json {
                return json(&found);
            }
            if found.is_empty() {
                writeln!(out, "nothing found")?;
            }
            for r in &found {
                writeln!(out, "{}", line(&r.memory))?;
            }
        }
        MemoryCommand::Show { id, json: as_json } => {
            let d = api.memory_show(&id).await?;
            if as_json {
                return json(&d);
            }
            let m = &d.memory;
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
            if let Some(w) = &d.superseded_by_memory {
                writeln!(out, "  superseded by: {}", line(w))?;
            }
            for s in &d.supersedes {
                writeln!(out, "  supersedes:    {}", line(s))?;
            }
            for c in &d.conflicts {
                writeln!(
                    out,
                    "  conflict {} [{}] {} vs {}: {}",
                    c.id,
                    c.status,
                    c.memory_a,
                    c.memory_b,
                    c.explanation.as_deref().unwrap_or("")
                )?;
            }
            writeln!(out, "  history:")?;
            for h in &d.history {
                writeln!(
                    out,
                    "    {} {} by {}{} [change {}]",
                    h.at,
                    h.action,
                    h.actor,
                    h.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default(),
                    h.change_id
                )?;
            }
        }
        MemoryCommand::Add {
            text,
            slot,
            pin,
            json: as_json,
        } => {
            let outcome = api
                .memory_add(&text.join(" "), slot.as_deref(), pin)
                .await?;
            if as_json {
                return json(&outcome);
            }
            writeln!(out, "{}", line(&outcome.memory))?;
        }
        MemoryCommand::Edit { id, text } => writeln!(
            out,
            "{}",
            line(&api.memory_edit(&id, &text.join(" ")).await?)
        )?,
        MemoryCommand::Pin { id } => writeln!(out, "{}", line(&api.memory_pin(&id, true).await?))?,
        MemoryCommand::Unpin { id } => {
            writeln!(out, "{}", line(&api.memory_pin(&id, false).await?))?
        }
        MemoryCommand::Forget { id } => writeln!(out, "{}", line(&api.memory_forget(&id).await?))?,
        MemoryCommand::ForgetSession { session } => {
            let forgotten = api.memory_forget_session(&session).await?;
            if forgotten.is_empty() {
                writeln!(out, "nothing was learned in {session:?}")?;
            }
            for m in &forgotten {
                writeln!(out, "{}", line(m))?;
            }
        }
        MemoryCommand::Expire {
            id,
            until,
            clear: _,
        } => writeln!(
            out,
            "{}",
            line(&api.memory_set_expiry(&id, until.as_deref()).await?)
        )?,
        MemoryCommand::Delete { ids, all, yes } => {
            let question = if all {
                "Delete every memory for good?".to_string()
            } else {
                format!("Delete {} memory(ies) for good?", ids.len())
            };
            let answer = if all { DELETE_ALL_CONFIRMATION } else { "yes" };
            if !yes && !confirmed(&question, answer)? {
                anyhow::bail!("nothing deleted");
            }
            let report = if all {
                api.memory_delete_all(DELETE_ALL_CONFIRMATION).await?
            } else {
                api.memory_delete(&ids).await?
            };
            for id in &report.deleted {
                writeln!(out, "deleted {id}")?;
            }
        }
        MemoryCommand::Restore { id } => {
            writeln!(out, "{}", line(&api.memory_restore(&id).await?))?
        }
        MemoryCommand::Undo { id, change } => {
            for m in api.memory_undo(&id, change.as_deref()).await? {
                writeln!(out, "{}", line(&m))?;
            }
        }
        MemoryCommand::Conflicts { all, json: as_json } => {
            let list = api.memory_conflicts(all).await?;
            if as_json {
                return json(&list);
            }
            if list.is_empty() {
                writeln!(out, "no conflicts")?;
            }
            for c in &list {
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
        }
        MemoryCommand::Resolve {
            conflict_id,
            keep,
            merged,
        } => {
            let keep = (keep != "both").then(|| MemoryId::from_string(keep));
            let c = api
                .memory_resolve(&conflict_id, keep.as_ref(), merged.as_deref())
                .await?;
            writeln!(out, "{} {}", c.id, c.resolution.unwrap_or_default())?;
        }
        MemoryCommand::Sweep { now, json: as_json } => {
            let now = match now {
                Some(t) => match echo_agent::parse_time(&t) {
                    Some(t) => Some(t),
                    None => bail!("--now {t:?} is not an RFC 3339 time or YYYY-MM-DD date"),
                },
                None => None,
            };
            let report = api.memory_sweep(now).await?;
            if as_json {
                return json(&report);
            }
            writeln!(
                out,
                "checked {} · expired {} · faded {}",
                report.checked,
                report.expired.len(),
                report.faded.len()
            )?;
        }
        MemoryCommand::Reindex => {
            let r = api.memory_reindex().await?;
            writeln!(out, "reindexed: {} memories embedded", r.embedded)?;
        }
        MemoryCommand::Export { file } => {
            let count = export_to(api, &file).await?;
            writeln!(out, "exported {count} memories to {}", file.display())?;
        }
        MemoryCommand::Import { file } => {
            let r = import_from(api, &file).await?;
            writeln!(
                out,
                "imported {} new, {} already known, {} inactive skipped",
                r.created, r.duplicates, r.skipped_inactive
            )?;
        }
    }
    Ok(())
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
async fn export_to(api: &Api, file: &Path) -> anyhow::Result<usize> {
    let export = api.call(MemoryExportFile {}).await?;
    let partial = file.with_extension("partial");
    std::fs::write(&partial, export.text)
        .and_then(|()| std::fs::rename(&partial, file))
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(export.count)
}

/// `memory import FILE`: the memory page's upload, read from a file.
async fn import_from(api: &Api, file: &Path) -> anyhow::Result<ImportReport> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    api.call(MemoryImportFile { text })
        .await
        .with_context(|| file.display().to_string())
}
