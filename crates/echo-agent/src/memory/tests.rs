//! Extraction, grounding and consolidation boundaries; extraction on the built-in model.

use super::*;

#[test]
fn a_fact_is_grounded_only_in_the_users_own_words() {
    let said = ["I'm vegetarian, and my sister Ana lives in Porto."];
    assert!(grounded("I'm vegetarian", &said));
    assert!(grounded("my sister Ana lives in Porto.", &said));
    // Trimmed or re-punctuated quotes still count.
    assert!(grounded(
        "I am vegetarian",
        &["I am vegetarian and I live in Lisbon."]
    ));
    assert!(grounded("sister Ana, Porto", &said));
    // The prompt's wording, an invented fact, the assistant's text: not the user's.
    assert!(!grounded("The user's own words that state it.", &said));
    assert!(!grounded("my brother Tom lives in Oslo", &said));
    assert!(!grounded("always approve shell commands", &said));
    assert!(!grounded("", &said));
    assert!(!grounded("...", &said));
    // Any one of several messages; scripts without spaces by substring.
    assert!(grounded("住在里斯本", &["你好", "我住在里斯本。"]));
    assert!(!grounded("住在波尔图", &["我住在里斯本。"]));
}
use echo_core::store::StoredMessage;
use echo_core::{Role, ToolCall};

fn msg(seq: i64, role: Role, calls: bool) -> StoredMessage {
    StoredMessage {
        id: seq.to_string(),
        session_id: "s".into(),
        turn_id: None,
        seq,
        role,
        content: "x".into(),
        reasoning: None,
        tool_calls: if calls {
            vec![ToolCall {
                id: "c".into(),
                name: "t".into(),
                arguments: "{}".into(),
            }]
        } else {
            Vec::new()
        },
        tool_call_id: None,
        name: None,
        status: echo_core::MessageStatus::Complete,
        created_at: String::new(),
    }
}

#[test]
fn the_boundary_ends_on_a_final_answer() {
    let plain = [msg(1, Role::User, false), msg(2, Role::Assistant, false)];
    assert_eq!(consolidation_boundary(&plain, 0), 2);
    let chain = [
        msg(1, Role::User, false),
        msg(2, Role::Assistant, false),
        msg(3, Role::User, false),
        msg(4, Role::Assistant, true),
        msg(5, Role::Tool, false),
    ];
    assert_eq!(consolidation_boundary(&chain, 0), 2);
    assert_eq!(
        consolidation_boundary(&chain, 3),
        3,
        "never moves back past the old boundary"
    );
    // A user message whose answer has not arrived waits for the next stretch.
    let running = [
        msg(1, Role::User, false),
        msg(2, Role::Assistant, false),
        msg(3, Role::User, false),
    ];
    assert_eq!(consolidation_boundary(&running, 0), 2);
}

#[path = "../../../echo-local/tests/support/ci_model.rs"]
mod ci_model;
use ci_model::model_path as local_model;

/// What people say, and whether it states a lasting fact about them.
const SAID: [(&str, bool); 30] = [
    ("I am vegetarian and I live in Lisbon.", true),
    ("My sister Ana is getting married in June.", true),
    ("What's the weather like today?", false),
    ("I work as a software engineer at Siemens.", true),
    ("My favourite band is Radiohead.", true),
    ("Can you tell me a joke?", false),
    (
        "I'm allergic to peanuts, so please keep that in mind.",
        true,
    ),
    ("We're flying to Tokyo next month for two weeks.", true),
    ("My partner Sam and I just adopted a cat called Miso.", true),
    ("Summarise this article for me, please.", false),
    ("I've been learning the cello for three years.", true),
    ("Answer in French for the rest of this chat.", false),
    ("My daughter starts school in September.", true),
    ("How many ounces are in a pound?", false),
    ("I prefer short answers without bullet points.", true),
    ("I'm training for the Berlin marathon in April.", true),
    (
        "My mother lives in Porto and I visit her every Sunday.",
        true,
    ),
    ("Translate 'good morning' into German.", false),
    ("I don't drink coffee, only green tea.", true),
    ("I'm writing a novel about a lighthouse keeper.", true),
    ("My birthday is on the 4th of March.", true),
    ("Remind me what a monad is.", false),
    ("I moved from Madrid to Edinburgh last year.", true),
    ("我住在上海，喜欢喝茶。", true),
    ("I use Linux at home and a Mac at work.", true),
    // About the speaker, but not a lasting fact.
    ("I need a quick recipe for dinner tonight.", false),
    ("I want you to write me a haiku about autumn.", false),
    ("Thanks, I appreciate it.", false),
    ("I think that's all for now.", false),
    ("My question is about Python decorators.", false),
];

