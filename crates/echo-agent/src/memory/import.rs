//! Reading another assistant's memory (pasted text: ChatGPT's "Manage memories" list, Claude's
//! memory export, or any list of statements about the person) into memory cards. Nothing is
//! written here: the cards go to a review (`Api::memory_import_preview`) and only the ones the
//! person keeps are written (`Api::memory_import_cards`).
//!
//! Like extraction, two styles (`memory.extraction_style`). Written: a forced
//! `import_memories` call per stretch of the text writes cards, each with the words it comes
//! from, and a card whose words are not in the text is dropped. Quoted (the built-in model's
//! default): the text's lines are fixed in the call's grammar and the model only decides
//! which to keep (`keep_imported`), so a small model imports the lines themselves.

use super::quoted::{StatementDecisions, restricted};
use super::{ExtractedAbout, grounded, tool_spec};
use crate::model_calls::structured_call;
use crate::pipeline::context::{ContextStage, ImportText};
use echo_core::ToolSpec;
use echo_core::trace::Span;
use echo_llm::LlmClient;
use schemars::JsonSchema;
use serde::Deserialize;
use unicode_segmentation::UnicodeSegmentation;

/// Name of the tool the model must call in the written style.
pub(crate) const IMPORT_TOOL: &str = "import_memories";
/// Name of the tool the model must call in the quoted style.
pub(crate) const KEEP_IMPORTED_TOOL: &str = "keep_imported";
/// The longest text one import reads, in characters.
pub(crate) const MAX_IMPORT_CHARS: usize = 100_000;
/// The written style reads the text in stretches of about this many characters (whole lines).
const STRETCH_CHARS: usize = 3_000;
/// The quoted style offers this many lines per call.
const LINES_PER_CALL: usize = 12;
/// A longer line is split into its sentences; a longer sentence is not one memory.
const MAX_LINE_CHARS: usize = 200;

/// What the `import_memories` call returns.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ImportedBatch {
    /// One card per fact about the person; none for what is not about them.
    #[schemars(length(max = 40))]
    pub memories: Vec<ImportedFact>,
}

/// One card read from the text.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub(crate) struct ImportedFact {
    /// The words of the text it comes from, copied.
    #[schemars(length(min = 1, max = 300))]
    pub evidence: String,
    /// One self-contained sentence in the third person.
    #[schemars(length(min = 1, max = 200))]
    pub content: String,
    /// What it is about, snake_case; reuse an existing slot for the same thing.
    #[schemars(length(min = 1, max = 40))]
    pub slot: Option<String>,
    /// The slot's value in a few words.
    #[schemars(length(max = 80))]
    pub value: Option<String>,
    /// RFC 3339 date when it stops holding, or null.
    pub valid_until: Option<String>,
    /// person (the person and their life) or project (the work of the project imported into).
    #[serde(default)]
    pub about: Option<ExtractedAbout>,
}

/// The forced `import_memories` call.
pub(crate) fn import_tool() -> ToolSpec {
    tool_spec::<ImportedBatch>(IMPORT_TOOL, crate::prompts::CALL_IMPORT_MEMORIES.text())
}

/// The forced `keep_imported` call, before its lines are filled in.
pub(crate) fn keep_imported_tool() -> ToolSpec {
    tool_spec::<StatementDecisions>(
        KEEP_IMPORTED_TOOL,
        crate::prompts::CALL_KEEP_IMPORTED.text(),
    )
}

/// The cards read from a text, and what the model proposed that was left out (with why).
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub cards: Vec<ImportedFact>,
    pub dropped: Vec<String>,
}

/// One import's model calls: on `llm`, recorded on `span`, for the project named `project`.
pub(crate) struct Reader<'a> {
    pub llm: &'a LlmClient,
    pub context: ContextStage<'a>,
    pub span: &'a Span,
    pub project: Option<&'a str>,
}

