//! Counting tokens before a request is sent, so a request never exceeds the model's window.
//!
//! OpenAI's models are counted with their real BPE encoding (`tiktoken-rs`: `o200k_base` for
//! GPT-4o, GPT-4.1, GPT-5 and the o-series, `cl100k_base` for GPT-4 and GPT-3.5), when the
//! model and every fallback are known to use the same one. For every other model (a local
//! one behind an OpenAI-compatible or Ollama endpoint, or Anthropic's, whose tokenizer is not
//! public) the count is an estimate that errs on the high side: ASCII text counts one token
//! per 3 bytes (real BPE tokenizers average about 4 for English and code), every other
//! character one token (CJK is about one per character). Both add a fixed overhead per message
//! and count the JSON of tool definitions and calls. Overcounting only trims a little early;
//! undercounting would fail the request.

use echo_core::config::ProviderKind;
use echo_core::{Message, ToolSpec};
use tiktoken_rs::tokenizer::Tokenizer as Encoding;

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tokenizer {
    /// The estimate (see the module docs).
    #[default]
    Estimate,
    /// OpenAI's `o200k_base` encoding.
    O200kBase,
    /// OpenAI's `cl100k_base` encoding.
    Cl100kBase,
}

impl Tokenizer {
    /// The tokenizer for a client of `kind` that may send to any of `models` (a model and
    /// its fallbacks): a real one only when every model is known to use it. Only OpenAI's own
    /// model names are recognised, on an `openai` server (an Ollama or local server may serve
    /// any model under any name).
    pub fn for_models(kind: ProviderKind, models: &[String]) -> Tokenizer {
        if kind != ProviderKind::Openai || models.is_empty() {
            return Tokenizer::Estimate;
        }
        let mut found = None;
        for model in models {
            let this = match tiktoken_rs::tokenizer::get_tokenizer(model) {
                Some(Encoding::O200kBase) => Tokenizer::O200kBase,
                Some(Encoding::Cl100kBase) => Tokenizer::Cl100kBase,
                _ => return Tokenizer::Estimate,
            };
            if found.is_some_and(|f| f != this) {
                return Tokenizer::Estimate;
            }
            found = Some(this);
        }
        found.unwrap_or_default()
    }

    /// `estimate`, or the name of the encoding.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Estimate => "estimate",
            Self::O200kBase => "o200k_base",
            Self::Cl100kBase => "cl100k_base",
        }
    }

    /// Tokens of `text`. (Each encoding is loaded once per process, on first use.)
    pub fn count_text(&self, text: &str) -> usize {
        match self {
            Self::Estimate => count_text(text),
            Self::O200kBase => tiktoken_rs::o200k_base_singleton().count_ordinary(text),
            Self::Cl100kBase => tiktoken_rs::cl100k_base_singleton().count_ordinary(text),
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

    #[test]
    fn openai_models_get_their_encoding_and_everything_else_the_estimate() {
        let models = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let pick = |kind, names: &[&str]| Tokenizer::for_models(kind, &models(names));
        assert_eq!(
            pick(ProviderKind::Openai, &["gpt-4o"]),
            Tokenizer::O200kBase
        );
        assert_eq!(
            pick(ProviderKind::Openai, &["gpt-4.1-mini", "gpt-4o-mini"]),
            Tokenizer::O200kBase
        );
        assert_eq!(
            pick(ProviderKind::Openai, &["gpt-4-0613"]),
            Tokenizer::Cl100kBase
        );
        // A fallback with another (or an unknown) encoding: the estimate covers both.
        assert_eq!(
            pick(ProviderKind::Openai, &["gpt-4o", "gpt-4-0613"]),
            Tokenizer::Estimate
        );
        assert_eq!(
            pick(ProviderKind::Openai, &["gpt-4o", "llama3"]),
            Tokenizer::Estimate
        );
        assert_eq!(pick(ProviderKind::Ollama, &["gpt-4o"]), Tokenizer::Estimate);
        assert_eq!(
            pick(ProviderKind::Anthropic, &["claude-sonnet-4"]),
            Tokenizer::Estimate
        );
    }

    #[test]
    fn real_encodings_count_fewer_tokens_than_the_estimate() {
        let text = "The quick brown fox jumps over the lazy dog. fn main() { println!(\"hi\"); }";
        let real = Tokenizer::O200kBase.count_text(text);
        // Known count for this text under o200k_base.
        assert!((18..=24).contains(&real), "{real}");
        assert!(real < Tokenizer::Estimate.count_text(text));
        assert_eq!(Tokenizer::O200kBase.count_text("hello world"), 2);
        assert_eq!(Tokenizer::Cl100kBase.count_text("hello world"), 2);
        assert_eq!(Tokenizer::O200kBase.name(), "o200k_base");
    }
}
