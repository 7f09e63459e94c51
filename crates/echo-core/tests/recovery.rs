//! What a new process finds left by one that ended without finishing its work.

use echo_core::store::{StartOutcome, TurnStatus};
use echo_core::trace::{SpanKind, SpanStatus, Tracer};
use echo_core::{Message, Store};

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
