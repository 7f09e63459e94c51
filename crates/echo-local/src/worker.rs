//! The worker thread of one model: loads the weights on the first request, then runs
//! requests one at a time, keeping the attention cache of recent prompts between them.

use crate::constrain::{self, Constraint, Grammars};
use crate::error::LocalError;
use crate::gguf::{self, Header};
use crate::template::ChatTemplate;
use crate::vocab::Vocab;
use crate::weights::Weights;
use crate::{CallText, Event, Finish, Job, Message, ModelInfo, Outcome, Request};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Prompt tokens fed to the network per step (bounds the attention scratch memory).
const PREFILL_CHUNK: usize = 256;
/// Prompt states kept for reuse (each holds its attention cache): two points of the
/// conversation and two of the background calls that come between its turns.
const SNAPSHOTS: usize = 4;
/// How far back the repetition penalty looks, and how hard it pushes.
const REPEAT_WINDOW: usize = 64;
const REPEAT_PENALTY: f32 = 1.1;
/// Tokens left when a constrained stretch is steered to its shortest end (at most half the
/// limit): enough to close a string, write a required key or two and the brackets.
const CLOSE_WITHIN: usize = 32;
/// The marker that starts a tool call in the runtime's call format.
const CALL_OPEN: &str = "<tool_call>";

pub(crate) fn spawn(
    info: ModelInfo,
    vocab: Arc<Vocab>,
    header: Header,
    inbox: std::sync::mpsc::Receiver<Job>,
) -> Result<(), LocalError> {
    let template = ChatTemplate::new(
        header.metadata.opt_string("tokenizer.chat_template"),
        "",
        "",
    )?;
    std::thread::Builder::new()
        .name(format!("echo-local {}", info.name))
        .spawn(move || {
            let mut worker = Worker {
                info,
                vocab,
                template,
                header: Some(header),
                weights: None,
                grammars: None,
                state: Vec::new(),
                snapshots: Vec::new(),
                seed: 0x5eed,
            };
            while let Ok(job) = inbox.recv() {
                let out = job.out.clone();
                let result = worker.run(&job.request, &job.stop, &mut |event| {
                    let _ = out.send(Message::Event(event));
                });
                let _ = job.out.send(Message::Done(result));
            }
        })
        .map_err(|e| LocalError::Compute(format!("cannot start the worker thread: {e}")))?;
    Ok(())
}

struct Snapshot {
    tokens: Vec<u32>,
    weights: Weights,
    logits: Vec<f32>,
}

struct Worker {
    info: ModelInfo,
    vocab: Arc<Vocab>,
    template: ChatTemplate,
    /// The header read at open, used once to load the weights.
    header: Option<Header>,
    weights: Option<Weights>,
    grammars: Option<Grammars>,
    /// The tokens the live attention cache holds.
    state: Vec<u32>,
    snapshots: Vec<Snapshot>,
    seed: u64,
}

impl Worker {
    fn weights(&mut self) -> Result<&mut Weights, LocalError> {
        if self.weights.is_none() {
            let header = match self.header.take() {
                Some(h) => h,
                None => gguf::read_header(&self.info.path)?,
            };
            let started = std::time::Instant::now();
            self.weights = Some(Weights::load(&self.info.path, header, self.info.arch)?);
            tracing::info!(
                model = %self.info.name,
                ms = started.elapsed().as_millis() as u64,
                "built-in model loaded"
            );
        }
        self.weights
            .as_mut()
            .ok_or_else(|| LocalError::Compute("weights not loaded".into()))
    }

    fn grammars(&mut self) -> Result<&Grammars, LocalError> {
        if self.grammars.is_none() {
            self.grammars = Some(Grammars::new(self.vocab.clone())?);
        }
        self.grammars
            .as_ref()
            .ok_or_else(|| LocalError::Compute("grammar engine not built".into()))
    }

