//! Sessions and their messages as front ends see them (from `echo_core::store`'s rows).

use super::{ToolCall, list};
use echo_core::Role;
use echo_core::vocab::MessageStatus;
use serde::Serialize;
use ts_rs::TS;
use utoipa::ToSchema;

/// A session with its activity counts.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct SessionSummary {
    /// Id.
    pub id: String,
    /// Unique name (what `--session` takes).
    pub name: String,
    /// Title, from the first message.
    pub title: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Last activity.
    pub updated_at: String,
    /// Number of stored messages.
    #[ts(type = "number")]
    pub message_count: i64,
    /// Number of turns.
    #[ts(type = "number")]
    pub turn_count: i64,
    /// Messages up to this `seq` are consolidated into long-term memory.
    #[ts(type = "number")]
    pub consolidated_seq: i64,
    /// The automation this session is a run of (its runs each get a session of their own).
    #[ts(optional)]
    pub automation: Option<String>,
    /// The name of the project it belongs to, if any.
    #[ts(optional)]
    pub project: Option<String>,
}

/// What `delete_all_data` removed.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct DataDeleted {
    /// Conversations deleted.
    pub sessions: u64,
    /// Memories deleted (every tier, every status).
    pub memories: u64,
    /// Rows deleted across every table (conversations, traces, memories, automations, …).
    pub rows: u64,
    /// Whether the person's `USER.md` was removed (the default comes back).
    pub user_notes: bool,
}

/// What `check_data` found. `problems` is empty when everything held.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct DataCheck {
    /// What is wrong, one sentence each; empty when all is well.
    pub problems: Vec<String>,
    /// SQLite's integrity check: `ok`, or its findings.
    pub integrity: String,
    /// Conversations.
    pub sessions: u64,
    /// Messages across them.
    pub messages: u64,
    /// Turns left accepted or running by a process that is gone (recovered when this
    /// process opened the data directory, so this is 0 unless recovery failed).
    pub unfinished_turns: u64,
    /// Consolidation claims left by a process that is gone (given back the same way).
    pub unfinished_consolidations: u64,
    /// Memories that are not deleted, in SQLite (the source of truth).
    pub memories: u64,
    /// Memories in the keyword search index.
    pub search_index: u64,
    /// Memories in the vector index, after it repaired itself and caught up; absent without
    /// an embedder, or when the index cannot be opened (a problem says why).
    pub vectors: Option<u64>,
}

/// What `delete_session` did with the memories learned in the conversation.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct SessionDeleted {
    /// Memories forgotten or deleted with it (0 when they were kept).
    pub memories: u64,
}

impl From<echo_core::store::SessionSummary> for SessionSummary {
    fn from(v: echo_core::store::SessionSummary) -> Self {
        Self {
            id: v.id,
            name: v.name,
            title: v.title,
            created_at: v.created_at,
            updated_at: v.updated_at,
            message_count: v.message_count,
            turn_count: v.turn_count,
            consolidated_seq: v.consolidated_seq,
            automation: v.automation,
            project: v.project,
        }
    }
}
/// A stored message with its place in the session.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct StoredMessage {
    /// Id.
    pub id: String,
    /// Session.
    pub session_id: String,
    /// Turn that produced it.
    pub turn_id: Option<String>,
    /// Order within the session, from 1.
    #[ts(type = "number")]
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
    /// The research run whose report this answer is, as it finished; absent for other
    /// messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub research: Option<crate::wire::ResearchProgress>,
}

impl From<echo_core::store::StoredMessage> for StoredMessage {
    fn from(v: echo_core::store::StoredMessage) -> Self {
        Self {
            id: v.id,
            session_id: v.session_id,
            turn_id: v.turn_id,
            seq: v.seq,
            role: v.role,
            content: v.content,
            reasoning: v.reasoning,
            tool_calls: list(v.tool_calls),
            tool_call_id: v.tool_call_id,
            name: v.name,
            status: v.status,
            created_at: v.created_at,
            research: None,
        }
    }
}
