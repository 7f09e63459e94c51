//! What a new process finds left by one that ended without finishing its work.

use echo_core::store::{CompletedAnswer, EXTRACTION_TRIES, StartOutcome, TurnStatus};
use echo_core::trace::{SpanKind, SpanStatus, Tracer};
use echo_core::{Message, Store, Usage};

/// `echod ask` can leave while the turn's memory extraction still runs. When that process is
/// gone, the extraction's span is closed as cancelled, not shown running forever; a live
/// process's background work is left alone.
#[tokio::test]
async fn background_work_a_finished_process_left_running_is_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("open");
    let session = store.session_by_name_or_create("s").await.expect("session");
    let mut turns = Vec::new();
    for owner in ["gone", "alive"] {
        let turn = store
            .create_turn(&session, "hi", echo_core::EntryPoint::Cli, owner)
            .await
            .expect("turn");
        let started = store
            .try_start_turn(&session, &turn, &Message::user("hi"), None, &|_| true)
            .await
            .expect("start");
        assert_eq!(started, StartOutcome::Started);
        store
            .finish_turn(&turn, TurnStatus::Completed, None, None, Default::default())
            .await
            .expect("finish");
        let extraction = Tracer::new(store.clone())
            .start_detached(
                &turn,
                "root",
                SpanKind::Background,
                "background:extract_memories",
            )
            .await;
        // The process ends without the span's end being written (a drop would write it).
        std::mem::forget(extraction);
        turns.push(turn);
    }

    let interrupted = store
        .recover_orphans(&|owner| owner == "alive")
        .await
        .expect("recover");
    assert!(interrupted.is_empty(), "finished turns stay finished");

    let gone = store.spans(turns[0].as_str()).await.expect("spans");
    assert_eq!(gone[0].status, SpanStatus::Cancelled, "{gone:?}");
    assert_eq!(gone[0].error.as_deref(), Some("process ended"));
    let turn = store
        .turn(turns[0].as_str())
        .await
        .expect("turn")
        .expect("some");
    assert_eq!(turn.status, TurnStatus::Completed);
    let alive = store.spans(turns[1].as_str()).await.expect("spans");
    assert_eq!(alive[0].status, SpanStatus::Running, "{alive:?}");
}

/// A turn's memory extraction that its process did not finish is claimed by one later
/// process at a time, at most `EXTRACTION_TRIES` attempts in all, and never while its owner
/// still runs. It is pending from the moment the answer is saved (the same transaction), so
/// a process killed before its extraction job even started leaves it too.
#[tokio::test]
async fn an_unfinished_extraction_is_claimed_once_and_given_up_after_its_tries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("open");
    let session = store.session_by_name_or_create("s").await.expect("session");
    let turn = store
        .create_turn(
            &session,
            "I'm allergic to peanuts.",
            echo_core::EntryPoint::Cli,
            "a",
        )
        .await
        .expect("turn");
    let answer = Message::assistant("Noted.");
    let completed = |turn| CompletedAnswer {
        session: &session,
        turn,
        message: &answer,
        reasoning: None,
        model: "m",
        usage: Usage::default(),
    };
    let message = store
        .complete_turn(completed(&turn), Some("a"))
        .await
        .expect("answer");
    let record = store
        .turn(turn.as_str())
        .await
        .expect("read")
        .expect("turn");
    assert_eq!(record.status, TurnStatus::Completed);

    let alive = |live: &'static str| move |owner: &str| owner == live;
    let claimed = store
        .claim_pending_extractions("b", &alive("a"), 4)
        .await
        .expect("claim");
    assert!(claimed.is_empty(), "its owner still runs");

    let claimed = store
        .claim_pending_extractions("b", &alive("b"), 4)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    let p = &claimed[0];
    assert_eq!(
        (
            p.turn.as_str(),
            p.input.as_str(),
            &p.message,
            p.answer.as_str(),
            p.attempt
        ),
        (
            turn.as_str(),
            "I'm allergic to peanuts.",
            &message,
            "Noted.",
            2
        )
    );
    let again = store
        .claim_pending_extractions("c", &alive("b"), 4)
        .await
        .expect("claim");
    assert!(again.is_empty(), "b runs it now");

    // b is gone too: c takes it, the last attempt; after c, nobody.
    let last = store
        .claim_pending_extractions("c", &alive("c"), 4)
        .await
        .expect("claim");
    assert_eq!(last.iter().map(|p| p.attempt).collect::<Vec<_>>(), [3]);
    for me in ["d", "e"] {
        let none = store
            .claim_pending_extractions(me, &alive(me), 4)
            .await
            .expect("claim");
        assert!(none.is_empty(), "{EXTRACTION_TRIES} tries in all");
    }

    // One that ended is not claimed at all, nor one that was never to run.
    let turn = store
        .create_turn(&session, "Hello.", echo_core::EntryPoint::Cli, "f")
        .await
        .expect("turn");
    store
        .complete_turn(completed(&turn), Some("f"))
        .await
        .expect("answer");
    store.extraction_ended(&turn).await.expect("ended");
    let turn = store
        .create_turn(&session, "Hi.", echo_core::EntryPoint::Cli, "f")
        .await
        .expect("turn");
    store
        .complete_turn(completed(&turn), None)
        .await
        .expect("answer");
    let none = store
        .claim_pending_extractions("g", &alive("g"), 4)
        .await
        .expect("claim");
    assert!(none.is_empty());
}
