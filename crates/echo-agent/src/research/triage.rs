//! Triage: per turn, the quick path (the ReAct loop) or research (the graph of
//! `research.rs`), from a rule set over the question and the routing's task type, and for a
//! question the rules cannot place, the planner's verdict (`[research] ask_planner`). The person
//! can force either way; `[research] mode = "never"` leaves research to those who ask. The
//! decision and its reason go on the turn's trace.

use crate::model_calls::{call_tool, structured_call_until};
use crate::pipeline::context::{ContextStage, routing};
use echo_core::config::{Config, TaskType};
use echo_core::trace::Span;
use echo_core::vocab::{Degradation, ResearchMode};
use echo_llm::LlmClient;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// Most tokens of the planner's verdict.
const VERDICT_TOKENS: u32 = 200;

/// Which path a turn takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TurnPath {
    /// The ReAct loop: one answer, tools as needed.
    Quick,
    /// The research graph: plan, search and read, a cited report.
    Research,
}

impl TurnPath {
    /// Its name on the trace.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TurnPath::Quick => "quick",
            TurnPath::Research => "research",
        }
    }
}

/// The path and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Triage {
    pub path: TurnPath,
    pub reason: String,
    /// The rules could not place the question (some constraints, not enough to be sure):
    /// `path` is their lean, and the planner is asked unless `ask_planner` is off.
    pub unsure: bool,
}

/// The planner's verdict on a question the rules could not place.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct Verdict {
    /// True when the request is worth a research run (sub-questions, web search, a cited
    /// report); false for a quick answer.
    research: bool,
    /// Why, in one sentence.
    #[serde(default)]
    reason: String,
}

/// Words that bound an answer: a budget, a limit, a range.
const LIMITS: &[&str] = &[
    "under",
    "below",
    "at most",
    "at least",
    "no more than",
    "less than",
    "more than",
    "within",
    "budget",
    "maximum",
    "minimum",
    "cheaper",
    "cheapest",
    "without",
    "must",
    "only",
    "不超过",
    "以内",
    "预算",
    "至少",
];

/// Words that ask for several things weighed against each other.
const WEIGHING: &[&str] = &[
    "compare",
    "comparison",
    "versus",
    "vs",
    "pros and cons",
    "trade-offs",
    "tradeoffs",
    "difference",
    "differences",
    "which of",
    "best",
    "options",
    "alternatives",
    "比较",
    "对比",
    "区别",
];

/// Number words that count days, people, items.
const NUMBERS: &[&str] = &[
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "a week", "a month",
];

/// Decides the path of a turn asking `input`, `forced` by the person or not, with
/// `search` telling whether a search service is configured.
pub(crate) fn triage(config: &Config, input: &str, forced: Option<bool>, search: bool) -> Triage {
    let decided = |path, reason: &str| Triage {
        path,
        reason: reason.to_string(),
        unsure: false,
    };
    match forced {
        Some(true) => return decided(TurnPath::Research, "the person asked for research"),
        Some(false) => return decided(TurnPath::Quick, "the person asked for a quick answer"),
        None => {}
    }
    if config.research.mode == ResearchMode::Never {
        return decided(TurnPath::Quick, "research is set to never");
    }
    if !search {
        return decided(TurnPath::Quick, "no web search service is configured");
    }
    let constraints = constraints(input);
    let task = routing::classify(input).task;
    let wants = matches!(task, TaskType::Research | TaskType::Planning);
    let words = input.split_whitespace().count() + cjk_chars(input) / 2;
    let path = if words >= 12 && (constraints >= 3 || (wants && constraints >= 2)) {
        TurnPath::Research
    } else {
        TurnPath::Quick
    };
    // Some constraint in a question of some length: the rules alone cannot tell.
    let unsure = path == TurnPath::Quick && words >= 8 && constraints >= 1;
    Triage {
        path,
        reason: format!(
            "{constraints} constraints, {words} words, task {}",
            task.as_str()
        ),
        unsure,
    }
}

/// The planner's verdict on `input`, which the rules could not place (`rules`): one forced
/// `triage_verdict` call on `span`. When it fails, the rules' lean stands and the failure is
/// a degradation.
pub(crate) async fn ask_planner(
    llm: &LlmClient,
    context: &ContextStage<'_>,
    input: &str,
    rules: Triage,
    span: &mut Span,
) -> Triage {
    let tool = call_tool::<Verdict>("triage_verdict");
    let verdict = match context.triage_verdict(input, tool) {
        Err(e) => Err(e.to_string()),
        Ok((messages, tool)) => {
            let call = (messages, tool, VERDICT_TOKENS);
            structured_call_until::<Verdict>(llm, span, call, &CancellationToken::new()).await
        }
    };
    match verdict {
        Ok((verdict, _)) => Triage {
            path: if verdict.research {
                TurnPath::Research
            } else {
                TurnPath::Quick
            },
            reason: format!("{}; the planner: {}", rules.reason, verdict.reason.trim()),
            unsure: true,
        },
        Err(e) => {
            span.degrade(Degradation::PlannerFailed);
            span.attr("planner_error", e);
            Triage {
                reason: format!("{} (the planner gave no verdict)", rules.reason),
                ..rules
            }
        }
    }
}

/// How many constraints a question names: bounds, weighing, counts, amounts, and items
/// listed with commas.
fn constraints(input: &str) -> usize {
    let text = input.to_lowercase();
    let has = |words: &[&str]| {
        words
            .iter()
            .filter(|w| routing::contains_marker(&text, w))
            .count()
    };
    let amounts = text
        .split(|c: char| !(c.is_ascii_digit() || "€$£¥%,.".contains(c)))
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .count();
    let listed = text.matches(", ").count() + text.matches('，').count();
    has(LIMITS) + has(WEIGHING) + has(NUMBERS) + amounts + listed.saturating_sub(1)
}

