//! ContextStage's request assembly: block order, budgets, fitting and sanitising history.

use super::*;
use crate::model_calls;
use echo_core::ToolCall;
use echo_llm::tokens::Tokenizer;

fn stage() -> (Prompts, Vec<echo_tools::SkillSummary>) {
    (
        Prompts::new(std::path::PathBuf::from("/nonexistent")),
        Vec::new(),
    )
}

fn call_msg(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: String::new(),
        tool_calls: vec![ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }],
        tool_call_id: None,
        name: None,
    }
}

fn result_msg(id: &str, content: &str) -> Message {
    Message {
        role: Role::Tool,
        content: content.into(),
        tool_calls: Vec::new(),
        tool_call_id: Some(id.into()),
        name: Some("read_file".into()),
    }
}

/// A request with `turns` old turns (each: question, tool call, big result, answer) and
/// the current question.
fn long_request(turns: usize) -> Vec<Message> {
    let mut m = vec![Message::system("system rules")];
    for i in 0..turns {
        m.push(Message::user(format!(
            "question {i} {}",
            "words ".repeat(40)
        )));
        m.push(call_msg(&format!("c{i}")));
        m.push(result_msg(&format!("c{i}"), &"x".repeat(6000)));
        m.push(Message::assistant(format!("answer {i}")));
    }
    m.push(Message::user("the current question, verbatim"));
    m
}

fn is_valid(messages: &[Message]) -> bool {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        match m.role {
            Role::Tool => {
                let Some(id) = &m.tool_call_id else {
                    return false;
                };
                if !open.contains(id) {
                    return false;
                }
            }
            _ => open = m.tool_calls.iter().map(|c| c.id.clone()).collect(),
        }
    }
    messages.first().is_some_and(|m| m.role == Role::System)
        && messages.get(1).is_some_and(|m| m.role == Role::User)
}

#[test]
fn a_request_that_fits_is_left_alone() {
    let (prompts, skills) = stage();
    let c = ContextStage {
        prompts: &prompts,
        skills: &skills,
    };
    let request = long_request(2);
    let (fitted, fit) = model_calls::fit(
        c.prompts,
        request.clone(),
        &[],
        1_000_000,
        &Tokenizer::Estimate,
        &[],
    )
    .expect("fits");
    assert_eq!(fitted, request);
    assert!(!fit.trimmed());
}

#[test]
fn old_tool_outputs_are_cut_first_then_whole_old_turns_leave() {
    let (prompts, skills) = stage();
    let c = ContextStage {
        prompts: &prompts,
        skills: &skills,
    };
    let request = long_request(30);
    let full = Tokenizer::Estimate.count_request(&request, &[]);
    // Room for everything once the outputs are cut: no turn leaves.
    let (fitted, fit) = model_calls::fit(
        c.prompts,
        request.clone(),
        &[],
        full / 2,
        &Tokenizer::Estimate,
        &[],
    )
    .expect("fits");
    assert!(
        fit.trimmed_outputs > 0 && fit.dropped_messages == 0,
        "{fit:?}"
    );
    assert_eq!(fitted.len(), request.len());
    assert!(
        fitted[3].content.contains("were cut to fit"),
        "{}",
        fitted[3].content
    );
    // A tight window: old turns leave, whole.
    let (fitted, fit) = model_calls::fit(
        c.prompts,
        request.clone(),
        &[],
        5_000,
        &Tokenizer::Estimate,
        &[],
    )
    .expect("fits");
    assert!(
        fit.dropped_messages > 0 && fit.dropped_messages % 4 == 0,
        "{fit:?}"
    );
    assert!(fit.tokens <= 5_000 && Tokenizer::Estimate.count_request(&fitted, &[]) == fit.tokens);
    assert!(is_valid(&fitted), "{fitted:?}");
    assert_eq!(
        fitted.last(),
        request.last(),
        "the current message stays, last and verbatim"
    );
    assert!(
        fitted[1].content.starts_with("question "),
        "{:?}",
        fitted[1]
    );
    assert!(
        fitted.iter().any(|m| m.content == "answer 29"),
        "the newest turns stay"
    );
}

#[test]
fn the_current_steps_results_stay_whole() {
    let (prompts, skills) = stage();
    let c = ContextStage {
        prompts: &prompts,
        skills: &skills,
    };
    let mut request = long_request(3);
    request.push(call_msg("now"));
    request.push(result_msg("now", &"y".repeat(6000)));
    let budget = Tokenizer::Estimate.count_request(&request, &[]) - 100;
    let (fitted, fit) =
        model_calls::fit(c.prompts, request, &[], budget, &Tokenizer::Estimate, &[]).expect("fits");
    assert!(fit.trimmed_outputs > 0);
    assert_eq!(fitted.last().map(|m| m.content.len()), Some(6000));
}

