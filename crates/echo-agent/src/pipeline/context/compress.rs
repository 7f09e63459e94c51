//! Five-phase compression of a long session's history (seed 001), run by ContextStage's
//! turn setup before the current message joins the request:
//!
//! 1. **prune** tool output: the summariser reads old tool results shortened (`tool_output.rs`);
//! 2. **boundaries**: the head is what the rolling summary already covers; the tail is the
//!    newest whole turns that fit `context.keep_recent` of the budget. Both boundaries fall
//!    on the start of a turn (a user message), so a tool call never loses its result;
//! 3. **archive** the middle segment in SQLite, full-text searchable (`history_search`);
//! 4. **summarise**: one structured call named `summarize_history`, focused on the current
//!    request, folds the segment into the previous summary;
//! 5. **reassemble** the request (summary in the system block, then the tail) and validate
//!    it (every tool result follows its call, every call has its result).
//!
//! Stored messages are never changed: a summary only says which of them a request leaves
//! out, so consolidation into long-term memory (which reads the stored messages from its own
//! boundary) and the UI's history are untouched. Archive and summary are written in one
//! transaction after the call succeeds; a failed call writes only the attempt (so the
//! cooldown counts from it), and the turn goes on with plain trimming, flagged on the trace.

use crate::model_calls::structured_call;
use crate::pipeline::context::ContextStage;
use crate::prompts::Prompts;
use crate::tool_output::cut_tool_output;
use echo_core::config::ContextConfig;
use echo_core::store::{NewCompression, Store, StoredMessage};
use echo_core::trace::Span;
use echo_core::{Message, Role, SessionId, ToolSpec, TurnId};
use echo_llm::LlmClient;
use echo_llm::tokens::Tokenizer;
use schemars::JsonSchema;
use serde::Deserialize;

/// Name of the summary tool the model must call.
pub(crate) const SUMMARY_TOOL: &str = "summarize_history";

/// Most summary calls one turn makes (a segment too large for one call is summarised in
/// pieces, oldest first; what is left waits for the next turn).
const MAX_CHUNKS: usize = 3;

/// Characters of one non-tool message the summariser reads.
const MESSAGE_CAP: usize = 4_000;

/// What the summary call returns.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SummaryAnswer {
    /// The rolling summary of everything so far (the previous summary folded in).
    pub summary: String,
}

/// Whether this turn compresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The request is within `context.compress_at` of the budget.
    Fits,
    /// Over the threshold, but the last attempt was too recent.
    Cooldown,
    /// Over the threshold: compress.
    Compress,
}

/// Decides from the planned request's size. `turns_since_attempt` counts this turn's message
/// too (`None`: never attempted).
pub(crate) fn decide(
    tokens: usize,
    budget: usize,
    config: &ContextConfig,
    turns_since_attempt: Option<u32>,
) -> Decision {
    let threshold = (budget as f64 * config.compress_at.get()) as usize;
    if tokens <= threshold {
        Decision::Fits
    } else if turns_since_attempt.is_some_and(|t| t <= config.cooldown_turns) {
        Decision::Cooldown
    } else {
        Decision::Compress
    }
}

/// Where the verbatim tail starts in `history` (an index at a user message, or
/// `history.len()` when not even the newest turn fits): the newest whole turns whose tokens
/// stay within `keep`.
pub(crate) fn tail_start(history: &[StoredMessage], keep: usize, tokenizer: &Tokenizer) -> usize {
    let mut start = history.len();
    let mut used = 0usize;
    let mut end = history.len();
    while let Some(turn) = history[..end].iter().rposition(|m| m.role == Role::User) {
        let tokens: usize = history[turn..end]
            .iter()
            .map(|m| tokenizer.count_message(&m.to_message()))
            .sum();
        if used + tokens > keep {
            break;
        }
        used += tokens;
        start = turn;
        end = turn;
    }
    start
}