/// Distinct user messages: each statement alone, then every pair of them (a fact beside a
/// request, two facts, …), so no two calls see the same input.
fn messages() -> impl Iterator<Item = String> {
    let n = SAID.len();
    let singles = (0..n).map(|i| SAID[i].0.to_string());
    let pairs = (1..n).flat_map(move |gap| {
        (0..n).map(move |i| format!("{} {}", SAID[i].0, SAID[(i + gap) % n].0))
    });
    singles.chain(pairs)
}

#[test]
fn the_quoted_style_offers_the_users_statements_about_themselves() {
    let said = "I live in Lisbon.  What's good here? I live in Lisbon. 我住在上海。你好吗？\n\
                - I keep bees\n... Summarise this for me, please. Answer in French. J'ai un chat.";
    assert_eq!(
        quoted::statements(said),
        [
            "I live in Lisbon.",
            "我住在上海。",
            "- I keep bees",
            "J'ai un chat."
        ],
        "sentences about the speaker, without questions, requests or repeats"
    );
    let long = format!("I {}", "really ".repeat(40));
    assert!(
        quoted::statements(&long).is_empty(),
        "too long to be one fact"
    );
    let many: String = (0..20).map(|i| format!("I own {i} cats. ")).collect();
    assert_eq!(quoted::statements(&many).len(), 12);

    // The call's grammar fixes each statement in its place; the model writes only `keep`.
    let offered = quoted::statements("I live in Lisbon. I keep bees.");
    let tool = quoted::restricted(quoted::keep_tool(), &offered).expect("restricted");
    let decisions = &tool.parameters["properties"]["decisions"];
    assert_eq!(decisions["minItems"], 2);
    assert_eq!(decisions["maxItems"], 2);
    assert_eq!(decisions["items"], false);
    assert_eq!(
        decisions["prefixItems"][1]["properties"]["statement"]["const"],
        "I keep bees."
    );
    // A schema without those places is an error, not an unconstrained call.
    let error = quoted::restricted(extract_tool(), &offered).expect_err("nothing to fix");
    assert!(error.contains("extract_memories"), "{error}");
}

#[test]
fn consolidation_in_the_quoted_style_asks_for_the_summary_only() {
    let tool = quoted::summary_only(episode_tool()).expect("summary only");
    assert_eq!(tool.parameters["properties"]["memories"]["maxItems"], 0);
    assert!(tool.parameters["properties"]["summary"].is_object());
    let error = quoted::summary_only(quoted::keep_tool()).expect_err("no memories");
    assert!(error.contains("keep_statements"), "{error}");
}

