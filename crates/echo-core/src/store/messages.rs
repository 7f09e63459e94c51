//! Messages: appending to a session and reading its history (through the decoded-history
//! cache in `history_cache.rs`), with the row encoding shared by turns and the archive.

use super::{Store, history_cache};
use crate::error::{QueryContext, StoreError};
use crate::ids::{MessageId, SessionId, TurnId};
use crate::message::{Message, Role, ToolCall};
use crate::time::now_rfc3339;
use crate::vocab::MessageStatus;
use serde::Serialize;
use sqlx::Row;

/// A stored message with its place in the session.
#[derive(Clone, Debug, Serialize)]
pub struct StoredMessage {
    /// Id.
    pub id: String,
    /// Session.
    pub session_id: String,
    /// Turn that produced it.
    pub turn_id: Option<String>,
    /// Order within the session, from 1.
    pub seq: i64,
    /// Role.
    pub role: Role,
    /// Text.
    pub content: String,
    /// Reasoning removed from the visible text, if any.
    pub reasoning: Option<String>,
    /// Tool calls of an assistant message.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
    /// Tool name of a tool message.
    pub name: Option<String>,
    /// Whole, or cut short.
    pub status: MessageStatus,
    /// When it was stored.
    pub created_at: String,
}

impl StoredMessage {
    /// The message as sent to a model.
    pub fn to_message(&self) -> Message {
        Message {
            role: self.role,
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: self.tool_call_id.clone(),
            name: self.name.clone(),
        }
    }
}

impl Store {
    /// Appends a message to the session (after every message stored so far).
    pub async fn append_message(
        &self,
        session: &SessionId,
        turn: Option<&TurnId>,
        message: &Message,
        reasoning: Option<&str>,
        partial: bool,
    ) -> Result<MessageId, StoreError> {
        let mut tx = self.pool.begin().await.during("storing a message")?;
        let status = if partial { "partial" } else { "complete" };
        let id = insert_message(
            &mut tx,
            session,
            turn,
            message,
            reasoning,
            status,
            &now_rfc3339(),
        )
        .await?;
        tx.commit().await.during("storing a message")?;
        Ok(id)
    }

    /// Every message of the session, in order (messages set aside by an edit left out). A
    /// session read recently is kept decoded, and only what was added since is read.
    pub async fn history(&self, session: &SessionId) -> Result<Vec<StoredMessage>, StoreError> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT history_version FROM sessions WHERE id = ?")
                .bind(session.as_str())
                .fetch_optional(&self.pool)
                .await
                .during("reading the history version")?;
        let Some(version) = version else {
            return Ok(Vec::new());
        };
        let cached = self.histories.take(session.as_str(), version);
        let after = cached.as_ref().map_or(0, |c| c.last_seq);
        let rows = sqlx::query(
            "SELECT id, session_id, turn_id, seq, role, content, reasoning, tool_calls,
                    tool_call_id, name, status, created_at
             FROM messages WHERE session_id = ? AND replaced_by IS NULL AND seq > ?
             ORDER BY seq",
        )
        .bind(session.as_str())
        .bind(after)
        .fetch_all(&self.pool)
        .await
        .during("reading history")?;
        let added = rows
            .iter()
            .map(stored_message)
            .collect::<Result<Vec<_>, _>>()?;
        let mut messages = cached.map(|c| c.messages).unwrap_or_default();
        let last_seq = added.last().map_or(after, |m| m.seq);
        messages.extend(added);
        self.histories.put(
            session.as_str(),
            history_cache::Cached {
                version,
                last_seq,
                messages: messages.clone(),
            },
        );
        Ok(messages)
    }
}

pub(super) async fn insert_message(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    session: &SessionId,
    turn: Option<&TurnId>,
    message: &Message,
    reasoning: Option<&str>,
    status: &str,
    now: &str,
) -> Result<MessageId, StoreError> {
    let id = MessageId::new();
    let tool_calls = if message.tool_calls.is_empty() {
        None
    } else {
        Some(
            serde_json::to_string(&message.tool_calls).map_err(|e| StoreError::Corrupt {
                table: "messages",
                detail: format!("cannot encode tool calls: {e}"),
            })?,
        )
    };
    sqlx::query(
        "INSERT INTO messages (id, session_id, turn_id, seq, role, content, reasoning, tool_calls,
                               tool_call_id, name, status, created_at)
         VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?),
                 ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(id.as_str())
    .bind(session.as_str())
    .bind(turn.map(TurnId::as_str))
    .bind(session.as_str())
    .bind(message.role.as_str())
    .bind(&message.content)
    .bind(reasoning.filter(|r| !r.is_empty()))
    .bind(tool_calls)
    .bind(&message.tool_call_id)
    .bind(&message.name)
    .bind(status)
    .bind(now)
    .execute(&mut **tx)
    .await
    .during("storing a message")?;
    sqlx::query("UPDATE sessions SET updated_at = ? WHERE id = ?")
        .bind(now)
        .bind(session.as_str())
        .execute(&mut **tx)
        .await
        .during("touching a session")?;
    Ok(id)
}

pub(super) fn stored_message(r: &sqlx::sqlite::SqliteRow) -> Result<StoredMessage, StoreError> {
    let id: String = r.get("id");
    let role: String = r.get("role");
    let role = Role::parse(&role).ok_or_else(|| StoreError::Corrupt {
        table: "messages",
        detail: format!("message {id} has unknown role {role:?}"),
    })?;
    let tool_calls: Option<String> = r.get("tool_calls");
    let tool_calls = match tool_calls {
        Some(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            table: "messages",
            detail: format!("tool calls of message {id}: {e}"),
        })?,
        None => Vec::new(),
    };
    Ok(StoredMessage {
        session_id: r.get("session_id"),
        turn_id: r.get("turn_id"),
        seq: r.get("seq"),
        role,
        content: r.get("content"),
        reasoning: r.get("reasoning"),
        tool_calls,
        tool_call_id: r.get("tool_call_id"),
        name: r.get("name"),
        status: r.get("status"),
        created_at: r.get("created_at"),
        id,
    })
}
