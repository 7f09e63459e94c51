//! Model calls: every call of the engine (the main loop, the planner, history summaries,
//! approval explanations, memory extraction, the conflict judge, consolidation, the settings
//! page's connection test) is built and sent as a [`ModelCall`], and recorded here, one call
//! span per HTTP attempt, with its exact request and response captured when the span captures
//! (`[trace] capture`). The connection test alone is not traced. Each call of the main loop is
//! first fitted to the model's window ([`ModelCall::fitted`], [`fit`]): the one place a
//! request is cut, after ContextStage decided what goes into it.

use crate::prompts::Prompts;
use crate::tool_output::cut_tool_output;
use echo_core::store::ModelCall as CapturedCall;
use echo_core::trace::{CallRecord, Span, SpanKind};
use echo_core::vocab::Degradation;
use echo_core::{Message, Role, ToolSpec};
use echo_llm::tokens::Tokenizer;
use echo_llm::{
    Attempt, AttemptKind, ChatEvent, ChatFailure, ChatRequest, ChatResponse, LlmClient, ToolChoice,
};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// One model call, its request built here: with the client's own settings ([`ModelCall::new`],
/// as the main loop sends) or short and deterministic ([`ModelCall::exact`]).
pub(crate) struct ModelCall<'a> {
    llm: &'a LlmClient,
    request: ChatRequest,
}

impl<'a> ModelCall<'a> {
    /// `messages` and `tools` with the client's answer cap and temperature.
    pub(crate) fn new(llm: &'a LlmClient, messages: Vec<Message>, tools: Vec<ToolSpec>) -> Self {
        let request = llm.request(messages, tools);
        ModelCall { llm, request }
    }

    /// The main loop's call of one step: `messages` (the turn's request with what the loop
    /// appended) and `tools`, fitted to `llm`'s window (see [`fit`]), what the fitting did
    /// noted on `node`. `current` is the current message in its forms with fewer recalled
    /// memories (`ContextStage::current_forms`). The loop never sends a request unfitted.
    pub(crate) fn fitted(
        llm: &'a LlmClient,
        prompts: &Prompts,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        current: &[String],
        node: &mut Span,
    ) -> Result<Self, Overflow> {
        let budget = llm.input_budget();
        let (messages, fit) = fit(prompts, messages, &tools, budget, llm.tokenizer(), current)?;
        node.attr("tokens_estimated", fit.tokens);
        node.attr("token_budget", budget);
        if fit.trimmed() {
            node.attr("history_dropped", fit.dropped_messages);
            node.attr("outputs_trimmed", fit.trimmed_outputs);
            node.attr("memories_dropped", fit.dropped_memories);
            node.degrade(Degradation::ContextTrimmed);
        }
        Ok(Self::new(llm, messages, tools))
    }

    /// A short deterministic call: temperature 0, at most `max_tokens` of answer.
    pub(crate) fn exact(
        llm: &'a LlmClient,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        max_tokens: u32,
    ) -> Self {
        let request = ChatRequest {
            messages,
            tools,
            max_tokens,
            temperature: Some(0.0),
            tool_choice: ToolChoice::Auto,
        };
        ModelCall { llm, request }
    }

    /// The model must call `tool`.
    pub(crate) fn forcing(mut self, tool: &str) -> Self {
        self.request.tool_choice = ToolChoice::Required(tool.to_string());
        self
    }

    /// Sends it, streaming to `on_event`; every attempt is recorded under `span` as a call
    /// named `name`, captured if `span` captures.
    pub(crate) async fn send(
        &self,
        span: &Span,
        name: &str,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ChatEvent) + Send),
    ) -> Result<ChatResponse, ChatFailure> {
        let result = self.llm.chat(&self.request, cancel, on_event).await;
        let (attempts, response) = match &result {
            Ok(r) => (&r.attempts, Some(r)),
            Err(f) => (&f.attempts, None),
        };
        record_attempts(span, name, &self.request, attempts, response).await;
        result
    }

    /// Sends it with no trace (the settings page's connection test: nothing is recorded).
    pub(crate) async fn send_untraced(&self) -> Result<ChatResponse, ChatFailure> {
        self.llm
            .chat(&self.request, &CancellationToken::new(), &mut |_| {})
            .await
    }
}

