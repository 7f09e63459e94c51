//! Captured model calls: each message is stored once however many calls send it, secrets
//! never reach the database, retention drops old calls and the messages only they used, and
//! a deleted memory's text is scrubbed from every capture.

use echo_core::store::{CapturedRequest, CapturedResponse, ModelCall, Redactor, Store};
use echo_core::{Message, ToolCall, ToolSpec, Usage};

const KEY: &str = "sk-live-0123456789abcdef";

fn call(span: &str, messages: Vec<Message>, answer: &str) -> ModelCall {
    ModelCall {
        span_id: span.into(),
        model: "m".into(),
        request: CapturedRequest {
            messages,
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Reads a file.".into(),
                parameters: serde_json::json!({"type": "object"}),
            }],
            max_tokens: 0,
            temperature: Some(0.2),
            tool_choice: "auto".into(),
        },
        response: Some(CapturedResponse {
            text: answer.into(),
            reasoning: String::new(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: format!("{{\"note\": \"{answer}\"}}"),
            }],
            usage: Usage::default(),
            finish_reason: Some("stop".into()),
        }),
        error: None,
    }
}

async fn count(store: &Store, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
        .fetch_one(store.pool())
        .await
        .expect("count")
}

async fn all_text(store: &Store) -> String {
    let blobs: Vec<String> = sqlx::query_scalar("SELECT body FROM trace_blobs")
        .fetch_all(store.pool())
        .await
        .expect("blobs");
    let calls: Vec<String> =
        sqlx::query_scalar("SELECT params || coalesce(response, '') || messages FROM model_calls")
            .fetch_all(store.pool())
            .await
            .expect("calls");
    blobs.join("\n") + &calls.join("\n")
}

#[tokio::test]
async fn a_history_is_stored_once_secrets_are_redacted_and_retention_prunes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("store");
    let redactor = Redactor::new([KEY]);
    let system = Message::system("You are helpful.");
    let mut history = vec![system, Message::user(format!("my key is {KEY}"))];
    store
        .capture_model_call("t1", &call("s1", history.clone(), "first"), &redactor)
        .await
        .expect("capture 1");
    history.push(Message::assistant("first"));
    history.push(Message::user("and then?"));
    store
        .capture_model_call("t1", &call("s2", history.clone(), "second"), &redactor)
        .await
        .expect("capture 2");
    // 4 distinct messages and one tools list; the second call repeated two messages.
    assert_eq!(count(&store, "trace_blobs").await, 5);
    assert_eq!(count(&store, "model_calls").await, 2);

    let back = store
        .model_call("s2")
        .await
        .expect("read")
        .expect("captured");
    assert_eq!(back.request.messages.len(), 4);
    assert_eq!(back.request.messages[1].content, "my key is [redacted]");
    assert_eq!(back.request.tools[0].name, "read_file");
    assert_eq!(back.request.temperature, Some(0.2));
    assert_eq!(back.response.as_ref().expect("response").text, "second");
    assert!(!all_text(&store).await.contains(KEY));
    let turn = store.model_calls("t1").await.expect("calls");
    assert_eq!(
        turn.iter().map(|c| c.span_id.as_str()).collect::<Vec<_>>(),
        ["s1", "s2"]
    );

    // Deleting a memory whose text was sent scrubs it, raw and JSON-escaped.
    let changed = store
        .scrub_copies(&["and then?".to_string(), "first".to_string()])
        .await
        .expect("scrub");
    assert!(changed > 0);
    let text = all_text(&store).await;
    assert!(
        !text.contains("and then?") && !text.contains("\"first\""),
        "{text}"
    );

    // Nothing is older than 30 days yet; with 0 days, everything made before now goes.
    let now = chrono::Utc::now();
    let kept = store.prune_captures(30, now).await.expect("prune");
    assert_eq!((kept.calls, kept.blobs), (0, 0));
    let gone = store
        .prune_captures(0, now + chrono::Duration::seconds(5))
        .await
        .expect("prune");
    assert_eq!((gone.calls, gone.blobs), (2, 5));
    assert_eq!(count(&store, "trace_blobs").await, 0);
    assert!(store.model_call("s1").await.expect("read").is_none());
}

