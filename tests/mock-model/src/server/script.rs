//! The script the mock answers from, and the step counters that walk it
//! (docs/mock-model.md, "Script").

use serde::Deserialize;

/// A whole script: `{"steps": [STEP, ...], "default": STEP?}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub steps: Vec<Step>,
    /// When set, model requests must carry this key (`Authorization: Bearer` or `x-api-key`).
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub default: Option<Step>,
}

/// One scripted answer. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub model: Option<String>,
    /// Only requests that offer a tool of this name take this step.
    pub when_tool: Option<String>,
    pub times: Option<u32>,
    pub text: Option<String>,
    pub reasoning: Option<String>,
    #[serde(default)]
    pub echo: bool,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    pub chunks: Option<usize>,
    pub status: Option<u16>,
    pub retry_after: Option<u64>,
    pub error_message: Option<String>,
    pub delay_ms: Option<u64>,
    pub chunk_delay_ms: Option<u64>,
    #[serde(default)]
    pub hang: bool,
    pub hang_after_chunks: Option<usize>,
    pub cut_after_chunks: Option<usize>,
    pub finish_reason: Option<String>,
    pub usage: Option<ScriptUsage>,
    /// Reply with exactly this body (HTTP `status`, default 200) instead of an answer: an
    /// HTML error page, a body with the wrong content type, a huge answer.
    pub raw_body: Option<String>,
    /// Like `raw_body`, as hex-encoded bytes (for bodies that are not UTF-8).
    pub raw_body_hex: Option<String>,
    /// The raw body's `Content-Type` (default `text/plain`).
    pub raw_content_type: Option<String>,
    /// Send the raw body this many times in a row (default 1), streamed.
    pub raw_repeat: Option<usize>,
}

/// A scripted tool call; `arguments` is sent verbatim, so it may be malformed JSON.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: String,
}

/// Token counts that replace the estimated ones; a missing count is still estimated.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

fn empty_object() -> String {
    "{}".to_owned()
}

impl Script {
    /// Parses and checks a script given as JSON text.
    pub fn from_json_str(text: &str) -> Result<Script, String> {
        let script: Script = serde_json::from_str(text).map_err(|e| e.to_string())?;
        script.check()?;
        Ok(script)
    }

    /// Parses and checks a script given as a JSON value.
    #[cfg(test)]
    pub fn from_value(value: serde_json::Value) -> Result<Script, String> {
        let script: Script = serde_json::from_value(value).map_err(|e| e.to_string())?;
        script.check()?;
        Ok(script)
    }

    fn check(&self) -> Result<(), String> {
        let named = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("steps[{i}]"), s));
        let default = self.default.iter().map(|s| ("default".to_owned(), s));
        for (name, step) in named.chain(default) {
            step.check().map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(())
    }

    /// Every model named in the script, first mention first, without repeats.
    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for step in self.steps.iter().chain(&self.default) {
            if let Some(model) = &step.model
                && !models.contains(model)
            {
                models.push(model.clone());
            }
        }
        models
    }
}

impl Step {
    fn check(&self) -> Result<(), String> {
        if let Some(status) = self.status
            && !(100..=999).contains(&status)
        {
            return Err(format!("`status` {status} is not an HTTP status code"));
        }
        if self.hang_after_chunks.is_some() && self.cut_after_chunks.is_some() {
            return Err("`hang_after_chunks` and `cut_after_chunks` exclude each other".to_owned());
        }
        if self.raw_body.is_some() && self.raw_body_hex.is_some() {
            return Err("`raw_body` and `raw_body_hex` exclude each other".to_owned());
        }
        self.raw_bytes().transpose()?;
        Ok(())
    }

    /// The raw body's bytes, when the step has one.
    pub fn raw_bytes(&self) -> Option<Result<Vec<u8>, String>> {
        if let Some(body) = &self.raw_body {
            return Some(Ok(body.as_bytes().to_vec()));
        }
        let hex = self.raw_body_hex.as_ref()?;
        let digits: Vec<char> = hex.chars().filter(|c| !c.is_whitespace()).collect();
        if !digits.len().is_multiple_of(2) {
            return Some(Err("`raw_body_hex` has an odd number of digits".to_owned()));
        }
        Some(
            digits
                .chunks(2)
                .map(|pair| {
                    let text: String = pair.iter().collect();
                    u8::from_str_radix(&text, 16)
                        .map_err(|_| format!("`raw_body_hex` has {text:?}, not a hex byte"))
                })
                .collect(),
        )
    }

