//! Memory search by BM25, over an index this process holds in memory.
//!
//! SQLite stays the only source of truth: this index is derived from the `memories` rows and
//! brought up to date before every search from `memory_changes`, a log that triggers fill on
//! every insert, every change to a memory's text or status, and every delete (migration
//! 0007). So each process that opens the data directory (desktop app, gateway, CLI) searches
//! exactly what is committed, and no writer can forget to update the index.
//!
//! Why not SQLite FTS5, which this replaced: its `bm25()` scores every row any query term
//! reaches before it keeps the best k, and with the per-query cost of its virtual table that
//! made an OR query linear in the store (221 ms at 100k memories). Here the postings of the
//! query's informative terms are summed into a dense score array. Why not tantivy: one writer
//! per index directory (the desktop app and `echod` share a data directory) and a commit per
//! change, and it has no way to follow another process's writes.
//!
//! The scoring is FTS5's `bm25()` (k1 = 1.2, b = 0.75, IDF floored at 1e-6), over a memory's
//! own text (its content, slot and value; weight 1) and its search-only context (weight
//! [`CONTEXT_WEIGHT`]). Text is split where FTS5's `unicode61` tokenizer splits it, lower-cased
//! with diacritics removed; runs of CJK characters become bigrams; English words are stemmed
//! (Snowball English, the successor of the Porter stemmer FTS5 used).

