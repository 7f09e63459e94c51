//! `Store::history` keeps recently read sessions decoded (migration 0009): what another
//! process appends, an edit that sets messages aside, and a deleted session must all show.

use echo_core::store::{StartOutcome, TurnStatus};
use echo_core::{Message, MessageId, Store};

fn contents(history: &[echo_core::store::StoredMessage]) -> Vec<String> {
    history.iter().map(|m| m.content.clone()).collect()
}

async fn exchange(
    store: &Store,
    session: &echo_core::SessionId,
    text: &str,
    edit: Option<&MessageId>,
) {
    let turn = store
        .create_turn(session, text, echo_core::EntryPoint::Cli, "owner")
        .await
        .expect("turn");
    let started = store
        .try_start_turn(session, &turn, &Message::user(text), edit, &|_| true)
        .await
        .expect("start");
    assert_eq!(started, StartOutcome::Started);
    store
        .append_message(
            session,
            Some(&turn),
            &Message::assistant(format!("re: {text}")),
            None,
            false,
        )
        .await
        .expect("answer");
    store
        .finish_turn(&turn, TurnStatus::Completed, None, None, Default::default())
        .await
        .expect("finish");
}

#[tokio::test]
async fn a_kept_history_follows_appends_from_another_process_edits_and_deletion() {
    let dir = tempfile::tempdir().expect("tempdir");
    let here = Store::open_in(dir.path()).await.expect("open");
    let there = Store::open_in(dir.path()).await.expect("open again");
    let s = here.session_by_name_or_create("s").await.expect("session");
    exchange(&here, &s, "one", None).await;
    assert_eq!(
        contents(&here.history(&s).await.expect("history")),
        ["one", "re: one"]
    );

    // Appended by the other process: read on top of what is kept.
    exchange(&there, &s, "two", None).await;
    let history = here.history(&s).await.expect("history");
    assert_eq!(contents(&history), ["one", "re: one", "two", "re: two"]);
    let ids =
        |h: &[echo_core::store::StoredMessage]| h.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    assert_eq!(
        ids(&history),
        ids(&there.history(&s).await.expect("history"))
    );

    // The other process edits "two": it and its answer are set aside, the edit follows.
    let two = MessageId::from_string(history[2].id.clone());
    exchange(&there, &s, "two, edited", Some(&two)).await;
    assert_eq!(
        contents(&here.history(&s).await.expect("history")),
        ["one", "re: one", "two, edited", "re: two, edited"]
    );

    // Deleted elsewhere: nothing is left.
    assert!(there.delete_session(&s).await.expect("delete"));
    assert!(here.history(&s).await.expect("history").is_empty());
}
