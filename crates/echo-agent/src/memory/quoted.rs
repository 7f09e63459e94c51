//! Extraction in the quoted style (`memory.extraction_style`), the built-in model's default.
//! The model does not write facts: it decides, statement by statement, which of the user's
//! own statements about themselves to keep, and the grammar of its call fixes everything
//! but the `true` or `false`. A model too small to write a fact about the person
//! (SmolLM2-135M fills the fields with the prompt's own wording) can still decide, and what
//! is kept is true to the letter: the user's words.

use super::{Extracted, ExtractedScope, ExtractedSource, tool_spec};
use crate::model_calls::structured_call;
use crate::pipeline::context::ContextStage;
use echo_core::ToolSpec;
use echo_core::config::{ExtractionStyle, ProviderKind};
use echo_core::trace::Span;
use echo_llm::LlmClient;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

/// Name of the tool the model must call in the quoted style.
pub(crate) const KEEP_TOOL: &str = "keep_statements";
/// Most statements offered from one message (the first ones).
const MAX_STATEMENTS: usize = 12;
/// Longer statements are not offered: a memory is one fact, not a paragraph.
const MAX_STATEMENT_CHARS: usize = 200;
/// What a kept statement is believed with: the user said it, but the model that chose it
/// is small.
const KEPT_CONFIDENCE: f64 = 0.7;

/// What the `keep_statements` call returns: one decision per statement, in order.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct StatementDecisions {
    /// One decision for each statement, in the order listed.
    pub decisions: Vec<StatementDecision>,
}

/// Whether to keep one statement.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct StatementDecision {
    /// The statement, copied exactly.
    pub statement: String,
    /// Whether it tells a lasting fact about the user.
    pub keep: bool,
    /// person (the user and their life) or project (the work or topic of this
    /// conversation).
    #[serde(default)]
    pub about: Option<super::ExtractedAbout>,
}

/// Whether extraction on `llm` uses the quoted style.
pub(crate) fn applies(style: ExtractionStyle, llm: &LlmClient) -> bool {
    match style {
        ExtractionStyle::Auto => llm.kind() == ProviderKind::Local,
        ExtractionStyle::Written => false,
        ExtractionStyle::Quoted => true,
    }
}

/// The forced `keep_statements` call, before its statements are filled in.
pub(crate) fn keep_tool() -> ToolSpec {
    tool_spec::<StatementDecisions>(KEEP_TOOL, crate::prompts::CALL_KEEP_STATEMENTS.text())
}

/// Words by which a speaker speaks of themselves, in the languages the filter knows: a
/// statement without one is not about the person ("Summarise this article for me" has only
/// the object "me"). Words are compared lowercased, split at apostrophes ("I'm", "j'ai").
const FIRST_PERSON: &[&str] = &[
    // English
    "i",
    "my",
    "mine",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    // Spanish, Portuguese, Italian
    "yo",
    "mi",
    "mis",
    "nosotros",
    "nosotras",
    "nuestro",
    "nuestra",
    "nuestros",
    "nuestras",
    "eu",
    "meu",
    "minha",
    "meus",
    "minhas",
    "nós",
    "nosso",
    "nossa",
    "io",
    "mio",
    "mia",
    "miei",
    "noi",
    "nostro",
    "nostra",
    // French, German
    "je",
    "j",
    "mon",
    "ma",
    "mes",
    "nous",
    "notre",
    "nos",
    "ich",
    "mein",
    "meine",
    "meinen",
    "meinem",
    "meiner",
    "wir",
    "unser",
    "unsere",
];
/// The same for scripts written without spaces, found anywhere in the statement.
const FIRST_PERSON_CHARS: &[char] = &['我', '私', '僕', '俺', '나', '내', '저', '제'];

/// Whether `statement` speaks of the speaker.
fn about_the_speaker(statement: &str) -> bool {
    statement.contains(FIRST_PERSON_CHARS)
        || statement
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| FIRST_PERSON.contains(&w.to_lowercase().as_str()))
}

