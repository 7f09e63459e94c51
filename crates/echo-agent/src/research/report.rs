//! The end of a research run: the check of a written report (every citation names a note
//! that supports its sentence, `support.rs`; citations become footnotes and the sources list
//! is appended), and the partial report a stopped run ends in, made from the notes without a
//! model call.

use super::Run;
use super::cite::citations;
use super::state::Note;
use super::support::{self, Checked as Supported};
use echo_core::trace::{SpanLevel, SpanStatus};
use echo_core::vocab::Degradation;
use echo_core::vocab::ResearchPhase;

/// The check node: citations whose note does not support their sentence (the model's
/// check) and citations that name no note are taken out (and counted), the others become
/// footnotes `[^n]` whose definitions are the sources list. A support check that cannot be
/// made is said at the report's end. The run is finished.
pub(super) async fn check(run: &Run<'_>, report: String) -> String {
    run.progress(ResearchPhase::Checking);
    let mut span = run.root.child(SpanLevel::Node, "research:check").await;
    span.attr("research_run", run.store.id.clone());
    let notes: Vec<Note> = run
        .lock()
        .notes()
        .into_iter()
        .map(|(_, n)| n.clone())
        .collect();
    let (report, unverified) = match support::check(run, &span, &report, &notes).await {
        Supported::Done { report, removed } => {
            if removed > 0 {
                span.attr("unsupported_citations", removed);
                run.degraded(
                    &mut span,
                    Degradation::CitationUnsupported,
                    format!(
                        "{removed} citations did not support their sentence and were taken out"
                    ),
                );
            }
            (report, false)
        }
        Supported::Failed(why) => {
            run.degraded(
                &mut span,
                Degradation::CitationCheckFailed,
                format!("the citations could not be checked against their notes: {why}"),
            );
            (report, true)
        }
    };
    let checked = citations(&report, notes.len());
    span.attr("citations", checked.cited.len());
    span.attr("notes", notes.len());
    if checked.unknown > 0 {
        span.attr("unknown_citations", checked.unknown);
        run.degraded(
            &mut span,
            Degradation::CitationUnresolved,
            format!(
                "{} citations named no note and were taken out",
                checked.unknown
            ),
        );
    }
    let mut text = checked.text.trim_end().to_string();
    if unverified {
        text.push_str("\n\n_The citations below were not checked against their notes._");
    }
    text.push_str("\n\n");
    text.push_str(&sources(&notes, &checked.cited));
    finish(run, true).await;
    span.finish(SpanStatus::Ok).await;
    text
}

/// The report of a run that stopped early (`why`): what was found so far (the person's
/// memories and files, then pages), by sub-question, each note cited, and what was not
/// reached.
pub(super) async fn partial(run: &Run<'_>, why: &str) -> String {
    let mut span = run.root.child(SpanLevel::Node, "research:partial").await;
    span.attr("research_run", run.store.id.clone());
    span.attr("reason", why.to_string());
    run.degraded(
        &mut span,
        Degradation::PartialReport,
        format!("partial report: {why}"),
    );
    let state = run.lock().clone();
    let plan = state.plan.clone().unwrap_or_default();
    let mut text = format!("**Partial report.** The research stopped early: {why}.\n");
    let mut number = 0;
    let mut all = Vec::new();
    let mut missing = Vec::new();
    let found = state.notes();
    for (i, sub) in plan.iter().enumerate() {
        let notes: Vec<&Note> = found
            .iter()
            .filter(|(of, _)| *of == i)
            .map(|(_, note)| *note)
            .collect();
        if notes.is_empty() {
            missing.push(sub.question.clone());
            continue;
        }
        text.push_str(&format!("\n### {}\n\n", sub.question));
        for note in notes {
            number += 1;
            text.push_str(&format!(
                "- {}: “{}” [^{number}]\n",
                note.supports, note.quote
            ));
            all.push(note.clone());
        }
    }
    if plan.is_empty() {
        missing.push(state.question.clone());
    }
    if number == 0 {
        text.push_str("\nNothing usable was found before it stopped.\n");
    }
    if !missing.is_empty() {
        text.push_str("\n### Not reached or not found\n\n");
        for question in &missing {
            text.push_str(&format!("- {question}\n"));
        }
    }
    let cited: Vec<usize> = (1..=number).collect();
    text.push('\n');
    text.push_str(&sources(&all, &cited));
    finish(run, false).await;
    span.attr("notes", number);
    span.finish(SpanStatus::Ok).await;
    text.trim_end().to_string()
}

/// Saves the state at the end; `finished` when the report is whole (a partial one can be
/// resumed).
async fn finish(run: &Run<'_>, finished: bool) {
    let state = run.lock().clone();
    if let Err(e) = run.store.save(&state, finished).await {
        tracing::warn!(error = %e, "cannot save the end of a research run");
    }
    run.progress(ResearchPhase::Done);
}

/// The footnote definitions of the cited notes: quote, page and when it was read (for a
/// memory: that it is the person's, and when it was learned; for a file: its path in the
/// project's folder).
fn sources(notes: &[Note], cited: &[usize]) -> String {
    if cited.is_empty() {
        return String::new();
    }
    let mut out = String::from("### Sources\n\n");
    for &n in cited {
        let Some(note) = notes.get(n - 1) else {
            continue;
        };
        if note.url.starts_with("memory:") {
            let learned = note.retrieved_at.get(..10).unwrap_or(&note.retrieved_at);
            out.push_str(&format!(
                "[^{n}]: “{}” — from your memories, learned {learned}\n",
                note.quote
            ));
            continue;
        }
        if note.url.starts_with("file://") {
            let read = note.retrieved_at.get(..10).unwrap_or(&note.retrieved_at);
            out.push_str(&format!(
                "[^{n}]: “{}” — from your file `{}`, read {read}\n",
                note.quote,
                note.title.replace('`', "'")
            ));
            continue;
        }
        let title = if note.title.trim().is_empty() {
            note.url.as_str()
        } else {
            note.title.as_str()
        };
        out.push_str(&format!(
            "[^{n}]: “{}” — [{}]({}), retrieved {}\n",
            note.quote,
            title.replace(['[', ']'], ""),
            note.url,
            note.retrieved_at
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_list_each_cited_note_with_its_page_and_time() {
        let note = Note {
            quote: "Six days under 2,000 EUR".into(),
            supports: "budget".into(),
            url: "https://example.com/kyoto".into(),
            title: "Kyoto [guide]".into(),
            retrieved_at: "2026-12-06T20:00:00Z".into(),
        };
        let list = sources(&[note], &[1]);
        assert_eq!(
            list,
            "### Sources\n\n[^1]: “Six days under 2,000 EUR” — [Kyoto guide](https://example.com/kyoto), retrieved 2026-12-06T20:00:00Z\n"
        );
        assert_eq!(sources(&[], &[]), "");
    }
}