/// The turns of `segment` (each from a user message to the next), grouped into pieces whose
/// pruned text fits `budget` tokens; at most [`MAX_CHUNKS`] pieces.
fn chunks(
    prompts: &Prompts,
    segment: &[StoredMessage],
    budget: usize,
    tokenizer: &Tokenizer,
) -> Vec<Vec<Message>> {
    let mut turns: Vec<&[StoredMessage]> = Vec::new();
    let mut start = 0;
    for i in 1..=segment.len() {
        if i == segment.len() || segment[i].role == Role::User {
            turns.push(&segment[start..i]);
            start = i;
        }
    }
    let mut out: Vec<Vec<Message>> = Vec::new();
    let mut current: Vec<Message> = Vec::new();
    let mut used = 0usize;
    for turn in turns {
        let mut pruned: Vec<Message> = turn.iter().map(|m| pruned(prompts, m)).collect();
        let mut tokens: usize = pruned.iter().map(|m| tokenizer.count_message(m)).sum();
        if tokens > budget {
            // One turn larger than a whole call: every message of it gets an equal share.
            let share = (budget / pruned.len().max(1)).max(50);
            for m in &mut pruned {
                m.content = squeeze(&m.content, share);
            }
            tokens = pruned.iter().map(|m| tokenizer.count_message(m)).sum();
        }
        if used + tokens > budget && !current.is_empty() {
            out.push(std::mem::take(&mut current));
            used = 0;
            if out.len() == MAX_CHUNKS {
                return out;
            }
        }
        used += tokens;
        current.extend(pruned);
    }
    if !current.is_empty() && out.len() < MAX_CHUNKS {
        out.push(current);
    }
    out
}

/// Phase 1: what the summariser reads of one message.
fn pruned(prompts: &Prompts, stored: &StoredMessage) -> Message {
    let mut m = stored.to_message();
    if m.role == Role::Tool {
        if let Some(cut) = cut_tool_output(prompts, &m) {
            m.content = cut;
        }
    } else {
        m.content = squeeze(&m.content, MESSAGE_CAP);
    }
    // The summariser reads calls as text; it is offered no tools but its own.
    if !m.tool_calls.is_empty() {
        let calls: Vec<String> = m
            .tool_calls
            .drain(..)
            .map(|c| format!("[called {} {}]", c.name, squeeze(&c.arguments, 300)))
            .collect();
        m.content = format!("{}\n{}", m.content, calls.join("\n"))
            .trim()
            .to_string();
    }
    m
}

/// `text` cut to about `max` characters (head and a short tail), with a marker.
fn squeeze(text: &str, max: usize) -> String {
    let chars = text.chars().count();
    if chars <= max {
        return text.to_string();
    }
    let tail = max / 4;
    let head: String = text.chars().take(max - tail).collect();
    let end: String = text.chars().skip(chars - tail).collect();
    format!("{head} […] {end}")
}

/// The archive's text of a segment: every message whole, with its place.
fn archive_text(segment: &[StoredMessage]) -> String {
    let mut out = String::new();
    for m in segment {
        let who = match &m.name {
            Some(name) if m.role == Role::Tool => format!("tool {name}"),
            _ => m.role.as_str().to_string(),
        };
        out.push_str(&format!("[{}] {who}: {}\n", m.seq, m.content));
        for c in &m.tool_calls {
            out.push_str(&format!("[{}] call {} {}\n", m.seq, c.name, c.arguments));
        }
    }
    out
}

/// One compression of a session's history.
pub(crate) struct Compressor<'a> {
    pub llm: &'a LlmClient,
    pub context: &'a ContextStage<'a>,
    pub store: &'a Store,
    pub config: &'a ContextConfig,
    pub session: &'a SessionId,
    pub turn: &'a TurnId,
    pub span: &'a Span,
}

/// What a compression did.
#[derive(Debug, Default)]
pub(crate) struct Compressed {
    /// The rolling summary in force afterwards (the old one when nothing succeeded).
    pub summary: Option<String>,
    /// The last message the summary covers.
    pub to_seq: i64,
    /// Summary calls that succeeded.
    pub chunks: usize,
    /// Why the last call failed, if it did.
    pub failure: Option<String>,
}

