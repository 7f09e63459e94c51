//! Small text helpers shared by several crates: one-line error text, and full-text-search
//! terms and queries (SQLite FTS5) that make CJK text searchable.

/// Makes outside text (server bodies, library messages) fit in a one-line error message:
/// whitespace runs, newlines included, become one space; text longer than `max` characters is
/// shortened with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() > max {
        let mut cut: String = out.chars().take(max).collect();
        cut.push('…');
        cut
    } else {
        out
    }
}

/// Whether `c` belongs to a script written without spaces between words.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F // Extensions B..F, Compatibility Supplement
    )
}

/// Text for the FTS index: runs of CJK characters become overlapping bigrams (a lone character
/// stays as it is), so "我喜欢吃鱼" is findable by "吃鱼"; other text passes through for the
/// `unicode61` tokenizer (with Porter stemming) to split.
pub fn fts_terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    let flush = |run: &mut Vec<char>, out: &mut String| {
        match run.len() {
            0 => {}
            1 => {
                out.push(' ');
                out.push(run[0]);
                out.push(' ');
            }
            _ => {
                for pair in run.windows(2) {
                    out.push(' ');
                    out.push(pair[0]);
                    out.push(pair[1]);
                }
                out.push(' ');
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Words that say little about what a text is about; dropped from queries so BM25 does not
/// spend its budget on them.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "had", "has", "have", "he", "her", "him", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "that", "the",
    "their", "them", "they", "this", "to", "was", "we", "were", "what", "when", "where", "which",
    "who", "why", "will", "with", "would", "you", "your",
];

/// The meaningful search terms of `query`, lower-cased, without stop words or repeats (CJK
/// runs as bigrams).
pub fn fts_query_terms(query: &str) -> Vec<String> {
    let terms = fts_terms(query);
    let mut seen = std::collections::HashSet::new();
    terms
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|t| !t.is_empty())
        .filter(|t| t.chars().any(is_cjk) || !STOP_WORDS.contains(&t.as_str()))
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// An FTS5 MATCH expression that ORs `terms`, each quoted so no user text is read as FTS
/// syntax. `None` when there are none.
pub fn fts_or(terms: &[String]) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// An FTS5 MATCH expression that ORs every meaningful term of `query` (CJK as bigrams), each
/// quoted so no user text is read as FTS syntax. `None` when nothing searchable is left.
pub fn fts_query(query: &str) -> Option<String> {
    fts_or(&fts_query_terms(query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_squashes_whitespace_and_shortens() {
        assert_eq!(one_line("a\n  b\tc ", 100), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("", 3), "");
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        assert_eq!(
            fts_terms("我喜欢吃鱼")
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["我喜", "喜欢", "欢吃", "吃鱼"]
        );
        assert_eq!(
            fts_terms("I like 寿司!")
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["I", "like", "寿司", "!"]
        );
        assert_eq!(fts_terms("鱼").trim(), "鱼");
    }

    #[test]
    fn queries_are_quoted_or_terms_without_stop_words() {
        assert_eq!(fts_query("What is my diet?").as_deref(), Some("\"diet\""));
        assert_eq!(fts_query("吃鱼吗").as_deref(), Some("\"吃鱼\" OR \"鱼吗\""));
        assert_eq!(
            fts_query("a \"quoted\" OR NEAR(x)").as_deref(),
            Some("\"quoted\" OR \"near\" OR \"x\"")
        );
        assert_eq!(fts_query("the of ?"), None);
    }
}