/// Makes a request fit `budget` tokens (as `tokenizer` counts them), in the order that loses
/// least: first old tool outputs are cut to their head and tail (the latest step's results
/// stay whole), then the oldest turns leave, a whole turn at a time so a tool call is never
/// separated from its result, then the least relevant recalled memories leave the current
/// message: `current` holds it as it reads with the first 0, 1, …, all of them (empty: no
/// such message). The system block, the tool definitions and the current turn (its user
/// message verbatim and last) are never cut; if they alone do not fit, that is an error
/// naming both numbers.
pub(crate) fn fit(
    prompts: &Prompts,
    mut messages: Vec<Message>,
    tools: &[ToolSpec],
    budget: usize,
    tokenizer: &Tokenizer,
    current: &[String],
) -> Result<(Vec<Message>, Fit), Overflow> {
    let mut tokens = tokenizer.count_request(&messages, tools);
    let mut fit = Fit::default();
    if tokens > budget {
        let latest_step = messages
            .iter()
            .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty());
        for (i, message) in messages.iter_mut().enumerate() {
            if tokens <= budget {
                break;
            }
            let keep = latest_step.is_some_and(|step| i > step);
            if message.role != Role::Tool || keep {
                continue;
            }
            if let Some(cut) = cut_tool_output(prompts, message) {
                let before = tokenizer.count_message(message);
                message.content = cut;
                tokens = tokens - before + tokenizer.count_message(message);
                fit.trimmed_outputs += 1;
            }
        }
    }
    while tokens > budget {
        // History runs from after the system block to the current user message.
        let first = usize::from(messages.first().is_some_and(|m| m.role == Role::System));
        let Some(current) = messages.iter().rposition(|m| m.role == Role::User) else {
            break;
        };
        if first >= current {
            break;
        }
        let end = messages[first + 1..current]
            .iter()
            .position(|m| m.role == Role::User)
            .map_or(current, |p| first + 1 + p);
        let removed: usize = messages[first..end]
            .iter()
            .map(|m| tokenizer.count_message(m))
            .sum();
        messages.drain(first..end);
        tokens -= removed;
        fit.dropped_messages += end - first;
    }
    if tokens > budget
        && let [fewer @ .., full] = current
    {
        // The current message as built, with every recalled memory.
        let at = messages
            .iter()
            .rposition(|m| m.role == Role::User && m.content == *full);
        if let Some(at) = at {
            for form in fewer.iter().rev() {
                if tokens <= budget {
                    break;
                }
                let before = tokenizer.count_message(&messages[at]);
                messages[at].content = form.clone();
                tokens = tokens - before + tokenizer.count_message(&messages[at]);
                fit.dropped_memories += 1;
            }
        }
    }
    fit.tokens = tokens;
    if tokens > budget {
        return Err(Overflow { tokens, budget });
    }
    Ok((messages, fit))
}

/// What fitting a request did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fit {
    /// Estimated tokens of the request sent.
    pub tokens: usize,
    /// Old history messages left out (whole turns).
    pub dropped_messages: usize,
    /// Old tool outputs cut to head and tail.
    pub trimmed_outputs: usize,
    /// Recalled memories left out of the current message.
    pub dropped_memories: usize,
}

impl Fit {
    /// Whether anything was cut.
    pub(crate) fn trimmed(&self) -> bool {
        self.dropped_messages > 0 || self.trimmed_outputs > 0 || self.dropped_memories > 0
    }
}

