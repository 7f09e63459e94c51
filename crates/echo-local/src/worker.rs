//! The worker thread of one model: loads the weights on the first request, then runs
//! requests one at a time, keeping the attention cache of recent prompts between them. After
//! a quiet period (when the model was opened with one) it lets go of the weights, the caches
//! and the grammar engine, so an idle app does not hold the model; the next request loads
//! them again.

use crate::constrain::{self, Grammars};
use crate::error::LocalError;
use crate::gguf::{self, Header};
use crate::output::{CALL_OPEN, Output};
use crate::template::ChatTemplate;
use crate::vocab::Vocab;
use crate::weights::Weights;
use crate::{CallText, Event, Finish, Job, Message, ModelInfo, Outcome, Request};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;

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

pub(crate) fn spawn(
    info: ModelInfo,
    vocab: Arc<Vocab>,
    header: Header,
    inbox: std::sync::mpsc::Receiver<Job>,
    release_after: Option<std::time::Duration>,
    loaded: Arc<AtomicBool>,
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
                loaded,
            };
            loop {
                let job = match release_after {
                    Some(quiet) if worker.weights.is_some() => match inbox.recv_timeout(quiet) {
                        Ok(job) => job,
                        Err(RecvTimeoutError::Timeout) => {
                            worker.release(quiet);
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    },
                    _ => match inbox.recv() {
                        Ok(job) => job,
                        Err(_) => break,
                    },
                };
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
    /// Whether the weights are in memory, for [`crate::LocalModel::loaded`].
    loaded: Arc<AtomicBool>,
}

impl Worker {
    /// Lets go of the weights, the attention caches and the grammar engine (loaded again on
    /// the next request).
    fn release(&mut self, quiet: std::time::Duration) {
        self.weights = None;
        self.snapshots.clear();
        self.state.clear();
        self.grammars = None;
        self.loaded.store(false, Ordering::Release);
        tracing::info!(
            model = %self.info.name,
            quiet_secs = quiet.as_secs(),
            "built-in model released after a quiet period"
        );
    }

    fn weights(&mut self) -> Result<&mut Weights, LocalError> {
        if self.weights.is_none() {
            let header = match self.header.take() {
                Some(h) => h,
                None => gguf::read_header(&self.info.path)?,
            };
            let started = std::time::Instant::now();
            self.weights = Some(Weights::load(&self.info.path, header, self.info.arch)?);
            self.loaded.store(true, Ordering::Release);
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
            let constrained = constraint.is_some() || out.in_call();
            if let Some(c) = constraint.as_mut().or(out.constraint()) {
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
            } else {
                let open = &mut |form| self.grammars()?.tool_call(&req.tools, form);
                if let Some(call) = out.take_token(token, open, emit)? {
                    calls += 1;
                    emit(Event::ToolCall(call));
                } else if !constrained && out.in_call() {
                    // A call opened: what it has written so far is JSON (untagged calls).
                    place = constrain::JsonPlace::default();
                    place.advance(out.call_so_far());
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_penalized_once_each() {
        let mut logits = vec![2.0, -2.0, 1.0];
        penalize(&mut logits, &[0, 0, 1], REPEAT_PENALTY);
        assert_eq!(logits, vec![2.0 / 1.1, -2.0 * 1.1, 1.0]);
    }
}