use crate::error::{Db, MemoryError};
use crate::model::MemoryStatus;
use echo_core::text::{fts_query_terms, fts_terms};
use rust_stemmers::{Algorithm, Stemmer};
use sqlx::Row;
use sqlx::sqlite::SqlitePool;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::{Arc, LazyLock, PoisonError, RwLock};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// BM25 weight of a memory's surrounding context relative to its own text.
const CONTEXT_WEIGHT: f64 = 0.5;
/// BM25 term-frequency saturation (FTS5's value).
const K1: f64 = 1.2;
/// BM25 length normalisation (FTS5's value).
const B: f64 = 0.75;
/// Store size from which terms in half the memories or more are left out of a query.
const PRUNE_FROM: u32 = 64;
/// Store size from which a search is scored on a blocking thread (see [`TextIndex::search`]);
/// below it, scoring is cheap enough to stay on the caller's task (a guess, not measured).
const SCORE_ELSEWHERE_FROM: u32 = 5_000;
/// Rows per `IN (…)` list when re-reading changed memories.
const READ_CHUNK: usize = 500;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The index terms of `text` in order, repeats kept: what the index stores of it (lower-cased,
/// diacritics folded, English words stemmed, CJK runs as bigrams). Public so that a deletion
/// test can look for each of them on disk.
pub fn tokens(text: &str) -> Vec<String> {
    fts_terms(text)
        .split(|c: char| !(c.is_alphanumeric() || is_combining_mark(c)))
        .filter(|w| !w.is_empty())
        .map(normalize)
        .filter(|w| !w.is_empty())
        .collect()
}

/// One word as it is indexed: lower-cased, without diacritics, stemmed when it is English.
fn normalize(word: &str) -> String {
    let lower = word.to_lowercase();
    let folded = if lower.is_ascii() {
        lower
    } else {
        // Decompose, drop the marks, recompose (so Hangul syllables come back whole).
        lower
            .nfd()
            .filter(|c| !is_combining_mark(*c))
            .nfc()
            .collect()
    };
    if folded.len() > 2 && folded.bytes().all(|b| b.is_ascii_lowercase()) {
        STEMMER.stem(&folded).into_owned()
    } else {
        folded
    }
}

/// The distinct search terms of a query: its meaningful words (stop words out, CJK as
/// bigrams) as they are indexed.
fn query_terms(query: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    fts_query_terms(query)
        .iter()
        .map(|w| normalize(w))
        .filter(|w| !w.is_empty() && seen.insert(w.clone()))
        .collect()
}

/// What of a memory row the index reads.
const INDEXED_COLUMNS: &str = "id, content, slot, value, context, status";

/// The text a memory is found by: its content, slot and value (`_` read as a space).
fn own_text(content: &str, slot: Option<&str>, value: Option<&str>) -> String {
    [Some(content), slot.map(|s| s.trim_matches('_')), value]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('_', " ")
}

/// One memory as the index sees it.
struct IndexedRow {
    id: String,
    status: Option<MemoryStatus>,
    text: String,
    context: Option<String>,
}

impl IndexedRow {
    fn read(r: &sqlx::sqlite::SqliteRow) -> Self {
        let content: String = r.get("content");
        let slot: Option<String> = r.get("slot");
        let value: Option<String> = r.get("value");
        IndexedRow {
            id: r.get("id"),
            status: MemoryStatus::parse(r.get::<&str, _>("status")),
            text: own_text(&content, slot.as_deref(), value.as_deref()),
            context: r.get("context"),
        }
    }
}

/// A term's postings. Postings of removed memories stay until the next compaction; `df`
/// counts only live ones.
#[derive(Default)]
struct Term {
    df: u32,
    postings: Vec<Posting>,
}

#[derive(Clone, Copy)]
struct Posting {
    doc: u32,
    /// Weighted occurrences: those in the memory's own text, plus [`CONTEXT_WEIGHT`] times
    /// those in its context (exact in an f32: small integers and halves). Always > 0.
    freq: f32,
}

struct Doc {
    id: String,
    /// Its distinct terms (empty once removed).
    terms: Box<[u32]>,
}

/// What scoring reads of a document, kept apart from [`Doc`] so the hot loop touches 8
/// bytes per posting's document.
#[derive(Clone, Copy)]
struct Meta {
    /// Tokens in text and context together (FTS5's row length).
    len: u32,
    /// Bit `1 << status` of its status; 0 once removed.
    status_bit: u8,
}

fn status_bit(status: MemoryStatus) -> u8 {
    1 << (status as u8)
}

/// The index proper (no I/O).
#[derive(Default)]
struct Index {
    /// The last `memory_changes.seq` applied (`None`: never built).
    seq: Option<i64>,
    vocab: HashMap<String, u32>,
    terms: Vec<Term>,
    docs: Vec<Doc>,
    /// Per document, in step with `docs`.
    meta: Vec<Meta>,
    /// Memory id → its live document.
    by_id: HashMap<String, u32>,
    live: u32,
    dead: u32,
    total_len: u64,
}

impl Index {
    fn term_id(&mut self, word: String) -> u32 {
        if let Some(&id) = self.vocab.get(&word) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.terms.push(Term::default());
        self.vocab.insert(word, id);
        id
    }

    /// Indexes one memory, replacing what was indexed for it before; a deleted one is removed.
    fn put(&mut self, row: IndexedRow) {
        self.remove(&row.id);
        let Some(status) = row.status.filter(|s| *s != MemoryStatus::Deleted) else {
            return;
        };
        let mut counts: HashMap<u32, (u16, u16)> = HashMap::new();
        let mut len = 0u32;
        for word in tokens(&row.text) {
            let t = self.term_id(word);
            let c = counts.entry(t).or_default();
            c.0 = c.0.saturating_add(1);
            len = len.saturating_add(1);
        }
        for word in row.context.as_deref().map(tokens).unwrap_or_default() {
            let t = self.term_id(word);
            let c = counts.entry(t).or_default();
            c.1 = c.1.saturating_add(1);
            len = len.saturating_add(1);
        }
        let doc = self.docs.len() as u32;
        let mut terms: Vec<u32> = counts.keys().copied().collect();
        terms.sort_unstable();
        for &t in &terms {
            let (text, context) = counts[&t];
            let term = &mut self.terms[t as usize];
            term.df += 1;
            let freq = f64::from(text) + CONTEXT_WEIGHT * f64::from(context);
            term.postings.push(Posting {
                doc,
                freq: freq as f32,
            });
        }
        self.by_id.insert(row.id.clone(), doc);
        self.docs.push(Doc {
            id: row.id,
            terms: terms.into_boxed_slice(),
        });
        self.meta.push(Meta {
            len,
            status_bit: status_bit(status),
        });
        self.live += 1;
        self.total_len += u64::from(len);
    }

    fn remove(&mut self, id: &str) {
        let Some(doc) = self.by_id.remove(id) else {
            return;
        };
        let d = &mut self.docs[doc as usize];
        for &t in d.terms.iter() {
            self.terms[t as usize].df -= 1;
        }
        d.terms = Box::new([]);
        let m = &mut self.meta[doc as usize];
        m.status_bit = 0;
        self.live -= 1;
        self.dead += 1;
        self.total_len -= u64::from(m.len);
        if self.dead > 1024 && self.dead > self.live / 4 {
            self.compact();
        }
    }

    /// Drops the postings and documents of removed memories.
    fn compact(&mut self) {
        let mut renumber = vec![u32::MAX; self.docs.len()];
        let mut docs = Vec::with_capacity(self.live as usize);
        let mut meta = Vec::with_capacity(self.live as usize);
        let old_meta = std::mem::take(&mut self.meta);
        for (old, (d, m)) in std::mem::take(&mut self.docs)
            .into_iter()
            .zip(old_meta)
            .enumerate()
        {
            if m.status_bit != 0 {
                renumber[old] = docs.len() as u32;
                docs.push(d);
                meta.push(m);
            }
        }
        for term in &mut self.terms {
            term.postings.retain_mut(|p| {
                p.doc = renumber[p.doc as usize];
                p.doc != u32::MAX
            });
        }
        for slot in self.by_id.values_mut() {
            *slot = renumber[*slot as usize];
        }
        self.docs = docs;
        self.meta = meta;
        self.dead = 0;
    }

    /// The best `limit` memories of the given statuses for `terms`, by BM25 (higher is better).
    fn search(
        &self,
        terms: &[String],
        statuses: &[MemoryStatus],
        limit: usize,
    ) -> Vec<(String, f64)> {
        if self.live == 0 || limit == 0 {
            return Vec::new();
        }
        let n = f64::from(self.live);
        let avg_len = (self.total_len as f64 / n).max(1.0);
        let mut found: Vec<(&Term, f64)> = terms
            .iter()
            .filter_map(|w| self.vocab.get(w))
            .map(|&t| &self.terms[t as usize])
            .filter(|t| t.df > 0)
            .map(|t| {
                let df = f64::from(t.df);
                (t, ((n - df + 0.5) / (df + 0.5)).ln())
            })
            .collect();
        // FTS5 floors the IDF of a term in half the memories or more at 1e-6. In a store of
        // any size such a term hardly moves the ranking but its postings would be most of the
        // work, so it is left out, unless nothing else is left (then the rarest is searched).
        let informative = found.iter().any(|(_, idf)| *idf > 0.0);
        if self.live >= PRUNE_FROM && informative {
            found.retain(|(_, idf)| *idf > 0.0);
        } else if self.live >= PRUNE_FROM {
            found.sort_by_key(|(t, _)| t.df);
            found.truncate(1);
        }
        for f in &mut found {
            f.1 = f.1.max(1e-6);
        }
        let wanted = statuses.iter().fold(0u8, |bits, s| bits | status_bit(*s));
        // Per posting, BM25 is idf·f·(k1+1) / (f + k1·(1 − b + b·len/avg_len)): the factors
        // that do not depend on the posting are taken out of the loop.
        let (norm_base, norm_per_token) = (K1 * (1.0 - B), K1 * B / avg_len);
        SCRATCH.with_borrow_mut(|scratch| {
            let Scratch {
                scores,
                touched,
                used,
            } = scratch;
            // Clear what the previous search left (also after one that did not finish).
            for &doc in &touched[..*used] {
                scores[doc as usize] = 0.0;
            }
            *used = 0;
            if scores.len() < self.docs.len() {
                scores.resize(self.docs.len(), 0.0);
            }
            // Room for every document and one more, so that each posting can write its
            // document at the end of the list and only move the end on a first touch, without
            // a branch.
            if touched.len() <= self.docs.len() {
                touched.resize(self.docs.len() + 1, 0);
            }
            for (term, idf) in found {
                let weight = idf * (K1 + 1.0);
                for p in &term.postings {
                    let m = self.meta[p.doc as usize];
                    if m.status_bit & wanted == 0 {
                        continue;
                    }
                    let freq = f64::from(p.freq);
                    let norm = norm_base + norm_per_token * f64::from(m.len);
                    let s = &mut scores[p.doc as usize];
                    // A document enters the list on its first posting (its score was 0).
                    touched[*used] = p.doc;
                    *used += usize::from(*s == 0.0);
                    *s += weight * freq / (freq + norm);
                }
            }
            let touched = &touched[..*used];
            // The best `limit` in one pass: a heap whose top is the worst kept so far.
            let mut best: BinaryHeap<Ranked> = BinaryHeap::with_capacity(limit.min(touched.len()));
            for &doc in touched {
                let candidate = Ranked {
                    score: scores[doc as usize],
                    doc,
                };
                if best.len() < limit {
                    best.push(candidate);
                } else if let Some(mut worst) = best.peek_mut()
                    && candidate < *worst
                {
                    *worst = candidate;
                }
            }
            best.into_sorted_vec()
                .into_iter()
                .map(|r| (self.docs[r.doc as usize].id.clone(), r.score))
                .collect()
        })
    }
}

/// Per-thread working memory of [`Index::search`], kept so that a search over a large store
/// does not allocate and zero arrays the size of the store every time.
#[derive(Default)]
struct Scratch {
    /// A score per document, non-zero only for the first `used` documents of `touched`.
    scores: Vec<f64>,
    /// The documents the last search touched (the first `used` entries).
    touched: Vec<u32>,
    used: usize,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// A scored document, ordered best first: higher score, then lower document number (the
/// order results are returned in), so a max-heap of them has the worst at its top.
#[derive(Clone, Copy)]
struct Ranked {
    score: f64,
    doc: u32,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then(self.doc.cmp(&other.doc))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// The memories' BM25 index, shared by every clone of a [`crate::MemoryStore`].
#[derive(Default)]
pub(crate) struct TextIndex {
    /// One catch-up at a time (held across the database reads).
    refresh: tokio::sync::Mutex<()>,
    index: RwLock<Index>,
}

impl std::fmt::Debug for TextIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let index = self.read();
        f.debug_struct("TextIndex")
            .field("memories", &index.live)
            .field("seq", &index.seq)
            .finish()
    }
}

impl TextIndex {
    /// BM25 search for `query` among memories of `statuses` (active when empty): ids with
    /// scores, best first.
    ///
    /// In a large store the scoring runs on a blocking thread: it is a millisecond or more of
    /// CPU that would otherwise hold the caller's task, and with it whatever that task runs
    /// alongside (recall's vector search), so the two would take turns instead of sharing
    /// the cores.
    pub(crate) async fn search(
        self: &Arc<Self>,
        pool: &SqlitePool,
        query: &str,
        statuses: &[MemoryStatus],
        limit: usize,
    ) -> Result<Vec<(String, f64)>, MemoryError> {
        let terms = query_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        self.catch_up(pool).await?;
        let statuses = if statuses.is_empty() {
            vec![MemoryStatus::Active]
        } else {
            statuses.to_vec()
        };
        self.score(terms, statuses, limit).await
    }

    /// Scores the search: inline in a small store, on a blocking thread from
    /// [`SCORE_ELSEWHERE_FROM`] memories.
    async fn score(
        self: &Arc<Self>,
        terms: Vec<String>,
        statuses: Vec<MemoryStatus>,
        limit: usize,
    ) -> Result<Vec<(String, f64)>, MemoryError> {
        {
            let index = self.read();
            if index.live < SCORE_ELSEWHERE_FROM {
                return Ok(index.search(&terms, &statuses, limit));
            }
        }
        let this = Arc::clone(self);
        tokio::task::spawn_blocking(move || this.read().search(&terms, &statuses, limit))
            .await
            .map_err(|e| MemoryError::State(format!("the memory search failed: {e}")))
    }

    /// Memories indexed.
    pub(crate) fn live(&self) -> usize {
        self.read().live as usize
    }

    /// The index, for reading.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies what changed in the database since this index last looked; builds the index
    /// from every memory the first time, or when the change log no longer reaches back to it.
    pub(crate) async fn catch_up(&self, pool: &SqlitePool) -> Result<(), MemoryError> {
        let _one_at_a_time = self.refresh.lock().await;
        let seen = self.read().seq;
        let (first, last): (Option<i64>, Option<i64>) = sqlx::query_as(
            "SELECT (SELECT MIN(seq) FROM memory_changes), (SELECT MAX(seq) FROM memory_changes)",
        )
        .fetch_one(pool)
        .await
        .db("reading the memory change log")?;
        let last = last.unwrap_or(0);
        match seen {
            Some(seen) if seen >= last => Ok(()),
            Some(seen) if first.is_none_or(|first| first <= seen + 1) => {
                self.apply_changes(pool, seen, last).await
            }
            _ => self.rebuild(pool, last).await,
        }
    }

    async fn apply_changes(
        &self,
        pool: &SqlitePool,
        seen: i64,
        last: i64,
    ) -> Result<(), MemoryError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT memory_id FROM memory_changes WHERE seq > ? AND seq <= ?",
        )
        .bind(seen)
        .bind(last)
        .fetch_all(pool)
        .await
        .db("reading the memory change log")?;
        let mut rows = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(READ_CHUNK) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let query = format!("SELECT {INDEXED_COLUMNS} FROM memories WHERE id IN ({marks})");
            let mut q = sqlx::query(sqlx::AssertSqlSafe(query));
            for id in chunk {
                q = q.bind(id);
            }
            rows.extend(
                q.fetch_all(pool)
                    .await
                    .db("reading changed memories")?
                    .iter()
                    .map(IndexedRow::read),
            );
        }
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        // Rows gone from the table entirely are removed too.
        let present: HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        for id in ids.iter().filter(|id| !present.contains(id.as_str())) {
            index.remove(id);
        }
        for row in rows {
            index.put(row);
        }
        index.seq = Some(last);
        Ok(())
    }

    async fn rebuild(&self, pool: &SqlitePool, last: i64) -> Result<(), MemoryError> {
        // The log position is read before the rows, so nothing committed in between is
        // missed (it is applied again on the next catch-up, which is harmless).
        let rows: Vec<IndexedRow> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {INDEXED_COLUMNS} FROM memories WHERE status != 'deleted' ORDER BY rowid"
        )))
        .fetch_all(pool)
        .await
        .db("reading memories to index")?
        .iter()
        .map(IndexedRow::read)
        .collect();
        let fresh = tokio::task::spawn_blocking(move || {
            let mut index = Index::default();
            for row in rows {
                index.put(row);
            }
            index.seq = Some(last);
            index
        })
        .await
        .map_err(|e| MemoryError::State(format!("building the memory search index failed: {e}")))?;
        *self.index.write().unwrap_or_else(PoisonError::into_inner) = fresh;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
