//! The citations `[n]` of a research report: where they stand (a Markdown link `[n](…)` or a
//! footnote definition `[^n]:` is not one), which notes they name, and their footnote form.
//! Read by the support check (`support.rs`) and the check node (`report.rs`).

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
    let mut text = String::with_capacity(report.len());
    let mut cited = Vec::new();
    let mut unknown = 0;
    let mut rest = report;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let inner_start = usize::from(after.starts_with('^'));
        let digits: String = after[inner_start..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let close = inner_start + digits.len();
        let is_citation = !digits.is_empty() && after[close..].starts_with(']');
        // A footnote definition `[^n]:` or a Markdown link `[1](…)` is not a citation.
        let is_other = after[close..].starts_with("]:") || after[close..].starts_with("](");
        if !is_citation || is_other {
            text.push('[');
            rest = after;
            continue;
        }
        match digits.parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => {
                text.push_str(&format!("[^{n}]"));
                if !cited.contains(&n) {
                    cited.push(n);
                }
            }
            _ => unknown += 1,
        }
        rest = &after[close + 1..];
    }
    text.push_str(rest);
    Checked {
        text,
        cited,
        unknown,
    }
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