impl Compressor<'_> {
    /// Compresses `segment` (the middle: history after the summary, before the tail) into
    /// the rolling summary. `from_seq` is what the previous summary covers; `at_seq` the
    /// session's last message; `current` the user's request the summary should serve.
    pub(crate) async fn run(
        &self,
        segment: &[StoredMessage],
        previous: Option<String>,
        from_seq: i64,
        at_seq: i64,
        current: &str,
    ) -> Compressed {
        let tokenizer = self.llm.tokenizer();
        let mut done = Compressed {
            summary: previous,
            to_seq: from_seq,
            ..Compressed::default()
        };
        let overhead = match self.context.summarize_history(
            done.summary.as_deref(),
            &[],
            current,
            summary_tool(),
        ) {
            Ok((messages, tool)) => tokenizer.count_request(&messages, &[tool]),
            Err(e) => {
                done.failure = Some(e.to_string());
                return done;
            }
        };
        let room = self
            .llm
            .input_budget()
            .saturating_sub(overhead + self.config.summary_max_tokens as usize + 256)
            .max(256);
        let pieces = chunks(self.context.prompts, segment, room, tokenizer);
        let mut offset = 0usize;
        for piece in pieces {
            // Each pruned message stands for one stored message, in order.
            let stored = &segment[offset..(offset + piece.len()).min(segment.len())];
            offset += stored.len();
            let Some(last) = stored.last() else { break };
            let outcome = self
                .summarise(done.summary.as_deref(), &piece, current)
                .await;
            let record = NewCompression {
                session: self.session,
                turn: self.turn,
                from_seq: done.to_seq,
                to_seq: last.seq,
                at_seq,
                outcome: outcome.clone(),
                segment_text: &archive_text(stored),
            };
            if let Err(e) = self.store.record_compression(record).await {
                done.failure = Some(e.to_string());
                return done;
            }
            match outcome {
                Ok(summary) => {
                    done.summary = Some(summary);
                    done.to_seq = last.seq;
                    done.chunks += 1;
                }
                Err(e) => {
                    done.failure = Some(e);
                    return done;
                }
            }
        }
        done
    }

    /// Phase 4: one `summarize_history` call.
    async fn summarise(
        &self,
        previous: Option<&str>,
        messages: &[Message],
        current: &str,
    ) -> Result<String, String> {
        let (request, tool) = self
            .context
            .summarize_history(previous, messages, current, summary_tool())
            .map_err(|e| e.to_string())?;
        let answer = structured_call::<SummaryAnswer>(
            self.llm,
            self.span,
            request,
            tool,
            self.config.summary_max_tokens,
        )
        .await;
        let summary = answer?.summary.trim().to_string();
        if summary.is_empty() {
            return Err(format!("{SUMMARY_TOOL} returned an empty summary"));
        }
        Ok(summary)
    }
}

/// The tool the summary call must call.
pub(crate) fn summary_tool() -> ToolSpec {
    ToolSpec {
        name: SUMMARY_TOOL.into(),
        description: crate::prompts::CALL_SUMMARIZE_HISTORY.text().into(),
        parameters: echo_tools::schema_of::<SummaryAnswer>(),
    }
}