/// The parts of a request that are never cut do not fit the window.
#[derive(Debug, thiserror::Error)]
#[error(
    "the request needs about {tokens} tokens even with old history and tool output left out, \
     but the model's window leaves {budget} (llm.context_window minus the answer's reserve); \
     shorten the message or raise llm.context_window"
)]
pub(crate) struct Overflow {
    tokens: usize,
    budget: usize,
}

/// A forced tool call parsed into `T` (or why it could not be had), its attempts recorded
/// under `span` as calls named after the tool.
pub(crate) async fn structured_call<T: DeserializeOwned>(
    llm: &LlmClient,
    span: &Span,
    messages: Vec<Message>,
    tool: ToolSpec,
    max_tokens: u32,
) -> Result<T, String> {
    let call = (messages, tool, max_tokens);
    structured_call_until(llm, span, call, &CancellationToken::new())
        .await
        .map(|(answer, _)| answer)
}

/// [`structured_call`] that `cancel` stops (recorded as cancelled), with the tokens used.
pub(crate) async fn structured_call_until<T: DeserializeOwned>(
    llm: &LlmClient,
    span: &Span,
    (messages, tool, max_tokens): (Vec<Message>, ToolSpec, u32),
    cancel: &CancellationToken,
) -> Result<(T, echo_core::Usage), String> {
    let name = tool.name.clone();
    let tools = vec![tool];
    let messages = fit_to_window(llm, messages, &tools);
    let call = ModelCall::exact(llm, messages, tools, max_tokens).forcing(&name);
    let outcome = call.send(span, &name, cancel, &mut |_| {}).await;
    match outcome {
        Err(f) => Err(f.error.to_string()),
        Ok(r) => {
            let args = r
                .tool_calls
                .iter()
                .find(|c| c.name == name)
                .map(|c| c.arguments.clone());
            // Some servers ignore tool_choice and answer in text: accept a JSON object there.
            let text = args.or_else(|| {
                let t = r.text.trim();
                let start = t.find('{')?;
                let end = t.rfind('}')?;
                (end > start).then(|| t[start..=end].to_string())
            });
            match text {
                None => Err(format!("the model did not call {name}")),
                Some(text) => serde_json::from_str::<T>(&text)
                    .map(|answer| (answer, r.usage))
                    .map_err(|e| format!("malformed {name} output: {e}")),
            }
        }
    }
}

/// The marker left where a message was cut to fit the window.
const CUT_MARKER: &str = "\n[… left out to fit the model's window …]\n";

/// `messages` cut so the request fits the model's window (`LlmClient::input_budget`): the
/// longest message loses its middle (head and tail stay) until it fits. A background call
/// on a small model must fit like a turn. (The call's captured request shows the cut.)
pub(crate) fn fit_to_window(
    llm: &LlmClient,
    mut messages: Vec<Message>,
    tools: &[ToolSpec],
) -> Vec<Message> {
    let budget = llm.input_budget();
    let count = |m: &[Message]| llm.tokenizer().count_request(m, tools);
    let before = count(&messages);
    let mut tokens = before;
    for _ in 0..32 {
        if tokens <= budget {
            break;
        }
        let Some(longest) = messages
            .iter_mut()
            .max_by_key(|m| m.content.chars().count())
        else {
            break;
        };
        let chars = longest.content.chars().count();
        if chars <= CUT_MARKER.len() * 2 {
            break;
        }
        // Keep the share of this message that the excess leaves, plus a margin.
        let over = tokens - budget;
        let own = llm.tokenizer().count_text(&longest.content).max(1);
        let keep_share = 1.0 - (over as f64 * 1.1 / own as f64);
        let keep = ((chars as f64 * keep_share.max(0.0)) as usize).min(chars * 9 / 10);
        longest.content = cut_middle(&longest.content, keep);
        tokens = count(&messages);
    }
    if tokens < before {
        tracing::info!(
            before,
            after = tokens,
            budget,
            "a model call's input was cut to fit the window"
        );
    }
    messages
}

