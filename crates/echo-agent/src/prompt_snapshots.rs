//! Snapshot tests that pin what the model sees: the system block of a fixed turn, every tool
//! offered with its full JSON schema, the forced structured calls, one whole first request,
//! and the instructions the engine puts into tool results. The fixtures are deterministic
//! (fixed time and zone, no wall clock, no random ids, embedded prompts only), so a snapshot
//! changes only when a prompt file, a description or a schema does.
//!
//! A change is refreshed on purpose, and then reviewed in the diff of `crates/echo-agent/snapshots/`:
//! `UPDATE_EXPECT=1 cargo test -p echo-agent --lib prompt_snapshots`.
#![cfg(test)]

use crate::bootstrap::Injected;
use crate::history_tools::{HistorySearch, ReadToolOutput};
use crate::memory_tools::{MemoryNote, MemoryRecall};
use crate::pipeline::context::{ContextStage, CurrentTurn, RuntimeInfo, TurnInputs};
use crate::prompts::Prompts;
use crate::tool_output::cut_tool_output;
use async_trait::async_trait;
use echo_core::store::{Store, StoredMessage};
use echo_core::{Message, Role, ToolCall, ToolSpec};
use echo_llm::tokens::Tokenizer;
use echo_memory::{Memory, MemoryStore};
use echo_tools::{Risk, Tool, ToolContext, ToolError, ToolRegistry, schema_of};
use expect_test::{ExpectFile, expect_file};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Compares with the snapshot file. `UPDATE_EXPECT` rewrites the file instead, so it is refused
/// when `CI` is set: nothing on CI can turn a stale snapshot green.
fn pinned(snapshot: ExpectFile, actual: &str) {
    assert!(
        std::env::var_os("UPDATE_EXPECT").is_none() || std::env::var_os("CI").is_none(),
        "UPDATE_EXPECT is set on CI, where it would rewrite the snapshot instead of checking it"
    );
    snapshot.assert_eq(actual);
}

/// Embedded prompts only: no override directory exists.
fn prompts() -> Prompts {
    Prompts::new(PathBuf::from("/nonexistent/echo-desk-prompts"))
}

fn runtime() -> RuntimeInfo {
    RuntimeInfo {
        now: "2026-03-14 09:30".into(),
        weekday: "Saturday".into(),
        timezone: "Europe/Berlin".into(),
        utc_offset: "+01:00".into(),
        entry_point: "cli".into(),
    }
}

