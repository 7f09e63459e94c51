//! Projects as front ends see them (from `echo_core::store::Project` and the memory counts).

use serde::Serialize;
use ts_rs::TS;
use utoipa::ToSchema;

/// A project: conversations and memories kept apart from other projects'.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct Project {
    /// Id (its memories' scope is `project:<id>`).
    pub id: String,
    /// Unique name.
    pub name: String,
    /// Standing instructions for its conversations.
    pub instructions: Option<String>,
    /// Its conversations' workspace folders (empty: the settings' roots).
    pub folders: Vec<String>,
    /// Creation time.
    pub created_at: String,
    /// Conversations in it.
    #[ts(type = "number")]
    pub sessions: i64,
    /// Memories of it (deleted ones aside).
    #[ts(type = "number")]
    pub memories: u64,
}

/// What `remove_project` did.
#[derive(Clone, Debug, Serialize, TS, ToSchema)]
pub struct ProjectRemoved {
    /// The project as it was.
    pub project: Project,
    /// Memories that became global.
    #[ts(type = "number")]
    pub moved: u64,
    /// Memories deleted for good.
    #[ts(type = "number")]
    pub deleted: u64,
}

impl Project {
    /// The wire form of a stored project with `memories` memories.
    pub(crate) fn new(p: echo_core::store::Project, memories: u64) -> Self {
        Self {
            id: p.id.to_string(),
            name: p.name,
            instructions: p.instructions,
            folders: p.folders,
            created_at: p.created_at,
            sessions: p.sessions,
            memories,
        }
    }
}