/// `text` with its middle replaced by the cut marker, keeping `keep` characters (two thirds
/// from the head, one third from the tail).
fn cut_middle(text: &str, keep: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let head = keep * 2 / 3;
    let tail = keep - head;
    let mut out: String = chars[..head.min(chars.len())].iter().collect();
    out.push_str(CUT_MARKER);
    out.extend(&chars[chars.len().saturating_sub(tail)..]);
    out
}

/// The degradation an attempt of this kind means: a retry, or a fallback to another model.
pub(crate) fn degraded_reason(kind: AttemptKind) -> Option<Degradation> {
    match kind {
        AttemptKind::First => None,
        AttemptKind::Retry => Some(Degradation::Retry),
        AttemptKind::Fallback => Some(Degradation::FallbackModel),
    }
}

/// Records a model call's attempts as call spans `name` under `span` and, when the span
/// captures (`[trace] capture`), stores each attempt's exact request beside its span, with the
/// response on the attempt that produced it (`response`, the call's answer when it succeeded).
pub(crate) async fn record_attempts(
    span: &Span,
    name: &str,
    request: &ChatRequest,
    attempts: &[Attempt],
    response: Option<&ChatResponse>,
) {
    let last = attempts.len().saturating_sub(1);
    for (i, a) in attempts.iter().enumerate() {
        let span_id = span
            .record_call(CallRecord {
                name,
                kind: SpanKind::Model,
                model: Some(&a.model),
                started_at: a.started_at,
                duration: a.duration,
                usage: Some(a.usage),
                error: a.error.as_deref(),
                degraded_reason: degraded_reason(a.kind),
                attrs: {
                    let mut attrs = serde_json::json!({
                        "messages": request.messages.len(),
                        "tools": request.tools.len(),
                        "captured": span.captures(),
                    });
                    if let Some(load) = a.model_load {
                        attrs["model_load_ms"] = serde_json::json!(load.as_millis() as u64);
                    }
                    attrs
                },
            })
            .await;
        if span.captures() {
            let response = response
                .filter(|_| i == last && a.error.is_none())
                .map(ChatResponse::captured);
            span.capture_call(&CapturedCall {
                span_id,
                model: a.model.clone(),
                request: request.captured(),
                response,
                error: a.error.clone(),
            })
            .await;
        }
    }
}

/// The tool of a forced call answering `T`, its description filled in from `prompts/calls/`
/// when the request is built.
pub(crate) fn call_tool<T: schemars::JsonSchema>(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: String::new(),
        parameters: echo_tools::schema_of::<T>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_too_big_for_the_window_loses_the_middle_of_its_longest_message() {
        let llm = LlmClient::from_config(&echo_core::config::LlmConfig {
            base_url: Some("http://127.0.0.1:9".into()),
            context_window: 2048,
            max_tokens: 512,
            ..Default::default()
        })
        .expect("client");
        let long = format!("HEAD {} TAIL", "word ".repeat(6000));
        let messages = vec![Message::system("Extract facts."), Message::user(long)];
        let tools = [ToolSpec {
            name: "extract_memories".into(),
            description: "Facts.".into(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        assert!(llm.tokenizer().count_request(&messages, &tools) > llm.input_budget());
        let fitted = fit_to_window(&llm, messages, &tools);
        assert!(llm.tokenizer().count_request(&fitted, &tools) <= llm.input_budget());
        assert_eq!(
            fitted[0].content, "Extract facts.",
            "short messages stay whole"
        );
        let cut = &fitted[1].content;
        assert!(
            cut.starts_with("HEAD word") && cut.ends_with("word  TAIL") && cut.contains(CUT_MARKER),
            "{}",
            &cut[..80]
        );
        // A request that fits is left alone.
        let small = vec![Message::user("hello")];
        assert_eq!(fit_to_window(&llm, small.clone(), &tools), small);
    }
}
