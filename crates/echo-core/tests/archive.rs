//! The rolling summary and the history archive (migration 0005) against a real SQLite file.

use echo_core::store::{NewCompression, StartOutcome, TurnStatus};
use echo_core::{Message, MessageId, Store};

async fn turn(store: &Store, session: &echo_core::SessionId, text: &str) -> echo_core::TurnId {
    let turn = store
        .create_turn(session, text, echo_core::EntryPoint::Cli, "owner")
        .await
        .expect("turn");
    let started = store
        .try_start_turn(session, &turn, &Message::user(text), None, &|_| true)
        .await
        .expect("start");
    assert_eq!(started, StartOutcome::Started);
    store
        .append_message(session, Some(&turn), &Message::assistant("ok"), None, false)
        .await
        .expect("answer");
    finish(store, &turn).await;
    turn
}

async fn finish(store: &Store, turn: &echo_core::TurnId) {
    store
        .finish_turn(turn, TurnStatus::Completed, None, None, Default::default())
        .await
        .expect("finish");
}

#[tokio::test]
async fn summaries_archive_search_and_are_discarded_when_their_messages_are_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_in(dir.path()).await.expect("open");
    let s = store
        .session_by_name_or_create("long")
        .await
        .expect("session");
    turn(&store, &s, "we chose PostgreSQL 16 for the ledger").await;
    turn(&store, &s, "部署在法兰克福的服务器上").await;
    let t3 = turn(&store, &s, "what next?").await;

    assert_eq!(
        store.compression_state(&s).await.expect("state"),
        Default::default()
    );
    // A failed attempt counts for the cooldown but is no summary.
    store
        .record_compression(NewCompression {
            session: &s,
            turn: &t3,
            from_seq: 0,
            to_seq: 4,
            at_seq: 5,
            outcome: Err("the model did not call summarize_history".into()),
            segment_text: "ignored",
        })
        .await
        .expect("failed attempt");
    let state = store.compression_state(&s).await.expect("state");
    assert_eq!((state.summary, state.last_attempt_at_seq), (None, Some(5)));

    let segment: String = store
        .messages_between(&s, 0, 4)
        .await
        .expect("segment")
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(segment.contains("PostgreSQL") && segment.contains("法兰克福"));
    store
        .record_compression(NewCompression {
            session: &s,
            turn: &t3,
            from_seq: 0,
            to_seq: 4,
            at_seq: 5,
            outcome: Ok("Ledger on PostgreSQL 16, hosted in Frankfurt.".into()),
            segment_text: &segment,
        })
        .await
        .expect("summary");
    let state = store.compression_state(&s).await.expect("state");
    let summary = state.summary.expect("a summary");
    assert_eq!(
        (summary.to_seq, summary.summary.contains("Frankfurt")),
        (4, true)
    );

    // The archive finds the segment by words and by Chinese bigrams, only in its session.
    for query in ["postgresql ledger", "法兰克福"] {
        let hits = store.search_archive(&s, query, 5).await.expect("search");
        assert_eq!(hits.len(), 1, "{query}");
        assert_eq!((hits[0].from_seq, hits[0].to_seq), (0, 4));
    }
    let other = store
        .session_by_name_or_create("other")
        .await
        .expect("session");
    assert!(
        store
            .search_archive(&other, "ledger", 5)
            .await
            .expect("search")
            .is_empty()
    );

    // Editing the first message sets aside everything from it: the summary is discarded.
    let first: MessageId =
        MessageId::from_string(store.history(&s).await.expect("history")[0].id.clone());
    let edit = store
        .create_turn(&s, "edited", echo_core::EntryPoint::Cli, "owner")
        .await
        .expect("turn");
    let started = store
        .try_start_turn(&s, &edit, &Message::user("edited"), Some(&first), &|_| true)
        .await
        .expect("start");
    assert_eq!(started, StartOutcome::Started);
    let state = store.compression_state(&s).await.expect("state");
    assert_eq!((state.summary, state.last_attempt_at_seq), (None, None));
    assert!(
        store
            .search_archive(&s, "ledger", 5)
            .await
            .expect("search")
            .is_empty()
    );

    // Deleting the session leaves nothing of its archive behind.
    finish(&store, &edit).await;
    assert!(store.delete_session(&s).await.expect("delete"));
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM history_archive_fts")
        .fetch_one(store.pool())
        .await
        .expect("count");
    assert_eq!(left, 0);
}