    /// Into how many pieces each text and each tool call's arguments is split.
    pub fn chunks(&self) -> usize {
        self.chunks.unwrap_or(3).max(1)
    }
}

/// A script being played: the script plus how often each step has answered.
#[derive(Debug, Default)]
pub struct ScriptRun {
    script: Script,
    used: Vec<u32>,
}

impl ScriptRun {
    /// Starts playing `script` with every counter at zero.
    pub fn new(script: Script) -> Self {
        let used = vec![0; script.steps.len()];
        Self { script, used }
    }

    /// The script being played.
    pub fn script(&self) -> &Script {
        &self.script
    }

    /// Takes the step that answers a request for `model` offering `tools`: the first step
    /// for that model (or for any model), whose `when_tool` (if any) is offered, that is not
    /// used up; else the default step, else none.
    pub fn take(&mut self, model: &str, tools: &[String]) -> Option<Step> {
        let found = self
            .script
            .steps
            .iter()
            .zip(&self.used)
            .position(|(step, &used)| {
                step.model.as_deref().is_none_or(|m| m == model)
                    && step
                        .when_tool
                        .as_deref()
                        .is_none_or(|t| tools.iter().any(|offered| offered == t))
                    && used < step.times.unwrap_or(1)
            });
        match found {
            Some(index) => {
                self.used[index] += 1;
                Some(self.script.steps[index].clone())
            }
            None => self.script.default.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(run: &mut ScriptRun, models: &[&str]) -> Vec<Option<String>> {
        models
            .iter()
            .map(|m| run.take(m, &[]).and_then(|s| s.text))
            .collect()
    }

    #[test]
    fn steps_are_taken_by_model_and_times_then_default() {
        let script = Script::from_value(json!({
            "steps": [{"model": "a", "text": "A", "times": 2}, {"text": "any"}],
            "default": {"text": "fallback"}
        }))
        .expect("valid script");
        let mut run = ScriptRun::new(script);
        let got = texts(&mut run, &["b", "a", "a", "a", "b"]);
        let want = ["any", "A", "A", "fallback", "fallback"];
        assert_eq!(got, want.map(|t| Some(t.to_owned())));
    }

    #[test]
    fn when_tool_steps_answer_only_requests_offering_that_tool() {
        let script = Script::from_value(json!({
            "steps": [{"when_tool": "summarize", "text": "S", "times": 5}, {"text": "A"}],
            "default": {"text": "D"}
        }))
        .expect("valid script");
        let mut run = ScriptRun::new(script);
        let text = |run: &mut ScriptRun, tools: &[&str]| {
            let tools: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
            run.take("m", &tools).and_then(|s| s.text)
        };
        assert_eq!(text(&mut run, &["read_file"]).as_deref(), Some("A"));
        assert_eq!(text(&mut run, &["summarize"]).as_deref(), Some("S"));
        assert_eq!(text(&mut run, &[]).as_deref(), Some("D"));
    }

    #[test]
    fn exhausted_without_default_gives_none() {
        let mut run = ScriptRun::new(Script::from_value(json!({"steps": [{}]})).expect("valid"));
        assert!(run.take("m", &[]).is_some());
        assert!(run.take("m", &[]).is_none());
    }

    #[test]
    fn unknown_fields_and_bad_statuses_are_rejected() {
        let typo = Script::from_value(json!({"steps": [{"chunk": 2}]}));
        assert!(typo.is_err_and(|e| e.contains("unknown field `chunk`")));
        let status = Script::from_value(json!({"steps": [{"status": 42}]}));
        assert!(status.is_err_and(|e| e.contains("steps[0]")));
    }

    #[test]
    fn models_lists_each_named_model_once() {
        let script = Script::from_value(json!({
            "steps": [{"model": "x"}, {}, {"model": "y"}, {"model": "x"}],
            "default": {"model": "z"}
        }))
        .expect("valid");
        assert_eq!(script.models(), ["x", "y", "z"]);
    }
}