impl Reader<'_> {
    /// Reads `text` in the written style; `slots` are the memory slots there are.
    pub(crate) async fn written(&self, text: &str, slots: &[String]) -> Result<Read, String> {
        let mut read = Read::default();
        for stretch in stretches(text, STRETCH_CHARS) {
            let whole = ImportText::Whole {
                text: &stretch,
                slots,
            };
            let (messages, tool) = self
                .context
                .memory_import(whole, self.project, import_tool())
                .map_err(|e| e.to_string())?;
            let batch =
                structured_call::<ImportedBatch>(self.llm, self.span, messages, tool, 4096).await?;
            for card in batch.memories {
                if grounded(&card.evidence, &[stretch.as_str()]) {
                    read.cards.push(card);
                } else {
                    read.dropped.push(format!(
                        "{:?}: the words it quotes are not in the text",
                        card.content
                    ));
                }
            }
        }
        Ok(read)
    }

    /// Reads `text` in the quoted style: the model keeps lines, each kept line is a card.
    pub(crate) async fn quoted(&self, text: &str) -> Result<Read, String> {
        let (lines, mut dropped) = lines_of(text);
        let mut read = Read::default();
        for batch in lines.chunks(LINES_PER_CALL) {
            let tool = restricted(keep_imported_tool(), batch)?;
            let (messages, tool) = self
                .context
                .memory_import(ImportText::Lines(batch), self.project, tool)
                .map_err(|e| e.to_string())?;
            let answer =
                structured_call::<StatementDecisions>(self.llm, self.span, messages, tool, 1024)
                    .await?;
            for decision in answer.decisions.into_iter().filter(|d| d.keep) {
                // The grammar fixes the lines; a server that ignores it does not.
                if !batch.contains(&decision.statement) {
                    dropped.push(format!(
                        "{:?}: not one of the text's lines",
                        decision.statement
                    ));
                    continue;
                }
                read.cards.push(ImportedFact {
                    evidence: decision.statement.clone(),
                    content: decision.statement,
                    slot: None,
                    value: None,
                    valid_until: None,
                    about: decision.about,
                });
            }
        }
        read.dropped.extend(dropped);
        Ok(read)
    }
}

/// `text` in stretches of whole lines of about `max` characters (a longer line is a stretch of
/// its own, cut by the call's fitting if it must be).
fn stretches(text: &str, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if !current.is_empty() && current.len() + line.len() + 1 > max {
            out.push(std::mem::take(&mut current));
        }
        current.push_str(line);
        current.push('\n');
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The lines of a memory list that could each be one memory: list markers and numbers taken
/// off, headings and repeats left out, a long line split into its sentences. Sentences still
/// too long to be one memory are left out, and said.
fn lines_of(text: &str) -> (Vec<String>, Vec<String>) {
    let mut lines: Vec<String> = Vec::new();
    let mut too_long = Vec::new();
    for raw in text.lines() {
        let line = unmarked(raw);
        if line.is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = if line.chars().count() > MAX_LINE_CHARS {
            line.unicode_sentences().map(str::trim).collect()
        } else {
            vec![line]
        };
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            if part.chars().count() > MAX_LINE_CHARS {
                too_long.push(format!(
                    "{:?}…: longer than {MAX_LINE_CHARS} characters",
                    part.chars().take(40).collect::<String>()
                ));
            } else if !lines.iter().any(|l| l == part) {
                lines.push(part.to_string());
            }
        }
    }
    (lines, too_long)
}

/// A line without its list marker (`-`, `*`, `•`, `1.`, `2)`) and surrounding space.
fn unmarked(line: &str) -> &str {
    let line = line.trim();
    let line = line
        .strip_prefix(['-', '*', '•', '–'])
        .map(str::trim_start)
        .unwrap_or(line);
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0
        && let Some(rest) = line[digits..].strip_prefix(['.', ')'])
    {
        return rest.trim_start();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_list_becomes_its_lines() {
        let text = "# Saved memories\n\n- Is vegetarian.\n* Lives in Lyon.\n1. Has a daughter named Mia.\n\
                    2) Prefers short answers.\n- Is vegetarian.\n";
        let (lines, dropped) = lines_of(text);
        assert_eq!(
            lines,
            [
                "Is vegetarian.",
                "Lives in Lyon.",
                "Has a daughter named Mia.",
                "Prefers short answers."
            ]
        );
        assert!(dropped.is_empty());
    }

    #[test]
    fn a_long_line_is_split_into_sentences_and_an_endless_one_is_said() {
        let second = format!("Enjoys {}walks.", "very long ".repeat(17));
        let long = format!("Works as a nurse at the city hospital. {second}");
        let endless = "b".repeat(260);
        let (lines, dropped) = lines_of(&format!("{long}\n{endless}\n"));
        assert_eq!(
            lines,
            ["Works as a nurse at the city hospital.", second.as_str()]
        );
        assert_eq!(dropped.len(), 1, "{dropped:?}");
    }

    #[test]
    fn stretches_keep_whole_lines() {
        let text = "one line\n".repeat(1000);
        let parts = stretches(&text, 3000);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| p.len() <= 3000));
        assert_eq!(parts.concat(), text);
    }
}
