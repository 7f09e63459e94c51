//! The run queue and the approval queue on a real, migrated SQLite database.

use echo_automations::{AutomationStore, Enqueued, NewRun, Schedule, Spec, Trigger, Watch};
use echo_core::{QueuedApprovalStatus, Risk, RunCause, RunStatus};
use std::time::Duration;

async fn store() -> (tempfile::TempDir, echo_core::Store, AutomationStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = echo_core::Store::open_in(dir.path()).await.expect("store");
    let automations = AutomationStore::new(db.pool().clone());
    (dir, db, automations)
}

fn file_run(path: &str, dedup: &str) -> NewRun {
    NewRun {
        cause: RunCause::File,
        event: Some(echo_core::FileEvent::Created),
        path: Some(path.into()),
        old_path: None,
        fire_time: None,
        dedup: Some(dedup.into()),
        chain: Vec::new(),
    }
}

fn watch_spec() -> Spec {
    Spec::new(Trigger::Watch(Watch::new(vec!["/in".into()])), "{{path}}")
}

#[tokio::test]
async fn an_event_queues_once_and_runs_are_claimed_in_order_within_the_concurrency() {
    let (_dir, _db, s) = store().await;
    let a = s
        .create("Inbox", &watch_spec(), true)
        .await
        .expect("create");
    assert!(matches!(
        s.create("Inbox", &watch_spec(), true).await,
        Err(echo_automations::AutomationError::NameTaken(_))
    ));
    for i in 0..3 {
        let q = s
            .enqueue(&a, file_run(&format!("/in/{i}"), &format!("k{i}")))
            .await
            .expect("enqueue");
        assert!(matches!(q, Enqueued::Queued(_)));
    }
    let again = s
        .enqueue(&a, file_run("/in/0", "k0"))
        .await
        .expect("enqueue");
    assert!(
        matches!(again, Enqueued::Duplicate),
        "the same event is queued once"
    );

    let first = s
        .claim_next(&a.id, "me", 1)
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(first.path.as_deref(), Some("/in/0"));
    assert_eq!(first.status, RunStatus::Running);
    assert!(
        s.claim_next(&a.id, "other", 1)
            .await
            .expect("claim")
            .is_none(),
        "concurrency 1"
    );
    s.finish_run(&first.id, RunStatus::Done, None)
        .await
        .expect("finish");
    let second = s
        .claim_next(&a.id, "other", 2)
        .await
        .expect("claim")
        .expect("a run");
    let third = s
        .claim_next(&a.id, "me", 2)
        .await
        .expect("claim")
        .expect("a run");
    assert_eq!(second.path.as_deref(), Some("/in/1"));
    assert_eq!(third.path.as_deref(), Some("/in/2"));

    // "other" ends without finishing its run: it is queued again once, then failed.
    let alive = |o: &str| o == "me";
    assert_eq!(s.recover(&alive).await.expect("recover"), (1, 0));
    let again = s
        .claim_next(&a.id, "me", 2)
        .await
        .expect("claim")
        .expect("requeued");
    assert_eq!(again.id, second.id);
    assert_eq!(again.attempts, 2);
    let nobody = |_: &str| false;
    assert_eq!(s.recover(&nobody).await.expect("recover"), (1, 1));
    assert_eq!(
        s.run(&second.id).await.expect("run").status,
        RunStatus::Failed
    );
}

