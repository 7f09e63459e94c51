//! Grammar-constrained decoding with llguidance: before each token is sampled, every token
//! the grammar does not allow is masked out, so a forced call's arguments always parse and
//! follow their JSON schema, and a tool call the model starts always completes as one.
//!
//! llguidance reads the vocabulary through toktrie, built here from the same token bytes the
//! runtime decodes with (no second tokenizer library).

use crate::error::LocalError;
use crate::vocab::Vocab;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{SimpleVob, TokEnv, TokRxInfo, TokTrie, TokenizerEnv};
use llguidance::{Matcher, ParserFactory};
use serde_json::{Value, json};
use std::sync::Arc;

/// The grammar engine for one model's vocabulary.
pub(crate) struct Grammars {
    factory: ParserFactory,
}

struct Env {
    trie: TokTrie,
    vocab: Arc<Vocab>,
}

impl TokenizerEnv for Env {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<u32> {
        // Mostly text, but llguidance also asks for bytes that begin or end inside a
        // character (the rest of a forced literal after a token that ended mid-character).
        // Text goes through the tokenizer; bytes that are not text go byte-wise through the
        // trie (read as text, they would turn into U+FFFD and break the grammar).
        let mut ids = Vec::new();
        let mut rest = s;
        while !rest.is_empty() {
            let (text, bad) = match std::str::from_utf8(rest) {
                Ok(text) => (text, 0),
                Err(e) => {
                    let text = std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default();
                    let bad = e.error_len().unwrap_or(rest.len() - e.valid_up_to());
                    (text, bad)
                }
            };
            ids.extend(self.tokenize_text(text));
            let after = text.len();
            ids.extend(self.trie.greedy_tokenize(&rest[after..after + bad]));
            rest = &rest[after + bad..];
        }
        ids
    }
}

impl Env {
    /// `text` by the tokenizer; a tokenizing failure leaves llguidance its greedy path.
    fn tokenize_text(&self, text: &str) -> Vec<u32> {
        if text.is_empty() {
            return Vec::new();
        }
        self.vocab
            .encode_text(text)
            .unwrap_or_else(|_| self.trie.greedy_tokenize(text.as_bytes()))
    }
}

impl Grammars {
    pub(crate) fn new(vocab: Arc<Vocab>) -> Result<Grammars, LocalError> {
        let words: Vec<Vec<u8>> = (0..vocab.len() as u32)
            .map(|id| {
                let bytes = vocab.token_bytes(id);
                if vocab.is_control(id) {
                    let mut marked = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    marked.extend_from_slice(bytes);
                    marked
                } else {
                    bytes.to_vec()
                }
            })
            .collect();
        let info = TokRxInfo::new(vocab.len() as u32, vocab.eos());
        let trie = TokTrie::from(&info, &words);
        let env: TokEnv = Arc::new(Env { trie, vocab });
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| LocalError::Constraint {
            what: "the vocabulary".into(),
            detail: e.to_string(),
        })?;
        factory.quiet();
        Ok(Grammars { factory })
    }

    /// A matcher for JSON that follows `schema` (a forced call's arguments).
    pub(crate) fn json(&self, what: &str, schema: &Value) -> Result<Constraint, LocalError> {
        let mut schema = schema_or_object(schema);
        closed(&mut schema);
        let schema = compact(schema);
        self.matcher(what, TopLevelGrammar::from_json_schema(schema))
    }

    /// A matcher for a tool call the model starts on its own: one of `tools` by name, with
    /// arguments that follow its schema, written in `form`.
    pub(crate) fn tool_call(
        &self,
        tools: &[crate::ToolDef],
        form: CallForm,
    ) -> Result<Constraint, LocalError> {
        // Each tool's `$defs` move to the root, where their `#/$defs/…` references point.
        let mut defs = serde_json::Map::new();
        let mut one_of = Vec::with_capacity(tools.len());
        for t in tools {
            let mut parameters = schema_or_object(&t.parameters);
            closed(&mut parameters);
            if let Some(Value::Object(own)) =
                parameters.as_object_mut().and_then(|p| p.remove("$defs"))
            {
                for (name, def) in own {
                    match defs.get(&name) {
                        Some(existing) if *existing != def => {
                            return Err(LocalError::Constraint {
                                what: "a tool call".into(),
                                detail: format!(
                                    "two tools define a different schema named {name:?}"
                                ),
                            });
                        }
                        _ => {
                            defs.insert(name, def);
                        }
                    }
                }
            }
            one_of.push(json!({
                "type": "object",
                "properties": {
                    "name": { "const": t.name },
                    "arguments": parameters,
                },
                "required": ["name", "arguments"],
                "additionalProperties": false,
            }));
        }
        let mut schema = json!({ "anyOf": one_of });
        if !defs.is_empty() {
            schema["$defs"] = Value::Object(defs);
        }
        let schema = match form {
            CallForm::Tagged => compact(schema),
            // The model wrote the start of these before the grammar took over, in its own
            // spacing (Qwen2.5-Coder indents them): any spacing, bounded, is taken.
            CallForm::Bare | CallForm::Fenced => guidance(
                schema,
                json!({"whitespace_pattern": "[\\x20\\x0A\\x0D\\x09]{1,24}"}),
            ),
        };
        let start = match form {
            CallForm::Tagged => r#"start: "\n"? call "\n"? "</tool_call>""#,
            CallForm::Bare => "start: SPACE? call\nSPACE: /[ \\t\\r\\n]+/",
            CallForm::Fenced => concat!(
                r#"start: SPACE? FENCE call "\n"? "```""#,
                "\nSPACE: /[ \\t\\r\\n]+/\nFENCE: /```(json)?[ \\t]*\\n/",
            ),
        };
        let lark = format!("{start}\ncall: %json {schema}\n");
        self.matcher("a tool call", TopLevelGrammar::from_lark(lark))
    }

    fn matcher(&self, what: &str, grammar: TopLevelGrammar) -> Result<Constraint, LocalError> {
        let error = |detail: String| LocalError::Constraint {
            what: what.to_string(),
            detail,
        };
        let parser = self
            .factory
            .create_parser(grammar)
            .map_err(|e| error(e.to_string()))?;
        let matcher = Matcher::new(Ok(parser));
        if let Some(e) = matcher.get_error() {
            return Err(error(e));
        }
        Ok(Constraint {
            matcher,
            what: what.to_string(),
        })
    }
}

