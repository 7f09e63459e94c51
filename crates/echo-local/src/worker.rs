//! The worker thread of one model: loads the weights on the first request, then runs
//! requests one at a time in one llama.cpp context, whose attention cache keeps recent
//! prompts between them. After a quiet period (when the model was opened with one) it lets
//! go of the weights, the cache and the grammar engine, so an idle app does not hold the
//! model; the next request loads them again.

use crate::constrain::{self, Grammars};
use crate::error::LocalError;
use crate::llama::{Session, Weights};
use crate::output::{CALL_OPEN, Output};
use crate::template::ChatTemplate;
use crate::vocab::Vocab;
use crate::{CallText, Event, Finish, ModelInfo, Opened, Outcome, Request, Timings};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How far back the repetition penalty looks, and how hard it pushes.
const REPEAT_WINDOW: usize = 64;
const REPEAT_PENALTY: f32 = 1.1;
/// Tokens left when a constrained stretch is steered to its shortest end (at most half the
/// limit): enough to close a string, write a required key or two and the brackets.
const CLOSE_WITHIN: usize = 32;
/// Sampling of text: the `TOP_K` likeliest tokens, then the smallest set of them holding
/// `TOP_P` of the probability.
const TOP_K: usize = 40;
const TOP_P: f32 = 0.9;

/// A message from the worker about one generation.
pub(crate) enum Message {
    Event(Event),
    Done(Result<Outcome, LocalError>),
}

/// One request for the worker: where its output goes, and the flag that stops it.
pub(crate) struct Job {
    pub request: Request,
    pub stop: Arc<AtomicBool>,
    pub out: Box<dyn Fn(Message) + Send>,
}

/// Starts the worker of an opened model on a thread of this process.
pub(crate) fn spawn(
    opened: Opened,
    inbox: Receiver<Job>,
    release_after: Option<Duration>,
    loaded: Arc<AtomicBool>,
) -> Result<(), LocalError> {
    let name = format!("echo-local {}", opened.info.name);
    let state = Box::new(move |now: bool| loaded.store(now, Ordering::Release));
    let mut worker = Worker::new(opened, state)?;
    std::thread::Builder::new()
        .name(name)
        .spawn(move || worker.serve(&inbox, release_after))
        .map_err(|e| LocalError::Compute(format!("cannot start the worker thread: {e}")))?;
    Ok(())
}

pub(crate) struct Worker {
    info: ModelInfo,
    vocab: Arc<Vocab>,
    template: ChatTemplate,
    grammars: Option<Grammars>,
    rng: fastrand::Rng,
    /// Told `true` when the weights are in memory, `false` when they are let go.
    state: Box<dyn FnMut(bool) + Send>,
}

impl Worker {
    pub(crate) fn new(
        opened: Opened,
        state: Box<dyn FnMut(bool) + Send>,
    ) -> Result<Worker, LocalError> {
        Ok(Worker {
            info: opened.info,
            vocab: opened.vocab,
            template: opened.template,
            grammars: None,
            rng: fastrand::Rng::with_seed(0x5eed),
            state,
        })
    }

    /// Runs jobs until every sender is gone: loads the weights for the first job, keeps them
    /// while jobs keep coming, and lets go of them after `release_after` without one.
    pub(crate) fn serve(&mut self, inbox: &Receiver<Job>, release_after: Option<Duration>) {
        while let Ok(job) = inbox.recv() {
            let started = Instant::now();
            let weights = match Weights::load(&self.info.path) {
                Ok(w) => w,
                Err(e) => {
                    (job.out)(Message::Done(Err(e)));
                    continue;
                }
            };
            let mut session = match weights.session(self.info.window, crate::threads::in_use()) {
                Ok(s) => s,
                Err(e) => {
                    (job.out)(Message::Done(Err(e)));
                    continue;
                }
            };
            (self.state)(true);
            tracing::info!(
                model = %self.info.name,
                ms = started.elapsed().as_millis() as u64,
                "built-in model loaded"
            );
            self.answer(&mut session, job, started.elapsed());
            loop {
                let job = match release_after {
                    Some(quiet) => match inbox.recv_timeout(quiet) {
                        Ok(job) => job,
                        Err(RecvTimeoutError::Timeout) => {
                            tracing::info!(
                                model = %self.info.name,
                                quiet_secs = quiet.as_secs(),
                                "built-in model released after a quiet period"
                            );
                            break;
                        }
                        Err(RecvTimeoutError::Disconnected) => return,
                    },
                    None => match inbox.recv() {
                        Ok(job) => job,
                        Err(_) => return,
                    },
                };
                self.answer(&mut session, job, Duration::ZERO);
            }
            drop(session);
            drop(weights);
            self.grammars = None;
            (self.state)(false);
        }
    }

