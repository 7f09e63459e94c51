//! The low-level row changes every writer goes through: inserting and updating a memory
//! with its history entry and its outbox entry in the same transaction.

use super::{COLUMNS, MemoryActor, MemoryStore, now_text, sql};
use crate::error::{Db, MemoryError};
use crate::model::{Memory, MemoryStatus, MemoryTier};
use echo_core::MemoryAction;
use sqlx::{Sqlite, Transaction};

impl MemoryStore {
    /// Inserts a new row with its history and outbox entry.
    pub(crate) async fn insert_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        change: &str,
        m: &Memory,
        actor: MemoryActor,
        reason: Option<&str>,
    ) -> Result<(), MemoryError> {
        sqlx::query(sql(format!(
            "INSERT INTO memories ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )))
        .bind(&m.id)
        .bind(m.tier.as_str())
        .bind(&m.kind)
        .bind(&m.subject)
        .bind(&m.slot)
        .bind(&m.content)
        .bind(&m.value)
        .bind(m.source.as_str())
        .bind(m.confidence)
        .bind(m.importance)
        .bind(m.pinned)
        .bind(m.access_count)
        .bind(&m.last_accessed)
        .bind(m.stability)
        .bind(&m.created_at)
        .bind(&m.updated_at)
        .bind(&m.valid_from)
        .bind(&m.valid_until)
        .bind(m.status.as_str())
        .bind(&m.superseded_by)
        .bind(&m.invalid_at)
        .bind(m.archived_from.map(MemoryTier::as_str))
        .bind(m.version)
        .bind(&m.scope)
        .bind(&m.source_session_id)
        .bind(&m.source_turn_id)
        .bind(&m.source_message_id)
        .bind(&m.evidence)
        .bind(&m.context)
        .execute(&mut **tx)
        .await
        .db("inserting a memory")?;
        record(
            tx,
            change,
            &m.id,
            MemoryAction::Created,
            actor,
            reason,
            None,
            Some(m),
        )
        .await?;
        enqueue(tx, &m.id, "upsert").await?;
        Ok(())
    }

    /// Writes `after` over `before` (version + 1), with history and outbox in step.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn update_tx(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        change: &str,
        before: &Memory,
        after: &mut Memory,
        action: MemoryAction,
        actor: MemoryActor,
        reason: Option<&str>,
    ) -> Result<(), MemoryError> {
        after.version = before.version + 1;
        after.updated_at = now_text();
        sqlx::query(
            "UPDATE memories SET tier = ?, kind = ?, subject = ?, slot = ?, content = ?, value = ?, source = ?,
                confidence = ?, importance = ?, pinned = ?, access_count = ?, last_accessed = ?, stability = ?,
                updated_at = ?, valid_from = ?, valid_until = ?, status = ?, superseded_by = ?, invalid_at = ?,
                archived_from = ?, version = ?, scope = ?, evidence = ?
             WHERE id = ?",
        )
        .bind(after.tier.as_str())
        .bind(&after.kind)
        .bind(&after.subject)
        .bind(&after.slot)
        .bind(&after.content)
        .bind(&after.value)
        .bind(after.source.as_str())
        .bind(after.confidence)
        .bind(after.importance)
        .bind(after.pinned)
        .bind(after.access_count)
        .bind(&after.last_accessed)
        .bind(after.stability)
        .bind(&after.updated_at)
        .bind(&after.valid_from)
        .bind(&after.valid_until)
        .bind(after.status.as_str())
        .bind(&after.superseded_by)
        .bind(&after.invalid_at)
        .bind(after.archived_from.map(MemoryTier::as_str))
        .bind(after.version)
        .bind(&after.scope)
        .bind(&after.evidence)
        .bind(&after.id)
        .execute(&mut **tx)
        .await
        .db("updating a memory")?;
        record(
            tx,
            change,
            &after.id,
            action,
            actor,
            reason,
            Some(before),
            Some(after),
        )
        .await?;
        if after.status == MemoryStatus::Deleted {
            enqueue(tx, &after.id, "delete").await?;
        } else if before.content != after.content || before.status == MemoryStatus::Deleted {
            enqueue(tx, &after.id, "upsert").await?;
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
async fn record(
    tx: &mut Transaction<'_, Sqlite>,
    change: &str,
    id: &str,
    action: MemoryAction,
    actor: MemoryActor,
    reason: Option<&str>,
    before: Option<&Memory>,
    after: Option<&Memory>,
) -> Result<(), MemoryError> {
    let json = |m: Option<&Memory>| m.and_then(|m| serde_json::to_string(m).ok());
    sqlx::query(
        "INSERT INTO memory_history (change_id, memory_id, action, actor, reason, before, after, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(change)
    .bind(id)
    .bind(action)
    .bind(actor)
    .bind(reason)
    .bind(json(before))
    .bind(json(after))
    .bind(now_text())
    .execute(&mut **tx)
    .await
    .db("recording memory history")?;
    Ok(())
}

async fn enqueue(tx: &mut Transaction<'_, Sqlite>, id: &str, op: &str) -> Result<(), MemoryError> {
    sqlx::query(
        "INSERT INTO memory_outbox (memory_id, op, enqueued_at) VALUES (?, ?, ?)
         ON CONFLICT(memory_id) DO UPDATE SET op = excluded.op, enqueued_at = excluded.enqueued_at, attempts = 0",
    )
    .bind(id)
    .bind(op)
    .bind(now_text())
    .execute(&mut **tx)
    .await
    .db("queueing embedding work")?;
    Ok(())
}
