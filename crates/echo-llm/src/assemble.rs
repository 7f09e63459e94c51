//! Turns provider-neutral deltas into caller events and the final answer: text, reasoning,
//! tool calls assembled from fragments, usage and finish reason.
//!
//! Decoders (one per protocol) resolve each tool-call fragment to a dense slot number; this
//! module only appends and announces.

use crate::types::ChatEvent;
use echo_core::{ToolCall, Usage};

/// One piece of a response, in a form common to all protocols.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Delta {
    /// Answer text.
    Text(String),
    /// Reasoning text.
    Reasoning(String),
    /// A tool-call fragment for slot `slot` (0, 1, … in order of first appearance).
    Tool {
        slot: usize,
        id: Option<String>,
        name: Option<String>,
        args: String,
    },
    /// Token counts; `None` leaves the count seen so far.
    Usage {
        input: Option<u64>,
        output: Option<u64>,
        /// Prompt tokens taken from a cache.
        cached: Option<u64>,
    },
    /// Why generation stopped.
    Finish(String),
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    args: String,
    started: bool,
}

/// What the assembler holds once a response is over.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Assembled {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: Option<String>,
}

/// Accumulates one attempt's response and forwards events to the caller.
pub(crate) struct Assembler<'a> {
    sink: &'a mut (dyn FnMut(ChatEvent) + Send + 'a),
    text: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    finish_reason: Option<String>,
    delivered: bool,
    /// How long the built-in model took to load its weights for this attempt.
    model_load: Option<std::time::Duration>,
}

impl<'a> Assembler<'a> {
    pub fn new(sink: &'a mut (dyn FnMut(ChatEvent) + Send + 'a)) -> Self {
        Self {
            sink,
            text: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            finish_reason: None,
            delivered: false,
            model_load: None,
        }
    }

    /// Notes that the built-in model loaded its weights for this attempt, taking `took`.
    pub fn model_loaded(&mut self, took: std::time::Duration) {
        self.model_load = Some(took);
    }

    /// Tells the caller something about the attempt that is not output (a wait), so it
    /// does not count as delivered.
    pub fn tell(&mut self, event: ChatEvent) {
        (self.sink)(event);
    }

    /// How long the built-in model took to load its weights for this attempt, if it had to.
    pub fn model_load(&self) -> Option<std::time::Duration> {
        self.model_load
    }

    /// Whether any text, reasoning or tool-call event has reached the caller.
    pub fn delivered(&self) -> bool {
        self.delivered
    }

    /// Text passed to the caller so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Usage seen so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Whether the server already said why generation stopped.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    fn emit(&mut self, event: ChatEvent) {
        self.delivered = true;
        (self.sink)(event);
    }

    pub fn apply(&mut self, delta: Delta) {
        match delta {
            Delta::Text(t) if !t.is_empty() => {
                self.text.push_str(&t);
                self.emit(ChatEvent::TextDelta(t));
            }
            Delta::Reasoning(t) if !t.is_empty() => {
                self.reasoning.push_str(&t);
                self.emit(ChatEvent::ReasoningDelta(t));
            }
            Delta::Text(_) | Delta::Reasoning(_) => {}
            Delta::Tool {
                slot,
                id,
                name,
                args,
            } => self.tool(slot, id, name, args),
            Delta::Usage {
                input,
                output,
                cached,
            } => {
                if let Some(n) = input {
                    self.usage.input_tokens = n;
                }
                if let Some(n) = output {
                    self.usage.output_tokens = n;
                }
                if let Some(n) = cached {
                    self.usage.cached_input_tokens = n;
                }
            }
            Delta::Finish(reason) => self.finish_reason = Some(reason),
        }
    }

    fn tool(&mut self, slot: usize, id: Option<String>, name: Option<String>, args: String) {
        while self.calls.len() <= slot {
            self.calls.push(PartialCall::default());
        }
        let Some(call) = self.calls.get_mut(slot) else {
            return;
        };
        if call.id.is_none() {
            call.id = id.filter(|s| !s.is_empty());
        }
        if let Some(name) = name.filter(|s| !s.is_empty())
            && call.name.is_empty()
        {
            call.name = name;
        }
        call.args.push_str(&args);
        if call.started {
            if !args.is_empty() {
                let id = call_id(call, slot);
                self.emit(ChatEvent::ToolCallArgsDelta {
                    index: slot,
                    id,
                    delta: args,
                });
            }
        } else if !call.name.is_empty() {
            // Announce the call once its name is known; arguments that arrived before the
            // name (rare) are passed on in one piece right after.
            call.started = true;
            let id = call_id(call, slot);
            let name = call.name.clone();
            let pending = call.args.clone();
            self.emit(ChatEvent::ToolCallStarted {
                index: slot,
                id: id.clone(),
                name,
            });
            if !pending.is_empty() {
                self.emit(ChatEvent::ToolCallArgsDelta {
                    index: slot,
                    id,
                    delta: pending,
                });
            }
        }
    }

    pub fn finish(self) -> Assembled {
        let tool_calls = self
            .calls
            .iter()
            .enumerate()
            .map(|(slot, c)| ToolCall {
                id: call_id(c, slot),
                name: c.name.clone(),
                arguments: c.args.clone(),
            })
            .collect();
        Assembled {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
        }
    }
}

