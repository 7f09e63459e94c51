//! Small text helpers shared by every crate that reports outside text in errors.

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

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn one_line_squashes_whitespace_and_shortens() {
        assert_eq!(one_line("a\n  b\tc ", 100), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("", 3), "");
    }
}
