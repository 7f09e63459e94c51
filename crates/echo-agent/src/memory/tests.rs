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

/// Distinct exchanges: statements with and without facts, each with several answers.
fn exchanges() -> impl Iterator<Item = (String, String)> {
    const SAID: [&str; 25] = [
        "I am vegetarian and I live in Lisbon.",
        "My sister Ana is getting married in June.",
        "What's the weather like today?",
        "I work as a software engineer at Siemens.",
        "My favourite band is Radiohead.",
        "Can you tell me a joke?",
        "I'm allergic to peanuts, so please keep that in mind.",
        "We're flying to Tokyo next month for two weeks.",
        "My partner Sam and I just adopted a cat called Miso.",
        "Summarise this article for me, please.",
        "I've been learning the cello for three years.",
        "Answer in French for the rest of this chat.",
        "My daughter starts school in September.",
        "How many ounces are in a pound?",
        "I prefer short answers without bullet points.",
        "I'm training for the Berlin marathon in April.",
        "My mother lives in Porto and I visit her every Sunday.",
        "Translate 'good morning' into German.",
        "I don't drink coffee, only green tea.",
        "I'm writing a novel about a lighthouse keeper.",
        "My birthday is on the 4th of March.",
        "Remind me what a monad is.",
        "I moved from Madrid to Edinburgh last year.",
        "我住在上海，喜欢喝茶。",
        "I use Linux at home and a Mac at work.",
    ];
    const ANSWERED: [&str; 4] = [
        "Noted.",
        "Thanks for telling me! How can I help today?",
        "I'll keep that in mind.",
        "Sure — here you go.",
    ];
    ANSWERED
        .iter()
        .flat_map(|a| SAID.iter().map(move |s| (s.to_string(), a.to_string())))
}

/// `extract_memories` on the built-in model (the real SmolLM2-135M weights) through the
/// engine's own request and parser. The call is decoded under its schema, and steered shut
/// when its tokens run low, so every call must parse: any error fails the test. How many
/// items were proposed, and how many quote the user, is printed (docs/benchmarks.md).
/// `ECHO_EXTRACT_SAMPLES=N` runs more; the test command runs 3.
#[tokio::test(flavor = "multi_thread")]
async fn extraction_on_the_built_in_model_follows_its_schema() {
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
    let home = tempfile::tempdir().expect("tempdir");
    let store = echo_core::Store::open_in(home.path()).await.expect("store");
    let tracer = echo_core::trace::Tracer::new(store);
    let span = tracer
        .start_turn(&echo_core::TurnId::new(), "extraction")
        .await;
    let prompts = crate::prompts::Prompts::new(std::path::PathBuf::from("/nonexistent"));
    let context = ContextStage {
        prompts: &prompts,
        skills: &[],
    };
    let (mut parsed, mut items, mut grounded_items) = (0, 0, 0);
    let mut failures = Vec::new();
    for (said, answered) in exchanges().take(samples) {
        let (messages, tool) = context
            .extraction(&said, &answered, &[], extract_tool())
            .expect("request");
        match structured_call::<ExtractedBatch>(&llm, &span, messages, tool, 2048).await {
            Ok(batch) => {
                for m in &batch.memories {
                    eprintln!(
                        "{said:?}: evidence {:?}, content {:?}",
                        m.evidence, m.content
                    );
                }
                parsed += 1;
                items += batch.memories.len();
                grounded_items += batch
                    .memories
                    .iter()
                    .filter(|m| grounded(&m.evidence, &[said.as_str()]))
                    .count();
            }
            Err(e) => failures.push(format!("{said:?}: {e}")),
        }
    }
    eprintln!(
        "extract_memories on the built-in model: {parsed} of {samples} parse; {items} items \
         proposed, {grounded_items} quote the user"
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(parsed, samples);
}
