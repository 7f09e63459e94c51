//! Rules and the audit log on the real SQLite store.

use echo_core::store::Store;
use echo_gate::{
    AuditLog, DecidedBy, GateError, NewAuditEntry, NewRule, RuleBook, RuleDecision, RuleScope,
};
use echo_tools::Risk;

async fn store(dir: &tempfile::TempDir) -> Store {
    Store::open_in(dir.path()).await.expect("store")
}

#[tokio::test]
async fn rules_are_added_listed_by_session_and_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir).await;
    let session = store
        .session_by_name_or_create("work")
        .await
        .expect("session");
    let book = RuleBook::new(store.pool().clone());
    let always = book
        .add(NewRule {
            tool: "shell".into(),
            pattern: Some("git status".into()),
            decision: RuleDecision::Allow,
            scope: RuleScope::Always,
            session_id: None,
            created_by: "cli".into(),
        })
        .await
        .expect("add");
    let for_session = book
        .add(NewRule {
            tool: "write_file".into(),
            pattern: None,
            decision: RuleDecision::Allow,
            scope: RuleScope::Session,
            session_id: Some(session.to_string()),
            created_by: "user".into(),
        })
        .await
        .expect("add");
    assert!(always.id.starts_with("r-"));
    assert_eq!(book.list(None).await.expect("list").len(), 2);
    assert_eq!(
        book.list(Some(session.as_str())).await.expect("list").len(),
        2
    );
    let other = book.list(Some("another-session")).await.expect("list");
    assert_eq!(other, vec![always.clone()]);

    let err = book
        .add(NewRule {
            tool: "shell".into(),
            pattern: None,
            decision: RuleDecision::Deny,
            scope: RuleScope::Session,
            session_id: None,
            created_by: "cli".into(),
        })
        .await
        .expect_err("session rule without a session");
    assert!(err.to_string().contains("needs a session"), "{err}");
    let err = book
        .add(NewRule {
            tool: "read_file".into(),
            pattern: Some("src/[".into()),
            decision: RuleDecision::Deny,
            scope: RuleScope::Always,
            session_id: None,
            created_by: "cli".into(),
        })
        .await
        .expect_err("bad glob");
    assert!(err.to_string().contains("bad pattern"), "{err}");

    assert_eq!(
        book.remove(&for_session.id).await.expect("remove"),
        for_session
    );
    assert!(matches!(
        book.remove(&for_session.id).await,
        Err(GateError::NoSuchRule(_))
    ));
    assert_eq!(book.list(None).await.expect("list"), vec![always]);
}

#[tokio::test]
async fn decisions_are_audited_with_secrets_masked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = store(&dir).await;
    let log = AuditLog::new(store.pool().clone());
    for (call, decision, by) in [
        ("c1", RuleDecision::Allow, DecidedBy::Risk),
        ("c2", RuleDecision::Deny, DecidedBy::HardDeny),
    ] {
        log.record(NewAuditEntry {
            session_id: Some("s1"),
            turn_id: Some("t1"),
            call_id: call,
            tool: "shell",
            arguments: r#"{"command":"curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwx' x"}"#,
            risk: Risk::Exec,
            decision,
            by,
            rule_id: None,
            reason: "because",
        })
        .await
        .expect("record");
    }
    let entries = log.list(None, 10).await.expect("list");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].call_id, "c2", "newest first");
    assert_eq!(
        (
            entries[0].decision.as_str(),
            entries[0].decided_by.as_str(),
            entries[0].risk.as_str()
        ),
        ("deny", "hard_deny", "exec")
    );
    assert!(
        !entries[0].arguments.contains("abcdefghijklmnop"),
        "{}",
        entries[0].arguments
    );
    assert_eq!(log.list(Some("nope"), 10).await.expect("list").len(), 0);
}
