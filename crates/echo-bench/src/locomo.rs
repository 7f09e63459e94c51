//! The LoCoMo retrieval benchmark: index each conversation's turns through the real memory
//! index (write path, BM25 index, embedder and LanceDB), ask every question of categories
//! 1–4, and measure whether the evidence turns come back in the top k.
//!
//! Each turn becomes an episodic memory whose text is `speaker: text` (plus its image caption),
//! whose search-only context is the turns around it in the same session — a general property
//! of conversations (an answer often makes sense only with the question before it), nothing
//! specific to these files — and whose `valid_from` is when its session took place (the write
//! path's default for a memory is when it was said; here that is the session's date).

use echo_memory::echo_embed::Embedder;
use echo_memory::{
    MemoryActor, MemorySource, MemoryStore, MemoryTier, NewMemory, RecallOptions, SemanticIndex,
    WriteOptions,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Ranks reported.
const KS: [usize; 3] = [5, 10, 20];

/// How the benchmark runs.
pub struct LocomoOptions {
    /// LoCoMo-format JSON files.
    pub files: Vec<PathBuf>,
    /// Embedder for the vector side; `None` = BM25 only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Neighbouring turns on each side indexed as context.
    pub context_turns: usize,
    /// Whether each turn is written with its session's time (false: as if said now, so the
    /// dates questions name match no memory).
    pub dated: bool,
    /// Memory settings (fusion weights and the like).
    pub memory: echo_core::config::MemoryConfig,
}

/// Pooled recall over all questions of all files.
#[derive(Debug, Serialize)]
pub struct LocomoReport {
    /// Questions asked (categories 1–4 with at least one valid evidence id).
    pub questions: usize,
    /// Share of questions with at least one evidence turn in the top 5.
    #[serde(rename = "recall_any@5")]
    pub any5: f64,
    /// … top 10.
    #[serde(rename = "recall_any@10")]
    pub any10: f64,
    /// … top 20.
    #[serde(rename = "recall_any@20")]
    pub any20: f64,
    /// Share of questions with every evidence turn in the top 5.
    #[serde(rename = "recall_all@5")]
    pub all5: f64,
    /// … top 10.
    #[serde(rename = "recall_all@10")]
    pub all10: f64,
    /// … top 20.
    #[serde(rename = "recall_all@20")]
    pub all20: f64,
    /// Questions that name a date ("on 9 November, 2022", "in January 2022").
    pub dated_questions: usize,
    /// Share of those with at least one evidence turn in the top 10.
    #[serde(rename = "dated_recall_any@10")]
    pub dated_any10: f64,
}

struct Turn {
    dia_id: String,
    text: String,
    /// When its session took place (RFC 3339), if the file says.
    said_at: Option<String>,
}

/// Runs the benchmark.
pub async fn locomo(opts: &LocomoOptions) -> Result<LocomoReport, String> {
    let mut any = [0usize; 3];
    let mut all = [0usize; 3];
    let mut questions = 0usize;
    let (mut dated, mut dated_hits) = (0usize, 0usize);
    let today = chrono::Local::now().date_naive();
    for file in &opts.files {
        let (sessions, qa) = load(file)?;
        let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
        let store = echo_core::Store::open_in(dir.path())
            .await
            .map_err(|e| e.to_string())?;
        let memory = MemoryStore::new(store.pool().clone(), opts.memory.clone());
        let known = index(&memory, &sessions, opts).await?;
        let semantic = match &opts.embedder {
            Some(e) => {
                let (index, _) =
                    SemanticIndex::open(&dir.path().join("vectors"), e.clone(), &memory)
                        .await
                        .map_err(|e| e.to_string())?;
                index.flush(&memory).await.map_err(|e| e.to_string())?;
                Some(index)
            }
            None => None,
        };
        for q in qa {
            let evidence: HashSet<String> = q
                .evidence
                .into_iter()
                .filter(|id| known.contains_key(id))
                .collect();
            if evidence.is_empty() {
                continue;
            }
            questions += 1;
            let names_a_date = !echo_memory::when::periods(&q.question, today).is_empty();
            let neighbours = semantic.as_ref().map(|s| s as &dyn echo_memory::Neighbours);
            let opts = RecallOptions {
                k: KS[2],
                session_id: None,
                include_inactive: false,
                project_id: None,
            };
            let (found, _) = memory
                .recall(&q.question, &opts, neighbours)
                .await
                .map_err(|e| e.to_string())?;
            let ranked: Vec<String> = found
                .into_iter()
                .filter_map(|r| r.memory.source_message_id)
                .collect();
            for (i, k) in KS.iter().enumerate() {
                let top: HashSet<&String> = ranked.iter().take(*k).collect();
                let hits = evidence.iter().filter(|e| top.contains(e)).count();
                if hits > 0 {
                    any[i] += 1;
                }
                if hits == evidence.len() {
                    all[i] += 1;
                }
                if *k == 10 && names_a_date {
                    dated += 1;
                    dated_hits += usize::from(hits > 0);
                }
            }
        }
        store.close().await;
    }
    let ratio = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let share = |n: usize| ratio(n, questions);
    Ok(LocomoReport {
        questions,
        any5: share(any[0]),
        any10: share(any[1]),
        any20: share(any[2]),
        all5: share(all[0]),
        all10: share(all[1]),
        all20: share(all[2]),
        dated_questions: dated,
        dated_any10: ratio(dated_hits, dated),
    })
}

/// Writes every turn through the write path; returns dia_id → memory id.
async fn index(
    memory: &MemoryStore,
    sessions: &[Vec<Turn>],
    opts: &LocomoOptions,
) -> Result<HashMap<String, String>, String> {
    let context_turns = opts.context_turns;
    let mut known = HashMap::new();
    for session in sessions {
        for (i, turn) in session.iter().enumerate() {
            let lo = i.saturating_sub(context_turns);
            let hi = (i + context_turns + 1).min(session.len());
            let context: Vec<&str> = (lo..hi)
                .filter(|j| *j != i)
                .map(|j| session[j].text.as_str())
                .collect();
            let draft = NewMemory {
                tier: Some(MemoryTier::Episodic),
                kind: Some("turn".into()),
                content: turn.text.clone(),
                source: Some(MemorySource::Consolidated),
                importance: Some(0.5),
                source_message_id: Some(turn.dia_id.clone()),
                context: (!context.is_empty()).then(|| context.join("\n")),
                valid_from: turn.said_at.clone().filter(|_| opts.dated),
                ..Default::default()
            };
            let outcome = memory
                .remember(draft, WriteOptions::plain(MemoryActor::Import))
                .await
                .map_err(|e| format!("turn {}: {e}", turn.dia_id))?;
            known.insert(turn.dia_id.clone(), outcome.memory.id);
        }
    }
    Ok(known)
}

struct Question {
    question: String,
    evidence: Vec<String>,
}

/// Reads one LoCoMo file: sessions in order, and the questions of categories 1–4.
fn load(path: &Path) -> Result<(Vec<Vec<Turn>>, Vec<Question>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let conv = doc.get("conversation").unwrap_or(&doc);
    let obj = conv
        .as_object()
        .ok_or_else(|| format!("{}: no conversation object", path.display()))?;
    let mut numbered: Vec<(u32, &Vec<Value>)> = obj
        .iter()
        .filter_map(|(k, v)| {
            let n = k.strip_prefix("session_")?.parse::<u32>().ok()?;
            Some((n, v.as_array()?))
        })
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    let sessions = numbered
        .into_iter()
        .map(|(n, turns)| {
            let said_at = obj
                .get(&format!("session_{n}_date_time"))
                .and_then(Value::as_str)
                .and_then(session_time);
            turns
                .iter()
                .filter_map(|t| {
                    let dia_id = normalize_id(t.get("dia_id")?.as_str()?)?;
                    let speaker = t.get("speaker").and_then(Value::as_str).unwrap_or("?");
                    let mut text = format!(
                        "{speaker}: {}",
                        t.get("text").and_then(Value::as_str).unwrap_or("")
                    );
                    if let Some(caption) = t.get("blip_caption").and_then(Value::as_str) {
                        text.push_str(&format!(" [image: {caption}]"));
                    }
                    Some(Turn {
                        dia_id,
                        text,
                        said_at: said_at.clone(),
                    })
                })
                .collect()
        })
        .collect();
    let qa = doc
        .get("qa")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: no qa list", path.display()))?
        .iter()
        .filter(|q| matches!(q.get("category").and_then(Value::as_u64), Some(1..=4)))
        .filter_map(|q| {
            let question = q.get("question")?.as_str()?.to_string();
            let evidence = q
                .get("evidence")
                .and_then(Value::as_array)
                .map(|ev| {
                    ev.iter()
                        .filter_map(Value::as_str)
                        .flat_map(evidence_ids)
                        .collect()
                })
                .unwrap_or_default();
            Some(Question { question, evidence })
        })
        .collect();
    Ok((sessions, qa))
}

/// A session's `1:56 pm on 8 May, 2023` as an RFC 3339 time (read as local time).
fn session_time(s: &str) -> Option<String> {
    let t = chrono::NaiveDateTime::parse_from_str(s.trim(), "%I:%M %p on %d %B, %Y").ok()?;
    let t = t.and_local_timezone(chrono::Local).earliest()?;
    Some(echo_core::time::to_rfc3339(t.with_timezone(&chrono::Utc)))
}

/// Every `D<session>:<turn>` in an evidence string, normalised (`D30:05` → `D30:5`).
fn evidence_ids(s: &str) -> Vec<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'D' {
            let digits = |from: usize| {
                bytes[from..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count()
            };
            let a = digits(i + 1);
            if a > 0 && bytes.get(i + 1 + a) == Some(&b':') {
                let b = digits(i + 2 + a);
                if b > 0 {
                    if let Some(id) = normalize_id(&s[i..i + 2 + a + b]) {
                        out.push(id);
                    }
                    i += 2 + a + b;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

fn normalize_id(id: &str) -> Option<String> {
    let rest = id.trim().strip_prefix('D')?;
    let (a, b) = rest.split_once(':')?;
    Some(format!(
        "D{}:{}",
        a.parse::<u32>().ok()?,
        b.parse::<u32>().ok()?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_ids_are_found_in_malformed_strings() {
        assert_eq!(evidence_ids("D8:6; D9:17"), ["D8:6", "D9:17"]);
        assert_eq!(evidence_ids("D30:05"), ["D30:5"]);
        assert!(evidence_ids("D:11:26").is_empty());
        assert_eq!(evidence_ids("D1:3"), ["D1:3"]);
    }

    #[test]
    fn session_times_are_read_as_local_times() {
        let local = |s: &str| {
            let t = session_time(s).expect(s);
            chrono::DateTime::parse_from_rfc3339(&t)
                .expect("RFC 3339")
                .with_timezone(&chrono::Local)
                .naive_local()
                .to_string()
        };
        assert_eq!(local("1:56 pm on 8 May, 2023"), "2023-05-08 13:56:00");
        assert_eq!(
            local("10:04 am on 19 December, 2023"),
            "2023-12-19 10:04:00"
        );
        assert_eq!(session_time("sometime in May"), None);
    }
}
