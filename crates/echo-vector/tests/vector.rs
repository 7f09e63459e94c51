//! Integration tests of the vector index against a real LanceDB table in a temporary
//! directory. Data stays small (hundreds of rows, dim ≤ 64): debug-mode LanceDB is slow.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use echo_vector::{
    DEFAULT_ANN_MIN_ROWS, IndexSpec, Op, Subject, VectorError, VectorIndex, VectorOptions,
};
use tempfile::TempDir;

const MODEL: &str = "test-embed-v1";

/// Deterministic xorshift64* generator, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn vector(&mut self, dim: usize) -> Vec<f32> {
        loop {
            let v: Vec<f32> = (0..dim).map(|_| self.next_f32()).collect();
            if v.iter().any(|x| *x != 0.0) {
                return v;
            }
        }
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    (dot / (na * nb)) as f32
}

/// The exact top `k` by cosine similarity, best first.
fn brute_force(data: &[(String, Vec<f32>)], query: &[f32], k: usize) -> Vec<(String, f32)> {
    let mut all: Vec<(String, f32)> = data
        .iter()
        .map(|(id, v)| (id.clone(), cosine(query, v)))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.truncate(k);
    all
}

fn dataset(rng: &mut Rng, prefix: &str, n: usize, dim: usize) -> Vec<(String, Vec<f32>)> {
    (0..n)
        .map(|i| (format!("{prefix}-{i:04}"), rng.vector(dim)))
        .collect()
}

fn index_dir(tmp: &TempDir) -> PathBuf {
    // A directory that does not exist yet: open must create it.
    tmp.path().join("vectors")
}

async fn open(dir: &Path, dim: usize) -> VectorIndex {
    match VectorIndex::open(dir, dim, MODEL).await {
        Ok(index) => index,
        Err(e) => panic!("open {}: {e}", dir.display()),
    }
}

/// Asserts that `search` returns exactly the brute-force neighbours, in order, with matching
/// similarities, and that the ranking-only search (exact too without an ANN index) agrees.
async fn check_exact(index: &VectorIndex, data: &[(String, Vec<f32>)], query: &[f32], k: usize) {
    let got = index.search(query, k).await.expect("search");
    let ranked = index.search_ranked(query, k).await.expect("ranked search");
    assert_eq!(
        ranked, got,
        "ranking-only search differs from the exact one"
    );
    let want = brute_force(data, query, k);
    let got_ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    let want_ids: Vec<&str> = want.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(got_ids, want_ids, "neighbour ids differ from brute force");
    for ((id, g), (_, w)) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() < 1e-4,
            "similarity of {id}: got {g}, want {w}"
        );
    }
}

fn ids_of(data: &[(String, Vec<f32>)]) -> Vec<String> {
    let mut ids: Vec<String> = data.iter().map(|(id, _)| id.clone()).collect();
    ids.sort();
    ids
}

