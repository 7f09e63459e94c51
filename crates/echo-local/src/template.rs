//! The prompt text of a conversation, rendered with the model's own chat template
//! (`tokenizer.chat_template`, a Jinja template) by minijinja, with Python's string methods
//! from minijinja-contrib, which Hugging Face templates use.
//!
//! Templates that know tools (Qwen's) get the tools and the calls as they expect them. For a
//! template that does not (SmolLM2's), the tool list follows the system message and calls
//! and results are written into the turns in the same `<tool_call>` / `<tool_response>` form,
//! the one the runtime parses and constrains.

use crate::error::LocalError;
use crate::{ChatMessage, ChatRole, ToolDef};
use minijinja::{Environment, Error, ErrorKind, context};
use serde_json::{Value, json};

/// How the built-in runtime explains tools to a model whose template has no tool support.
const TOOLS_PROMPT: &str = include_str!("../../../prompts/local/tools.md");

/// ChatML, for the rare GGUF that carries no template but uses its tokens.
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + \
                      message['content'] + '<|im_end|>\\n' }}{% endfor %}{% if \
                      add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/// One model's chat template.
pub(crate) struct ChatTemplate {
    env: Environment<'static>,
    knows_tools: bool,
    bos: String,
    eos: String,
}

impl ChatTemplate {
    /// Compiles `source` (or ChatML when the file has none).
    pub(crate) fn new(source: Option<&str>, bos: &str, eos: &str) -> Result<Self, LocalError> {
        let source = source.unwrap_or(CHATML).to_string();
        let knows_tools = source.contains("tools");
        let mut env = Environment::new();
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function(
            "raise_exception",
            |message: String| -> Result<String, Error> {
                Err(Error::new(ErrorKind::InvalidOperation, message))
            },
        );
        env.add_template_owned("chat", source)
            .map_err(|e| LocalError::Template(e.to_string()))?;
        Ok(Self {
            env,
            knows_tools,
            bos: bos.to_string(),
            eos: eos.to_string(),
        })
    }

    /// The prompt for `messages` with `tools` offered, ending where the assistant's answer
    /// starts when `answer` is set.
    pub(crate) fn render(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolDef],
        answer: bool,
    ) -> Result<String, LocalError> {
        let (messages, tools) = if self.knows_tools {
            (
                messages.iter().map(native).collect::<Vec<_>>(),
                tools.iter().map(tool_json).collect::<Vec<_>>(),
            )
        } else {
            (written_out(messages, tools), Vec::new())
        };
        let template = self
            .env
            .get_template("chat")
            .map_err(|e| LocalError::Template(e.to_string()))?;
        let tools = (!tools.is_empty()).then_some(tools);
        template
            .render(context! {
                messages => messages,
                tools => tools,
                add_generation_prompt => answer,
                bos_token => self.bos,
                eos_token => self.eos,
            })
            .map_err(|e| LocalError::Template(e.to_string()))
    }
}

/// The text of one call as the model writes it.
pub(crate) fn call_text(name: &str, arguments: &str) -> String {
    let arguments = serde_json::from_str::<Value>(arguments).unwrap_or(Value::Null);
    format!(
        "<tool_call>\n{}\n</tool_call>",
        json!({ "name": name, "arguments": arguments })
    )
}

fn tool_json(tool: &ToolDef) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
    })
}

/// A message as Hugging Face templates expect it.
fn native(m: &ChatMessage) -> Value {
    let mut out = json!({ "role": m.role.as_str(), "content": m.content });
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                let arguments = serde_json::from_str::<Value>(&c.arguments)
                    .unwrap_or_else(|_| Value::String(c.arguments.clone()));
                json!({ "type": "function", "function": { "name": c.name, "arguments": arguments } })
            })
            .collect();
        out["tool_calls"] = Value::Array(calls);
    }
    out
}

