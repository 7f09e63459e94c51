//! The support check of a written report: each sentence that cites notes is shown to the
//! model with the quotes it cites (one forced `research_check` call), and every citation
//! whose note the model finds does not support its sentence is taken out before the
//! citations become footnotes (`report.rs`). A check that cannot be made leaves the
//! citations and says so in the report.

use super::Run;
use super::cite::{cited, rewrite};
use super::state::Note;
use crate::model_calls::{call_tool, structured_call_until};
use echo_core::trace::Span;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::ops::Range;

/// Most tokens of the check's answer.
const CHECK_TOKENS: u32 = 1024;

/// A sentence of the report that cites notes.
#[derive(Debug, PartialEq)]
struct Claim {
    /// Where it is in the report.
    range: Range<usize>,
    /// The notes it cites (1-based, existing ones only), in order.
    cites: Vec<usize>,
}

/// A citation the model found unsupported.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Unsupported {
    /// The claim's number.
    claim: usize,
    /// The number of the note it cites that does not support it.
    note: usize,
}

/// The `research_check` call's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct CheckAnswer {
    /// Every citation whose note does not support its claim; empty when all hold.
    #[serde(default)]
    unsupported: Vec<Unsupported>,
}

/// What the check did.
pub(super) enum Checked {
    /// `report` without the `removed` unsupported citations.
    Done { report: String, removed: usize },
    /// The check could not be made (why); the report is as written.
    Failed(String),
}

/// Checks the citations of `report` against `notes` on `span`.
pub(super) async fn check(run: &Run<'_>, span: &Span, report: &str, notes: &[Note]) -> Checked {
    let claims = claims(report, notes.len());
    if claims.is_empty() {
        return Checked::Done {
            report: report.to_string(),
            removed: 0,
        };
    }
    #[derive(Serialize)]
    struct Shown<'a> {
        number: usize,
        quote: &'a str,
    }
    #[derive(Serialize)]
    struct Said<'a> {
        number: usize,
        sentence: &'a str,
        cites: &'a [usize],
    }
    let shown: Vec<Shown> = notes
        .iter()
        .enumerate()
        .map(|(i, n)| Shown {
            number: i + 1,
            quote: &n.quote,
        })
        .collect();
    let said: Vec<Said> = claims
        .iter()
        .enumerate()
        .map(|(k, c)| Said {
            number: k + 1,
            sentence: report[c.range.clone()].trim(),
            cites: &c.cites,
        })
        .collect();
    let asked =
        run.context
            .research_check(&shown, &said, call_tool::<CheckAnswer>("research_check"));
    let (messages, tool) = match asked {
        Ok(asked) => asked,
        Err(e) => return Checked::Failed(e.to_string()),
    };
    if !run.take_call() {
        return Checked::Failed("the model call budget is spent".into());
    }
    let call = (messages, tool, CHECK_TOKENS);
    match structured_call_until::<CheckAnswer>(&run.llm, span, call, &run.stop).await {
        Err(e) => Checked::Failed(e),
        Ok((answer, usage)) => {
            run.used(usage);
            let unsupported: BTreeSet<(usize, usize)> = answer
                .unsupported
                .iter()
                .map(|u| (u.claim, u.note))
                .collect();
            let (report, removed) = without(report, &claims, &unsupported);
            Checked::Done { report, removed }
        }
    }
}

/// The sentences of `report` that cite one of `count` notes. A sentence ends at a line's end
/// or at `.`, `!`, `?` (or their CJK forms) before white space or the end.
fn claims(report: &str, count: usize) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut push = |range: Range<usize>| {
        let cites = cited(&report[range.clone()], count);
        if !cites.is_empty() {
            out.push(Claim { range, cites });
        }
    };
    for (i, c) in report.char_indices() {
        let end = i + c.len_utf8();
        let next_is_space = report[end..].chars().next().is_none_or(char::is_whitespace);
        let stop =
            matches!(c, '。' | '！' | '？') || (matches!(c, '.' | '!' | '?') && next_is_space);
        if c == '\n' || stop {
            push(start..end);
            start = end;
        }
    }
    if start < report.len() {
        push(start..report.len());
    }
    out
}

/// `report` with the citations in `unsupported` (claim number, note number) taken out of their
/// claims, and how many went.
fn without(
    report: &str,
    claims: &[Claim],
    unsupported: &BTreeSet<(usize, usize)>,
) -> (String, usize) {
    let mut text = String::with_capacity(report.len());
    let mut at = 0;
    let mut removed = 0;
    for (k, claim) in claims.iter().enumerate() {
        let drop: Vec<usize> = claim
            .cites
            .iter()
            .copied()
            .filter(|n| unsupported.contains(&(k + 1, *n)))
            .collect();
        if drop.is_empty() {
            continue;
        }
        text.push_str(&report[at..claim.range.start]);
        let sentence = rewrite(&report[claim.range.clone()], |marker| {
            if marker.note.is_some_and(|n| drop.contains(&n)) {
                removed += 1;
                None
            } else {
                Some(marker.written.to_string())
            }
        });
        text.push_str(&sentence);
        at = claim.range.end;
    }
    text.push_str(&report[at..]);
    (text, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_that_cite_are_claims_and_an_unsupported_citation_leaves_only_its_own() {
        let report = "Short answer: rooms fit [1]. Trains are quick [3][2] (see [3](x)).\n\n\
                      ## More\n\nA claim with none. 京都很安静[2]。See [1](x) [9].";
        let found = claims(report, 3);
        let texts: Vec<(&str, &[usize])> = found
            .iter()
            .map(|c| (report[c.range.clone()].trim(), c.cites.as_slice()))
            .collect();
        assert_eq!(
            texts,
            [
                ("Short answer: rooms fit [1].", &[1][..]),
                ("Trains are quick [3][2] (see [3](x)).", &[3, 2][..]),
                ("京都很安静[2]。", &[2][..]),
            ]
        );
        // Note 3 does not support claim 2, note 2 does not support claim 3: only those go.
        let unsupported = BTreeSet::from([(2, 3), (3, 2), (1, 9)]);
        let (text, removed) = without(report, &found, &unsupported);
        assert_eq!(removed, 2);
        assert_eq!(
            text,
            "Short answer: rooms fit [1]. Trains are quick [2] (see [3](x)).\n\n\
             ## More\n\nA claim with none. 京都很安静。See [1](x) [9]."
        );
    }
}