#[test]
fn vector_index_is_clone_send_sync() {
    fn shared<T: Clone + Send + Sync + 'static>() {}
    fn error<T: std::error::Error + Send + Sync + 'static>() {}
    shared::<VectorIndex>();
    error::<VectorError>();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_returns_exact_nearest_neighbours() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let index = open(&dir, 32).await;
    let mut rng = Rng::new(7);
    let data = dataset(&mut rng, "m", 300, 32);
    // Several batches, like the outbox worker would send them.
    for chunk in data.chunks(100) {
        index.upsert(chunk).await.expect("upsert");
    }
    assert_eq!(index.count().await.expect("count"), 300);
    assert_eq!(index.ids().await.expect("ids"), ids_of(&data));

    for _ in 0..10 {
        let query = rng.vector(32);
        check_exact(&index, &data, &query, 10).await;
    }
    // A stored vector finds itself first, with similarity 1.
    let (id, vector) = &data[123];
    let hits = index.search(vector, 3).await.expect("search");
    assert_eq!(&hits[0].0, id);
    assert!(
        (hits[0].1 - 1.0).abs() < 1e-5,
        "self-similarity {}",
        hits[0].1
    );
    // The opposite vector has similarity -1 to it and comes last.
    let opposite: Vec<f32> = vector.iter().map(|x| -x).collect();
    let all = index.search(&opposite, 300).await.expect("search");
    assert_eq!(all.len(), 300);
    assert_eq!(&all[299].0, id);
    assert!((all[299].1 + 1.0).abs() < 1e-5, "similarity {}", all[299].1);
    // k larger than the table returns every row; k = 0 returns none.
    assert_eq!(index.search(vector, 1000).await.expect("search").len(), 300);
    assert!(index.search(vector, 0).await.expect("search").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upsert_of_an_existing_id_replaces_it() {
    let tmp = TempDir::new().expect("tempdir");
    let index = open(&index_dir(&tmp), 16).await;
    let mut rng = Rng::new(11);
    let mut data = dataset(&mut rng, "m", 50, 16);
    index.upsert(&data).await.expect("upsert");

    let old = data[7].1.clone();
    let new = rng.vector(16);
    index
        .upsert(&[(data[7].0.clone(), new.clone())])
        .await
        .expect("re-upsert");
    data[7].1 = new.clone();

    assert_eq!(index.count().await.expect("count"), 50);
    assert_eq!(index.ids().await.expect("ids"), ids_of(&data));
    let hits = index.search(&new, 1).await.expect("search");
    assert_eq!(hits[0].0, data[7].0);
    assert!((hits[0].1 - 1.0).abs() < 1e-5);
    // The old vector is gone: what it finds now is whatever brute force says over new data.
    check_exact(&index, &data, &old, 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_ids_in_one_upsert_keep_the_last_vector() {
    let tmp = TempDir::new().expect("tempdir");
    let index = open(&index_dir(&tmp), 8).await;
    let mut rng = Rng::new(13);
    let first = rng.vector(8);
    let last = rng.vector(8);
    let other = rng.vector(8);
    index
        .upsert(&[
            ("dup".to_owned(), first),
            ("other".to_owned(), other),
            ("dup".to_owned(), last.clone()),
        ])
        .await
        .expect("upsert");
    assert_eq!(index.count().await.expect("count"), 2);
    let hits = index.search(&last, 1).await.expect("search");
    assert_eq!(hits[0].0, "dup");
    assert!((hits[0].1 - 1.0).abs() < 1e-5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_removes_rows_from_search_and_count() {
    let tmp = TempDir::new().expect("tempdir");
    let index = open(&index_dir(&tmp), 16).await;
    let mut rng = Rng::new(17);
    let mut data = dataset(&mut rng, "m", 120, 16);
    index.upsert(&data).await.expect("upsert");

    let gone: Vec<String> = data.iter().step_by(3).map(|(id, _)| id.clone()).collect();
    let probe = data[0].1.clone();
    index.delete(&gone).await.expect("delete");
    data.retain(|(id, _)| !gone.contains(id));

    assert_eq!(index.count().await.expect("count"), 80);
    assert_eq!(index.ids().await.expect("ids"), ids_of(&data));
    let hits = index.search(&probe, 120).await.expect("search");
    assert_eq!(hits.len(), 80);
    assert!(hits.iter().all(|(id, _)| !gone.contains(id)));
    check_exact(&index, &data, &probe, 10).await;

    // Unknown ids, and deleting twice, change nothing; empty calls are no-ops.
    index
        .delete(&["no-such-id".to_owned(), gone[0].clone()])
        .await
        .expect("delete unknown");
    index.delete(&[]).await.expect("empty delete");
    index.upsert(&[]).await.expect("empty upsert");
    assert_eq!(index.count().await.expect("count"), 80);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_empties_the_index_and_keeps_it_usable() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let index = open(&dir, 16).await;
    let mut rng = Rng::new(19);
    let data = dataset(&mut rng, "m", 100, 16);
    index.upsert(&data).await.expect("upsert");

    index.clear().await.expect("clear");
    assert_eq!(index.count().await.expect("count"), 0);
    assert!(index.ids().await.expect("ids").is_empty());
    assert!(
        index
            .search(&data[0].1, 5)
            .await
            .expect("search")
            .is_empty()
    );

    // The rebuild path: new rows land, and the table still records its dim and model.
    let fresh = dataset(&mut rng, "n", 40, 16);
    index.upsert(&fresh).await.expect("upsert after clear");
    assert_eq!(index.ids().await.expect("ids"), ids_of(&fresh));
    check_exact(&index, &fresh, &rng.vector(16), 5).await;
    drop(index);
    let reopened = open(&dir, 16).await;
    assert_eq!(reopened.count().await.expect("count"), 40);
    let mismatch = VectorIndex::open(&dir, 16, "other-model").await;
    assert!(matches!(mismatch, Err(VectorError::IndexMismatch { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_persists_after_drop_and_reopen() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let mut rng = Rng::new(23);
    let data = dataset(&mut rng, "m", 200, 24);
    {
        let index = open(&dir, 24).await;
        index.upsert(&data[..150]).await.expect("upsert");
        index.upsert(&data[150..]).await.expect("upsert");
        index.delete(&[data[0].0.clone()]).await.expect("delete");
    }
    let index = open(&dir, 24).await;
    let kept = &data[1..];
    assert_eq!(index.count().await.expect("count"), 199);
    assert_eq!(index.ids().await.expect("ids"), ids_of(kept));
    check_exact(&index, kept, &rng.vector(24), 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_with_another_dim_or_model_is_an_index_mismatch() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let mut rng = Rng::new(29);
    {
        let index = open(&dir, 8).await;
        index
            .upsert(&dataset(&mut rng, "m", 10, 8))
            .await
            .expect("upsert");
    }

    let err = VectorIndex::open(&dir, 16, MODEL)
        .await
        .expect_err("other dim");
    match &err {
        VectorError::IndexMismatch { found, wanted, .. } => {
            assert_eq!(
                found,
                &IndexSpec {
                    dim: 8,
                    model: MODEL.to_owned()
                }
            );
            assert_eq!(
                wanted,
                &IndexSpec {
                    dim: 16,
                    model: MODEL.to_owned()
                }
            );
        }
        other => panic!("expected IndexMismatch, got {other:?}"),
    }
    assert!(err.needs_rebuild());
    assert_eq!(err.op(), Op::Open);
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(
        message.contains(&dir.display().to_string()),
        "names the dir: {message}"
    );
    assert!(message.contains("open"), "names the operation: {message}");

    let err = VectorIndex::open(&dir, 8, "another-model")
        .await
        .expect_err("other model");
    match &err {
        VectorError::IndexMismatch { found, wanted, .. } => {
            assert_eq!(found.model, MODEL);
            assert_eq!(wanted.model, "another-model");
        }
        other => panic!("expected IndexMismatch, got {other:?}"),
    }

    // Nothing was changed by the refused opens.
    assert_eq!(open(&dir, 8).await.count().await.expect("count"), 10);

    // The rebuild: recreate with the new spec drops the old table.
    let rebuilt = VectorIndex::recreate(&dir, VectorOptions::new(16, "another-model"))
        .await
        .expect("recreate");
    assert_eq!(rebuilt.count().await.expect("count"), 0);
    rebuilt
        .upsert(&dataset(&mut rng, "n", 5, 16))
        .await
        .expect("upsert");
    drop(rebuilt);
    let again = VectorIndex::open(&dir, 16, "another-model")
        .await
        .expect("open new spec");
    assert_eq!(again.count().await.expect("count"), 5);
    assert!(matches!(
        VectorIndex::open(&dir, 8, MODEL).await,
        Err(VectorError::IndexMismatch { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_vectors_are_rejected_before_anything_is_written() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let index = open(&dir, 8).await;
    let good = ("good".to_owned(), vec![1.0; 8]);

    let err = index
        .upsert(&[good.clone(), ("short".to_owned(), vec![1.0; 7])])
        .await
        .expect_err("wrong length");
    match &err {
        VectorError::WrongLength {
            subject,
            got,
            expected,
            op,
            ..
        } => {
            assert_eq!(subject, &Subject::Memory("short".to_owned()));
            assert_eq!((*got, *expected, *op), (7, 8, Op::Upsert));
        }
        other => panic!("expected WrongLength, got {other:?}"),
    }
    let message = err.to_string();
    assert!(message.contains("\"short\"") && message.contains('7') && message.contains('8'));
    assert!(message.contains(&dir.display().to_string()) && message.contains("upsert"));

    let mut nan = vec![1.0; 8];
    nan[3] = f32::NAN;
    match index.upsert(&[("nan".to_owned(), nan)]).await {
        Err(VectorError::NonFinite {
            subject, position, ..
        }) => {
            assert_eq!(subject, Subject::Memory("nan".to_owned()));
            assert_eq!(position, 3);
        }
        other => panic!("expected NonFinite, got {other:?}"),
    }
    let mut inf = vec![1.0; 8];
    inf[0] = f32::INFINITY;
    assert!(matches!(
        index.upsert(&[("inf".to_owned(), inf)]).await,
        Err(VectorError::NonFinite { position: 0, .. })
    ));
    assert!(matches!(
        index.upsert(&[("zero".to_owned(), vec![0.0; 8])]).await,
        Err(VectorError::ZeroVector { .. })
    ));
    assert!(matches!(
        index.upsert(&[(String::new(), vec![1.0; 8])]).await,
        Err(VectorError::InvalidArgument { op: Op::Upsert, .. })
    ));
    // A batch with one bad vector writes nothing.
    assert_eq!(index.count().await.expect("count"), 0);

    match index.search(&[1.0; 9], 3).await {
        Err(VectorError::WrongLength {
            subject: Subject::Query,
            got: 9,
            expected: 8,
            op: Op::Search,
            ..
        }) => {}
        other => panic!("expected WrongLength for the query, got {other:?}"),
    }
    assert!(matches!(
        index.search(&[f32::NAN; 8], 3).await,
        Err(VectorError::NonFinite {
            subject: Subject::Query,
            ..
        })
    ));

    assert!(matches!(
        VectorIndex::open(&tmp.path().join("zero-dim"), 0, MODEL).await,
        Err(VectorError::InvalidArgument { op: Op::Open, .. })
    ));
    assert!(matches!(
        VectorIndex::open(&tmp.path().join("no-model"), 8, " ").await,
        Err(VectorError::InvalidArgument { op: Op::Open, .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_with_quotes_and_sql_do_not_break_merge_or_delete() {
    let tmp = TempDir::new().expect("tempdir");
    let index = open(&index_dir(&tmp), 8).await;
    let mut rng = Rng::new(31);
    let awkward = [
        "it's",
        "a''b",
        "\"double\"",
        "x') OR ('1'='1",
        "' OR 1=1 --",
        "back\\slash",
        "`tick`",
        "ünïcødé ✓",
    ];
    let mut data: Vec<(String, Vec<f32>)> = awkward
        .iter()
        .map(|id| ((*id).to_owned(), rng.vector(8)))
        .collect();
    data.extend(dataset(&mut rng, "plain", 20, 8));
    index.upsert(&data).await.expect("upsert");
    assert_eq!(index.ids().await.expect("ids"), ids_of(&data));

    // Replacing a quoted id goes through the merge and keeps one row.
    let replacement = rng.vector(8);
    index
        .upsert(&[("it's".to_owned(), replacement.clone())])
        .await
        .expect("re-upsert");
    assert_eq!(index.count().await.expect("count"), data.len());
    let hits = index.search(&replacement, 1).await.expect("search");
    assert_eq!(hits[0].0, "it's");

    // Each delete removes exactly its own row, whatever SQL the id looks like.
    let mut remaining = data.len();
    for id in ["it's", "x') OR ('1'='1", "' OR 1=1 --", "a''b"] {
        index.delete(&[id.to_owned()]).await.expect("delete");
        remaining -= 1;
        assert_eq!(
            index.count().await.expect("count"),
            remaining,
            "after deleting {id:?}"
        );
        assert!(!index.ids().await.expect("ids").contains(&id.to_owned()));
    }
    assert!(
        index
            .ids()
            .await
            .expect("ids")
            .contains(&"\"double\"".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_upserts_from_several_tasks_all_land() {
    let tmp = TempDir::new().expect("tempdir");
    let index = open(&index_dir(&tmp), 16).await;
    let mut rng = Rng::new(37);
    let data = dataset(&mut rng, "m", 200, 16);

    let mut tasks = Vec::new();
    for (t, chunk) in data.chunks(25).enumerate() {
        let index = index.clone();
        let chunk = chunk.to_vec();
        tasks.push(tokio::spawn(async move {
            // Small batches so the tasks interleave.
            for part in chunk.chunks(5) {
                index.upsert(part).await?;
                // Reads run while other tasks write.
                index.search(&part[0].1, 3).await?;
            }
            // Every task also writes the same shared id: one row must result.
            index
                .upsert(&[("shared".to_owned(), vec![t as f32 + 1.0; 16])])
                .await?;
            Ok::<_, VectorError>(())
        }));
    }
    for task in tasks {
        task.await.expect("join").expect("task");
    }

    let mut want = ids_of(&data);
    want.push("shared".to_owned());
    want.sort();
    assert_eq!(index.count().await.expect("count"), 201);
    assert_eq!(index.ids().await.expect("ids"), want);
    let unique: BTreeSet<String> = index.ids().await.expect("ids").into_iter().collect();
    assert_eq!(unique.len(), 201);
    check_exact(&index, &data, &rng.vector(16), 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optimize_builds_an_ann_index_only_above_the_threshold() {
    assert_eq!(DEFAULT_ANN_MIN_ROWS, 10_000);
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let mut options = VectorOptions::new(16, MODEL);
    options.ann_min_rows = 200;
    let index = VectorIndex::open_with(&dir, options).await.expect("open");
    let mut rng = Rng::new(41);
    let mut data = dataset(&mut rng, "m", 150, 16);
    index.upsert(&data).await.expect("upsert");

    // Below the threshold: no ANN index, searches stay exact.
    index.optimize().await.expect("optimize small");
    assert_eq!(index.ann_status().await.expect("status"), None);
    check_exact(&index, &data, &rng.vector(16), 10).await;

    let more = dataset(&mut rng, "n", 100, 16);
    index.upsert(&more).await.expect("upsert");
    data.extend(more);
    index.optimize().await.expect("optimize large");
    let status = index
        .ann_status()
        .await
        .expect("status")
        .expect("ANN index built");
    assert_eq!(status.trained_rows, 250);
    assert_eq!(status.kind, "IvfHnswSq");

    // Approximate now, but on 250 rows with a wide beam it should find nearly everything.
    let mut found = 0;
    let queries = 10;
    for _ in 0..queries {
        let query = rng.vector(16);
        let got: BTreeSet<String> = index
            .search(&query, 10)
            .await
            .expect("search")
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        found += brute_force(&data, &query, 10)
            .into_iter()
            .filter(|(id, _)| got.contains(id))
            .count();
    }
    let recall = found as f64 / (queries * 10) as f64;
    assert!(recall >= 0.9, "recall@10 {recall}");
    let (id, vector) = &data[42];
    let hits = index.search(vector, 1).await.expect("search");
    assert_eq!(&hits[0].0, id);
    assert!(
        (hits[0].1 - 1.0).abs() < 1e-4,
        "refined similarity {}",
        hits[0].1
    );
    // Ranking-only search: the same neighbours in the same order (here, where the quantised
    // distances separate them), with the index's own approximate similarities.
    for _ in 0..queries {
        let query = rng.vector(16);
        let exact = index.search(&query, 10).await.expect("search");
        let ranked = index.search_ranked(&query, 10).await.expect("ranked");
        let same = ranked
            .iter()
            .filter(|(id, _)| exact.iter().any(|(e, _)| e == id))
            .count();
        assert!(
            same >= 9,
            "ranked search shares {same} of 10 with the refined one"
        );
        for (id, similarity) in &ranked {
            let stored = data.iter().find(|(d, _)| d == id).expect("a stored id");
            let want = cosine(&stored.1, &query);
            assert!(
                (similarity - want).abs() < 0.05,
                "approximate similarity {similarity} of {id}, exact {want}"
            );
        }
    }

    // Repeated calls are safe and keep the trained index; new rows are folded in.
    let extra = dataset(&mut rng, "o", 20, 16);
    index.upsert(&extra).await.expect("upsert");
    data.extend(extra);
    index.optimize().await.expect("optimize again");
    let status = index
        .ann_status()
        .await
        .expect("status")
        .expect("still indexed");
    assert_eq!(status.trained_rows, 250);
    assert_eq!(status.unindexed_rows, 0);
    assert_eq!(index.count().await.expect("count"), 270);

    // Far below the threshold again: the ANN index is dropped and search is exact.
    let gone: Vec<String> = data[..200].iter().map(|(id, _)| id.clone()).collect();
    index.delete(&gone).await.expect("delete");
    data.drain(..200);
    index.optimize().await.expect("optimize shrunk");
    assert_eq!(index.ann_status().await.expect("status"), None);
    check_exact(&index, &data, &rng.vector(16), 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_drops_the_ann_index() {
    let tmp = TempDir::new().expect("tempdir");
    let mut options = VectorOptions::new(8, MODEL);
    options.ann_min_rows = 100;
    let index = VectorIndex::open_with(&index_dir(&tmp), options)
        .await
        .expect("open");
    let mut rng = Rng::new(43);
    index
        .upsert(&dataset(&mut rng, "m", 120, 8))
        .await
        .expect("upsert");
    index.optimize().await.expect("optimize");
    assert!(index.ann_status().await.expect("status").is_some());
    index.clear().await.expect("clear");
    assert_eq!(index.ann_status().await.expect("status"), None);
    assert_eq!(index.count().await.expect("count"), 0);
    let data = dataset(&mut rng, "n", 30, 8);
    index.upsert(&data).await.expect("upsert");
    check_exact(&index, &data, &rng.vector(8), 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_opens_of_a_new_directory_share_one_table() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let opens: Vec<_> = (0..6)
        .map(|_| {
            let dir = dir.clone();
            tokio::spawn(async move { VectorIndex::open(&dir, 8, MODEL).await })
        })
        .collect();
    let mut indexes = Vec::new();
    for open in opens {
        indexes.push(open.await.expect("join").expect("open"));
    }
    // Every handle can write: none holds a table that another opener replaced.
    let mut want = Vec::new();
    for (i, index) in indexes.iter().enumerate() {
        let id = format!("h{i}");
        index
            .upsert(&[(id.clone(), vec![1.0; 8])])
            .await
            .unwrap_or_else(|e| panic!("upsert through handle {i}: {e}"));
        want.push(id);
    }
    // A fresh handle sees every row.
    assert_eq!(open(&dir, 8).await.ids().await.expect("ids"), want);
}

/// Two handles opened separately share no lock, like two processes: the table's primary key
/// on `id` is what keeps concurrent inserts of one id from both landing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn separate_handles_upserting_the_same_ids_leave_one_row_each() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let mut rng = Rng::new(47);
    let data = dataset(&mut rng, "m", 40, 8);
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let index = open(&dir, 8).await;
        let data = data.clone();
        tasks.push(tokio::spawn(async move {
            for part in data.chunks(10) {
                index.upsert(part).await?;
            }
            Ok::<_, VectorError>(())
        }));
    }
    for task in tasks {
        task.await.expect("join").expect("task");
    }
    let index = open(&dir, 8).await;
    assert_eq!(index.ids().await.expect("ids"), ids_of(&data));
    assert_eq!(index.count().await.expect("count"), 40);
}

/// Files under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .expect("read file")
                .windows(needle.len())
                .any(|w| w == needle)
            {
                hits.push(path);
            }
        }
    }
    hits
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn erase_leaves_no_copy_of_a_deleted_vector_on_disk() {
    let tmp = TempDir::new().expect("tempdir");
    let dir = index_dir(&tmp);
    let index = open(&dir, 16).await;
    let mut rng = Rng::new(29);
    let data = dataset(&mut rng, "m", 60, 16);
    index.upsert(&data).await.expect("upsert");
    // A later version rewrites nothing: the canary's first file stays in the old version.
    index
        .upsert(&dataset(&mut rng, "n", 20, 16))
        .await
        .expect("second upsert");
    let canary = &data[7];
    let bytes: Vec<u8> = canary.1.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert!(
        !files_containing(&dir, &bytes).is_empty(),
        "the scan must find the stored vector before the deletion"
    );

    index
        .delete(std::slice::from_ref(&canary.0))
        .await
        .expect("delete");
    assert!(
        !files_containing(&dir, &bytes).is_empty(),
        "a plain delete only marks the row: its bytes are still on disk"
    );
    index.erase_deleted().await.expect("erase");
    assert_eq!(files_containing(&dir, &bytes), Vec::<PathBuf>::new());

    // The table still answers, without the erased row, and after a reopen.
    assert_eq!(index.count().await.expect("count"), 79);
    drop(index);
    let index = open(&dir, 16).await;
    assert_eq!(index.count().await.expect("count"), 79);
    assert!(!index.ids().await.expect("ids").contains(&canary.0));
}
