//! The memory tools the model may call: `memory_note` (the session's working memory, a
//! scratchpad for the current task) and `memory_recall` (search long-term memory). The model
//! never writes long-term memory directly: that happens after the turn, through extraction.

use crate::semantic::SemanticSlot;
use async_trait::async_trait;
use echo_core::TemporaryChat;
use echo_core::vocab::MemoryReadKind;
use echo_memory::{MemoryActor, MemorySource, MemoryStore, MemoryTier, NewMemory, WriteOptions};
use echo_tools::{Risk, ToolContext, ToolError, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether tool `name` is offered in a chat that is `temporary`, with "ask before
/// remembering" on or off (`asks`): no temporary chat keeps a note, and a sealed one reads no
/// memory either; while the person keeps or discards what is remembered, the model notes
/// nothing on its own.
pub(crate) fn offered_in(temporary: Option<TemporaryChat>, asks: bool, name: &str) -> bool {
    if name == MemoryNote::NAME {
        return temporary.is_none() && !asks;
    }
    name != MemoryRecall::NAME || !matches!(temporary, Some(TemporaryChat::Sealed))
}

/// `memory_note`.
pub(crate) struct MemoryNote {
    store: MemoryStore,
    /// `[memory] ask_before_remembering` as it is now (the engine's flag).
    asks: Arc<AtomicBool>,
}

impl MemoryNote {
    pub(crate) fn new(store: MemoryStore, asks: Arc<AtomicBool>) -> MemoryNote {
        MemoryNote { store, asks }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoteArgs {
    /// What to keep in mind for the rest of this conversation (a constraint, a finding, an open item).
    note: String,
}

#[async_trait]
impl TypedTool for MemoryNote {
    type Args = NoteArgs;
    const NAME: &'static str = "memory_note";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::prompts::MEMORY_NOTE.text()
    }
    async fn call(&self, args: NoteArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if ctx.temporary {
            return Err(ToolError::Failed(
                "this is a temporary chat: nothing is noted or remembered".into(),
            ));
        }
        if self.asks.load(Ordering::Relaxed) {
            return Err(ToolError::Failed(
                "the person keeps or discards what is remembered (\"ask before remembering\"): \
                 nothing is noted"
                    .into(),
            ));
        }
        let draft = NewMemory {
            tier: Some(MemoryTier::Working),
            kind: Some("note".into()),
            content: args.note,
            source: Some(MemorySource::Inferred),
            scope: Some(format!("session:{}", ctx.session_id)),
            source_session_id: Some(ctx.session_id.clone()),
            ..Default::default()
        };
        let outcome = self
            .store
            .remember(draft, WriteOptions::plain(MemoryActor::Tool))
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        Ok(format!("noted ({})", outcome.memory.id))
    }
}

/// `memory_recall`.
pub(crate) struct MemoryRecall {
    pub store: MemoryStore,
    /// Used when open; a recall does not open it (the turn's own recall did, if it could).
    pub semantic: Arc<SemanticSlot>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecallArgs {
    /// What to look for.
    query: String,
    /// How many memories (default 5).
    #[schemars(range(min = 1, max = 20))]
    limit: Option<usize>,
}

#[async_trait]
impl TypedTool for MemoryRecall {
    type Args = RecallArgs;
    const NAME: &'static str = "memory_recall";
    const RISK: Risk = Risk::ReadOnly;

    fn description(&self) -> &str {
        crate::prompts::MEMORY_RECALL.text()
    }
    async fn call(&self, args: RecallArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let scope = (ctx.session_id.as_str(), ctx.project_id.as_deref());
        let found = self
            .semantic
            .recall(&self.store, &args.query, args.limit.unwrap_or(5), scope)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        if found.is_empty() {
            return Ok("no matching memories".into());
        }
        // What the model reads is injected: it counts as a use (not from a temporary chat,
        // which leaves memory as it was).
        // It is also a read of the turn's (the read log: "used in N answers").
        let ids: Vec<String> = found.iter().map(|r| r.memory.id.clone()).collect();
        if !ctx.temporary {
            if let Err(e) = self.store.reinforce(&ids, chrono::Utc::now()).await {
                tracing::warn!(error = %e, "cannot reinforce recalled memories");
            }
            let reads: Vec<(String, MemoryReadKind)> = ids
                .into_iter()
                .map(|id| (id, MemoryReadKind::Tool))
                .collect();
            let session = Some(ctx.session_id.as_str());
            if let Err(e) = self.store.record_reads(&reads, &ctx.turn_id, session).await {
                tracing::warn!(error = %e, "cannot log the memories the recall tool read");
            }
        }
        Ok(found
            .iter()
            .map(|r| {
                format!(
                    "- {} ({}; {}; noted {})",
                    r.memory.content,
                    r.memory.kind,
                    r.memory.source,
                    r.memory.created_at.get(..10).unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }
}