/// The schema with llguidance's layout options: JSON written as `json.dumps` writes it
/// (`", "` and `": "`), with no other whitespace, so a small model cannot pad its output
/// with newlines until the token limit.
fn compact(schema: Value) -> Value {
    guidance(
        schema,
        json!({
            "whitespace_flexible": false,
            "item_separator": ", ",
            "key_separator": ": ",
        }),
    )
}

/// `schema` with llguidance's JSON options.
fn guidance(mut schema: Value, options: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert("x-guidance".into(), options);
    }
    schema
}

/// Objects that list their properties accept no others unless the schema says so. JSON
/// Schema's default would let a small model invent keys (one wrote `"": true`) that nobody
/// reads; the engine's types ignore unknown keys, so closing them loses nothing.
fn closed(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get("properties").is_some_and(Value::is_object)
        && !map.contains_key("additionalProperties")
    {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(children) = value {
                    children.values_mut().for_each(closed);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = value {
                    children.iter_mut().for_each(closed);
                }
            }
            "items" | "additionalProperties" | "not" => closed(value),
            _ => {}
        }
    }
}

/// A schema with no type (`{}`) accepts anything; a call's arguments are always an object.
fn schema_or_object(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.is_empty() => json!({ "type": "object" }),
        Value::Null => json!({ "type": "object" }),
        other => other.clone(),
    }
}

/// How a tool call the model starts on its own is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallForm {
    /// After `<tool_call>` (the model's own format, which the grammar closes with
    /// `</tool_call>`).
    Tagged,
    /// As the answer itself: `{"name": …, "arguments": …}` and nothing after it.
    Bare,
    /// The same inside a Markdown code fence.
    Fenced,
}

/// One constrained stretch of output.
pub(crate) struct Constraint {
    matcher: Matcher,
    what: String,
}

impl Constraint {
    /// The tokens allowed next.
    pub(crate) fn mask(&mut self) -> Result<SimpleVob, LocalError> {
        self.matcher.compute_mask().map_err(|e| self.error(e))
    }

    /// Takes the token that was sampled.
    pub(crate) fn consume(&mut self, token: u32) -> Result<(), LocalError> {
        self.matcher.consume_token(token).map_err(|e| self.error(e))
    }

    /// Whether the grammar is complete and nothing more may follow.
    pub(crate) fn is_done(&self) -> bool {
        self.matcher.is_stopped()
    }

    /// Whether the output so far is a complete sentence of the grammar.
    pub(crate) fn accepts(&mut self) -> bool {
        self.matcher.is_accepting().unwrap_or(false)
    }

