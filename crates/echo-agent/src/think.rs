//! Removing `<think>…</think>` reasoning from model text, whole or while it streams.
//!
//! Reasoning must never reach saved history or the final event: the next turn would treat it
//! as fact. Models emit complete blocks, a lone `</think>` (the chat template opened the block)
//! or an unclosed `<think>` (cut off); all three are handled.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits model text into the visible answer and the reasoning removed from it.
pub fn strip_think(text: &str) -> (String, String) {
    let mut visible = String::new();
    let mut reasoning = Vec::new();
    let mut rest = text;
    // A lone closing tag before any opening tag: everything before it was reasoning.
    if let Some(close) = rest.find(CLOSE)
        && rest.find(OPEN).is_none_or(|open| open > close)
    {
        reasoning.push(rest[..close].trim().to_string());
        rest = &rest[close + CLOSE.len()..];
    }
    loop {
        match rest.find(OPEN) {
            None => {
                visible.push_str(&rest.replace(CLOSE, ""));
                break;
            }
            Some(open) => {
                visible.push_str(&rest[..open].replace(CLOSE, ""));
                let inner = &rest[open + OPEN.len()..];
                match inner.find(CLOSE) {
                    Some(close) => {
                        reasoning.push(inner[..close].trim().to_string());
                        rest = &inner[close + CLOSE.len()..];
                    }
                    None => {
                        reasoning.push(inner.trim().to_string());
                        break;
                    }
                }
            }
        }
    }
    reasoning.retain(|r| !r.is_empty());
    (visible.trim().to_string(), reasoning.join("\n\n"))
}

/// A piece of streamed text after filtering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Visible answer text.
    Text(String),
    /// Reasoning text.
    Reasoning(String),
}

/// Streaming version of [`strip_think`]: feed chunks as they arrive; tags split across chunks
/// are held back until they can be recognised. A lone `</think>` is dropped (text before it
/// was already shown; the final event carries the corrected answer).
#[derive(Debug, Default)]
pub struct ThinkFilter {
    in_think: bool,
    pending: String,
}

impl ThinkFilter {
    /// Filters one chunk.
    pub fn push(&mut self, chunk: &str) -> Vec<Piece> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(chunk);
        let mut out = Vec::new();
        let mut rest = buf.as_str();
        loop {
            if self.in_think {
                if let Some(i) = rest.find(CLOSE) {
                    emit(&mut out, Piece::Reasoning(rest[..i].to_string()));
                    self.in_think = false;
                    rest = &rest[i + CLOSE.len()..];
                    continue;
                }
                let keep = partial_suffix(rest, &[CLOSE]);
                emit(
                    &mut out,
                    Piece::Reasoning(rest[..rest.len() - keep].to_string()),
                );
                self.pending = rest[rest.len() - keep..].to_string();
                return out;
            }
            let open = rest.find(OPEN);
            let close = rest.find(CLOSE);
            match (open, close) {
                (Some(o), c) if c.is_none_or(|c| o < c) => {
                    emit(&mut out, Piece::Text(rest[..o].to_string()));
                    self.in_think = true;
                    rest = &rest[o + OPEN.len()..];
                }
                (_, Some(c)) => {
                    emit(&mut out, Piece::Text(rest[..c].to_string()));
                    rest = &rest[c + CLOSE.len()..];
                }
                _ => {
                    let keep = partial_suffix(rest, &[OPEN, CLOSE]);
                    emit(&mut out, Piece::Text(rest[..rest.len() - keep].to_string()));
                    self.pending = rest[rest.len() - keep..].to_string();
                    return out;
                }
            }
        }
    }

    /// Flushes text held back at the end of the stream.
    pub fn finish(&mut self) -> Vec<Piece> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        if self.in_think {
            emit(&mut out, Piece::Reasoning(rest));
        } else {
            emit(&mut out, Piece::Text(rest));
        }
        out
    }
}

fn emit(out: &mut Vec<Piece>, piece: Piece) {
    match &piece {
        Piece::Text(t) | Piece::Reasoning(t) if t.is_empty() => {}
        _ => out.push(piece),
    }
}

/// Length of the longest suffix of `s` that is a proper prefix of one of `tags`.
fn partial_suffix(s: &str, tags: &[&str]) -> usize {
    let mut best = 0;
    for tag in tags {
        for len in (1..tag.len()).rev() {
            if len <= s.len()
                && s.is_char_boundary(s.len() - len)
                && tag.starts_with(&s[s.len() - len..])
            {
                best = best.max(len);
                break;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, visible: &str, reasoning: &str) {
        assert_eq!(
            strip_think(input),
            (visible.to_string(), reasoning.to_string()),
            "{input:?}"
        );
    }

    #[test]
    fn strips_every_shape_of_think() {
        check("hello", "hello", "");
        check("<think>plan</think>Answer", "Answer", "plan");
        check("<think>a</think>x<think>b</think>y", "xy", "a\n\nb");
        check("plan only</think>\n\nAnswer", "Answer", "plan only");
        check("Answer<think>cut off", "Answer", "cut off");
        check("<think>\n</think>\nAnswer", "Answer", "");
        check("A</think>B</think>C", "BC", "A");
        check(
            "caf\u{e9} <think>\u{4f60}\u{597d}</think>ok",
            "caf\u{e9} ok",
            "\u{4f60}\u{597d}",
        );
    }

    fn stream(chunks: &[&str]) -> (String, String) {
        let mut f = ThinkFilter::default();
        let mut pieces = Vec::new();
        for c in chunks {
            pieces.extend(f.push(c));
        }
        pieces.extend(f.finish());
        let mut text = String::new();
        let mut reasoning = String::new();
        for p in pieces {
            match p {
                Piece::Text(t) => text.push_str(&t),
                Piece::Reasoning(r) => reasoning.push_str(&r),
            }
        }
        (text, reasoning)
    }

    #[test]
    fn streaming_filter_handles_tags_split_across_chunks() {
        assert_eq!(
            stream(&["<thi", "nk>pl", "an</th", "ink>Ans", "wer"]),
            ("Answer".into(), "plan".into())
        );
        assert_eq!(stream(&["a <", "b"]), ("a <b".into(), String::new()));
        assert_eq!(stream(&["x<", "/think>y"]), ("xy".into(), String::new()));
        assert_eq!(
            stream(&["<think>never closed"]),
            (String::new(), "never closed".into())
        );
        assert_eq!(
            stream(&["ends with <th"]),
            ("ends with <th".into(), String::new())
        );
        assert_eq!(
            stream(&["\u{4f60}<think>\u{597d}</think>\u{5417}"]),
            ("\u{4f60}\u{5417}".into(), "\u{597d}".into())
        );
    }
}