    fn answer(&mut self, session: &mut Session<'_>, job: Job, load: Duration) {
        let out = &job.out;
        let result = self
            .run(session, &job.request, &job.stop, &mut |event| {
                out(Message::Event(event));
            })
            .map(|mut outcome| {
                outcome.timings.load = load;
                outcome
            });
        (job.out)(Message::Done(result));
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
        session: &mut Session<'_>,
        req: &Request,
        stop: &AtomicBool,
        emit: &mut dyn FnMut(Event),
    ) -> Result<Outcome, LocalError> {
        let mut text = self.template.render(&req.messages, &req.tools, true)?;
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
        let prefill_started = Instant::now();
        let (mut logits, cached) = session.prefill(&prompt)?;
        // The sampler's working list, kept from token to token.
        let mut candidates = Vec::new();
        let prompt_time = prefill_started.elapsed();
        let generate_started = Instant::now();
        // What the repetition penalty looks back on: the prompt's end, then the answer.
        let mut history = prompt[prompt.len().saturating_sub(REPEAT_WINDOW)..].to_vec();

        let temperature = req
            .temperature
            .unwrap_or(if forced.is_some() { 0.0 } else { 0.7 });
        let mut out = Output::new(
            self.vocab.clone(),
            !req.tools.is_empty() && forced.is_none(),
        );
        // Its own generator: seeded by the request, or forked from the worker's sequence.
        let mut rng = req
            .seed
            .map_or_else(|| self.rng.fork(), fastrand::Rng::with_seed);
        let mut generated = 0usize;
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
                penalize(&mut logits, &history, REPEAT_PENALTY);
            }
            let token = sample(&logits, temperature, &mut rng, &mut candidates)?;
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
            session.step(token, &mut logits)?;
            history.push(token);
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
            timings: Timings {
                load: Duration::ZERO,
                prompt: prompt_time,
                generate: generate_started.elapsed(),
            },
        })
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

/// Picks the next token: the likeliest at temperature 0, else a draw from the top
/// [`TOP_K`] tokens cut to [`TOP_P`] of their probability. Tokens a grammar ruled out hold
/// negative infinity and are never drawn.
fn sample(
    logits: &[f32],
    temperature: f32,
    rng: &mut fastrand::Rng,
    candidates: &mut Vec<(u32, f32)>,
) -> Result<u32, LocalError> {
    let allowed = |l: &f32| *l > f32::NEG_INFINITY && !l.is_nan();
    if temperature < 1e-3 {
        return logits
            .iter()
            .enumerate()
            .filter(|(_, l)| allowed(l))
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|(id, _)| id as u32)
            .ok_or_else(|| {
                LocalError::Compute("no token is allowed at this point of the answer".into())
            });
    }
    candidates.clear();
    candidates.extend(
        logits
            .iter()
            .enumerate()
            .filter(|(_, l)| allowed(l))
            .map(|(id, &l)| (id as u32, l)),
    );
    if candidates.is_empty() {
        return Err(LocalError::Compute(
            "no token is allowed at this point of the answer".into(),
        ));
    }
    let k = TOP_K.min(candidates.len());
    candidates.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
    candidates.truncate(k);
    candidates.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
    let top = candidates[0].1;
    let mut weights: Vec<f32> = candidates
        .iter()
        .map(|&(_, l)| ((l - top) / temperature).exp())
        .collect();
    let total: f32 = weights.iter().sum();
    let mut kept = 0.0;
    let mut cut = weights.len();
    for (i, w) in weights.iter_mut().enumerate() {
        *w /= total;
        kept += *w;
        if kept >= TOP_P {
            cut = i + 1;
            break;
        }
    }
    let mass: f32 = weights[..cut].iter().sum();
    let mut draw = rng.f32() * mass;
    for (i, w) in weights[..cut].iter().enumerate() {
        if draw < *w {
            return Ok(candidates[i].0);
        }
        draw -= w;
    }
    Ok(candidates[cut - 1].0)
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

    #[test]
    fn sampling_never_draws_a_token_a_grammar_ruled_out() {
        let mut rng = fastrand::Rng::with_seed(7);
        for temperature in [0.0, 0.7, 5.0] {
            for _ in 0..200 {
                let logits = vec![9.0, f32::NEG_INFINITY, 1.0, f32::NEG_INFINITY, 0.5];
                let token =
                    sample(&logits, temperature, &mut rng, &mut Vec::new()).expect("a token");
                assert!([0, 2, 4].contains(&token), "{token} at {temperature}");
            }
        }
        let greedy = vec![0.1, 3.0, f32::NEG_INFINITY, 2.9];
        assert_eq!(
            sample(&greedy, 0.0, &mut rng, &mut Vec::new()).expect("a token"),
            1
        );
        let none = vec![f32::NEG_INFINITY; 4];
        assert!(sample(&none, 0.7, &mut rng, &mut Vec::new()).is_err());
    }

    #[test]
    fn sampling_draws_by_probability_within_the_top_p() {
        // Token 0 holds ~88% of the probability, token 1 ~12%, the rest almost nothing:
        // at top-p 0.9 only 0 and 1 are drawn, and 0 far more often.
        let mut rng = fastrand::Rng::with_seed(11);
        let mut counts = [0usize; 4];
        for _ in 0..2000 {
            let logits = vec![4.0, 2.0, -6.0, -6.0];
            counts[sample(&logits, 1.0, &mut rng, &mut Vec::new()).expect("a token") as usize] += 1;
        }
        assert_eq!(counts[2] + counts[3], 0, "{counts:?}");
        assert!(counts[0] > 5 * counts[1] && counts[1] > 50, "{counts:?}");
    }
}