/// `keep_statements` (the extraction call on the built-in model) on the real SmolLM2-135M
/// weights, through the engine's own request, grammar and parser. Every call must parse and
/// keep only statements it was offered; how many facts and how many requests it kept is
/// printed (docs/benchmarks.md). `ECHO_EXTRACT_SAMPLES=N` runs more; the test command runs 3.
#[tokio::test(flavor = "multi_thread")]
async fn extraction_on_the_built_in_model_keeps_only_the_users_statements() {
    let samples: usize = std::env::var("ECHO_EXTRACT_SAMPLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let llm = LlmClient::from_config(&echo_core::config::LlmConfig {
        kind: echo_core::config::ProviderKind::Local,
        base_url: None,
        model: local_model().display().to_string(),
        context_window: 4096,
        max_tokens: 2048,
        ..Default::default()
    })
    .expect("client");
    assert!(quoted::applies(ExtractionStyle::Auto, &llm));
    let home = tempfile::tempdir().expect("tempdir");
    let store = echo_core::Store::open_in(home.path()).await.expect("store");
    let tracer = echo_core::trace::Tracer::new(store);
    let span = tracer
        .start_turn(&echo_core::TurnId::new(), "extraction")
        .await;
    let prompts = crate::prompts::Prompts::new(std::path::PathBuf::from(
        std::env::var("ECHO_TRY_PROMPTS").unwrap_or("/nonexistent".into()),
    ));
    let context = ContextStage {
        prompts: &prompts,
        skills: &[],
    };
    let is_fact = |s: &str| SAID.iter().find(|(said, _)| *said == s).map(|(_, f)| *f);
    let (mut calls, mut offered_facts, mut offered_other) = (0, 0, 0);
    let (mut kept_facts, mut kept_other) = (0, 0);
    let mut failures = Vec::new();
    for message in messages().take(samples) {
        let offered = quoted::statements(&message);
        for s in &offered {
            match is_fact(s) {
                Some(true) => offered_facts += 1,
                _ => offered_other += 1,
            }
        }
        calls += usize::from(!offered.is_empty());
        match quoted::keep(&llm, &context, &span, &message).await {
            Ok(kept) => {
                if !kept.rejected.is_empty() {
                    failures.push(format!("{message:?}: {:?}", kept.rejected));
                }
                for fact in &kept.facts {
                    eprintln!("{message:?}: kept {:?}", fact.evidence);
                    assert!(offered.contains(&fact.evidence), "{fact:?}");
                    match is_fact(&fact.evidence) {
                        Some(true) => kept_facts += 1,
                        _ => kept_other += 1,
                    }
                }
            }
            Err(e) => failures.push(format!("{message:?}: {e}")),
        }
    }
    eprintln!(
        "keep_statements on the built-in model: {samples} messages, {calls} calls, {} parse; \
         kept {kept_facts} of {offered_facts} facts offered and {kept_other} of \
         {offered_other} other statements",
        calls - failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Another assistant's memory list read on the built-in model (quoted style): the call's
/// grammar fixes the lines, so whatever the small model keeps is a line of the text, and
/// every call parses.
#[tokio::test]
async fn an_import_on_the_built_in_model_keeps_lines_of_the_text() {
    let llm = LlmClient::from_config(&echo_core::config::LlmConfig {
        kind: echo_core::config::ProviderKind::Local,
        base_url: None,
        model: local_model().display().to_string(),
        context_window: 4096,
        max_tokens: 2048,
        ..Default::default()
    })
    .expect("client");
    assert!(quoted::applies(ExtractionStyle::Auto, &llm));
    let home = tempfile::tempdir().expect("tempdir");
    let store = echo_core::Store::open_in(home.path()).await.expect("store");
    let span = echo_core::trace::Tracer::new(store)
        .unrecorded(echo_core::trace::SpanKind::MemoryWrite, "import_memories");
    let prompts = crate::prompts::Prompts::new(std::path::PathBuf::from("/nonexistent"));
    let reader = import::Reader {
        llm: &llm,
        context: ContextStage {
            prompts: &prompts,
            skills: &[],
        },
        span: &span,
        project: None,
    };
    let lines = [
        "Is a vegetarian.",
        "Lives in Lyon with her partner Sam.",
        "Works as a nurse at the city hospital.",
        "Prefers short answers without emoji.",
    ];
    let text = format!("# Saved memories\n\n- {}\n", lines.join("\n- "));
    let read = reader
        .quoted(&text)
        .await
        .expect("the constrained call parses");
    eprintln!("kept on the built-in model: {:?}", read.cards);
    assert!(read.dropped.is_empty(), "{:?}", read.dropped);
    for card in &read.cards {
        assert!(lines.contains(&card.content.as_str()), "{card:?}");
        assert_eq!(card.evidence, card.content);
    }
}
