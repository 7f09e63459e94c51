//! Proposals (migration 0023): with "ask before remembering" on, what a turn's extraction
//! found waits here until the person keeps it (it is taken out and written through the write
//! path by the caller) or discards it. Nothing here is recalled or injected.

use super::{MemoryStore, now_text};
use crate::error::{Db, MemoryError};
use crate::model::NewMemory;
use sqlx::Row;

/// A memory waiting for the person's yes.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    /// Id (UUIDv7).
    pub id: String,
    /// The turn whose extraction found it.
    pub turn_id: String,
    /// That turn's conversation (the proposal goes with it).
    pub session_id: Option<String>,
    /// What would be written.
    pub draft: NewMemory,
    /// When it was found.
    pub created_at: String,
}

impl MemoryStore {
    /// Keeps `draft`, found by turn `turn_id` of `session_id`, waiting for the person.
    pub async fn propose(
        &self,
        draft: &NewMemory,
        turn_id: &str,
        session_id: Option<&str>,
    ) -> Result<Proposal, MemoryError> {
        let proposal = Proposal {
            id: uuid::Uuid::now_v7().to_string(),
            turn_id: turn_id.to_string(),
            session_id: session_id.map(String::from),
            draft: draft.clone(),
            created_at: now_text(),
        };
        let json = serde_json::to_string(draft).map_err(|e| MemoryError::Invalid {
            field: "draft",
            message: e.to_string(),
        })?;
        sqlx::query(
            "INSERT INTO memory_proposals (id, turn_id, session_id, draft, created_at)
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&proposal.id)
        .bind(&proposal.turn_id)
        .bind(&proposal.session_id)
        .bind(json)
        .bind(&proposal.created_at)
        .execute(&self.pool)
        .await
        .db("keeping a memory proposal")?;
        Ok(proposal)
    }

    /// The proposals of one turn, oldest first.
    pub async fn proposals_of_turn(&self, turn_id: &str) -> Result<Vec<Proposal>, MemoryError> {
        self.proposals_where("turn_id = ? ORDER BY created_at, id", Some(turn_id))
            .await
    }

    /// Every waiting proposal, newest first.
    pub async fn proposals(&self) -> Result<Vec<Proposal>, MemoryError> {
        self.proposals_where("1 ORDER BY created_at DESC, id DESC", None)
            .await
    }

    /// One proposal.
    pub async fn proposal(&self, id: &str) -> Result<Proposal, MemoryError> {
        self.proposals_where("id = ?", Some(id))
            .await?
            .pop()
            .ok_or_else(|| MemoryError::NotFound {
                what: "memory proposal",
                id: id.to_string(),
            })
    }

    /// Takes a proposal out (once it is written, or to discard it).
    pub async fn take_proposal(&self, id: &str) -> Result<Proposal, MemoryError> {
        let mut tx = self.begin().await?;
        let row = sqlx::query(
            "DELETE FROM memory_proposals WHERE id = ?
             RETURNING id, turn_id, session_id, draft, created_at",
        )
        .bind(id)
        .fetch_optional(&mut *tx)
        .await
        .db("taking a memory proposal")?;
        let Some(row) = row else {
            return Err(MemoryError::NotFound {
                what: "memory proposal",
                id: id.to_string(),
            });
        };
        let proposal = proposal_of(&row)?;
        tx.commit().await.db("taking a memory proposal")?;
        Ok(proposal)
    }

    /// The proposals that meet `condition` (a fixed SQL text, with `value` for its one `?`).
    async fn proposals_where(
        &self,
        condition: &'static str,
        value: Option<&str>,
    ) -> Result<Vec<Proposal>, MemoryError> {
        let sql = format!(
            "SELECT id, turn_id, session_id, draft, created_at FROM memory_proposals WHERE {condition}"
        );
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let Some(value) = value {
            query = query.bind(value);
        }
        let rows = query
            .fetch_all(&self.pool)
            .await
            .db("reading memory proposals")?;
        rows.iter().map(proposal_of).collect()
    }
}

fn proposal_of(row: &sqlx::sqlite::SqliteRow) -> Result<Proposal, MemoryError> {
    let draft: String = row.get("draft");
    Ok(Proposal {
        id: row.get("id"),
        turn_id: row.get("turn_id"),
        session_id: row.get("session_id"),
        draft: serde_json::from_str(&draft).map_err(|e| MemoryError::Corrupt {
            id: row.get("id"),
            detail: format!("the proposal's draft: {e}"),
        })?,
        created_at: row.get("created_at"),
    })
}