/// Characters of scripts written without spaces.
fn cjk_chars(input: &str) -> usize {
    input
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESEARCH: [&str; 20] = [
        "Plan six days in Kyoto with two kids, under 2,000 €, no more than an hour on trains a day",
        "Compare the three note-taking apps I mentioned last week on privacy, sync and price",
        "Find a laptop under 1,200 dollars with at least 16 GB of memory, a good keyboard and Linux support",
        "Which of the electric cars sold in Germany has the best range under 40,000 € and seats for five?",
        "Compare PostgreSQL, SQLite and DuckDB for a desktop app: file size, concurrency and backup options",
        "Plan a two-week trip through Portugal by train, budget 1,500 euros, with three nights in Lisbon",
        "What are the pros and cons of heat pumps versus gas boilers for a 120 m² house in a cold climate?",
        "Find the cheapest flights from Berlin to Tokyo in March with at most one stop, under 700 €",
        "Compare the running costs of three robot vacuums over five years, including filters and batteries",
        "Research which VPN providers keep no logs, support WireGuard and cost less than 5 dollars a month",
        "Plan a vegetarian meal plan for a week for four people under 80 € with no more than 30 minutes of cooking a day",
        "What are the differences between the iPhone 16, the Pixel 9 and the Galaxy S24 on camera, battery and price?",
        "Find a daycare within 2 km of my office, open until 18:00, with a budget of 600 € a month",
        "Compare three mortgage offers: 3.1% over 20 years, 2.9% over 25 years and 3.4% over 15 years",
        "Which standing desks under 500 € have a height range of at least 65 cm, a memory function and a 5-year warranty?",
        "Plan a weekend in Vienna for two adults and a dog, budget 600 €, museums only in the mornings",
        "Compare the best beginner road bikes under 1,000 €: weight, gears, and brakes",
        "Research the alternatives to Dropbox that offer end-to-end encryption, Linux clients and at least 1 TB",
        "对比一下这三款相机的区别：价格不超过5000元，重量至少轻于500克，还要能拍4K视频",
        "Find a 3-bedroom flat to rent in Leipzig under 1,100 € with a balcony, close to a tram, available from May",
    ];

    const QUICK: [&str; 20] = [
        "What is the capital of Australia?",
        "How are you today?",
        "Translate 'good morning' into Japanese",
        "What time is it in New York?",
        "Can you explain in simple words how a refrigerator keeps the food inside it cold?",
        "Convert 5 miles to kilometres",
        "Write a haiku about autumn",
        "What does HTTP 418 mean?",
        "Remind me what we talked about yesterday",
        "Summarise this paragraph for me please",
        "What did my sister say about her new job when we talked about it last week?",
        "How many days are in a leap year?",
        "Fix the typo in: 'teh quick brown fox'",
        "What is the boiling point of water at sea level?",
        "I had a long day at work and would like to talk about something light for a while",
        "Please rewrite this email so it sounds friendlier but keeps the same meaning and length",
        "What's 15% of 80?",
        "Why is the sky blue during the day but red and orange when the sun goes down?",
        "今天天气怎么样？",
        "Explain what a closure is in one sentence",
    ];

    /// Questions with a constraint or two that research may or may not serve.
    const BORDERLINE: [&str; 7] = [
        "Which laptop should I buy for programming, under 1,000 €?",
        "Is a heat pump or a gas boiler cheaper to run for a small flat?",
        "Find me a good hotel in Lisbon for two nights in May",
        "What are the best options for learning Spanish in three months?",
        "Compare Rust and Go for writing a small web service",
        "Which e-reader is best for reading PDFs, the Kindle or the Kobo?",
        "What is a good budget phone with a long battery life?",
    ];

    #[test]
    fn many_constraint_questions_go_to_research_and_plain_ones_stay_quick() {
        let config = Config::default();
        for q in RESEARCH {
            let t = triage(&config, q, None, true);
            assert_eq!(
                (t.path, t.unsure),
                (TurnPath::Research, false),
                "{q}: {}",
                t.reason
            );
        }
        for q in QUICK {
            let t = triage(&config, q, None, true);
            assert_eq!(
                (t.path, t.unsure),
                (TurnPath::Quick, false),
                "{q}: {}",
                t.reason
            );
        }
    }

    #[test]
    fn questions_between_the_two_are_left_to_the_planner_leaning_quick() {
        let config = Config::default();
        for q in BORDERLINE {
            let t = triage(&config, q, None, true);
            assert_eq!(
                (t.path, t.unsure),
                (TurnPath::Quick, true),
                "{q}: {}",
                t.reason
            );
        }
        // The person and the settings still decide first.
        assert!(!triage(&config, BORDERLINE[0], Some(true), true).unsure);
        assert!(!triage(&config, BORDERLINE[0], None, false).unsure);
    }

    #[test]
    fn the_person_and_the_settings_decide_before_the_rules() {
        let mut config = Config::default();
        let many = RESEARCH[0];
        assert_eq!(
            triage(&config, many, Some(false), true).path,
            TurnPath::Quick
        );
        assert_eq!(
            triage(&config, QUICK[0], Some(true), false).path,
            TurnPath::Research
        );
        assert_eq!(triage(&config, many, None, false).path, TurnPath::Quick);
        config.research.mode = ResearchMode::Never;
        let t = triage(&config, many, None, true);
        assert_eq!(
            (t.path, t.reason.as_str()),
            (TurnPath::Quick, "research is set to never")
        );
        assert_eq!(
            triage(&config, many, Some(true), true).path,
            TurnPath::Research
        );
    }
}
