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
    Tokenizer::Estimate.count_message(message)
}

/// Estimated tokens of a request: its messages and the tool definitions offered.
pub fn count_request(messages: &[Message], tools: &[ToolSpec]) -> usize {
    Tokenizer::Estimate.count_request(messages, tools)
}

/// How one model's tokens are counted: its real tokenizer when it is known, else the
/// high-side estimate above.
#[derive(Clone, Debug, Default)]
pub enum Tokenizer {
    /// The estimate (see the module docs).
    #[default]
    Estimate,
}

impl Tokenizer {
    /// The tokenizer for a client of `kind` that may send to any of `models` (a model and
    /// its fallbacks): a real one only when every model is known to use it.
    pub fn for_models(_kind: echo_core::config::ProviderKind, _models: &[String]) -> Tokenizer {
        Tokenizer::Estimate
    }

    /// `estimate`, or the name of the encoding.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Estimate => "estimate",
        }
    }

    /// Tokens of `text`.
    pub fn count_text(&self, text: &str) -> usize {
        match self {
            Self::Estimate => count_text(text),
        }
    }

    /// Tokens of one message: its text, its tool calls and the per-message overhead.
    pub fn count_message(&self, message: &Message) -> usize {
        let calls: usize = message
            .tool_calls
            .iter()
            .map(|c| self.count_text(&c.name) + self.count_text(&c.arguments) + PER_MESSAGE)
            .sum();
        PER_MESSAGE + self.count_text(&message.content) + calls
    }

    /// Tokens of a tool definition as offered to the model.
    pub fn count_tool(&self, tool: &ToolSpec) -> usize {
        self.count_text(&tool.name)
            + self.count_text(&tool.description)
            + self.count_text(&tool.parameters.to_string())
            + PER_MESSAGE
    }

    /// Tokens of a request: its messages and the tool definitions offered.
    pub fn count_request(&self, messages: &[Message], tools: &[ToolSpec]) -> usize {
        let tools: usize = tools.iter().map(|t| self.count_tool(t)).sum();
        messages
            .iter()
            .map(|m| self.count_message(m))
            .sum::<usize>()
            + tools
    }
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
