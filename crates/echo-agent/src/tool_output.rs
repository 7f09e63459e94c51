//! Old tool outputs shortened to fit the context window: the first thing trimming gives up
//! (seed 002), and what the summariser reads of them.
//!
//! JSON keeps its shape: the fields that say what happened ([`KEEP_FIELDS`]) stay whole,
//! long strings keep their start, long arrays their first and last items, deep nesting is
//! elided. Other text keeps its head and tail. Either way a marker names the call id, and
//! `read_tool_output` returns the whole output from the store.

use crate::prompts::{OUTPUT_CUT, OUTPUT_SHORTENED, Prompts};
use echo_core::Message;
use serde_json::Value;

/// Characters of a cut text output kept from its start and from its end.
const OUTPUT_HEAD: usize = 1_200;
const OUTPUT_TAIL: usize = 600;

/// Fields of a JSON output kept whole wherever they appear: they say what happened and
/// where (status and errors, names, paths and links, counts), and are short.
const KEEP_FIELDS: &[&str] = &[
    "code",
    "count",
    "error",
    "errors",
    "exit_code",
    "id",
    "message",
    "name",
    "ok",
    "path",
    "status",
    "success",
    "title",
    "total",
    "type",
    "url",
];
/// A kept field's string is still cut past this many characters.
const KEPT_STRING_MAX: usize = 600;
/// Other strings past this many characters keep their start.
const STRING_MAX: usize = 160;
/// Arrays longer than this keep their first [`ARRAY_HEAD`] and last [`ARRAY_TAIL`] items.
const ARRAY_MAX: usize = 6;
const ARRAY_HEAD: usize = 3;
const ARRAY_TAIL: usize = 2;
/// Objects and arrays nested deeper than this are elided.
const DEPTH_MAX: usize = 6;

/// Whether an output this long would be shortened (cheap: no copy).
pub(crate) fn worth_cutting(text: &str) -> bool {
    text.chars().count() > OUTPUT_HEAD + OUTPUT_TAIL + 200
}

/// A tool output shortened, with a marker that says how to get all of it back, if it is
/// long enough to be worth cutting.
pub(crate) fn cut_tool_output(prompts: &Prompts, message: &Message) -> Option<String> {
    let text = &message.content;
    if !worth_cutting(text) {
        return None;
    }
    let chars = text.chars().count();
    let call_id = message.tool_call_id.as_deref();
    if let Some(short) = shorten_json(text) {
        let kept = short.chars().count();
        let marker = prompts.result_text(
            OUTPUT_SHORTENED,
            serde_json::json!({ "chars": chars, "kept": kept, "call_id": call_id }),
        );
        return Some(format!("{short}\n{marker}"));
    }
    let head: String = text.chars().take(OUTPUT_HEAD).collect();
    let tail: String = text.chars().skip(chars - OUTPUT_TAIL).collect();
    let cut = chars - OUTPUT_HEAD - OUTPUT_TAIL;
    let marker = prompts.result_text(
        OUTPUT_CUT,
        serde_json::json!({ "cut": cut, "call_id": call_id }),
    );
    Some(format!("{head}\n{marker}\n{tail}"))
}

/// `text` as shortened JSON, if it is a JSON object or array and shortening it structurally
/// brings it within the head-and-tail budget (otherwise head and tail serve better).
fn shorten_json(text: &str) -> Option<String> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let short = serde_json::to_string(&shorten(&value, 0, false)).ok()?;
    (short.chars().count() <= OUTPUT_HEAD + OUTPUT_TAIL).then_some(short)
}

