//! The memory blocks of a turn's request: the session's snapshot and what the message
//! recalls (in a project's conversation, its memories beside the global ones), what the
//! trace and the turn's events show of them, and the read log that records them.

use super::TurnRef;
use crate::engine::Engine;
use crate::events::TurnEvents;
use crate::memory;
use crate::pipeline::context::MemoryBlocks;
use crate::turn::request::TurnRequest;
use crate::wire::{RecalledMemory, TurnEvent};
use echo_core::TemporaryChat;
use echo_core::trace::{Span, SpanKind, SpanLevel, SpanStatus};
use echo_core::vocab::{Degradation, MemoryReadKind};

/// Records in the read log that this turn's request holds `blocks`, in the background.
fn record_reads(engine: &Engine, turn: &TurnRef<'_>, blocks: &MemoryBlocks) {
    let reads: Vec<(String, MemoryReadKind)> = blocks
        .snapshot
        .iter()
        .map(|m| (m.id.clone(), MemoryReadKind::Snapshot))
        .chain(
            blocks
                .recalled
                .iter()
                .map(|m| (m.id.clone(), MemoryReadKind::Recalled)),
        )
        .collect();
    if reads.is_empty() {
        return;
    }
    let memory = engine.memory.clone();
    let (turn_id, session_id) = (turn.id.to_string(), turn.session.to_string());
    engine.background.track(async move {
        let recorded = memory
            .record_reads(&reads, &turn_id, Some(&session_id))
            .await;
        if let Err(e) = recorded {
            tracing::warn!(error = %e, "the memories' read log was not written");
        }
    });
}

/// The memory blocks of this turn's request, recorded in the memories' read log (in the
/// background: the turn does not wait for it). A temporary chat reads memory only when it
/// allows it, and leaves no trace in it. Memory trouble never fails a turn: it is logged,
/// flagged on the context span, and the turn goes on without memories.
pub(super) async fn memory_blocks(
    engine: &Engine,
    turn: &TurnRef<'_>,
    request: &TurnRequest,
    node: &mut Span,
) -> MemoryBlocks {
    let (input, temporary) = (request.input.as_str(), request.temporary);
    let project = request.project.as_ref().map(|p| p.id.as_str());
    let (session, events) = (turn.session, turn.events);
    if let Some(kind) = temporary {
        node.attr("temporary", kind.as_str());
    }
    if !engine.config.memory.enabled || temporary == Some(TemporaryChat::Sealed) {
        return MemoryBlocks::default();
    }
    let kept = temporary.is_none();
    let semantic = engine.semantic().await;
    let neighbours = semantic.index().map(|s| s as &dyn echo_memory::Neighbours);
    let mut span = node
        .child_of(SpanKind::MemoryRead, SpanLevel::Call, "memory_recall")
        .await;
    let found = memory::blocks_for_turn(
        &engine.memory,
        (session.as_str(), project, kept),
        input,
        neighbours,
    )
    .await;
    match &found {
        Ok((blocks, info)) => {
            let ids: Vec<String> = blocks
                .snapshot
                .iter()
                .chain(&blocks.recalled)
                .map(|m| m.id.clone())
                .collect();
            span.attr("memory_ids", ids);
            span.attr("semantic", info.used_vectors);
            span.finish(SpanStatus::Ok).await;
            if kept {
                record_reads(engine, turn, blocks);
            }
        }
        Err(e) => {
            span.set_error(&e.to_string());
            span.finish(SpanStatus::Error).await;
        }
    }
    shown(found, node, events)
}

/// What the turn's request and trace show of its memory blocks, and the event that lists what
/// was recalled; trouble is logged and flagged on the context span, and the turn goes on
/// without memories.
fn shown(
    found: Result<(MemoryBlocks, echo_memory::RecallInfo), echo_memory::MemoryError>,
    node: &mut Span,
    events: &TurnEvents,
) -> MemoryBlocks {
    match found {
        Ok((blocks, info)) => {
            node.attr("memory_snapshot", blocks.snapshot.len());
            node.attr(
                "memory_recalled",
                blocks
                    .recalled
                    .iter()
                    .map(|m| m.id.clone())
                    .collect::<Vec<_>>(),
            );
            node.attr("memory_semantic", info.used_vectors);
            if !blocks.recalled.is_empty() {
                events.emit(TurnEvent::MemoryRecalled {
                    memories: blocks
                        .recalled
                        .iter()
                        .map(|m| RecalledMemory {
                            id: m.id.clone(),
                            content: m.content.clone(),
                            tier: m.tier,
                            source: m.source,
                        })
                        .collect(),
                    semantic: info.used_vectors,
                });
            }
            blocks
        }
        Err(e) => {
            tracing::warn!(error = %e, "memory unavailable for this turn");
            node.degrade(Degradation::MemoryUnavailable);
            node.attr("memory_error", e.to_string());
            MemoryBlocks::default()
        }
    }
}