#[tokio::test]
async fn loops_and_storms_are_skipped_with_the_reason() {
    let (_dir, _db, s) = store().await;
    let mut spec = watch_spec();
    spec.max_runs_per_file_per_hour = 2;
    spec.max_runs_per_hour = 3;
    let a = s.create("A", &spec, true).await.expect("create");
    let b = s.create("B", &watch_spec(), true).await.expect("create");

    // A file a run of A wrote, still as A left it, carries A's chain.
    let run = s.claim_next(&a.id, "me", 1).await.expect("claim");
    assert!(run.is_none());
    s.record_write(
        "/in/out.md",
        &echo_core::RunId::new(),
        std::slice::from_ref(&a.id),
        Some(5),
        Some(77),
    )
    .await
    .expect("record");
    let chain = s
        .writer_chain("/in/out.md", Some(5), Some(77))
        .await
        .expect("chain");
    assert_eq!(chain, Some(vec![a.id.clone()]));
    assert_eq!(
        s.writer_chain("/in/out.md", Some(6), Some(78))
            .await
            .expect("chain"),
        None,
        "changed since"
    );
    let mut looped = file_run("/in/out.md", "loop");
    looped.chain = vec![b.id.clone(), a.id.clone()];
    match s.enqueue(&a, looped).await.expect("enqueue") {
        Enqueued::Skipped(r) => assert!(r.reason.unwrap_or_default().starts_with("loop:")),
        other => panic!("{other:?}"),
    }

    // Per file, then per hour.
    for k in 0..2 {
        assert!(matches!(
            s.enqueue(&a, file_run("/in/same", &format!("s{k}")))
                .await
                .expect("q"),
            Enqueued::Queued(_)
        ));
    }
    match s
        .enqueue(&a, file_run("/in/same", "s2"))
        .await
        .expect("enqueue")
    {
        Enqueued::Skipped(r) => assert!(
            r.reason.unwrap_or_default().contains("for this file"),
            "per-file limit"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        s.enqueue(&a, file_run("/in/x", "x")).await.expect("q"),
        Enqueued::Queued(_)
    ));
    match s
        .enqueue(&a, file_run("/in/y", "y"))
        .await
        .expect("enqueue")
    {
        Enqueued::Skipped(r) => assert!(
            r.reason.unwrap_or_default().contains("in the last hour"),
            "hourly limit"
        ),
        other => panic!("{other:?}"),
    }
    let shown = s.get("A").await.expect("get");
    assert_eq!(shown.state, echo_core::AutomationState::RateLimited);
    assert!(
        shown
            .state_reason
            .unwrap_or_default()
            .contains("rate limit")
    );
}

#[tokio::test]
async fn a_queued_question_is_answered_once_and_its_run_waits_meanwhile() {
    let (_dir, _db, s) = store().await;
    let a = s
        .create(
            "Brief",
            &Spec::new(Trigger::Schedule(Schedule::new("0 8 * * *")), "brief me"),
            true,
        )
        .await
        .expect("create");
    s.enqueue(&a, NewRun::manual()).await.expect("enqueue");
    let run = s
        .claim_next(&a.id, "me", 1)
        .await
        .expect("claim")
        .expect("run");
    let id = s
        .queue_question(echo_automations::NewQueuedApproval {
            run_id: &run.id,
            turn_id: "t",
            call_id: "c",
            tool: "shell",
            risk: Risk::Exec,
            detail: "ls",
            reason: "exec asks",
            suggested_pattern: Some("ls"),
            expires_in: Duration::from_secs(3600),
        })
        .await
        .expect("queue");
    assert_eq!(
        s.run(&run.id).await.expect("run").status,
        RunStatus::WaitingForApproval
    );
    let pending = s.questions(true, 10).await.expect("list");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].automation, "Brief");
    assert!(
        s.answer_question(&id, QueuedApprovalStatus::Allowed, "allow_once")
            .await
            .expect("answer")
    );
    assert!(
        !s.answer_question(&id, QueuedApprovalStatus::Denied, "deny")
            .await
            .expect("answer"),
        "answered once"
    );
    let (status, answer) = s.question_state(&id).await.expect("state").expect("exists");
    assert_eq!(
        (status, answer.as_deref()),
        (QueuedApprovalStatus::Allowed, Some("allow_once"))
    );
    assert!(s.questions(true, 10).await.expect("list").is_empty());
}

