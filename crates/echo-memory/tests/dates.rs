//! Recall and the dates a question names: "on 9 November, 2022" or "yesterday" brings the
//! memories from that day forward (by their `valid_from`, when they were said), on a real
//! SQLite database; a question without a date, or with a date nothing is from, ranks as
//! before.

use chrono::{Days, Local, NaiveDate, Utc};
use echo_core::config::MemoryConfig;
use echo_memory::{
    MemoryActor, MemorySource, MemoryStore, MemoryTier, NewMemory, RecallOptions, WriteOptions,
};

/// Local noon of `day`, as the write path takes a time.
fn noon(day: NaiveDate) -> String {
    day.and_hms_opt(12, 0, 0)
        .and_then(|t| t.and_local_timezone(Local).earliest())
        .map(|t| t.with_timezone(&Utc).to_rfc3339())
        .expect("local noon")
}

fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("a date")
}

async fn said(memory: &MemoryStore, content: &str, when: String) -> String {
    let draft = NewMemory {
        tier: Some(MemoryTier::Episodic),
        kind: Some("event".into()),
        content: content.into(),
        source: Some(MemorySource::UserStated),
        valid_from: Some(when),
        ..Default::default()
    };
    memory
        .remember(draft, WriteOptions::plain(MemoryActor::Import))
        .await
        .expect("write")
        .memory
        .id
}

/// Ids in recall order, each with its rank among the memories from the named days.
async fn recall(memory: &MemoryStore, query: &str) -> Vec<(String, Option<usize>)> {
    let (found, _) = memory
        .recall(query, &RecallOptions::top(10), None)
        .await
        .expect("recall");
    found
        .into_iter()
        .map(|r| (r.memory.id, r.dated_rank))
        .collect()
}

#[tokio::test]
async fn a_named_day_brings_what_was_said_that_day_forward() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = echo_core::Store::open_in(dir.path()).await.expect("store");
    let memory = MemoryStore::new(store.pool().clone(), MemoryConfig::default());
    // The words favour the short one (BM25 prefers it); the day is the long one's.
    let long = said(
        &memory,
        "Over the long weekend with the whole family visiting I cooked a big pot of curry for everyone",
        noon(day("2022-11-09")),
    )
    .await;
    let short = said(&memory, "I cooked curry", noon(day("2022-12-20"))).await;
    let yesterday = Local::now().date_naive() - Days::new(1);
    let recent = said(
        &memory,
        "At the market the stall keeper told me how she cooked her curry on a wood fire",
        noon(yesterday),
    )
    .await;
    for n in 0..8 {
        said(
            &memory,
            &format!("Walked the dog around the lake, lap {n}"),
            noon(day("2022-11-09")),
        )
        .await;
    }

    let undated = recall(&memory, "What curry did I cook?").await;
    assert_eq!(undated[0], (short.clone(), None), "{undated:?}");
    assert!(undated.iter().all(|(_, d)| d.is_none()));

    let dated = recall(&memory, "What curry did I cook on 9 November, 2022?").await;
    assert_eq!(dated[0], (long.clone(), Some(1)), "{dated:?}");
    assert!(dated.iter().any(|(id, d)| *id == short && d.is_none()));
    // The same day written the other way round.
    let other_way = recall(&memory, "the curry I cooked on November 9th, 2022").await;
    assert_eq!(other_way[0].0, long, "{other_way:?}");

    let relative = recall(&memory, "Who told me about cooking curry yesterday?").await;
    assert_eq!(relative[0], (recent.clone(), Some(1)), "{relative:?}");

    // A day nothing is from adds no ranking: the curries keep their order (the date's own
    // words may match something else, here "1" a lap of the walk).
    let empty_day = recall(&memory, "What curry did I cook on 1 January, 2020?").await;
    let curries: Vec<_> = empty_day
        .into_iter()
        .filter(|hit| undated.contains(hit))
        .collect();
    assert_eq!(curries, undated);

    // A forgotten memory from that day is not recalled for it.
    memory
        .forget(&long, MemoryActor::User)
        .await
        .expect("forget");
    let after = recall(&memory, "What curry did I cook on 9 November, 2022?").await;
    assert!(after.iter().all(|(id, _)| *id != long), "{after:?}");
    assert_eq!(after[0].0, short, "{after:?}");
}
