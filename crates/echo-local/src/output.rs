//! What the model writes, turned into text events and tool calls.
//!
//! A tool call the model starts on its own is written in its own format, after
//! `<tool_call>`. Some models (Qwen2.5-Coder) leave the tag out and answer with the call
//! itself, `{"name": …, "arguments": …}`, sometimes in a code fence, as llama.cpp's parser for
//! this family also accepts. So when tools are offered, the start of an answer is held back
//! while it can still be such a call; once it is one, the rest is written under the call's
//! grammar like a tagged call.

use crate::constrain::{CallForm, Constraint};
use crate::error::LocalError;
use crate::vocab::Vocab;
use crate::{CallText, Event};
use std::sync::Arc;

/// The marker that starts a tool call in the runtime's call format.
pub(crate) const CALL_OPEN: &str = "<tool_call>";

/// Turns sampled tokens into text events and tool calls.
pub(crate) struct Output {
    vocab: Arc<Vocab>,
    /// Whether tool calls are watched for.
    tools: bool,
    /// Bytes not yet valid UTF-8.
    bytes: Vec<u8>,
    /// Text held back because it may be the start of a tool call.
    held: String,
    /// While the answer may still begin with an untagged call: the tokens it has so far.
    bare: Option<Vec<u32>>,
    /// The call being written: its form, constraint and text so far.
    in_call: Option<(CallForm, Constraint)>,
    call: Vec<u8>,
    /// A forced call's arguments.
    pub(crate) args: Vec<u8>,
}

/// Whether text can still be, or already is, the start of an untagged call.
#[derive(Debug, PartialEq)]
enum Start {
    Is(CallForm),
    Maybe,
    Not,
}

impl Output {
    pub(crate) fn new(vocab: Arc<Vocab>, tools: bool) -> Self {
        Self {
            vocab,
            tools,
            bytes: Vec::new(),
            held: String::new(),
            bare: tools.then(Vec::new),
            in_call: None,
            call: Vec::new(),
            args: Vec::new(),
        }
    }

    /// Whether a call is being written (its tokens are constrained).
    pub(crate) fn in_call(&self) -> bool {
        self.in_call.is_some()
    }

    /// What the call being written has written so far.
    pub(crate) fn call_so_far(&self) -> &[u8] {
        &self.call
    }

    /// The constraint of the call being written.
    pub(crate) fn constraint(&mut self) -> Option<&mut Constraint> {
        self.in_call.as_mut().map(|(_, c)| c)
    }

    /// Takes one sampled token; returns a call when this token completed one. When the
    /// token starts a call, `open` gives the grammar for its form.
    pub(crate) fn take_token(
        &mut self,
        token: u32,
        open: &mut dyn FnMut(CallForm) -> Result<Constraint, LocalError>,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Option<CallText>, LocalError> {
        if let Some((form, c)) = self.in_call.as_mut() {
            let form = *form;
            c.consume(token)?;
            self.call.extend_from_slice(self.vocab.token_bytes(token));
            if !c.is_done() {
                return Ok(None);
            }
            self.in_call = None;
            self.held.clear();
            let text = String::from_utf8_lossy(&std::mem::take(&mut self.call)).into_owned();
            return Ok(parse_call(&text, form));
        }
        if self.vocab.is_control(token) {
            return Ok(None);
        }
        if let Some(tokens) = self.bare.as_mut() {
            tokens.push(token);
        }
        self.bytes.extend_from_slice(self.vocab.token_bytes(token));
        let text = take_utf8(&mut self.bytes);
        if text.is_empty() {
            return Ok(None);
        }
        if !self.tools {
            emit(Event::Text(text));
            return Ok(None);
        }
        self.held.push_str(&text);
        if self.bare.is_some() {
            match bare_start(&self.held) {
                Start::Maybe => return Ok(None),
                Start::Is(form) => {
                    if self.open_bare(form, open)? {
                        return Ok(None);
                    }
                }
                Start::Not => self.bare = None,
            }
        }
        if self.held.ends_with(CALL_OPEN) {
            let before = self.held.len() - CALL_OPEN.len();
            if before > 0 {
                emit(Event::Text(self.held[..before].to_string()));
                self.held.drain(..before);
            }
            self.in_call = Some((CallForm::Tagged, open(CallForm::Tagged)?));
            return Ok(None);
        }
        // Keep back the longest end that could still become `<tool_call>`.
        let keep = (1..CALL_OPEN.len())
            .rev()
            .find(|&k| {
                self.held.len() >= k
                    && self.held.is_char_boundary(self.held.len() - k)
                    && CALL_OPEN.starts_with(&self.held[self.held.len() - k..])
            })
            .unwrap_or(0);
        let ready = self.held.len() - keep;
        if ready > 0 {
            emit(Event::Text(self.held[..ready].to_string()));
            self.held.drain(..ready);
        }
        Ok(None)
    }

    /// Goes on with the answer's start as an untagged call, under the call's grammar from
    /// its first token. False when the grammar refuses what was written (an unusual spacing,
    /// say): the answer is then text.
    fn open_bare(
        &mut self,
        form: CallForm,
        open: &mut dyn FnMut(CallForm) -> Result<Constraint, LocalError>,
    ) -> Result<bool, LocalError> {
        let tokens = self.bare.take().unwrap_or_default();
        let mut c = open(form)?;
        if tokens.iter().try_for_each(|&t| c.consume(t)).is_err() {
            return Ok(false);
        }
        self.call = std::mem::take(&mut self.held).into_bytes();
        self.in_call = Some((form, c));
        Ok(true)
    }

    /// Sends what was held back.
    pub(crate) fn flush(&mut self, emit: &mut dyn FnMut(Event)) {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.bytes)).into_owned();
        self.held.push_str(&rest);
        if self.in_call.is_none() && !self.held.is_empty() {
            emit(Event::Text(std::mem::take(&mut self.held)));
        }
    }
}

