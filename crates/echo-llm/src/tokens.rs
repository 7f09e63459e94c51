//! Counting tokens before a request is sent, so a request never exceeds the model's window.
//!
//! The count is an estimate that errs on the high side, because the tokenizer of the model
//! behind an OpenAI-compatible, Anthropic or Ollama endpoint is not known here: ASCII text
//! counts one token per 3 bytes (real BPE tokenizers average about 4 for English and code),
//! every other character one token (CJK is about one per character), plus a fixed overhead
//! per message and the JSON of tool definitions and calls. Overcounting only trims a little
//! early; undercounting would fail the request.

use echo_core::{Message, ToolSpec};

/// Tokens every message costs beyond its text (role, separators).
const PER_MESSAGE: usize = 4;

/// Estimated tokens of `text`.
pub fn count_text(text: &str) -> usize {
    let mut ascii = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(3) + other
}

/// Estimated tokens of one message.
pub fn count_message(message: &Message) -> usize {
    let calls: usize = message
        .tool_calls
        .iter()
        .map(|c| count_text(&c.name) + count_text(&c.arguments) + PER_MESSAGE)
        .sum();
    PER_MESSAGE + count_text(&message.content) + calls
}

/// Estimated tokens of a request: its messages and the tool definitions offered.
pub fn count_request(messages: &[Message], tools: &[ToolSpec]) -> usize {
    let tools: usize = tools
        .iter()
        .map(|t| {
            count_text(&t.name)
                + count_text(&t.description)
                + count_text(&t.parameters.to_string())
                + PER_MESSAGE
        })
        .sum();
    messages.iter().map(count_message).sum::<usize>() + tools
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_err_high_for_english_and_count_cjk_per_character() {
        // "hello world" is 2 tokens in real BPE vocabularies.
        assert_eq!(count_text("hello world"), 4);
        assert_eq!(count_text("你好世界"), 4);
        assert_eq!(count_text(""), 0);
        let m = Message::user("hello world");
        assert_eq!(count_message(&m), 8);
        assert_eq!(count_request(&[m.clone(), m], &[]), 16);
    }
}
