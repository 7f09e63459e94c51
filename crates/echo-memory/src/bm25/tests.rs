//! The keyword index's tests: folding and CJK bigrams, BM25 ranking and status filters, the
//! top-k cut, compaction, common terms.

use super::*;

fn row(id: &str, status: MemoryStatus, text: &str, context: Option<&str>) -> IndexedRow {
    IndexedRow {
        id: id.into(),
        status: Some(status),
        text: text.into(),
        context: context.map(str::to_string),
    }
}

fn ids(found: &[(String, f64)]) -> Vec<&str> {
    found.iter().map(|(id, _)| id.as_str()).collect()
}

#[test]
fn words_are_folded_stemmed_and_cjk_is_bigrams() {
    assert_eq!(
        tokens("Running CAFÉS naïvely, 我喜欢吃鱼!"),
        ["run", "cafe", "naiv", "我喜", "喜欢", "欢吃", "吃鱼"]
    );
    // Korean syllables survive the diacritics folding whole.
    assert_eq!(tokens("한국어"), ["한국", "국어"]);
    assert_eq!(
        query_terms("What did the user run, and runs?"),
        ["user", "run"]
    );
}

#[test]
fn ranking_follows_bm25_and_filters_by_status() {
    let mut index = Index::default();
    index.put(row("a", MemoryStatus::Active, "the user keeps bees", None));
    index.put(row(
        "b",
        MemoryStatus::Active,
        "bees bees bees everywhere",
        None,
    ));
    index.put(row(
        "c",
        MemoryStatus::Archived,
        "an old note about bees",
        None,
    ));
    index.put(row("d", MemoryStatus::Active, "the user likes tea", None));
    index.put(row(
        "e",
        MemoryStatus::Active,
        "green tea in the morning",
        None,
    ));
    let q = query_terms("bees");
    assert_eq!(
        ids(&index.search(&q, &[MemoryStatus::Active], 10)),
        ["b", "a"]
    );
    assert_eq!(
        ids(&index.search(&q, &[MemoryStatus::Active, MemoryStatus::Archived], 10)),
        ["b", "a", "c"]
    );
    assert_eq!(ids(&index.search(&q, &[MemoryStatus::Active], 1)), ["b"]);
    // A memory found only through its context ranks below one found by its own text.
    index.put(row(
        "f",
        MemoryStatus::Active,
        "yes",
        Some("do you keep bees?"),
    ));
    let found = index.search(&q, &[MemoryStatus::Active], 10);
    assert_eq!(found.last().map(|(id, _)| id.as_str()), Some("f"));
}

/// The best `limit` equal what sorting every match gives, ties broken by insertion order,
/// however many matches there are, and searches one after another on the same thread
/// (sharing the scratch arrays) do not leak scores into each other.
#[test]
fn top_limit_matches_a_full_sort_and_searches_do_not_leak_into_each_other() {
    let mut index = Index::default();
    let words = ["apple", "pear", "plum", "fig", "kiwi", "lime"];
    for i in 0..400 {
        let text: Vec<&str> = (0..1 + i % 5).map(|j| words[(i * 7 + j) % 6]).collect();
        index.put(row(
            &format!("m{i:03}"),
            MemoryStatus::Active,
            &text.join(" "),
            None,
        ));
    }
    let everything = |q: &[String]| index.search(q, &[MemoryStatus::Active], usize::MAX);
    for query in ["apple", "pear plum", "fig kiwi lime", "apple kiwi"] {
        let q = query_terms(query);
        let all = everything(&q);
        assert!(all.len() > 50, "{query}: {} matches", all.len());
        for pair in all.windows(2) {
            let ((a, sa), (b, sb)) = (&pair[0], &pair[1]);
            assert!(
                sa > sb || (sa == sb && a < b),
                "{query}: {a} {sa} before {b} {sb}"
            );
        }
        for limit in [1, 7, 50] {
            assert_eq!(
                index.search(&q, &[MemoryStatus::Active], limit),
                all[..limit]
            );
        }
    }
    // A query after a broad one scores the same as on a thread that never searched.
    let fig = query_terms("fig");
    index.search(
        &query_terms("apple pear plum fig kiwi lime"),
        &[MemoryStatus::Active],
        5,
    );
    let after = index.search(&fig, &[MemoryStatus::Active], usize::MAX);
    let clean = std::thread::scope(|s| {
        s.spawn(|| index.search(&fig, &[MemoryStatus::Active], usize::MAX))
            .join()
            .expect("search thread")
    });
    assert_eq!(after, clean);
}