    fn run(
        &mut self,
        req: &Request,
        stop: &AtomicBool,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Outcome, LocalError> {
        let mut text = self.template.render(&req.messages, &req.tools, true)?;
        let rendered = text.len();
        let forced = match &req.forced {
            Some(name) => {
                let tool = req.tools.iter().find(|t| &t.name == name).ok_or_else(|| {
                    LocalError::Constraint {
                        what: name.clone(),
                        detail: "the forced tool is not among the tools offered".into(),
                    }
                })?;
                // The call is started in the model's own format; only the arguments are left.
                let quoted = serde_json::to_string(name).unwrap_or_default();
                text.push_str(&format!(
                    "{CALL_OPEN}\n{{\"name\": {quoted}, \"arguments\": "
                ));
                Some(tool.clone())
            }
            None => None,
        };
        let prompt = self.vocab.encode_prompt(&text)?;
        let window = self.info.window;
        if prompt.len() >= window {
            return Err(LocalError::TooLong {
                prompt: prompt.len(),
                window,
            });
        }
        let room = window - prompt.len();
        let limit = if req.max_tokens == 0 {
            room
        } else {
            req.max_tokens.min(room)
        };
        let mut constraint = match &forced {
            Some(tool) => Some(self.grammars()?.json(&tool.name, &tool.parameters)?),
            None => None,
        };
        // The rendered conversation, before a forced call's opening is appended.
        let stable = self.stable_len(req, &text[..rendered], &prompt);
        let (mut logits, cached) = self.prefill(&prompt, stable)?;

        let temperature = req
            .temperature
            .unwrap_or(if forced.is_some() { 0.0 } else { 0.7 });
        self.seed = self.seed.wrapping_add(1);
        let mut sampler = LogitsProcessor::from_sampling(
            self.seed,
            if temperature < 1e-3 {
                Sampling::ArgMax
            } else {
                Sampling::TopKThenTopP {
                    k: 40,
                    p: 0.9,
                    temperature: f64::from(temperature),
                }
            },
        );

        let mut out = Output::new(
            self.vocab.clone(),
            !req.tools.is_empty() && forced.is_none(),
        );
        let mut generated = 0usize;
        let mut pos = prompt.len();
        let mut calls = 0usize;
        let close_within = CLOSE_WITHIN.min(limit / 2);
        let mut place = constrain::JsonPlace::default();
        let finish = loop {
            if stop.load(Ordering::Relaxed) {
                break Finish::Cancelled;
            }
            if generated >= limit {
                break Finish::Length;
            }
            let constrained = constraint.is_some() || out.in_call.is_some();
            if let Some(c) = constraint.as_mut().or(out.in_call.as_mut()) {
                // No repetition penalty within JSON: it pushes a small model off the
                // quotes, keys and words it must repeat (it wrote `<script>` where a
                // sentence belonged). Runaway arrays and strings are bounded by the schema
                // (`maxItems`, `maxLength`) instead.
                let mask = c.mask()?;
                constrain::apply(&mask, &mut logits);
                if limit - generated <= close_within {
                    constrain::close_soon(&mut logits, place, |id| self.vocab.token_bytes(id));
                }
            } else {
                penalize(&mut logits, &self.state, REPEAT_PENALTY);
            }
            let n = logits.len();
            let token = sampler.sample(&candle_core::Tensor::from_vec(
                std::mem::take(&mut logits),
                n,
                &candle_core::Device::Cpu,
            )?)?;
            generated += 1;
            if constrained {
                place.advance(self.vocab.token_bytes(token));
            }

            if let Some(c) = constraint.as_mut() {
                // A forced call: the arguments end when the grammar does.
                if self.vocab.stops().contains(&token) && c.accepts() {
                    break Finish::ToolCalls;
                }
                c.consume(token)?;
                out.args.extend_from_slice(self.vocab.token_bytes(token));
                if c.is_done() {
                    break Finish::ToolCalls;
                }
            } else if !constrained && self.vocab.stops().contains(&token) {
                break if calls > 0 {
                    Finish::ToolCalls
                } else {
                    Finish::Stop
                };
            } else if let Some(call) = out.take_token(token, emit)? {
                calls += 1;
                emit(Event::ToolCall(call));
            }
            if out.in_call.is_none() && out.wants_call() {
                out.in_call = Some(self.grammars()?.tool_call(&req.tools)?);
                place = constrain::JsonPlace::default();
            }
            logits = self.weights()?.forward(&[token], pos)?;
            self.state.push(token);
            pos += 1;
        };
        if let Some(tool) = forced {
            // A call cut by the token limit is still reported, unfinished, so the trace
            // shows what the model wrote and the caller says why it does not parse.
            if matches!(finish, Finish::ToolCalls | Finish::Length) {
                emit(Event::ToolCall(CallText {
                    name: tool.name,
                    arguments: String::from_utf8_lossy(&out.args).trim().to_string(),
                }));
            }
        } else {
            out.flush(emit);
        }
        Ok(Outcome {
            prompt_tokens: prompt.len(),
            cached_tokens: cached,
            output_tokens: generated,
            finish,
        })
    }

    /// Runs `prompt` through the network, starting from the longest cached state it extends,
    /// and returns the next token's logits and how many prompt tokens came from the cache.
    /// The state is kept at two points: where the last user message starts (`stable`: the
    /// part the next turn of the conversation repeats) and at the end.
    fn prefill(
        &mut self,
        prompt: &[u32],
        stable: Option<usize>,
    ) -> Result<(Vec<f32>, usize), LocalError> {
        self.weights()?;
        let exact = self
            .snapshots
            .iter()
            .position(|s| s.tokens == prompt && !s.logits.is_empty());
        if let Some(i) = exact
            && let Some(weights) = self.snapshots[i].weights.fork()
        {
            let logits = self.snapshots[i].logits.clone();
            self.weights = Some(weights);
            self.state = prompt.to_vec();
            return Ok((logits, prompt.len()));
        }
        let extends = |tokens: &[u32]| tokens.len() < prompt.len() && prompt.starts_with(tokens);
        let live = if extends(&self.state) {
            self.state.len()
        } else {
            0
        };
        let best = self
            .snapshots
            .iter()
            .enumerate()
            .filter(|(_, s)| extends(&s.tokens) && s.tokens.len() > live)
            .max_by_key(|(_, s)| s.tokens.len())
            .map(|(i, _)| i);
        let start = match best.and_then(|i| self.snapshots[i].weights.fork().map(|w| (i, w))) {
            Some((i, weights)) => {
                self.weights = Some(weights);
                self.state = self.snapshots[i].tokens.clone();
                self.state.len()
            }
            None if live > 0 => live,
            None => {
                self.weights()?.clear();
                self.state.clear();
                0
            }
        };
        tracing::debug!(
            prompt = prompt.len(),
            ?stable,
            reused = start,
            kept = ?self.snapshots.iter().map(|s| s.tokens.len()).collect::<Vec<_>>(),
            "prompt cache"
        );
        let mut logits = Vec::new();
        let mut pos = start;
        let cut = stable.filter(|&b| b > start && b < prompt.len());
        let stretches = match cut {
            Some(b) => [&prompt[start..b], &prompt[b..]],
            None => [&prompt[start..], &prompt[prompt.len()..]],
        };
        for stretch in stretches {
            for chunk in stretch.chunks(PREFILL_CHUNK) {
                logits = self.weights()?.forward(chunk, pos)?;
                pos += chunk.len();
            }
            if !stretch.is_empty() {
                // Only the end keeps its logits: a later prompt can equal it exactly.
                let at_end = pos == prompt.len();
                self.remember(&prompt[..pos], if at_end { &logits } else { &[] });
            }
        }
        self.state = prompt.to_vec();
        Ok((logits, start))
    }

    /// Keeps the current state as the state after `tokens`, when it can be copied cheaply.
    fn remember(&mut self, tokens: &[u32], logits: &[f32]) {
        let Some(weights) = self.weights.as_ref().and_then(Weights::fork) else {
            return;
        };
        self.snapshots.retain(|s| s.tokens != tokens);
        if self.snapshots.len() >= SNAPSHOTS {
            self.snapshots.remove(0);
        }
        self.snapshots.push(Snapshot {
            tokens: tokens.to_vec(),
            weights,
            logits: logits.to_vec(),
        });
    }

    /// How many tokens of `prompt` come before the last user message: what the next turn
    /// of this conversation will start with. `None` when the template does not render the
    /// earlier messages as a prefix of the whole.
    fn stable_len(&self, req: &Request, whole: &str, prompt: &[u32]) -> Option<usize> {
        let last_user = req
            .messages
            .iter()
            .rposition(|m| m.role == crate::ChatRole::User)?;
        if last_user == 0 {
            return None;
        }
        // The tool list is part of the head: a template's own sits inside its system
        // block, a written-out one right after the first system message.
        let head = self
            .template
            .render(&req.messages[..last_user], &req.tools, false)
            .ok()?;
        if head.is_empty() || !whole.starts_with(&head) {
            return None;
        }
        let tokens = self.vocab.encode_prompt(&head).ok()?;
        prompt.starts_with(&tokens).then_some(tokens.len())
    }
}

/// Makes recently used tokens less likely (the usual divide-or-multiply rule), so a small
/// model does not loop.
fn penalize(logits: &mut [f32], history: &[u32], penalty: f32) {
    let recent = &history[history.len().saturating_sub(REPEAT_WINDOW)..];
    let mut seen = std::collections::HashSet::new();
    for &token in recent {
        if seen.insert(token)
            && let Some(logit) = logits.get_mut(token as usize)
        {
            *logit = if *logit >= 0.0 {
                *logit / penalty
            } else {
                *logit * penalty
            };
        }
    }
}

/// Turns sampled tokens into text events and tool calls.
struct Output {
    vocab: Arc<Vocab>,
    /// Whether tool calls are watched for.
    tools: bool,
    /// Bytes not yet valid UTF-8.
    bytes: Vec<u8>,
    /// Text held back because it may be the start of a tool call.
    held: String,
    /// The constraint of the call being written, and its text so far.
    in_call: Option<Constraint>,
    call: Vec<u8>,
    /// A forced call's arguments.
    args: Vec<u8>,
}

impl Output {
    fn new(vocab: Arc<Vocab>, tools: bool) -> Self {
        Self {
            vocab,
            tools,
            bytes: Vec::new(),
            held: String::new(),
            in_call: None,
            call: Vec::new(),
            args: Vec::new(),
        }
    }