fn memory(content: &str) -> Memory {
    serde_json::from_value(serde_json::json!({
        "id": content, "tier": "semantic", "kind": "fact", "subject": "user",
        "slot": null, "content": content, "value": null, "source": "user_stated",
        "confidence": 1.0, "importance": 0.5, "pinned": false, "access_count": 0,
        "last_accessed": null, "stability": 30.0, "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z", "valid_from": null, "valid_until": null,
        "status": "active", "superseded_by": null, "invalid_at": null,
        "archived_from": null, "version": 1, "scope": "global",
        "source_session_id": null, "source_turn_id": null, "source_message_id": null,
        "evidence": null
    }))
    .expect("a memory")
}

#[test]
fn the_least_relevant_recalled_memories_leave_last_and_the_text_stays() {
    let (prompts, skills) = stage();
    let c = ContextStage {
        prompts: &prompts,
        skills: &skills,
    };
    let current = CurrentTurn {
        input: "what should I cook tonight?".into(),
        runtime: RuntimeInfo::now("test"),
        recalled: (0..6)
            .map(|i| memory(&format!("memory {i}: {}", "detail ".repeat(60))))
            .collect(),
        plan: None,
    };
    let t = Tokenizer::Estimate;
    let prepared = c
        .build(
            TurnInputs {
                history: &[],
                summary: None,
                bootstrap: &[],
                project: None,
                snapshot: &[],
                tools: Vec::new(),
                current: &current,
            },
            &t,
        )
        .expect("build");
    assert!(prepared.blocks.recalled > 0 && prepared.blocks.history == 0);
    let full = t.count_request(&prepared.messages, &[]);
    // Room for about half of the memories.
    let budget = full - prepared.blocks.recalled / 2;
    let (fitted, fit) = model_calls::fit(
        c.prompts,
        prepared.messages.clone(),
        &[],
        budget,
        &t,
        &c.current_forms(&current).expect("forms"),
    )
    .expect("fits");
    assert!(
        fit.dropped_memories >= 3 && fit.dropped_memories < 6,
        "{fit:?}"
    );
    let text = &fitted.last().expect("current").content;
    assert!(
        text.contains("memory 0:") && !text.contains("memory 5:"),
        "{text}"
    );
    assert!(text.ends_with("what should I cook tonight?"));
    assert!(fit.tokens <= budget);
}

#[test]
fn a_current_message_too_big_for_the_window_is_a_clear_error() {
    let (prompts, skills) = stage();
    let c = ContextStage {
        prompts: &prompts,
        skills: &skills,
    };
    let mut request = long_request(3);
    request.push(Message::user("z ".repeat(5000)));
    let e = model_calls::fit(c.prompts, request, &[], 1_000, &Tokenizer::Estimate, &[])
        .expect_err("too big");
    assert!(e.to_string().contains("llm.context_window"), "{e}");
}

fn stored(role: Role, content: &str, calls: &[&str], answers: Option<&str>) -> StoredMessage {
    StoredMessage {
        id: String::new(),
        session_id: String::new(),
        turn_id: None,
        seq: 0,
        role,
        content: content.into(),
        reasoning: None,
        tool_calls: calls
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "read_file".into(),
                arguments: "{}".into(),
            })
            .collect(),
        tool_call_id: answers.map(String::from),
        name: answers.map(|_| "read_file".into()),
        status: echo_core::MessageStatus::Complete,
        created_at: String::new(),
    }
}

fn shape(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .map(|m| match m.role {
            Role::Tool => format!("tool:{}", m.tool_call_id.as_deref().unwrap_or("?")),
            Role::Assistant if !m.tool_calls.is_empty() => {
                format!(
                    "calls:{}",
                    m.tool_calls
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            }
            r => r.as_str().to_string(),
        })
        .collect()
}

#[test]
fn history_is_repaired_into_a_valid_sequence() {
    let h = vec![
        stored(Role::User, "q1", &[], None),
        stored(Role::Assistant, "", &["a", "b"], None),
        stored(Role::Tool, "ra", &[], Some("a")),
        // b's result was never written (crash); the next user message arrives
        stored(Role::User, "q2", &[], None),
        stored(Role::Tool, "orphan", &[], Some("zzz")),
        stored(Role::Assistant, "", &[], None),
        stored(Role::Assistant, "answer", &[], None),
        stored(Role::Assistant, "", &["c"], None),
    ];
    assert_eq!(
        shape(&sanitize_history(&h, "lost")),
        [
            "user",
            "calls:a,b",
            "tool:a",
            "tool:b",
            "user",
            "assistant",
            "calls:c",
            "tool:c"
        ]
    );
}
