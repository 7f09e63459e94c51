//! The citations `[n]` of a research report: where they stand (a Markdown link `[n](…)` or a
//! footnote definition `[^n]:` is not one), which notes they name, and their footnote form.
//! The one reading of them: the support check (`support.rs`) takes unsupported ones out with
//! [`rewrite`], the check node (`report.rs`) turns the rest into footnotes.

/// A report with its citations checked.
#[derive(Debug, PartialEq)]
pub(super) struct Checked {
    /// The text with `[n]` as footnote references `[^n]`, unknown ones taken out.
    pub text: String,
    /// The note numbers cited, in order of first citation.
    pub cited: Vec<usize>,
    /// Citations that named no note.
    pub unknown: usize,
}

/// The notes (1-based, of `count`) that `text` cites, in order of first citation.
pub(super) fn cited(text: &str, count: usize) -> Vec<usize> {
    citations(text, count).cited
}

/// Finds the citations `[n]` (and `[^n]`) of `report` against `count` notes.
pub(super) fn citations(report: &str, count: usize) -> Checked {
    let mut cited = Vec::new();
    let mut unknown = 0;
    let text = rewrite(report, |marker| match marker.note {
        Some(n) if (1..=count).contains(&n) => {
            if !cited.contains(&n) {
                cited.push(n);
            }
            Some(format!("[^{n}]"))
        }
        _ => {
            unknown += 1;
            None
        }
    });
    Checked {
        text,
        cited,
        unknown,
    }
}

/// One citation as it stands in a report.
pub(super) struct Marker<'a> {
    /// The note it names; `None` for a number too large to be one.
    pub note: Option<usize>,
    /// As written: `[n]` or `[^n]`.
    pub written: &'a str,
}

/// `report` with each citation replaced by what `each` makes of it (`None`: taken out). A
/// Markdown link `[n](…)` or a footnote definition `[^n]:` is not a citation and stays.
pub(super) fn rewrite(report: &str, mut each: impl FnMut(Marker<'_>) -> Option<String>) -> String {
    let mut text = String::with_capacity(report.len());
    let mut rest = report;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let inner_start = usize::from(after.starts_with('^'));
        let digits = after[inner_start..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let close = inner_start + digits;
        let is_citation = digits > 0 && after[close..].starts_with(']');
        let is_other = after[close..].starts_with("]:") || after[close..].starts_with("](");
        if !is_citation || is_other {
            text.push('[');
            rest = after;
            continue;
        }
        let marker = Marker {
            note: after[inner_start..close].parse().ok(),
            written: &rest[open..open + close + 2],
        };
        if let Some(replacement) = each(marker) {
            text.push_str(&replacement);
        }
        rest = &after[close + 1..];
    }
    text.push_str(rest);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_become_footnotes_and_unknown_ones_are_taken_out() {
        let checked = citations(
            "Kyoto is calm [2][1]. Trains are fast [7]. See [1](x) [a]",
            2,
        );
        assert_eq!(
            checked.text,
            "Kyoto is calm [^2][^1]. Trains are fast . See [1](x) [a]"
        );
        assert_eq!(checked.cited, vec![2, 1]);
        assert_eq!(checked.unknown, 1);
        let already = citations("A claim [^1].\n[^1]: a source", 1);
        assert_eq!(already.text, "A claim [^1].\n[^1]: a source");
        assert_eq!(already.cited, vec![1]);
    }
}