/// Phase 5: whether `messages` is a sequence every provider accepts: the system block
/// first, then a user message; every tool result right after the call that asked for it
/// (in the same step); every call answered; the last message from the user.
pub(crate) fn validate(messages: &[Message]) -> Result<(), String> {
    let mut rest = messages;
    if rest.first().is_some_and(|m| m.role == Role::System) {
        rest = &rest[1..];
    }
    if rest.first().is_some_and(|m| m.role != Role::User) {
        return Err("the history does not start with a user message".into());
    }
    let mut open: Vec<&str> = Vec::new();
    for (i, m) in rest.iter().enumerate() {
        match m.role {
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                let Some(at) = open.iter().position(|o| *o == id) else {
                    return Err(format!(
                        "message {i} answers a call that is not open ({id:?})"
                    ));
                };
                open.remove(at);
            }
            Role::System => return Err(format!("message {i} is a second system message")),
            Role::User | Role::Assistant => {
                if let Some(id) = open.first() {
                    return Err(format!("call {id:?} has no result before message {i}"));
                }
                open = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
    }
    if let Some(id) = open.first() {
        return Err(format!("call {id:?} has no result"));
    }
    if rest.last().is_some_and(|m| m.role != Role::User) {
        return Err("the last message is not the user's".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use echo_core::ToolCall;
    use echo_core::config::Share;

    fn stored(seq: i64, role: Role, content: &str, call: Option<&str>) -> StoredMessage {
        StoredMessage {
            id: seq.to_string(),
            session_id: "s".into(),
            turn_id: None,
            seq,
            role,
            content: content.into(),
            reasoning: None,
            tool_calls: match (role, call) {
                (Role::Assistant, Some(id)) => vec![ToolCall {
                    id: id.into(),
                    name: "read_file".into(),
                    arguments: "{\"path\":\"big.txt\"}".into(),
                }],
                _ => Vec::new(),
            },
            tool_call_id: match (role, call) {
                (Role::Tool, Some(id)) => Some(id.into()),
                _ => None,
            },
            name: (role == Role::Tool).then(|| "read_file".into()),
            status: echo_core::MessageStatus::Complete,
            created_at: String::new(),
        }
    }

    /// `turns` turns of question, call, big result, answer.
    fn session(turns: usize) -> Vec<StoredMessage> {
        let mut h = Vec::new();
        for t in 0..turns {
            let base = (t * 4) as i64;
            let id = format!("c{t}");
            h.push(stored(base + 1, Role::User, &format!("question {t}"), None));
            h.push(stored(base + 2, Role::Assistant, "", Some(&id)));
            h.push(stored(base + 3, Role::Tool, &"x".repeat(6_000), Some(&id)));
            h.push(stored(
                base + 4,
                Role::Assistant,
                &format!("answer {t}"),
                None,
            ));
        }
        h
    }

    #[test]
    fn compression_starts_over_the_threshold_and_waits_out_the_cooldown() {
        let config = ContextConfig {
            compress_at: Share::new(0.5).expect("share"),
            cooldown_turns: 2,
            ..ContextConfig::default()
        };
        assert_eq!(decide(500, 1000, &config, None), Decision::Fits);
        assert_eq!(decide(501, 1000, &config, None), Decision::Compress);
        assert_eq!(decide(900, 1000, &config, Some(1)), Decision::Cooldown);
        assert_eq!(decide(900, 1000, &config, Some(2)), Decision::Cooldown);
        assert_eq!(decide(900, 1000, &config, Some(3)), Decision::Compress);
    }

    #[test]
    fn the_tail_is_whole_newest_turns_within_the_share() {
        let h = session(5);
        let t = Tokenizer::Estimate;
        let turn: usize = h[..4]
            .iter()
            .map(|m| t.count_message(&m.to_message()))
            .sum();
        assert_eq!(tail_start(&h, turn * 2 + 10, &t), 12, "two whole turns");
        assert_eq!(h[12].role, Role::User);
        assert_eq!(
            tail_start(&h, turn - 1, &t),
            h.len(),
            "not even one turn fits"
        );
        assert_eq!(tail_start(&h, usize::MAX, &t), 0);
    }

    #[test]
    fn the_summariser_reads_pruned_turns_in_pieces_that_fit() {
        let h = session(6);
        let t = Tokenizer::Estimate;
        let pieces = chunks(&Prompts::new("/nonexistent".into()), &h, 2_000, &t);
        assert!(
            pieces.len() > 1 && pieces.len() <= MAX_CHUNKS,
            "{}",
            pieces.len()
        );
        for piece in &pieces {
            let tokens: usize = piece.iter().map(|m| t.count_message(m)).sum();
            assert!(tokens <= 2_000, "{tokens}");
            assert_eq!(piece[0].role, Role::User, "pieces start at a turn");
            assert!(piece.iter().all(|m| m.tool_calls.is_empty()));
        }
        let tool = pieces[0]
            .iter()
            .find(|m| m.role == Role::Tool)
            .expect("tool");
        assert!(
            tool.content.contains("read_tool_output"),
            "{}",
            tool.content
        );
        let call = &pieces[0][1];
        assert!(
            call.content.contains("[called read_file"),
            "{}",
            call.content
        );
    }

    #[test]
    fn validation_catches_orphans_missing_results_and_a_wrong_last_message() {
        let ok: Vec<Message> = std::iter::once(Message::system("s"))
            .chain(session(2).iter().map(StoredMessage::to_message))
            .chain(std::iter::once(Message::user("now")))
            .collect();
        assert_eq!(validate(&ok), Ok(()));
        let mut orphan = ok.clone();
        orphan.remove(2); // the call of the first result
        assert!(validate(&orphan).is_err_and(|e| e.contains("not open")));
        let mut missing = ok.clone();
        missing.remove(3); // the first result
        assert!(validate(&missing).is_err_and(|e| e.contains("no result")));
        let mut last = ok.clone();
        last.pop();
        assert!(validate(&last).is_err_and(|e| e.contains("last message")));
        let mut head = ok;
        head.remove(1);
        assert!(validate(&head).is_err());
    }
}