fn shorten(value: &Value, depth: usize, kept: bool) -> Value {
    match value {
        Value::String(s) => {
            let max = if kept { KEPT_STRING_MAX } else { STRING_MAX };
            let n = s.chars().count();
            if n <= max {
                value.clone()
            } else {
                let head: String = s.chars().take(max).collect();
                Value::String(format!("{head}… [{} more characters]", n - max))
            }
        }
        Value::Array(items) if depth >= DEPTH_MAX => {
            Value::String(format!("[… {} items]", items.len()))
        }
        Value::Object(fields) if depth >= DEPTH_MAX => {
            Value::String(format!("{{… {} fields}}", fields.len()))
        }
        Value::Array(items) if items.len() > ARRAY_MAX => {
            let mut out: Vec<Value> = items[..ARRAY_HEAD]
                .iter()
                .map(|v| shorten(v, depth + 1, false))
                .collect();
            out.push(Value::String(format!(
                "… {} more items …",
                items.len() - ARRAY_HEAD - ARRAY_TAIL
            )));
            out.extend(
                items[items.len() - ARRAY_TAIL..]
                    .iter()
                    .map(|v| shorten(v, depth + 1, false)),
            );
            Value::Array(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| shorten(v, depth + 1, false)).collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| {
                    let keep = KEEP_FIELDS.contains(&k.to_ascii_lowercase().as_str());
                    (k.clone(), shorten(v, depth + 1, keep))
                })
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn prompts() -> Prompts {
        Prompts::new("/nonexistent".into())
    }

    fn tool(content: String) -> Message {
        Message {
            role: echo_core::Role::Tool,
            content,
            tool_calls: Vec::new(),
            tool_call_id: Some("c7".into()),
            name: Some("search".into()),
        }
    }

    #[test]
    fn short_outputs_are_left_alone() {
        assert_eq!(cut_tool_output(&prompts(), &tool("ok".into())), None);
    }

    #[test]
    fn json_keeps_its_shape_and_the_fields_that_say_what_happened() {
        let hits: Vec<Value> = (0..40)
            .map(|i| {
                json!({
                    "title": format!("Result {i}"),
                    "url": format!("https://example.org/{i}"),
                    "snippet": "lorem ipsum ".repeat(40),
                })
            })
            .collect();
        let output = json!({
            "status": "ok",
            "total": 40,
            "error": null,
            "results": hits,
            "debug": {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}},
        })
        .to_string();
        let cut = cut_tool_output(&prompts(), &tool(output.clone())).expect("cut");
        let (json_part, marker) = cut.rsplit_once('\n').expect("a marker line");
        let short: Value = serde_json::from_str(json_part).expect("still valid JSON");
        assert_eq!(short["status"], "ok");
        assert_eq!(short["total"], 40);
        let results = short["results"].as_array().expect("array");
        assert_eq!(results.len(), ARRAY_HEAD + 1 + ARRAY_TAIL);
        assert_eq!(results[0]["title"], "Result 0");
        assert_eq!(results[0]["url"], "https://example.org/0");
        assert_eq!(results[3], "… 35 more items …");
        assert_eq!(results[5]["title"], "Result 39", "the last items stay");
        assert!(
            results[0]["snippet"]
                .as_str()
                .is_some_and(|s| s.contains("more characters")),
            "long strings keep their start"
        );
        assert!(
            json_part.contains("fields}"),
            "deep nesting is elided: {json_part}"
        );
        assert!(
            marker.contains("read_tool_output with call_id \"c7\""),
            "{marker}"
        );
        assert!(marker.contains(&format!("from {}", output.chars().count())));
    }

    #[test]
    fn text_and_json_that_does_not_shrink_keep_head_and_tail() {
        let log: String = (0..400).map(|i| format!("line {i:03}\n")).collect();
        let cut = cut_tool_output(&prompts(), &tool(log)).expect("cut");
        assert!(cut.starts_with("line 000"));
        assert!(cut.trim_end().ends_with("line 399"));
        assert!(cut.contains("characters of this earlier tool output were cut"));
        // One huge flat object of kept fields cannot shrink structurally enough.
        let wide: serde_json::Map<String, Value> =
            (0..300).map(|i| (format!("field{i}"), json!(i))).collect();
        let cut = cut_tool_output(&prompts(), &tool(Value::Object(wide).to_string())).expect("cut");
        assert!(cut.contains("characters of this earlier tool output were cut"));
    }
}