/// The call's id, or `call_N` when the server sent none.
fn call_id(call: &PartialCall, slot: usize) -> String {
    call.id.clone().unwrap_or_else(|| format!("call_{slot}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Applies `deltas` and returns the events and the assembled answer.
    pub(crate) fn run(deltas: Vec<Delta>) -> (Vec<ChatEvent>, Assembled) {
        let mut events = Vec::new();
        let mut sink = |e: ChatEvent| events.push(e);
        let mut asm = Assembler::new(&mut sink);
        for d in deltas {
            asm.apply(d);
        }
        let out = asm.finish();
        (events, out)
    }

    fn tool(slot: usize, id: Option<&str>, name: Option<&str>, args: &str) -> Delta {
        Delta::Tool {
            slot,
            id: id.map(String::from),
            name: name.map(String::from),
            args: args.into(),
        }
    }

    #[test]
    fn tool_call_started_once_then_fragments() {
        let (events, out) = run(vec![
            tool(0, Some("a"), Some("read"), ""),
            tool(0, None, None, "{\"p\":"),
            tool(0, None, None, "1}"),
        ]);
        assert_eq!(
            events,
            vec![
                ChatEvent::ToolCallStarted {
                    index: 0,
                    id: "a".into(),
                    name: "read".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "a".into(),
                    delta: "{\"p\":".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "a".into(),
                    delta: "1}".into()
                },
            ]
        );
        assert_eq!(
            out.tool_calls,
            vec![ToolCall {
                id: "a".into(),
                name: "read".into(),
                arguments: "{\"p\":1}".into()
            }]
        );
    }

    #[test]
    fn arguments_before_name_are_flushed_when_it_arrives_and_missing_ids_are_made_up() {
        let (events, out) = run(vec![
            tool(0, None, None, "{"),
            tool(0, None, Some("x"), "}"),
        ]);
        assert_eq!(
            events,
            vec![
                ChatEvent::ToolCallStarted {
                    index: 0,
                    id: "call_0".into(),
                    name: "x".into()
                },
                ChatEvent::ToolCallArgsDelta {
                    index: 0,
                    id: "call_0".into(),
                    delta: "{}".into()
                },
            ]
        );
        assert_eq!(out.tool_calls[0].arguments, "{}");
    }

    #[test]
    fn empty_text_is_not_an_event_and_usage_keeps_known_counts() {
        let mut asm_events = Vec::new();
        let mut sink = |e: ChatEvent| asm_events.push(e);
        let mut asm = Assembler::new(&mut sink);
        asm.apply(Delta::Text(String::new()));
        assert!(!asm.delivered());
        asm.apply(Delta::Usage {
            input: Some(10),
            output: Some(1),
            cached: None,
        });
        asm.apply(Delta::Usage {
            input: None,
            output: Some(7),
            cached: None,
        });
        asm.apply(Delta::Reasoning("r".into()));
        assert!(asm.delivered());
        let out = asm.finish();
        assert_eq!(
            out.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 7,
                cached_input_tokens: 0,
            }
        );
        assert_eq!(asm_events, vec![ChatEvent::ReasoningDelta("r".into())]);
    }
}
