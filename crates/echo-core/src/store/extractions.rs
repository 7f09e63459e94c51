//! Pending memory extractions: a turn's extraction is recorded as pending, under the process
//! that runs it, from the transaction that saves the answer until it ends. One that a gone
//! process left pending is claimed by a later process and run again.

use super::Store;
use crate::error::{QueryContext, StoreError};
use crate::ids::{MessageId, SessionId, TurnId};
use sqlx::Row;

/// Attempts at one turn's extraction before it is given up (a poison input must not take
/// every later process down with it).
pub const EXTRACTION_TRIES: i64 = 3;

/// An extraction a gone process left unfinished, claimed by this one.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingExtraction {
    /// The turn.
    pub turn: TurnId,
    /// Its session.
    pub session: SessionId,
    /// The user's message.
    pub input: String,
    /// The answer's message.
    pub message: MessageId,
    /// The answer.
    pub answer: String,
    /// The turn's root span, when its trace is still kept.
    pub root_span: Option<String>,
    /// Which attempt this is (2 for the first run again).
    pub attempt: i64,
}

/// Records that the extraction of `turn` (whose answer is `message`) runs under `owner`; a
/// completed turn's answer is saved in the same transaction (`Store::complete_turn`).
pub(super) async fn mark_pending(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    turn: &TurnId,
    message: &MessageId,
    owner: &str,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE turns SET extraction_message = ?, extraction_owner = ?,
                extraction_tries = MAX(extraction_tries, 1)
         WHERE id = ?",
    )
    .bind(message.as_str())
    .bind(owner)
    .bind(turn.as_str())
    .execute(&mut **tx)
    .await
    .during("recording a memory extraction")?;
    Ok(())
}

impl Store {
    /// Whether the memory extraction of `turn` has yet to end (it is running, or a gone
    /// process left it to be run again).
    pub async fn extraction_pending(&self, turn: &TurnId) -> Result<bool, StoreError> {
        let pending: Option<i64> = sqlx::query_scalar(
            "SELECT 1 FROM turns WHERE id = ? AND extraction_message IS NOT NULL",
        )
        .bind(turn.as_str())
        .fetch_optional(&self.pool)
        .await
        .during("checking a memory extraction")?;
        Ok(pending.is_some())
    }

    /// Records that the extraction of `turn` ended (done or failed: it is not run again).
    pub async fn extraction_ended(&self, turn: &TurnId) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE turns SET extraction_message = NULL, extraction_owner = NULL WHERE id = ?",
        )
        .bind(turn.as_str())
        .execute(&self.pool)
        .await
        .during("recording the end of a memory extraction")?;
        Ok(())
    }

    /// Claims for `me` up to `limit` extractions whose owner is gone, oldest first, and
    /// returns what running them again needs. One tried [`EXTRACTION_TRIES`] times, or whose
    /// answer is gone (edited away or deleted), is given up.
    pub async fn claim_pending_extractions(
        &self,
        me: &str,
        owner_alive: &(dyn Fn(&str) -> bool + Sync),
        limit: usize,
    ) -> Result<Vec<PendingExtraction>, StoreError> {
        let rows = sqlx::query(
            "SELECT t.id, t.session_id, t.input, t.extraction_message, t.extraction_owner,
                    t.extraction_tries, m.content,
                    (SELECT s.id FROM spans s WHERE s.turn_id = t.id AND s.level = 'turn'
                      LIMIT 1)
             FROM turns t LEFT JOIN messages m ON m.id = t.extraction_message
             WHERE t.extraction_message IS NOT NULL AND t.extraction_owner != ?
             ORDER BY t.created_at",
        )
        .bind(me)
        .fetch_all(&self.pool)
        .await
        .during("finding unfinished memory extractions")?;
        let mut claimed = Vec::new();
        for row in rows {
            if claimed.len() >= limit {
                break;
            }
            let owner: String = row.get(4);
            if owner_alive(&owner) {
                continue;
            }
            let turn: String = row.get(0);
            let tries: i64 = row.get(5);
            let answer: Option<String> = row.get(6);
            let Some(answer) = answer.filter(|_| tries < EXTRACTION_TRIES) else {
                self.extraction_ended(&TurnId::from_string(turn.clone()))
                    .await?;
                tracing::warn!(turn = %turn, tries, "a memory extraction was given up");
                continue;
            };
            // Compare-and-set on the owner: of two processes, one claims it.
            let done = sqlx::query(
                "UPDATE turns SET extraction_owner = ?, extraction_tries = extraction_tries + 1
                 WHERE id = ? AND extraction_owner = ? AND extraction_message IS NOT NULL",
            )
            .bind(me)
            .bind(&turn)
            .bind(&owner)
            .execute(&self.pool)
            .await
            .during("claiming an unfinished memory extraction")?;
            if done.rows_affected() == 0 {
                continue;
            }
            claimed.push(PendingExtraction {
                turn: TurnId::from_string(turn),
                session: SessionId::from_string(row.get::<String, _>(1)),
                input: row.get(2),
                message: MessageId::from_string(row.get::<String, _>(3)),
                answer,
                root_span: row.get(7),
                attempt: tries + 1,
            });
        }
        Ok(claimed)
    }
}