    fn error(&self, e: impl std::fmt::Display) -> LocalError {
        LocalError::Constraint {
            what: self.what.clone(),
            detail: e.to_string(),
        }
    }
}

/// Where a constrained stretch of JSON is: inside a string or not (a quote escaped with a
/// backslash does not count).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JsonPlace {
    in_string: bool,
    escaped: bool,
}

impl JsonPlace {
    /// Moves past `bytes` of output.
    pub(crate) fn advance(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string && b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = !self.in_string;
            }
        }
    }
}

/// Steers a constrained stretch that is about to run out of tokens towards its shortest end,
/// so the call still parses: inside a string only a token that closes it (`"`, perhaps with
/// `}` and `]` after it) may come next; outside one, only a token of `}` and `]`. Where the
/// grammar allows no such token (a required key or an enum value must still be written), the
/// logits are left as they are. Call after [`apply`].
pub(crate) fn close_soon<'a>(
    logits: &mut [f32],
    place: JsonPlace,
    bytes_of: impl Fn(u32) -> &'a [u8],
) {
    let closers = |b: &[u8]| b.iter().all(|c| matches!(c, b'}' | b']'));
    let closes = |id: usize| {
        let b = bytes_of(id as u32);
        if place.in_string {
            b.first() == Some(&b'"') && closers(&b[1..])
        } else {
            !b.is_empty() && closers(b)
        }
    };
    let allowed = |l: &f32| *l > f32::NEG_INFINITY;
    if logits
        .iter()
        .enumerate()
        .any(|(id, l)| allowed(l) && closes(id))
    {
        for (id, logit) in logits.iter_mut().enumerate() {
            if allowed(logit) && !closes(id) {
                *logit = f32::NEG_INFINITY;
            }
        }
    }
}

/// Sets every logit the mask does not allow to minus infinity (and every logit past the
/// vocabulary, which models pad their output layer with).
pub(crate) fn apply(mask: &SimpleVob, logits: &mut [f32]) {
    for (id, logit) in logits.iter_mut().enumerate() {
        if id >= mask.len() || !mask.is_allowed(id as u32) {
            *logit = f32::NEG_INFINITY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stretch_about_to_run_out_is_steered_to_close() {
        let vocab: [&[u8]; 6] = [b"abc", b"\"", b"}", b"\"}]", b",", b"]}"];
        let bytes = |id: u32| vocab[id as usize];
        let mut place = JsonPlace::default();
        place.advance(br#"{"facts": [{"text": "May 3rd \" and"#);
        let mut logits = vec![1.0; 6];
        logits[2] = f32::NEG_INFINITY; // not allowed by the grammar
        close_soon(&mut logits, place, bytes);
        let open: Vec<usize> = (0..6).filter(|&i| logits[i].is_finite()).collect();
        assert_eq!(open, [1, 3], "inside a string: only what closes it");

        place.advance(b"\"");
        let mut logits = vec![1.0; 6];
        close_soon(&mut logits, place, bytes);
        let open: Vec<usize> = (0..6).filter(|&i| logits[i].is_finite()).collect();
        assert_eq!(open, [2, 5], "outside: only brackets that close");

        // Nothing that closes is allowed: the model goes on as it would.
        let mut logits = vec![
            1.0,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            2.0,
            f32::NEG_INFINITY,
        ];
        close_soon(&mut logits, place, bytes);
        assert_eq!(logits[0], 1.0);
        assert_eq!(logits[4], 2.0);
    }

    #[test]
    fn objects_that_list_their_properties_are_closed_unless_they_say_otherwise() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "properties": {"type": "object", "properties": {"a": {"type": "string"}}},
                "free": {"type": "object", "additionalProperties": true},
            },
            "$defs": {"Item": {"anyOf": [{"type": "object", "properties": {"x": {}}}, {"type": "null"}]}},
        });
        closed(&mut schema);
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(
            schema["properties"]["properties"]["additionalProperties"],
            json!(false)
        );
        // A property named "properties" is a property, not a keyword.
        assert!(schema["properties"].get("additionalProperties").is_none());
        assert_eq!(
            schema["properties"]["free"]["additionalProperties"],
            json!(true)
        );
        assert_eq!(
            schema["$defs"]["Item"]["anyOf"][0]["additionalProperties"],
            json!(false)
        );
        assert!(
            schema["$defs"]["Item"]["anyOf"][1]
                .get("additionalProperties")
                .is_none()
        );
    }
}