#[tokio::test]
async fn notices_tell_once_what_finished_failed_or_waits_after_the_cursor() {
    let (_dir, _db, s) = store().await;
    let a = s
        .create("Inbox", &watch_spec(), true)
        .await
        .expect("create");
    // What ended before the first look is not news.
    s.enqueue(&a, file_run("/in/old", "old"))
        .await
        .expect("enqueue");
    let old = s
        .claim_next(&a.id, "me", 3)
        .await
        .expect("claim")
        .expect("run");
    s.finish_run(&old.id, RunStatus::Done, None)
        .await
        .expect("finish");
    let first = s.notices(None).await.expect("notices");
    assert!(first.notices.is_empty());
    let mut cursor = first.cursor;

    for i in 0..3 {
        s.enqueue(&a, file_run(&format!("/in/{i}"), &format!("k{i}")))
            .await
            .expect("enqueue");
    }
    let mut claimed = Vec::new();
    for _ in 0..3 {
        claimed.push(
            s.claim_next(&a.id, "me", 3)
                .await
                .expect("claim")
                .expect("run"),
        );
    }
    s.finish_run(&claimed[0].id, RunStatus::Done, None)
        .await
        .expect("done");
    s.finish_run(
        &claimed[1].id,
        RunStatus::Failed,
        Some("the model was unreachable"),
    )
    .await
    .expect("failed");
    s.queue_question(echo_automations::NewQueuedApproval {
        run_id: &claimed[2].id,
        turn_id: "t",
        call_id: "c",
        tool: "write_file",
        risk: Risk::Write,
        detail: "/notes/2.md",
        reason: "writes ask",
        suggested_pattern: None,
        expires_in: Duration::from_secs(3600),
    })
    .await
    .expect("queue");
    let last_event = echo_core::time::now_rfc3339();

    // Polled until the cursor has passed everything above: each comes exactly once.
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let news = loop {
        let news = s.notices(Some(&cursor)).await.expect("notices");
        seen.extend(news.notices.clone());
        cursor = news.cursor.clone();
        if cursor > last_event {
            break news;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the cursor never moved on"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let kinds: Vec<_> = seen
        .iter()
        .map(|n| (n.kind, n.path.clone().unwrap_or_default()))
        .collect();
    use echo_automations::NoticeKind::*;
    assert_eq!(
        kinds,
        [
            (Done, "/in/0".to_string()),
            (Failed, "/in/1".to_string()),
            (NeedsApproval, "/in/2".to_string())
        ]
    );
    assert_eq!(seen[1].detail.as_deref(), Some("the model was unreachable"));
    assert_eq!(seen[2].tool.as_deref(), Some("write_file"));
    assert_eq!(seen[2].automation, "Inbox");
    assert!(seen[2].question_id.is_some());
    assert_eq!(
        (news.pending_approvals, news.enabled, news.automations),
        (1, 1, 1)
    );

    // Paused: file events are not kept for later; the count of automations on follows.
    s.set_enabled(&a.id, false).await.expect("pause");
    assert!(matches!(
        s.enqueue(&a, file_run("/in/late", "late"))
            .await
            .expect("enqueue"),
        Enqueued::Stale
    ));
    assert_eq!(s.notices(Some(&cursor)).await.expect("notices").enabled, 0);
    // Resumed, it is a new version: events its old watcher saw are not queued either.
    let resumed = s.set_enabled(&a.id, true).await.expect("resume");
    assert!(matches!(
        s.enqueue(&a, file_run("/in/late", "late"))
            .await
            .expect("enqueue"),
        Enqueued::Stale
    ));
    assert!(matches!(
        s.enqueue(&resumed, file_run("/in/late", "late"))
            .await
            .expect("enqueue"),
        Enqueued::Queued(_)
    ));
}

#[tokio::test]
async fn a_file_seen_at_one_size_and_mtime_is_known_whatever_its_event() {
    let (_dir, _db, s) = store().await;
    let a = s
        .create("Inbox", &watch_spec(), true)
        .await
        .expect("create");
    s.enqueue(&a, file_run("/in/a.pdf", "modified:/in/a.pdf:10:1700"))
        .await
        .expect("enqueue");
    assert!(
        s.seen_file(&a.id, "/in/a.pdf", 10, 1700)
            .await
            .expect("seen")
    );
    assert!(
        !s.seen_file(&a.id, "/in/a.pdf", 11, 1700)
            .await
            .expect("seen")
    );
    assert!(
        !s.seen_file(&a.id, "/in/b.pdf", 10, 1700)
            .await
            .expect("seen")
    );
}
