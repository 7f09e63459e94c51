//! `echod memory import-text FILE`: another assistant's memory (ChatGPT's "Manage memories"
//! list, Claude's memory export, any statements about the person) read into memory cards and
//! reviewed in the terminal, card by card: keep, edit or drop, each shown with what keeping it
//! would do to the memories there. Nothing is written until the review ends; `--yes` keeps
//! every card that clashes with no memory there (a card saying what is already known only
//! reinforces it).

use anyhow::Context;
use echo_agent::Api;
use echo_agent::wire::{
    ImportCandidate, ImportCard, ImportClashKind, ImportPreview, MemoryEffect, MemoryImportCards,
    MemoryImportPreview, WriteOutcome,
};
use std::io::{BufRead, Write};
use std::path::Path;

/// What the person decided for one card.
enum Decision {
    Keep(ImportCard),
    Drop,
}

/// Reads `file`, reviews its cards (answers from stdin, or `--yes`) and writes the kept ones.
pub async fn import_text(
    api: &Api,
    file: &Path,
    project: Option<String>,
    yes: bool,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let preview: ImportPreview = api
        .call(MemoryImportPreview { text, project })
        .await
        .with_context(|| file.display().to_string())?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "read {} cards from {}",
        preview.cards.len(),
        file.display()
    )?;
    for why in &preview.dropped {
        writeln!(out, "  left out {why}")?;
    }
    let total = preview.cards.len();
    let mut kept = Vec::new();
    let mut answers = std::io::stdin().lock();
    for (i, candidate) in preview.cards.into_iter().enumerate() {
        show(&mut out, i + 1, total, &candidate)?;
        let decision = if yes {
            let clean = candidate
                .clashes
                .iter()
                .all(|c| c.kind == ImportClashKind::Duplicate);
            writeln!(
                out,
                "  {}",
                if clean { "kept" } else { "skipped: it clashes" }
            )?;
            if clean {
                Decision::Keep(candidate.card)
            } else {
                Decision::Drop
            }
        } else {
            ask(&mut out, &mut answers, candidate.card)?
        };
        if let Decision::Keep(card) = decision {
            kept.push(card);
        }
    }
    if kept.is_empty() {
        writeln!(out, "nothing imported")?;
        return Ok(());
    }
    let written = api.call(MemoryImportCards { cards: kept }).await?;
    writeln!(out, "{}", summary(&written))?;
    Ok(())
}

/// One card as the review shows it.
fn show(
    out: &mut dyn Write,
    number: usize,
    total: usize,
    candidate: &ImportCandidate,
) -> std::io::Result<()> {
    let card = &candidate.card;
    writeln!(out, "\n[{number}/{total}] {}", card.content)?;
    if card.evidence != card.content {
        writeln!(out, "  from: {}", card.evidence)?;
    }
    if let Some(project) = &card.project {
        writeln!(out, "  project: {project}")?;
    }
    for clash in &candidate.clashes {
        let what = match clash.kind {
            ImportClashKind::Duplicate => "already known",
            ImportClashKind::Replaces => "replaces",
            ImportClashKind::LosesTo => "loses to",
            ImportClashKind::Review => "conflicts with (both wait for review)",
        };
        writeln!(
            out,
            "  {what}: {} ({})",
            clash.memory.content, clash.memory.id
        )?;
    }
    Ok(())
}

/// Asks what to do with `card` until the answer is keep, edit (then the new text) or drop.
fn ask(
    out: &mut dyn Write,
    answers: &mut dyn BufRead,
    mut card: ImportCard,
) -> anyhow::Result<Decision> {
    loop {
        write!(out, "  keep, edit or drop? [k/e/d] ")?;
        out.flush()?;
        match answer(answers)?.to_lowercase().as_str() {
            "k" | "keep" => return Ok(Decision::Keep(card)),
            "d" | "drop" => return Ok(Decision::Drop),
            "e" | "edit" => {
                write!(out, "  new text: ")?;
                out.flush()?;
                let text = answer(answers)?;
                if text.is_empty() {
                    writeln!(out, "  (empty: the card is unchanged)")?;
                    continue;
                }
                card.content = text;
                return Ok(Decision::Keep(card));
            }
            other => writeln!(out, "  {other:?}: answer k, e or d")?,
        }
    }
}

/// The next line of the answers; their end before the review's is an error (nothing written).
fn answer(answers: &mut dyn BufRead) -> anyhow::Result<String> {
    let mut line = String::new();
    if answers.read_line(&mut line)? == 0 {
        anyhow::bail!(
            "the review ended before every card was decided (no more answers on stdin): \
             nothing was imported; answer k, e or d for each card, or use --yes"
        );
    }
    Ok(line.trim().to_string())
}

/// What the write did, in one line.
fn summary(written: &[WriteOutcome]) -> String {
    let count =
        |f: fn(&MemoryEffect) -> bool| written.iter().filter(|w| w.effects.iter().any(f)).count();
    format!(
        "imported {} cards: {} new, {} already known, {} replaced an older memory, {} lost to a \
         memory there, {} wait for review",
        written.len(),
        count(|e| matches!(e, MemoryEffect::Created)),
        count(|e| matches!(e, MemoryEffect::Duplicate { .. })),
        count(|e| matches!(e, MemoryEffect::Superseded { .. })),
        count(|e| matches!(e, MemoryEffect::Lost { .. })),
        count(|e| matches!(e, MemoryEffect::Conflict { .. })),
    )
}
