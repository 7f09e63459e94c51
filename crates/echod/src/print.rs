//! Output: streamed turn events, and one printer for every operation's answer: `--json`
//! prints it as serde gives it (the same JSON the gateway sends), otherwise its [`Text`].
//!
//! The answer goes to stdout; progress (tool calls, retries) goes to stderr only when stderr is
//! a terminal, so scripts see the answer on stdout and at most one error line on stderr.

use echo_agent::wire::{
    DataCheck, EventEnvelope, MessageStatus, SessionSummary, StoredMessage, TurnEvent, TurnRecord,
};
use echo_agent::wire::{DegradationStats, Trace};
use echo_agent::{Api, Operation};
use std::io::Write;
use std::sync::Mutex;

/// Prints one turn's events as they arrive.
pub struct TurnPrinter {
    progress: bool,
    state: Mutex<PrinterState>,
}

#[derive(Default)]
struct PrinterState {
    /// Whether the current output line has answer text on it.
    mid_line: bool,
    /// Whether any answer text was printed.
    printed: bool,
}

impl TurnPrinter {
    /// `progress`: also show tool calls and degradations on stderr.
    pub fn new(progress: bool) -> Self {
        Self {
            progress,
            state: Mutex::new(PrinterState::default()),
        }
    }

    /// Handles one event.
    pub fn event(&self, envelope: &EventEnvelope) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = std::io::stdout().lock();
        match &envelope.event {
            TurnEvent::Token { text } => {
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
                state.mid_line = !text.ends_with('\n');
                state.printed = true;
            }
            TurnEvent::ToolCallExecuting {
                name, arguments, ..
            } => {
                if state.mid_line {
                    let _ = writeln!(out);
                    state.mid_line = false;
                }
                if self.progress {
                    eprintln!("  · {name} {}", clip(arguments, 120));
                }
            }
            TurnEvent::ToolResult {
                name,
                ok,
                duration_ms,
                content,
                ..
            } if self.progress => {
                let mark = if *ok { "ok" } else { "failed" };
                eprintln!(
                    "  · {name} {mark} in {duration_ms} ms{}",
                    if *ok {
                        String::new()
                    } else {
                        format!(": {}", clip(content, 160))
                    }
                );
            }
            TurnEvent::Degraded { detail, .. } if self.progress => eprintln!("  ! {detail}"),
            TurnEvent::Final { text } if !state.printed && !text.is_empty() => {
                let _ = out.write_all(text.as_bytes());
                state.mid_line = !text.ends_with('\n');
            }
            TurnEvent::TurnFinished { .. } => {
                if state.mid_line || !state.printed {
                    let _ = writeln!(out);
                }
                let _ = out.flush();
                *state = PrinterState::default();
            }
            _ => {}
        }
    }
}

/// Prints one event as a JSON line (`echod ask --events`).
pub fn json_event(envelope: EventEnvelope) {
    let mut out = std::io::stdout().lock();
    if serde_json::to_writer(&mut out, &envelope).is_ok() {
        let _ = writeln!(out);
        let _ = out.flush();
    }
}

pub(crate) fn clip(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    }
}

/// Prints `value` as pretty JSON on stdout (`--json` of every command).
pub fn json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// An operation's answer as a person reads it on a terminal.
pub trait Text {
    /// Writes it, ending each line with a newline.
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()>;
}

/// Prints `value`: as JSON with `as_json`, else as its [`Text`].
pub fn show<T: serde::Serialize + Text>(value: &T, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        return json(value);
    }
    let mut out = std::io::stdout().lock();
    value.text(&mut out)?;
    Ok(())
}

/// Carries out one operation through [`Api::call`] and prints its answer.
pub async fn call<O: Operation>(api: &Api, request: O, as_json: bool) -> anyhow::Result<()>
where
    O::Response: Text,
{
    show(&api.call(request).await?, as_json)
}

