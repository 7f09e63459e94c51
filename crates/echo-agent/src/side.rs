//! Side jobs on the side model (`[side] model`: the built-in model or a cheap one of the
//! provider; `Models::side`): a session's title after its first exchange, and up to three
//! follow-up questions under an answer. Both run after the answer
//! is saved and published, with their own short requests (never the turn's context or
//! budget), each traced as a background span; a failure is a `side_model_failed`
//! degradation on that span and changes nothing the person already has.

use crate::background::title_of;
use crate::model_calls::{ModelCall, call_tool, structured_call_until};
use crate::pipeline::context::ContextStage;
use crate::think::strip_think;
use echo_core::trace::Span;
use echo_core::vocab::Degradation;
use echo_llm::LlmClient;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// Most follow-up questions offered.
const MAX_FOLLOW_UPS: usize = 3;
/// Longest follow-up question kept, in characters.
const FOLLOW_UP_CHARS: usize = 200;

/// The `follow_ups` call's answer.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct FollowUpsAnswer {
    /// Up to three questions the person might ask next, one line each. The bounds are in the
    /// schema so a constrained model closes the list instead of writing on to its token limit.
    #[schemars(length(max = 3), inner(length(max = 200)))]
    questions: Vec<String>,
}

/// The side model's title for an exchange: one short line, or why there is none.
pub(crate) async fn title(
    llm: &LlmClient,
    context: ContextStage<'_>,
    span: &mut Span,
    (user, answer): (&str, &str),
) -> Result<String, String> {
    let messages = context
        .side_title(user, answer)
        .map_err(|e| e.to_string())?;
    let call = ModelCall::exact(llm, messages, Vec::new(), 32);
    let response = call
        .send(span, "side_title", &CancellationToken::new(), &mut |_| {})
        .await
        .map_err(|f| f.error.to_string())?;
    let (visible, _) = strip_think(&response.text);
    let cleaned = visible
        .trim()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '“' | '”' | '.' | '*' | '#'))
        .trim();
    let title = title_of(cleaned);
    if title.is_empty() {
        return Err("the side model wrote no title".into());
    }
    Ok(title)
}

/// Up to three follow-up questions for an exchange; none when the side model fails (the
/// span says why).
pub(crate) async fn follow_ups(
    llm: &LlmClient,
    context: ContextStage<'_>,
    span: &mut Span,
    (user, answer): (&str, &str),
) -> Vec<String> {
    let tool = call_tool::<FollowUpsAnswer>("follow_ups");
    let asked = match context.side_follow_ups(user, answer, tool) {
        Ok((messages, tool)) => {
            let call = (messages, tool, 256);
            structured_call_until::<FollowUpsAnswer>(llm, span, call, &CancellationToken::new())
                .await
        }
        Err(e) => Err(e.to_string()),
    };
    match asked {
        Ok((answer, _)) => {
            // Small models repeat themselves: a question offered once, whatever its case.
            let mut seen = std::collections::HashSet::new();
            let questions: Vec<String> = answer
                .questions
                .iter()
                .map(|q| q.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|q| !q.is_empty())
                .map(|q| q.chars().take(FOLLOW_UP_CHARS).collect::<String>())
                .filter(|q| seen.insert(q.to_lowercase()))
                .take(MAX_FOLLOW_UPS)
                .collect();
            span.attr("questions", questions.len());
            questions
        }
        Err(e) => {
            failed(span, &e);
            Vec::new()
        }
    }
}

/// Marks a side job's failure on its span: a degradation, not an error of the turn.
pub(crate) fn failed(span: &mut Span, why: &str) {
    span.attr("side_error", why.to_string());
    span.degrade(Degradation::SideModelFailed);
}
