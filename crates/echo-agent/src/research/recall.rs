//! The person's own memories as a source of the research graph: what the recall node (in
//! `nodes.rs`) asks long-term memory for a sub-question (ranked as the `memory_recall` tool
//! ranks), how the memories are shown to the notes call, and the notes that cite them
//! (`memory:<id>`, learned when the memory was), whose memories then count as used.

use super::Run;
use super::state::Note;
use echo_core::TemporaryChat;
use echo_core::vocab::MemoryReadKind;
use echo_memory::Memory;

/// Most memories offered to the notes call per sub-question.
const MEMORIES_PER_QUESTION: usize = 5;

/// The memories that best match `query`, best first; none in a sealed temporary chat.
pub(super) async fn found(run: &Run<'_>, query: &str) -> Result<Vec<Memory>, String> {
    if run.asked.temporary == Some(TemporaryChat::Sealed) {
        return Ok(Vec::new());
    }
    let scope = (run.session.as_str(), run.asked.project_id());
    let found = run
        .engine
        .semantic
        .recall(&run.engine.memory, query, MEMORIES_PER_QUESTION, scope)
        .await
        .map_err(|e| e.to_string())?;
    Ok(found.into_iter().map(|r| r.memory).collect())
}

/// The memories as the notes call reads them: a source like a page.
pub(super) fn as_source(memories: &[Memory]) -> String {
    let list: Vec<String> = memories
        .iter()
        .map(|m| format!("- {}", m.content))
        .collect();
    format!(
        "Memories (what the person told you before):\n{}",
        list.join("\n")
    )
}

/// Notes from the kept quotes, each citing the memory it was copied from.
pub(super) fn cite(memories: &[Memory], pairs: Vec<(String, String)>) -> Vec<Note> {
    pairs
        .into_iter()
        .filter_map(|(quote, supports)| {
            let quoted = words(&quote);
            let memory = memories
                .iter()
                .find(|m| words(&m.content).contains(&quoted))?;
            Some(Note {
                quote,
                supports,
                url: format!("memory:{}", memory.id),
                title: String::new(),
                retrieved_at: memory.created_at.clone(),
            })
        })
        .collect()
}

/// Counts the memories `kept` cites as used (what the model read went into an answer), and
/// records the reads in their log; a temporary chat leaves memory as it was.
pub(super) async fn reinforce(run: &Run<'_>, kept: &[Note]) {
    if run.asked.temporary.is_some() {
        return;
    }
    let used: Vec<String> = kept
        .iter()
        .filter_map(|n| n.url.strip_prefix("memory:").map(String::from))
        .collect();
    if used.is_empty() {
        return;
    }
    let memory = &run.engine.memory;
    if let Err(e) = memory.reinforce(&used, chrono::Utc::now()).await {
        tracing::warn!(error = %e, "cannot reinforce the memories research cited");
    }
    let reads: Vec<(String, MemoryReadKind)> = used
        .into_iter()
        .map(|id| (id, MemoryReadKind::Research))
        .collect();
    let session = run.session.to_string();
    let recorded = memory
        .record_reads(&reads, run.turn.as_str(), Some(&session))
        .await;
    if let Err(e) = recorded {
        tracing::warn!(error = %e, "the memories' read log was not written");
    }
}

/// `text` with its runs of white space made single spaces, for comparing quotes.
pub(super) fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