/// `sessions list` as text.
impl Text for Vec<SessionSummary> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no sessions yet")?;
        }
        for s in self {
            writeln!(
                out,
                "{:<24} {:>5} msgs  {}  {}{}",
                s.name,
                s.message_count,
                s.updated_at,
                s.project
                    .as_deref()
                    .map(|p| format!("[{p}] "))
                    .unwrap_or_default(),
                s.title.as_deref().map(|t| clip(t, 60)).unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

/// `data check` as text.
impl Text for DataCheck {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "database: {}", self.integrity)?;
        writeln!(
            out,
            "{} conversation(s), {} message(s), {} memory(ies)",
            self.sessions, self.messages, self.memories
        )?;
        let vectors = self
            .vectors
            .map_or_else(|| "no embedder".to_string(), |v| v.to_string());
        writeln!(
            out,
            "search index: {} memory(ies); vector index: {vectors}",
            self.search_index
        )?;
        if self.problems.is_empty() {
            writeln!(out, "all well")?;
        }
        for p in &self.problems {
            writeln!(out, "problem: {p}")?;
        }
        Ok(())
    }
}

/// `history SESSION` as text.
impl Text for Vec<StoredMessage> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for m in self {
            let partial = if m.status == MessageStatus::Partial {
                " (interrupted)"
            } else {
                ""
            };
            write!(out, "[{}{partial}] ", m.role.as_str())?;
            if let Some(id) = &m.tool_call_id {
                write!(out, "({id}) ")?;
            }
            writeln!(out, "{}", m.content)?;
            for call in &m.tool_calls {
                writeln!(
                    out,
                    "  -> {}({}) [{}]",
                    call.name,
                    clip(&call.arguments, 200),
                    call.id
                )?;
            }
        }
        Ok(())
    }
}

/// `trace list` as text.
impl Text for Vec<TurnRecord> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no turns yet")?;
        }
        for t in self {
            writeln!(
                out,
                "{}  {:<11}{}{} {:<16} {:<20} {:>6}/{:<6} {}",
                t.id,
                t.status,
                if t.degraded { " degraded" } else { "" },
                if t.approvals > 0 { " asked" } else { "" },
                clip(&t.session_name, 16),
                t.model.as_deref().unwrap_or("-"),
                t.input_tokens,
                t.output_tokens,
                clip(&t.input, 50)
            )?;
        }
        Ok(())
    }
}

/// `trace stats` as text: the share of turns that fell back, then each fallback's.
impl Text for DegradationStats {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "since {}: {} turns, {} degraded ({:.1}%)",
            self.since,
            self.turns,
            self.degraded_turns,
            self.rate * 100.0
        )?;
        for r in &self.by_reason {
            writeln!(
                out,
                "  {:<24} {:>6} turns {:>6.1}%",
                r.reason,
                r.turns,
                r.rate * 100.0
            )?;
        }
        Ok(())
    }
}

/// `trace show TURN_ID` as text.
impl Text for Trace {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "turn {} · {} · session {} · {} · {}/{} tokens",
            self.turn.id,
            self.turn.status,
            self.turn.session_name,
            self.turn.entry_point,
            self.turn.input_tokens,
            self.turn.output_tokens
        )?;
        if let Some(e) = &self.turn.error {
            writeln!(out, "error: {e}")?;
        }
        let depth = |span: &echo_agent::wire::SpanRecord| -> usize {
            let mut d = 0;
            let mut parent = span.parent_id.as_deref();
            while let Some(p) = parent {
                d += 1;
                parent = self
                    .spans
                    .iter()
                    .find(|s| s.id == p)
                    .and_then(|s| s.parent_id.as_deref());
                if d > 16 {
                    break;
                }
            }
            d
        };
        for span in &self.spans {
            let mut line = format!(
                "{}{} ({}) [{}] {}",
                "  ".repeat(depth(span)),
                span.name,
                span.kind,
                span.status,
                span.duration_ms
                    .map(|d| format!("{d:.1} ms"))
                    .unwrap_or_else(|| "running".into())
            );
            if let Some(m) = &span.model {
                line.push_str(&format!(" model={m}"));
            }
            if let (Some(i), Some(o)) = (span.tokens_in, span.tokens_out) {
                line.push_str(&format!(" tokens={i}/{o}"));
            }
            if span.degraded {
                line.push_str(&format!(
                    " DEGRADED({})",
                    span.degraded_reason.as_deref().unwrap_or("?")
                ));
            }
            if let Some(e) = &span.error {
                line.push_str(&format!(" error: {}", clip(e, 160)));
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}