    /// Whether the text just written opened a tool call.
    fn wants_call(&self) -> bool {
        self.tools && self.held.ends_with(CALL_OPEN)
    }

    /// Takes one sampled token; returns a call when this token completed one.
    fn take_token(
        &mut self,
        token: u32,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Option<CallText>, LocalError> {
        if let Some(c) = self.in_call.as_mut() {
            c.consume(token)?;
            self.call.extend_from_slice(self.vocab.token_bytes(token));
            if !c.is_done() {
                return Ok(None);
            }
            self.in_call = None;
            self.held.clear();
            let text = String::from_utf8_lossy(&std::mem::take(&mut self.call)).into_owned();
            return Ok(parse_call(&text));
        }
        if self.vocab.is_control(token) {
            return Ok(None);
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
        if self.held.ends_with(CALL_OPEN) {
            let before = self.held.len() - CALL_OPEN.len();
            if before > 0 {
                emit(Event::Text(self.held[..before].to_string()));
                self.held.drain(..before);
            }
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

    /// Sends what was held back.
    fn flush(&mut self, emit: &mut dyn FnMut(Event)) {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.bytes)).into_owned();
        self.held.push_str(&rest);
        if self.in_call.is_none() && !self.held.is_empty() {
            emit(Event::Text(std::mem::take(&mut self.held)));
        }
    }
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

/// The call in the text after `<tool_call>` (`{"name": …, "arguments": …}\n</tool_call>`).
fn parse_call(text: &str) -> Option<CallText> {
    let body = text.trim().strip_suffix("</tool_call>")?.trim();
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    Some(CallText {
        name: value.get("name")?.as_str()?.to_string(),
        arguments: value.get("arguments")?.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let call = parse_call("\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>");
        assert_eq!(
            call,
            Some(CallText {
                name: "f".into(),
                arguments: "{\"a\":1}".into()
            })
        );
        assert_eq!(parse_call("{\"name\": 1}</tool_call>"), None);
    }

    #[test]
    fn repeats_are_penalized_once_each() {
        let mut logits = vec![2.0, -2.0, 1.0];
        penalize(&mut logits, &[0, 0, 1], REPEAT_PENALTY);
        assert_eq!(logits, vec![2.0 / 1.1, -2.0 * 1.1, 1.0]);
    }
}