#[tokio::test]
async fn pruning_keeps_messages_a_newer_call_still_uses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("store");
    let none = Redactor::default();
    let shared = vec![Message::system("shared system prompt")];
    store
        .capture_model_call("t1", &call("old", shared.clone(), "a"), &none)
        .await
        .expect("capture");
    let cutoff = chrono::Utc::now() + chrono::Duration::seconds(1);
    // A newer call (made "after" the cutoff) sends the same system prompt.
    sqlx::query("UPDATE model_calls SET created_at = '2000-01-01T00:00:00Z'")
        .execute(store.pool())
        .await
        .expect("age the old call");
    store
        .capture_model_call("t2", &call("new", shared, "b"), &none)
        .await
        .expect("capture");
    let report = store.prune_captures(1, cutoff).await.expect("prune");
    assert_eq!(report.calls, 1);
    assert_eq!(
        report.blobs, 0,
        "the shared prompt and tools are still used"
    );
    let kept = store.model_call("new").await.expect("read").expect("kept");
    assert_eq!(kept.request.messages[0].content, "shared system prompt");
}

#[tokio::test]
async fn stored_messages_come_back_byte_for_byte_and_repeats_add_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("store");
    let redactor = Redactor::new([KEY]);
    let awkward = [
        "quotes \" and back\\slashes \\\" and a tab\t and a newline\n",
        "control \u{1} and nul \u{0} and bell \u{7}",
        "unicode: naïve café 日本語 🙂 \u{2028} \u{fffd}",
        "{\"looks\": [\"like\", \"json\"], \"n\": 1e400}",
        "$[0] json_each ' OR 1=1 --",
    ];
    let history: Vec<Message> = awkward.iter().map(|t| Message::user(*t)).collect();
    store
        .capture_model_call("t1", &call("s1", history.clone(), "a"), &redactor)
        .await
        .expect("capture");
    let back = store
        .model_call("s1")
        .await
        .expect("read")
        .expect("captured");
    assert_eq!(back.request.messages, history);
    let bodies: Vec<String> = sqlx::query_scalar("SELECT body FROM trace_blobs")
        .fetch_all(store.pool())
        .await
        .expect("blobs");
    for message in &history {
        let json = serde_json::to_string(message).expect("json");
        assert!(bodies.contains(&json), "{json:?} is not stored as written");
    }

    // The same messages again, and one more: only the new one is written.
    let before = count(&store, "trace_blobs").await;
    let mut longer = history.clone();
    longer.push(Message::assistant("new"));
    store
        .capture_model_call("t1", &call("s2", longer.clone(), "a"), &redactor)
        .await
        .expect("capture again");
    assert_eq!(count(&store, "trace_blobs").await, before + 1);
    let back = store
        .model_call("s2")
        .await
        .expect("read")
        .expect("captured");
    assert_eq!(back.request.messages, longer);
}

#[tokio::test]
async fn blobs_deleted_by_another_process_are_written_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mine = Store::open_in(dir.path()).await.expect("store");
    let other = Store::open_in(dir.path()).await.expect("second store");
    let redactor = Redactor::new([KEY]);
    let history = vec![Message::system("You are helpful."), Message::user("hello")];
    mine.capture_model_call("t1", &call("s1", history.clone(), "a"), &redactor)
        .await
        .expect("capture");
    // The other process prunes every capture, and the blobs with them.
    let gone = other
        .prune_captures(0, chrono::Utc::now() + chrono::Duration::seconds(5))
        .await
        .expect("prune");
    assert!(gone.blobs > 0);
    assert_eq!(count(&mine, "trace_blobs").await, 0);
    // This process stored those messages before; it must not take them for stored now.
    mine.capture_model_call("t2", &call("s2", history.clone(), "b"), &redactor)
        .await
        .expect("capture again");
    let back = mine
        .model_call("s2")
        .await
        .expect("the call's messages are all there")
        .expect("captured");
    assert_eq!(back.request.messages, history);
}