/// The statements of a message that could state a fact about the person: its sentences
/// (Unicode sentence boundaries, so any script) that speak of the speaker, without
/// questions, repeats, and ones too long to be one fact.
pub(crate) fn statements(message: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sentence in message.unicode_sentences() {
        let s = sentence.trim();
        let offered = !s.ends_with(['?', '？'])
            && s.chars().count() <= MAX_STATEMENT_CHARS
            && about_the_speaker(s)
            && !out.iter().any(|o| o == s);
        if offered {
            out.push(s.to_string());
            if out.len() == MAX_STATEMENTS {
                break;
            }
        }
    }
    out
}

/// `tool` with one decision per statement, each with its statement fixed: the model only
/// writes `true` or `false`. A schema without the places to fix is an error: the call must
/// not run unconstrained.
pub(crate) fn restricted(mut tool: ToolSpec, statements: &[String]) -> Result<ToolSpec, String> {
    let missing = || format!("{}: its schema has no decisions to fix", tool.name);
    let item = tool
        .parameters
        .pointer("/$defs/StatementDecision")
        .cloned()
        .ok_or_else(missing)?;
    let mut prefix = Vec::with_capacity(statements.len());
    for statement in statements {
        let mut fixed = item.clone();
        let property = fixed
            .pointer_mut("/properties/statement")
            .and_then(Value::as_object_mut)
            .ok_or_else(missing)?;
        property.insert("const".into(), Value::from(statement.as_str()));
        prefix.push(fixed);
    }
    let list = tool
        .parameters
        .pointer_mut("/properties/decisions")
        .and_then(Value::as_object_mut)
        .ok_or_else(missing)?;
    list.insert("prefixItems".into(), Value::Array(prefix));
    list.insert("items".into(), Value::Bool(false));
    list.insert("minItems".into(), Value::from(statements.len()));
    list.insert("maxItems".into(), Value::from(statements.len()));
    Ok(tool)
}

/// The consolidation call in the quoted style: the summary only. The person's statements
/// were kept turn by turn; a model that cannot write facts would only write ones the
/// grounding check rejects, and they are the longest part of its output.
pub(crate) fn summary_only(mut tool: ToolSpec) -> Result<ToolSpec, String> {
    let memories = tool
        .parameters
        .pointer_mut("/properties/memories")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("{}: its schema has no memories to leave out", tool.name))?;
    memories.insert("maxItems".into(), Value::from(0));
    Ok(tool)
}

/// What the quoted style found: facts to write (in the user's words), and what was refused.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub facts: Vec<Extracted>,
    pub rejected: Vec<String>,
}

/// Asks the model which of the user's statements to keep. No call when the message has no
/// statement about the person (a question, a request).
pub(crate) async fn keep(
    llm: &LlmClient,
    context: &ContextStage<'_>,
    span: &Span,
    user_message: &str,
) -> Result<Kept, String> {
    let statements = statements(user_message);
    let mut kept = Kept::default();
    if statements.is_empty() {
        return Ok(kept);
    }
    let tool = restricted(keep_tool(), &statements)?;
    let (messages, tool) = context
        .keep_statements(&statements, tool)
        .map_err(|e| e.to_string())?;
    let answer = structured_call::<StatementDecisions>(llm, span, messages, tool, 1024).await?;
    for decision in answer.decisions.into_iter().filter(|d| d.keep) {
        // The grammar fixes the statements; a server that ignores it does not.
        if !statements.contains(&decision.statement) {
            kept.rejected.push(format!(
                "{:?}: not one of the user's statements",
                decision.statement
            ));
            continue;
        }
        if kept.facts.iter().any(|f| f.evidence == decision.statement) {
            continue;
        }
        kept.facts.push(Extracted {
            content: context
                .quoted_memory(&decision.statement)
                .map_err(|e| e.to_string())?,
            evidence: decision.statement,
            subject: "user".into(),
            kind: "fact".into(),
            slot: None,
            value: None,
            source: ExtractedSource::UserStated,
            confidence: KEPT_CONFIDENCE,
            valid_until: None,
            scope: ExtractedScope::LongTerm,
            about: decision.about,
        });
    }
    Ok(kept)
}