#[test]
fn replacing_and_removing_keep_counts_right_through_compaction() {
    let mut index = Index::default();
    for i in 0..3000 {
        index.put(row(
            &format!("m{i}"),
            MemoryStatus::Active,
            &format!("note {i} about kiwis"),
            None,
        ));
    }
    // Re-putting replaces: one live document per memory.
    index.put(row("m1", MemoryStatus::Active, "now about mangoes", None));
    let mango = query_terms("mangoes");
    assert_eq!(
        ids(&index.search(&mango, &[MemoryStatus::Active], 10)),
        ["m1"]
    );
    for i in 0..2000 {
        index.put(row(&format!("m{i}"), MemoryStatus::Deleted, "", None));
    }
    assert!(index.dead < 1024, "compacted: {} dead", index.dead);
    assert_eq!(index.live, 1000);
    assert!(index.search(&mango, &[MemoryStatus::Active], 10).is_empty());
    let found = index.search(&query_terms("note 2500"), &[MemoryStatus::Active], 3);
    assert_eq!(found.first().map(|(id, _)| id.as_str()), Some("m2500"));
    let kiwi = index.vocab[&normalize("kiwis")] as usize;
    assert_eq!(index.terms[kiwi].df, 1000);
}

/// A large store is scored on a blocking thread, with the same answer as inline.
#[tokio::test]
async fn a_large_store_scores_elsewhere_with_the_same_answer() {
    let mut index = Index::default();
    let words = [
        "apple", "pear", "plum", "fig", "kiwi", "lime", "date", "quince",
    ];
    for i in 0..SCORE_ELSEWHERE_FROM as usize + 10 {
        let text: Vec<&str> = (0..1 + i % 4).map(|j| words[(i * 5 + j) % 8]).collect();
        let status = if i % 7 == 0 {
            MemoryStatus::Archived
        } else {
            MemoryStatus::Active
        };
        index.put(row(&format!("m{i:05}"), status, &text.join(" "), None));
    }
    let q = query_terms("fig kiwi quince");
    let statuses = [MemoryStatus::Active, MemoryStatus::Archived];
    let inline = index.search(&q, &statuses, 50);
    let text = Arc::new(TextIndex {
        index: RwLock::new(index),
        ..Default::default()
    });
    let scored = text.score(q.clone(), statuses.to_vec(), 50).await;
    assert_eq!(scored.expect("scored"), inline);
    // The statuses travel with it: active only is a different answer.
    let active = text.score(q, vec![MemoryStatus::Active], 50).await;
    assert_ne!(active.expect("scored"), inline);
}

#[test]
fn common_terms_are_left_out_unless_nothing_else_is_left() {
    let mut index = Index::default();
    for i in 0..80 {
        index.put(row(
            &format!("m{i}"),
            MemoryStatus::Active,
            "the user has a balcony",
            None,
        ));
    }
    index.put(row(
        "t",
        MemoryStatus::Active,
        "the user grows tarragon",
        None,
    ));
    let q = query_terms("does the user grow tarragon?");
    assert_eq!(ids(&index.search(&q, &[MemoryStatus::Active], 50)), ["t"]);
    // Only common terms: the rarest (balcony, in 80 of 81) is searched.
    assert_eq!(
        index
            .search(&query_terms("user balcony"), &[MemoryStatus::Active], 100)
            .len(),
        80
    );
}