/// The conversation for a template without tool support: calls and results written into
/// the turns, and the tool list as a system message right after the first system message
/// (the most stable part of the prompt). The engine keeps a session's tool list the same
/// from turn to turn where it can, so the prefix cache then keeps everything up to the new
/// message; when the list changes, the history after it is processed again.
fn written_out(messages: &[ChatMessage], tools: &[ToolDef]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    for m in messages {
        match m.role {
            ChatRole::System => out.push(json!({ "role": "system", "content": m.content })),
            ChatRole::User => out.push(json!({ "role": "user", "content": m.content })),
            ChatRole::Assistant => {
                let mut content = m.content.clone();
                for c in &m.tool_calls {
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    content.push_str(&call_text(&c.name, &c.arguments));
                }
                out.push(json!({ "role": "assistant", "content": content }));
            }
            ChatRole::Tool => out.push(json!({
                "role": "user",
                "content": format!("<tool_response>\n{}\n</tool_response>", m.content),
            })),
        }
    }
    if !tools.is_empty() {
        let list: Vec<String> = tools.iter().map(|t| tool_json(t).to_string()).collect();
        let block = json!({
            "role": "system",
            "content": TOOLS_PROMPT.replace("{tools}", &list.join("\n")),
        });
        let at = usize::from(messages.first().is_some_and(|m| m.role == ChatRole::System));
        out.insert(at, block);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallText;

    const QWEN_LIKE: &str = "{%- if tools %}<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools>{% endif %}\
        {%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}\
        {%- if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{{ c.function.name }} {{ c.function.arguments | tojson }}</tool_call>{% endfor %}{% endif %}\
        {%- if m.content.startswith('<') %}!{% endif %}<|im_end|>\n{% endfor %}\
        {%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

    fn conversation() -> Vec<ChatMessage> {
        vec![
            ChatMessage::new(ChatRole::System, "Be brief."),
            ChatMessage::new(ChatRole::User, "Hi."),
            ChatMessage::new(ChatRole::Assistant, "Hello."),
            ChatMessage::new(ChatRole::User, "Weather?"),
            ChatMessage {
                role: ChatRole::Assistant,
                content: String::new(),
                tool_calls: vec![CallText {
                    name: "weather".into(),
                    arguments: r#"{"city":"Oslo"}"#.into(),
                }],
            },
            ChatMessage::new(ChatRole::Tool, "rain"),
        ]
    }

    fn tools() -> Vec<ToolDef> {
        vec![ToolDef {
            name: "weather".into(),
            description: "Weather by city".into(),
            parameters: json!({"type": "object"}),
        }]
    }

    #[test]
    fn a_template_with_tools_gets_them_natively() {
        let t = ChatTemplate::new(Some(QWEN_LIKE), "", "<|im_end|>").expect("template");
        let text = t.render(&conversation(), &tools(), true).expect("render");
        assert!(text.starts_with("<tools>{\"function\""), "{text}");
        assert!(
            text.contains("<tool_call>weather {\"city\":\"Oslo\"}</tool_call>"),
            "{text}"
        );
        assert!(text.contains("<|im_start|>tool\nrain<|im_end|>"), "{text}");
        assert!(text.ends_with("<|im_start|>assistant\n"), "{text}");
    }

    #[test]
    fn a_template_without_tools_gets_them_written_out() {
        let t = ChatTemplate::new(None, "", "<|im_end|>").expect("template");
        let text = t.render(&conversation(), &tools(), true).expect("render");
        assert!(
            text.starts_with(
                "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>system\n# Tools"
            ),
            "{text}"
        );
        // The tool list comes before the whole conversation, so it stays in the prefix
        // cache as the conversation grows.
        let tools_at = text.find("# Tools").expect("tool list");
        assert!(
            tools_at < text.find("Hi.").expect("first message"),
            "{text}"
        );
        assert!(text.contains("\"name\":\"weather\""), "{text}");
        assert!(
            text.contains("<tool_call>\n{\"arguments\":{\"city\":\"Oslo\"},\"name\":\"weather\"}\n</tool_call>")
                || text.contains("<tool_call>\n{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"}}\n</tool_call>"),
            "{text}"
        );
        assert!(
            text.contains("<|im_start|>user\n<tool_response>\nrain\n</tool_response><|im_end|>"),
            "{text}"
        );
    }

    #[test]
    fn a_broken_template_is_an_error() {
        assert!(matches!(
            ChatTemplate::new(Some("{% for %}"), "", ""),
            Err(LocalError::Template(_))
        ));
        let t = ChatTemplate::new(Some("{{ raise_exception('no system role') }}"), "", "")
            .expect("compiles");
        let e = t
            .render(&conversation(), &[], true)
            .err()
            .map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("no system role")));
    }
}