/// Whether an answer that begins with `text` is an untagged call: `{"name":`, maybe inside
/// a ```` ``` ```` or ```` ```json ```` fence, with any spacing (the grammar is stricter, and
/// has the last word).
fn bare_start(text: &str) -> Start {
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut start = Start::Not;
    for (head, form) in [
        (r#"{"name":"#, CallForm::Bare),
        (r#"```json{"name":"#, CallForm::Fenced),
        (r#"```{"name":"#, CallForm::Fenced),
    ] {
        if squeezed.starts_with(head) {
            return Start::Is(form);
        }
        if head.starts_with(&squeezed) {
            start = Start::Maybe;
        }
    }
    start
}

/// The valid UTF-8 at the start of `bytes`, removed from it; an incomplete character at the
/// end stays for the next token, invalid bytes become U+FFFD.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            let s = s.to_string();
            bytes.clear();
            s
        }
        Err(e) if e.error_len().is_none() => {
            let valid = e.valid_up_to();
            let s = String::from_utf8_lossy(&bytes[..valid]).into_owned();
            bytes.drain(..valid);
            s
        }
        Err(_) => String::from_utf8_lossy(&std::mem::take(bytes)).into_owned(),
    }
}

/// The call in its text: after `<tool_call>` (`{"name": …, "arguments": …}\n</tool_call>`),
/// or the whole answer, bare or fenced.
fn parse_call(text: &str, form: CallForm) -> Option<CallText> {
    let text = text.trim();
    let body = match form {
        CallForm::Tagged => text.strip_suffix("</tool_call>")?,
        CallForm::Bare => text,
        CallForm::Fenced => {
            let inner = text.strip_prefix("```")?.strip_suffix("```")?;
            inner.strip_prefix("json").unwrap_or(inner)
        }
    };
    let value: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    Some(CallText {
        name: value.get("name")?.as_str()?.to_string(),
        arguments: value.get("arguments")?.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constrain::Grammars;

    /// What `Output` makes of `answer` written as the CI model's tokens, with `read_file`
    /// offered, through the same grammars the worker uses.
    fn events_of(answer: &str) -> Vec<Event> {
        let header = crate::gguf::read_header(&crate::ci_model::model_path()).expect("header");
        let vocab = Arc::new(Vocab::from_gguf(&header.metadata).expect("vocabulary"));
        let grammars = Grammars::new(vocab.clone()).expect("grammars");
        let tools = [crate::ToolDef {
            name: "read_file".into(),
            description: "Reads a file".into(),
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            }),
        }];
        let mut out = Output::new(vocab.clone(), true);
        let mut events = Vec::new();
        let mut open = |form| grammars.tool_call(&tools, form);
        for token in vocab.encode_text(answer).expect("tokens") {
            if let Some(call) = out
                .take_token(token, &mut open, &mut |e| events.push(e))
                .expect("the grammar takes the token")
            {
                events.push(Event::ToolCall(call));
            }
        }
        out.flush(&mut |e| events.push(e));
        events
    }

    fn text_of(events: &[Event]) -> String {
        let mut text = String::new();
        for e in events {
            match e {
                Event::Text(t) => text.push_str(t),
                Event::ToolCall(c) => panic!("a call where text belonged: {c:?}"),
            }
        }
        text
    }

    #[test]
    fn an_untagged_call_at_the_start_of_the_answer_is_a_call() {
        let call = r#"{"name": "read_file", "arguments": {"path": "shopping.txt"}}"#;
        let read = Event::ToolCall(CallText {
            name: "read_file".into(),
            arguments: r#"{"path":"shopping.txt"}"#.into(),
        });
        for answer in [
            call.to_string(),
            format!("\n{call}"),
            format!("```json\n{call}\n```"),
            format!("<tool_call>\n{call}\n</tool_call>"),
            // As Qwen2.5-Coder-0.5B wrote it, by hand.
            "{\n\"name\": \"read_file\",\n\"arguments\": {\n\"path\": \"shopping.txt\"\n}\n}"
                .to_string(),
        ] {
            assert_eq!(
                events_of(&answer),
                std::slice::from_ref(&read),
                "{answer:?}"
            );
        }
        // Not calls: other JSON, a call after some text, more spacing than the grammar
        // takes, a code block, a start cut short. (A tool that is not offered cannot be
        // named: the grammar masks it out, as it does for tagged calls.)
        for answer in [
            r#"{"answer": 42}"#.to_string(),
            format!("Here it is: {call}"),
            format!(
                "{{{}\"name\": \"read_file\", \"arguments\": {{}}}}",
                " ".repeat(30)
            ),
            "```python\nprint(1)\n```".to_string(),
            "{".to_string(),
        ] {
            assert_eq!(text_of(&events_of(&answer)), answer);
        }
    }

    #[test]
    fn utf8_is_cut_only_between_characters() {
        let mut bytes = "é🎉".as_bytes().to_vec();
        bytes.truncate(4);
        assert_eq!(take_utf8(&mut bytes), "é");
        assert_eq!(bytes.len(), 2);
        bytes.extend_from_slice(&"🎉".as_bytes()[2..]);
        assert_eq!(take_utf8(&mut bytes), "🎉");
        assert!(bytes.is_empty());
    }

    #[test]
    fn calls_are_parsed_from_their_block() {
        let call = parse_call(
            "\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>",
            CallForm::Tagged,
        );
        let f = Some(CallText {
            name: "f".into(),
            arguments: "{\"a\":1}".into(),
        });
        assert_eq!(call, f);
        assert_eq!(
            parse_call("{\"name\": 1}</tool_call>", CallForm::Tagged),
            None
        );
        let bare = "{\"name\": \"f\", \"arguments\": {\"a\": 1}}";
        assert_eq!(parse_call(bare, CallForm::Bare), f);
        assert_eq!(parse_call(bare, CallForm::Tagged), None, "no closing tag");
        let fenced = format!("```json\n{bare}\n```");
        assert_eq!(parse_call(&fenced, CallForm::Fenced), f);
        assert_eq!(parse_call(&format!("```{bare}```"), CallForm::Fenced), f);
    }

    #[test]
    fn an_answer_is_held_while_it_may_be_an_untagged_call() {
        assert_eq!(bare_start(""), Start::Maybe);
        assert_eq!(bare_start("\n "), Start::Maybe);
        assert_eq!(bare_start("{\"na"), Start::Maybe);
        assert_eq!(bare_start(" {\n  \"name\" :"), Start::Is(CallForm::Bare));
        assert_eq!(bare_start("``"), Start::Maybe);
        assert_eq!(bare_start("```js"), Start::Maybe);
        assert_eq!(
            bare_start("```json\n{\"name\":"),
            Start::Is(CallForm::Fenced)
        );
        assert_eq!(bare_start("```\n{\"name\":"), Start::Is(CallForm::Fenced));
        assert_eq!(bare_start("```python"), Start::Not);
        assert_eq!(bare_start("{\"answer\""), Start::Not);
        assert_eq!(bare_start("Hello"), Start::Not);
    }
}
