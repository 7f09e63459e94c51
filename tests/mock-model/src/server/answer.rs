//! The protocol-neutral answer a step gives to a request: text, reasoning, tool calls,
//! finish reason and token counts, plus the helpers that split text into stream pieces.

use serde_json::Value;

use super::protocol::ModelRequest;
use super::script::{Step, ToolCall};

/// What the model "says"; `openai` and `anthropic` render it in their wire formats.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    /// The script's `finish_reason`, used as is by both protocols.
    pub finish_reason: Option<String>,
    pub usage: Usage,
    /// Into how many pieces each text and each tool call's arguments is split.
    pub chunks: usize,
}

/// Token counts in the script's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Answer {
    /// The answer `step` gives to `request`.
    pub fn new(step: &Step, request: &ModelRequest) -> Self {
        let text = if step.echo {
            format!("echo: {}", last_user_text(&request.messages))
        } else {
            step.text.clone().unwrap_or_default()
        };
        let reasoning = step.reasoning.clone().unwrap_or_default();
        let input_chars: usize = request
            .messages
            .iter()
            .map(|m| content_chars(m.get("content")))
            .sum();
        let output_chars = text.chars().count()
            + reasoning.chars().count()
            + step
                .tool_calls
                .iter()
                .map(|c| c.arguments.chars().count())
                .sum::<usize>();
        let scripted = step.usage.unwrap_or_default();
        let usage = Usage {
            input_tokens: scripted.input_tokens.unwrap_or(input_chars as u64 / 4),
            output_tokens: scripted
                .output_tokens
                .unwrap_or((output_chars as u64 / 4).max(1)),
        };
        Self {
            text,
            reasoning,
            tool_calls: step.tool_calls.clone(),
            finish_reason: step.finish_reason.clone(),
            usage,
            chunks: step.chunks(),
        }
    }

    /// `text` split into this answer's number of pieces.
    pub fn pieces<'a>(&self, text: &'a str) -> Vec<&'a str> {
        split(text, self.chunks)
    }
}

/// Splits `text` into `pieces` non-empty parts of nearly equal length in characters
/// (fewer when the text is shorter; none when it is empty).
pub fn split(text: &str, pieces: usize) -> Vec<&str> {
    let chars = text.chars().count();
    let pieces = pieces.max(1).min(chars);
    if pieces == 0 {
        return Vec::new();
    }
    let (base, longer) = (chars / pieces, chars % pieces);
    let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let mut parts = Vec::with_capacity(pieces);
    let mut next_char = 0;
    for piece in 0..pieces {
        let start = starts.get(next_char).copied().unwrap_or(text.len());
        next_char += base + usize::from(piece < longer);
        let end = starts.get(next_char).copied().unwrap_or(text.len());
        parts.push(&text[start..end]);
    }
    parts
}

/// The text of the last user message that has any (so tool-result-only messages are
/// skipped); text parts of a content array are joined with newlines.
fn last_user_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|m| content_text(m.get("content")))
        .find(|text| !text.is_empty())
        .unwrap_or_default()
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Characters of a message's content: a string, or the `text` of its parts, counting
/// text nested in parts' own `content` (tool results).
fn content_chars(content: Option<&Value>) -> usize {
    match content {
        Some(Value::String(text)) => text.chars().count(),
        Some(Value::Array(parts)) => parts.iter().map(|p| content_chars(Some(p))).sum(),
        Some(Value::Object(part)) => {
            let text = part
                .get("text")
                .and_then(Value::as_str)
                .map_or(0, |t| t.chars().count());
            text + content_chars(part.get("content"))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_split(text: &str, pieces: usize, expect: &[&str]) {
        assert_eq!(split(text, pieces), expect, "split({text:?}, {pieces})");
    }

    #[test]
    fn split_makes_near_equal_non_empty_pieces() {
        check_split("abcdefgh", 3, &["abc", "def", "gh"]);
        check_split("abc", 3, &["a", "b", "c"]);
        check_split("ab", 3, &["a", "b"]);
        check_split("", 3, &[]);
        check_split("abc", 0, &["abc"]);
        check_split("héllo wörld", 2, &["héllo ", "wörld"]);
    }

    fn request(messages: Value) -> ModelRequest {
        ModelRequest {
            model: "m".to_owned(),
            messages: messages.as_array().cloned().unwrap_or_default(),
            stream: false,
            include_usage: false,
            tools: Vec::new(),
        }
    }

    #[test]
    fn echo_uses_the_last_user_text() {
        let step = Step {
            echo: true,
            text: Some("ignored".to_owned()),
            ..Step::default()
        };
        let messages = json!([
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "42"}]},
        ]);
        assert_eq!(Answer::new(&step, &request(messages)).text, "echo: a\nb");
    }

    #[test]
    fn usage_is_estimated_from_characters_unless_scripted() {
        let step = Step {
            text: Some("12345678".to_owned()),
            ..Step::default()
        };
        let messages = json!([
            {"role": "system", "content": "0123"},
            {"role": "user", "content": [{"type": "text", "text": "0123"}, {"type": "tool_result", "content": [{"type": "text", "text": "0123"}]}]},
        ]);
        let answer = Answer::new(&step, &request(messages.clone()));
        assert_eq!(
            answer.usage,
            Usage {
                input_tokens: 3,
                output_tokens: 2
            }
        );

        let empty = Answer::new(&Step::default(), &request(json!([])));
        assert_eq!(
            empty.usage,
            Usage {
                input_tokens: 0,
                output_tokens: 1
            }
        );

        let scripted: Step =
            serde_json::from_value(json!({"usage": {"input_tokens": 100}})).expect("valid step");
        let answer = Answer::new(&scripted, &request(messages));
        assert_eq!(
            answer.usage,
            Usage {
                input_tokens: 100,
                output_tokens: 1
            }
        );
    }
}