fn pretty(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn memory(id: &str, content: &str) -> Memory {
    serde_json::from_value(serde_json::json!({
        "id": id, "tier": "semantic", "kind": "preference", "subject": "user",
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

/// Every tool the engine registers, as `Api::open` registers them (built-ins, skills, memory,
/// history), in the order the model is offered them.
async fn offered_tools() -> Vec<ToolSpec> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("store");
    let memory = MemoryStore::new(store.pool().clone(), Default::default());
    let registry = ToolRegistry::with_builtins();
    let skills = Arc::new(echo_tools::SkillStore::new(dir.path().join("skills")));
    let mut engine: Vec<Arc<dyn Tool>> = echo_tools::skill_tools(skills);
    engine.push(Arc::new(MemoryNote::new(memory.clone(), Arc::default())));
    engine.push(Arc::new(MemoryRecall {
        store: memory,
        semantic: Arc::default(),
    }));
    engine.push(Arc::new(HistorySearch {
        store: store.clone(),
    }));
    engine.push(Arc::new(ReadToolOutput { store }));
    for tool in engine {
        registry.register(tool).expect("register");
    }
    registry.specs()
}

fn stored(seq: i64, message: Message) -> StoredMessage {
    StoredMessage {
        id: format!("m{seq}"),
        session_id: "s".into(),
        turn_id: None,
        seq,
        role: message.role,
        content: message.content,
        reasoning: None,
        tool_calls: message.tool_calls,
        tool_call_id: message.tool_call_id,
        name: message.name,
        status: echo_core::MessageStatus::Complete,
        created_at: "2026-03-14T08:00:00Z".into(),
    }
}

#[test]
fn system_block_of_a_fixed_turn() {
    let prompts = prompts();
    let skills = [echo_tools::SkillSummary {
        name: "weekly-report".into(),
        description: "Write the Friday status report from the week's notes.".into(),
        path: PathBuf::from("skills/weekly-report/SKILL.md"),
    }];
    let stage = ContextStage {
        prompts: &prompts,
        skills: &skills,
    };
    let bootstrap = [Injected {
        name: "USER.md",
        content: "I prefer metric units and short answers.".into(),
        cut: 0,
    }];
    let snapshot = [memory("mem-1", "The user lives in Berlin.")];
    let current = CurrentTurn {
        input: "What's the weather like?".into(),
        runtime: runtime(),
        recalled: vec![memory("mem-2", "The user cycles to work.")],
        plan: Some("1. Check the forecast.".into()),
    };
    let prepared = stage
        .build(
            TurnInputs {
                history: &[],
                summary: Some("The user asked about bikes earlier."),
                bootstrap: &bootstrap,
                project: None,
                snapshot: &snapshot,
                tools: Vec::new(),
                current: &current,
            },
            &Tokenizer::Estimate,
        )
        .expect("build");
    let shown: Vec<String> = prepared
        .messages
        .iter()
        .map(|m| format!("=== {} ===\n{}\n", m.role.as_str(), m.content))
        .collect();
    pinned(
        expect_file!["../snapshots/system_block.txt"],
        &shown.concat(),
    );
}

#[tokio::test]
async fn offered_tools_with_their_schemas() {
    pinned(
        expect_file!["../snapshots/tools.json"],
        &pretty(&offered_tools().await),
    );
}

#[test]
fn forced_call_definitions() {
    let calls = [
        crate::memory::extract_tool(),
        crate::memory::quoted::keep_tool(),
        crate::memory::import::import_tool(),
        crate::memory::import::keep_imported_tool(),
        crate::memory::judge_tool(),
        crate::memory::episode_tool(),
        crate::pipeline::context::compress::summary_tool(),
    ];
    pinned(
        expect_file!["../snapshots/forced_calls.json"],
        &pretty(&calls),
    );
}

#[tokio::test]
async fn first_request_of_a_turn() {
    let prompts = prompts();
    let stage = ContextStage {
        prompts: &prompts,
        skills: &[],
    };
    let call = ToolCall {
        id: "call_1".into(),
        name: "read_file".into(),
        arguments: r#"{"path":"notes.txt"}"#.into(),
    };
    let history = [
        stored(1, Message::user("What is in notes.txt?")),
        stored(
            2,
            Message {
                role: Role::Assistant,
                content: String::new(),
                tool_calls: vec![call.clone()],
                tool_call_id: None,
                name: None,
            },
        ),
        stored(
            3,
            Message {
                role: Role::Tool,
                content: "buy milk\ncall Anna".into(),
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id.clone()),
                name: Some(call.name.clone()),
            },
        ),
        stored(4, Message::assistant("Two items: buy milk, call Anna.")),
    ];
    let current = CurrentTurn {
        input: "Add 'water the plants' to it.".into(),
        runtime: runtime(),
        recalled: Vec::new(),
        plan: None,
    };
    let prepared = stage
        .build(
            TurnInputs {
                history: &history,
                summary: None,
                bootstrap: &[],
                project: None,
                snapshot: &[],
                tools: offered_tools().await,
                current: &current,
            },
            &Tokenizer::Estimate,
        )
        .expect("build");
    let request = serde_json::json!({
        "messages": prepared.messages,
        "tools": prepared.tools,
    });
    pinned(
        expect_file!["../snapshots/first_request.json"],
        &pretty(&request),
    );
}

/// Answers with `len` characters between a head and a tail marker.
struct Chatty;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ChattyArgs {
    len: usize,
}

#[async_trait]
impl Tool for Chatty {
    fn name(&self) -> &str {
        "chatty"
    }
    fn description(&self) -> &str {
        "talks a lot"
    }
    fn parameters(&self) -> serde_json::Value {
        schema_of::<ChattyArgs>()
    }
    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }
    async fn call(&self, args: serde_json::Value, _: &ToolContext) -> Result<String, ToolError> {
        let args: ChattyArgs =
            serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        Ok(format!("HEAD{}TAIL", "x".repeat(args.len)))
    }
}

/// The instructions the engine writes into tool results: failures the model should act on,
/// the cut markers (with the `read_tool_output` hint) and the placeholder of a lost result.
#[tokio::test]
async fn instructions_in_tool_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ToolContext {
        workdir: dir.path().to_path_buf(),
        cancel: CancellationToken::new(),
        session_id: "s".into(),
        turn_id: "t".into(),
        temporary: false,
        project_id: None,
    };
    let registry = ToolRegistry::with_limits(echo_tools::Limits {
        output_cap_chars: 40,
        ..echo_tools::Limits::default()
    });
    registry.add_builtins();
    registry.register(Arc::new(Chatty)).expect("register");
    let call = |name: &str, arguments: &str| ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: arguments.into(),
    };
    let mut shown = Vec::new();
    let mut show = |what: &str, content: &str| shown.push(format!("=== {what} ===\n{content}\n"));
    let timeout = Duration::from_secs(30);
    for (what, name, args) in [
        ("unknown_tool", "no_such_tool", "{}"),
        ("invalid_json", "chatty", "{len: 1"),
        ("invalid_arguments", "chatty", r#"{"len": "many"}"#),
        ("output_cap", "chatty", r#"{"len": 100}"#),
    ] {
        let out = registry.execute(&call(name, args), &ctx, timeout).await;
        show(what, &out.content);
    }
    // A change approved, then made stale by an edit before it runs.
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "one\n").expect("write");
    let edit = call(
        "edit_file",
        r#"{"path": "notes.txt", "old_text": "one", "new_text": "two"}"#,
    );
    let prepared = registry.prepare(&edit, &ctx).await.expect("prepare");
    std::fs::write(&file, "zero\none\n").expect("write");
    let out = registry.run(prepared, &ctx, timeout).await;
    show("changed_since_approval", &out.content);

    let long_text = Message {
        role: Role::Tool,
        content: format!("START{}END", "t".repeat(3000)),
        tool_calls: Vec::new(),
        tool_call_id: Some("call_7".into()),
        name: Some("shell".into()),
    };
    let items: Vec<serde_json::Value> = (0..40)
        .map(|i| serde_json::json!({ "path": format!("src/file_{i}.rs"), "text": "y".repeat(300) }))
        .collect();
    let long_json = Message {
        content: serde_json::json!({ "status": "ok", "matches": items }).to_string(),
        ..long_text.clone()
    };
    show(
        "cut_text_output",
        &cut_tool_output(&prompts(), &long_text).expect("cut"),
    );
    show(
        "cut_json_output",
        &cut_tool_output(&prompts(), &long_json).expect("cut"),
    );
    // A call whose result was never written (a crash): the request gets a placeholder.
    let stage = ContextStage {
        prompts: &prompts(),
        skills: &[],
    };
    let lost = stage
        .build(
            TurnInputs {
                history: &[stored(
                    1,
                    Message {
                        role: Role::Assistant,
                        content: String::new(),
                        tool_calls: vec![call("shell", "{}")],
                        tool_call_id: None,
                        name: None,
                    },
                )],
                summary: None,
                bootstrap: &[],
                project: None,
                snapshot: &[],
                tools: Vec::new(),
                current: &CurrentTurn {
                    input: "go on".into(),
                    runtime: runtime(),
                    recalled: Vec::new(),
                    plan: None,
                },
            },
            &Tokenizer::Estimate,
        )
        .expect("build");
    show("lost_result", &lost.messages[2].content);
    pinned(
        expect_file!["../snapshots/tool_results.txt"],
        &shown.concat(),
    );
}
