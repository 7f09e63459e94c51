//! The wire format: every request and response of the operations front ends call (see
//! `operations.table`), declared in this module and its submodules and nowhere else. Each
//! type derives serde, `ts_rs::TS` (the UI's TypeScript) and `utoipa::ToSchema` (the
//! gateway's OpenAPI document), so the three never drift.
//!
//! Responses are this module's own types, built from the engine's with `From<domain>` (a
//! stored row, a report of memory work, an automation's definition): a column renamed or a
//! field added for the engine's own use changes the `From` impl, never `docs/openapi.json`
//! or the UI's `engine.ts`. The turn's event protocol ([`TurnEvent`]) is declared here too.
//! The module imports nothing else of this crate, so every module may use it. The exceptions,
//! used as they are: the closed vocabularies and id newtypes of `echo_core`
//! (`crates/echo-core/tests/wire_boundary.rs` lists them).
//!
//! A request names the operation: `ListSessions` is `list_sessions`. Its fields are the path
//! parameters (`{name}` in the route), then the query (GET and DELETE) or the JSON body.

pub use echo_core::{
    ApprovalId, ConflictId, MemoryId, MessageId, RuleId, SessionId, SpanId, TurnId,
};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

pub use automations::{
    Automation, AutomationNotice, AutomationNoticeKind, AutomationNotices, AutomationPreview,
    AutomationRun, AutomationSpec, AutomationTrigger, AutomationView, PreApproval, QueuedApproval,
    RunCounts, Schedule, Watch,
};
pub use devices::{AccessEvent, Device, DevicePairing};
pub use echo_core::vocab::{
    AccessEventKind, ConflictStatus, DecidedBy, Degradation, DeviceState, EntryPoint,
    ImportClashKind, LearnedMemories, MemoryReadKind, MemorySort, MemorySource, MemoryStatus,
    MemoryTier, MemoryVerdict, MessageStatus, ProjectMemories, ProviderKind, ResearchPhase, Risk,
    Role, RuleDecision, RuleScope, SearchKind, SpanKind, SpanStatus, SubQuestionState, TaskType,
    TemporaryChat, TurnErrorCode, TurnStatus,
};
pub use echo_core::vocab::{
    AutomationState, FileEvent, MissedRuns, QueuedApprovalStatus, RunCause, RunStatus,
};
pub use errors::{ErrorBody, ErrorCode, ErrorDetail};
pub use events::{EVENT_PROTOCOL_VERSION, EventEnvelope, RecalledMemory, TurnEvent};
pub use memory::{
    Conflict, Fading, FadingPoint, FlushReport, HistoryEntry, ImportCandidate, ImportCard,
    ImportClash, ImportPreview, ImportReport, LearnedInTurn, Memory, MemoryDetail, MemoryEffect,
    MemoryExport, MemoryPage, MemoryProposal, MemoryReadEntry, MemoryStats, PurgeReport, Recalled,
    SweepReport, TierStatusCount, TurnLearned, WriteOutcome,
};
pub use messages::{Message, ToolCall, ToolSpec, Usage};
pub use projects::{Project, ProjectRemoved};
pub use research::{ResearchProgress, SubQuestionProgress};
pub use sessions::{DataCheck, DataDeleted, SessionDeleted, SessionSummary, StoredMessage};
pub use settings::{
    BootstrapFile, Checksum, ConnectionReport, DownloadState, KeySource, LocalModelEntry,
    LocalModels, McpServerConfig, MemorySettings, OllamaInfo, ProviderKindInfo, ProviderSettings,
    ProviderUpdate, ProviderView, SearchTestReport, SearchUpdate, SearchView, TraceSettings,
};
pub use tools::{
    ApprovalAnswer, AuditEntry, McpServerState, McpServerStatus, McpTransportKind, Rule,
};
pub use traces::{
    CapturedRequest, CapturedResponse, CaseMemory, CaseToolCall, DegradationCount,
    DegradationStats, ModelCall, ReplayCase, SpanRecord, Trace, TurnRecord,
};

mod automations;
mod devices;
mod errors;
mod events;
mod memory;
mod messages;
mod projects;
mod research;
mod sessions;
mod settings;
mod tools;
mod traces;

/// Each of a list, as front ends see it.
pub(crate) fn list<D, W: From<D>>(items: Vec<D>) -> Vec<W> {
    items.into_iter().map(W::from).collect()
}

/// The answer of an operation that returns nothing (HTTP 204, `null` over IPC).
pub type Done = ();

macro_rules! wire {
    ($($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? })*) => {
        $(
            $(#[$meta])*
            #[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
            #[serde(deny_unknown_fields)]
            pub struct $name { $($(#[$fmeta])* pub $field: $ty),* }
        )*
    };
}

wire! {
    /// Every session, most recently active first.
    ListSessions {}
    /// A session's stored messages, in order.
    History {
        /// Session name.
        session: String,
    }
    /// Renames a session.
    RenameSession {
        /// The session's name now.
        name: String,
        /// Its new name.
        new_name: String,
    }
    /// Moves a conversation into a project, or out of any.
    MoveSession {
        /// The session's name.
        name: String,
        /// The project (by name); absent: none.
        #[serde(default)]
        #[ts(optional)]
        project: Option<String>,
    }
    /// Every project, by name.
    ListProjects {}
    /// Adds a project.
    AddProject {
        /// Its name (unique).
        name: String,
        /// Standing instructions for its conversations.
        #[serde(default)]
        #[ts(optional)]
        instructions: Option<String>,
        /// Absolute paths of existing folders: its conversations' workspace.
        #[serde(default)]
        #[ts(optional)]
        folders: Option<Vec<String>>,
    }
    /// Renames a project or changes its instructions or folders.
    EditProject {
        /// The project's name now.
        name: String,
        /// Its new name.
        #[serde(default)]
        #[ts(optional)]
        new_name: Option<String>,
        /// New instructions (empty: none).
        #[serde(default)]
        #[ts(optional)]
        instructions: Option<String>,
        /// New folders (replacing the old list).
        #[serde(default)]
        #[ts(optional)]
        folders: Option<Vec<String>>,
    }
    /// Removes a project; its conversations stay, in no project. A project with memories
    /// needs `memories`: they become global or are deleted.
    RemoveProject {
        /// The project's name.
        name: String,
        /// What becomes of its memories.
        #[serde(default)]
        #[ts(optional)]
        memories: Option<ProjectMemories>,
    }
    /// Every device paired with `echod serve`, revoked ones and waiting pairings too.
    ListDevices {}
    /// Starts pairing a device: a one-time code it gives `POST /api/pair` for a token of its
    /// own.
    PairDevice {
        /// What to call the device (default: "device").
        #[serde(default)]
        #[ts(optional)]
        name: Option<String>,
    }
    /// Revokes a device's token (or withdraws its pairing).
    RevokeDevice {
        /// The device's id.
        id: String,
    }
    /// The sign-in log of `echod serve`, newest first.
    ListAccessEvents {
        /// At most this many entries (default 100).
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
    }
    /// Deletes a session with its history, traces, archived summaries and captured model
    /// requests; `memories` says what becomes of the memories learned from it.
    DeleteSession {
        /// Session name.
        name: String,
        /// Keep, forget or delete the memories learned in it.
        memories: LearnedMemories,
    }
    /// Stops a running turn; its partial answer is kept.
    CancelTurn {
        /// The turn.
        turn_id: TurnId,
    }
    /// Answers an approval question of a running turn.
    AnswerApproval {
        /// The question (`ApprovalRequested.request_id`).
        request_id: ApprovalId,
        /// The answer.
        answer: ApprovalAnswer,
    }
    /// Ids of approval questions waiting for an answer.
    PendingApprovals {}
    /// The gate's audit log, newest first.
    ListApprovals {
        /// At most this many (default 100).
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
    }
    /// Approval questions of unattended runs (automations): pending ones, oldest first.
    ApprovalQueue {
        /// Answered and expired ones too (the latest 200, newest first).
        #[serde(default)]
        #[ts(optional)]
        all: Option<bool>,
    }
    /// Every automation, by name.
    ListAutomations {}
    /// One automation with its run counts and next fire times.
    GetAutomation {
        /// Its id or name.
        automation: String,
    }
    /// Saves a new automation (checked whole first).
    AddAutomation {
        /// Unique name; its runs' sessions are named after it.
        name: String,
        /// What it does.
        spec: AutomationSpec,
        /// Switched on (default yes).
        #[serde(default)]
        #[ts(optional)]
        enabled: Option<bool>,
    }
    /// Renames an automation and/or replaces its definition.
    EditAutomation {
        /// Its id or name.
        automation: String,
        /// The new name.
        #[serde(default)]
        #[ts(optional)]
        name: Option<String>,
        /// The new definition.
        #[serde(default)]
        #[ts(optional)]
        spec: Option<AutomationSpec>,
    }
    /// Removes an automation and its run history.
    RemoveAutomation {
        /// Its id or name.
        automation: String,
    }
    /// Switches an automation on or off.
    SetAutomationEnabled {
        /// Its id or name.
        automation: String,
        /// On or off.
        enabled: bool,
    }
    /// Pauses or resumes every automation.
    SetAllAutomationsEnabled {
        /// On or off.
        enabled: bool,
    }
    /// Queues a run of an automation now.
    RunAutomation {
        /// Its id or name.
        automation: String,
    }
    /// An automation's runs, newest first.
    AutomationRuns {
        /// Its id or name.
        automation: String,
        /// At most this many (default 100).
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
    }
    /// Runs that finished or failed and questions asked since a cursor, with what a badge
    /// shows (pending questions, automations on); for notifications.
    GetAutomationNotices {
        /// The cursor the last call returned; absent: start now (nothing older is news).
        #[serde(default)]
        #[ts(optional)]
        after: Option<String>,
    }
    /// Checks a definition and shows what it would do (next fire times, folders).
    PreviewAutomation {
        /// The definition.
        spec: AutomationSpec,
    }
    /// Every approval rule, oldest first.
    ListRules {}
    /// Adds an approval rule.
    AddRule {
        /// Tool name or glob.
        tool: String,
        /// Command prefix, path glob, host or MCP server.
        #[serde(default)]
        #[ts(optional)]
        pattern: Option<String>,
        /// What the rule decides.
        decision: RuleDecision,
        /// `always` (the default) or `session`.
        #[serde(default)]
        #[ts(optional)]
        scope: Option<RuleScope>,
        /// Session name, for session rules.
        #[serde(default)]
        #[ts(optional)]
        session: Option<String>,
    }
    /// Removes an approval rule.
    RemoveRule {
        /// The rule.
        id: RuleId,
    }
    /// The MCP servers and their state.
    McpServers {
        /// Wait up to this many seconds (at most 30) for servers still starting; absent: 0.
        #[serde(default)]
        #[ts(optional)]
        settle_secs: Option<u32>,
    }
    /// The configured MCP servers (`[[tools.mcp]]`), in order.
    McpConfig {}
    /// Replaces the MCP server list: checked whole, saved, applied at once.
    SetMcpConfig {
        /// The new list.
        servers: Vec<McpServerConfig>,
    }
    /// The model provider in force (never the key).
    GetProvider {}
    /// The web search service in force (never the key).
    GetSearch {}
    /// A local Ollama server and its models, or null.
    DetectOllama {}
    /// The built-in model's recommended models, which are installed, and this process's
    /// downloads.
    ListLocalModels {}
    /// Starts downloading a recommended model into the models directory (resuming an
    /// interrupted one); `local_models` reports the progress.
    FetchLocalModel {
        /// Catalog id, e.g. `qwen2.5-0.5b`.
        id: String,
    }
    /// Makes the built-in model the provider, with this GGUF file or installed catalog model.
    UseLocalModel {
        /// A GGUF file's path or a catalog id.
        model: String,
    }
    /// The standing instructions (AGENTS.md, SOUL.md, USER.md, TOOLS.md): each file's text
    /// or its default.
    BootstrapFiles {}
    /// Saves a bootstrap file's whole text; `content: null` restores its default.
    SaveBootstrapFile {
        /// File name, e.g. `USER.md`.
        name: String,
        /// The new text, or null for the default.
        content: Option<String>,
    }
    /// The desktop settings the engine keeps (`[desktop]`).
    DesktopSettings {}
    /// The most recent turns, newest first.
    ListTraces {
        /// At most this many (default 50, at most 1000).
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
        /// Only this session (its name).
        #[serde(default)]
        #[ts(optional)]
        session: Option<String>,
        /// Only turns with this status.
        #[serde(default)]
        #[ts(optional)]
        status: Option<TurnStatus>,
        /// Only degraded (`true`) or only clean (`false`) turns.
        #[serde(default)]
        #[ts(optional)]
        degraded: Option<bool>,
        /// Only turns this model answered.
        #[serde(default)]
        #[ts(optional)]
        model: Option<String>,
        /// Only turns that asked (`true`) or did not ask (`false`) for approval.
        #[serde(default)]
        #[ts(optional)]
        has_approvals: Option<bool>,
        /// Accepted at or after this time (RFC 3339).
        #[serde(default)]
        #[ts(optional)]
        since: Option<String>,
        /// Accepted before this time (RFC 3339).
        #[serde(default)]
        #[ts(optional)]
        until: Option<String>,
    }
    /// How often turns fell back, by fallback, since a time.
    TraceStats {
        /// Turns accepted at or after this time (RFC 3339); default: a day ago.
        #[serde(default)]
        #[ts(optional)]
        since: Option<String>,
    }
    /// One turn's record and spans.
    GetTrace {
        /// The turn.
        turn_id: TurnId,
    }
    /// What one model call of a turn sent and received.
    TraceCall {
        /// The turn.
        turn_id: TurnId,
        /// The call span.
        span_id: SpanId,
    }
    /// A memory's fading: effective importance over time, uses, threshold, expiry.
    MemoryFading {
        /// Memory id.
        id: MemoryId,
    }
    /// Counts by tier and status, open conflicts, what the next sweep would archive.
    MemoryStatsRequest {}
    /// Every memory that is not deleted, as an export file's text (to download).
    MemoryExportFile {}
    /// Adds the memories of an export file's text (an upload) through the write path.
    MemoryImportFile {
        /// The file's text (versioned JSON Lines).
        text: String,
    }
    /// Reads pasted text (another assistant's memory list or export, or any statements about
    /// the person) into memory cards, with what keeping each would do to the memories there.
    /// Writes nothing.
    MemoryImportPreview {
        /// The pasted text.
        text: String,
        /// Cards about the project's work go to this project (its name); the rest stay global.
        #[serde(default)]
        #[ts(optional)]
        project: Option<String>,
    }
    /// Writes the cards the person kept, through the write path, with source `imported`.
    MemoryImportCards {
        /// The kept cards, as the preview gave them or edited.
        cards: Vec<ImportCard>,
    }
    /// `[memory]` settings the memory page edits.
    GetMemorySettings {}
    /// Saves `[memory] ask_before_remembering`.
    UpdateMemorySettings {
        /// What memory work finds waits for Keep or Discard instead of being written.
        ask_before_remembering: bool,
    }
    /// Every memory proposal waiting for Keep or Discard, newest first.
    MemoryProposals {}
    /// Writes a proposal through the write path (it is no longer waiting).
    MemoryKeepProposal {
        /// Proposal id.
        id: String,
    }
    /// Drops a proposal: nothing of it is written.
    MemoryDiscardProposal {
        /// Proposal id.
        id: String,
    }
    /// `[trace]`: request/response capture and its retention.
    GetTraceSettings {}
    /// Saves `[trace]`.
    UpdateTraceSettings {
        /// Keep each model call's request and response.
        capture: bool,
        /// Days to keep them (0-3650).
        retention_days: u32,
        /// From which share of the last day's turns falling back the app says so (0–1; 0:
        /// never); absent: unchanged.
        #[serde(default)]
        #[ts(optional)]
        notice_rate: Option<f64>,
    }
    /// A turn as a replayable regression case (`echod replay`).
    TraceCase {
        /// The turn.
        turn_id: TurnId,
    }
    /// Memories by tier and status (default: all but deleted), newest first.
    MemoryList {
        /// Only this tier.
        #[serde(default)]
        #[ts(optional)]
        tier: Option<MemoryTier>,
        /// Only this status (default: every status but deleted).
        #[serde(default)]
        #[ts(optional)]
        status: Option<MemoryStatus>,
        /// Only memories whose text contains this.
        #[serde(default)]
        #[ts(optional)]
        text: Option<String>,
        /// Only the memories of this project (by name).
        #[serde(default)]
        #[ts(optional)]
        project: Option<String>,
        /// Only global memories (in no project, no conversation).
        #[serde(default)]
        #[ts(optional)]
        global: Option<bool>,
        /// Only memories in an open conflict (`true`) or in none (`false`).
        #[serde(default)]
        #[ts(optional)]
        in_conflict: Option<bool>,
        /// Only memories that expire within this many days.
        #[serde(default)]
        #[ts(optional)]
        expiring_within_days: Option<u32>,
        /// The order (default: newest first).
        #[serde(default)]
        #[ts(optional)]
        sort: Option<MemorySort>,
        /// Rows to skip (default 0).
        #[serde(default)]
        #[ts(optional)]
        offset: Option<u32>,
        /// Page size (default 100, at most 1000).
        #[serde(default)]
        #[ts(optional)]
        limit: Option<u32>,
    }
    /// Hybrid search over every memory not deleted (archived and superseded included).
    MemorySearch {
        /// The query.
        query: String,
        /// At most this many (default 10).
        #[serde(default)]
        #[ts(optional)]
        k: Option<u32>,
    }
    /// What a turn taught memory (the line under its answer), and whether its extraction
    /// has ended.
    TurnMemory {
        /// The turn.
        turn_id: String,
    }
    /// One memory with provenance, supersede chain, history and conflicts.
    MemoryShow {
        /// The memory.
        id: MemoryId,
    }
    /// Adds a memory in the person's own words (source `manual`).
    MemoryAdd {
        /// The text.
        content: String,
        /// A slot such as `preference.drink`.
        #[serde(default)]
        #[ts(optional)]
        slot: Option<String>,
        /// Never fades.
        #[serde(default)]
        #[ts(optional)]
        pinned: Option<bool>,
        /// The project it belongs to (by name); absent: a global memory.
        #[serde(default)]
        #[ts(optional)]
        project: Option<String>,
    }
    /// Replaces a memory's text.
    MemoryEdit {
        /// The memory.
        id: MemoryId,
        /// The new text.
        content: String,
    }
    /// Pins or unpins a memory.
    MemoryPin {
        /// The memory.
        id: MemoryId,
        /// Pinned or not.
        pinned: bool,
    }
    /// Moves a memory into a project or out to the global memories (one change, undoable).
    MemoryMove {
        /// The memory.
        id: MemoryId,
        /// The project (by name); absent: global.
        #[serde(default)]
        #[ts(optional)]
        project: Option<String>,
    }
    /// Takes a memory out of prompts and search (reversible with `memory_restore`).
    MemoryForget {
        /// The memory.
        id: MemoryId,
    }
    /// Restores an archived, superseded or forgotten memory.
    MemoryRestore {
        /// The memory.
        id: MemoryId,
    }
    /// Undoes the last change that touched a memory.
    MemoryUndo {
        /// The memory.
        id: MemoryId,
        /// Undo this change (a history entry's `change_id`) instead of the last one.
        #[serde(default)]
        #[ts(optional)]
        change: Option<String>,
    }
    /// The review queue: open conflicts, or all.
    MemoryConflicts {
        /// Settled ones too.
        #[serde(default)]
        #[ts(optional)]
        all: Option<bool>,
    }
    /// Settles a conflict: keep one memory, or both.
    MemoryResolve {
        /// The conflict.
        conflict_id: ConflictId,
        /// The memory to keep; null keeps both.
        keep: Option<MemoryId>,
        /// Edit into one: the kept memory's new text (needs `keep`).
        #[serde(default)]
        #[ts(optional)]
        merged: Option<String>,
    }
    /// Forgets (reversibly) every memory learned in a session, as one change.
    MemoryForgetSession {
        /// The session's name.
        session: String,
    }
    /// Sets or clears the date after which a memory no longer holds.
    MemorySetExpiry {
        /// The memory.
        id: MemoryId,
        /// `YYYY-MM-DD` or RFC 3339; absent or null clears it.
        #[serde(default)]
        #[ts(optional)]
        valid_until: Option<String>,
    }
    /// Deletes memories for good, each with the older versions it superseded, its history
    /// and its conflicts; not reversible (`memory_forget` is).
    MemoryDelete {
        /// The memories.
        ids: Vec<MemoryId>,
    }
    /// Deletes all of the person's data: conversations, traces, memories, automations,
    /// approval rules and `USER.md` (settings and keys stay). `confirm` must be the words
    /// `delete all my data`.
    DeleteAllData {
        /// The typed confirmation.
        confirm: String,
    }
    /// Checks the data directory: SQLite's integrity, nothing a crash left running or
    /// claimed, and the search indexes holding exactly the memories SQLite holds.
    CheckData {}
    /// Deletes every memory for good. `confirm` must be the words `delete all memories`.
    MemoryDeleteAll {
        /// The typed confirmation.
        confirm: String,
    }
    /// Archives what expired or faded.
    MemorySweep {
        /// As of this time (RFC 3339 or YYYY-MM-DD), e.g. to see what a month of disuse does;
        /// absent: now.
        #[serde(default)]
        #[ts(optional)]
        now: Option<String>,
    }
    /// Rebuilds the vector index from SQLite.
    MemoryReindex {}
}

/// Saves the provider settings (and the key, if given); the next turn uses them.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct UpdateProvider(pub ProviderUpdate);

/// Tries provider settings with one tiny request, saving nothing.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct TestProvider(pub ProviderUpdate);

/// Saves the web search settings (and the key, if given); the next turn uses them.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct UpdateSearch(pub SearchUpdate);

/// Tries web search settings with one search, saving nothing.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct TestSearch(pub SearchUpdate);

/// A turn to run. Not in the operation table: its answer is a stream of
/// [`EventEnvelope`]s (server-sent events over HTTP, a channel over IPC).
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SendTurn {
    /// Session name (created on first use).
    pub session: String,
    /// The user's message.
    pub input: String,
    /// Regenerate / edit and resend: the user message this turn replaces, with everything
    /// after it.
    #[serde(default)]
    #[ts(optional)]
    pub replace_from: Option<MessageId>,
    /// `true`: research (a cited report); `false`: a quick answer; absent: the router
    /// decides.
    #[serde(default)]
    #[ts(optional)]
    pub research: Option<bool>,
    /// Resume the unfinished research this earlier turn of the session left (`input` may
    /// then be empty: the run's question is used).
    #[serde(default)]
    #[ts(optional)]
    pub resume: Option<TurnId>,
    /// Start the session as a temporary chat: no memory is written from it, and it is deleted
    /// with its traces when it is left or its process ends (`recall`: it may read memory).
    /// Refused for a session that exists and is kept.
    #[serde(default)]
    #[ts(optional)]
    pub temporary: Option<TemporaryChat>,
    /// Start the session in this project (by name): it recalls the project's memories and
    /// the global ones, never another project's. A session stays in the project it was
    /// created in.
    #[serde(default)]
    #[ts(optional)]
    pub project: Option<String>,
}

/// `POST /api/pair`: the one-time code from the address `echod serve` printed
/// (`#pair=…`), given by a browser page in exchange for a token.
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PairRequest {
    /// The code; it works once: a page's only for the run of `echod serve` that printed it,
    /// a device's (`pair_device`) until it expires.
    pub code: String,
}

/// The answer to a pairing: the bearer token. A page's dies with this run of `echod serve`,
/// so a copy left in a browser's storage opens nothing later; a device's lasts until it is
/// revoked (`revoke_device`).
#[derive(Clone, Debug, Serialize, Deserialize, TS, ToSchema)]
pub struct Paired {
    /// Sent as `Authorization: Bearer <token>`.
    pub token: String,
    /// The device the token is for, when a device's code was given.
    #[serde(default)]
    #[ts(optional)]
    pub device: Option<String>,
}

/// The `[desktop]` settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct DesktopSettingsView {
    /// The quick-ask global shortcut, e.g. `CommandOrControl+Shift+Space`.
    pub quick_ask_shortcut: String,
    /// Whether closing the main window keeps the app in the tray.
    pub close_to_tray: bool,
}

/// The desktop app's quick-ask shortcut and whether the system accepted it (desktop only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS, ToSchema)]
pub struct ShortcutStatus {
    /// The accelerator, e.g. `CommandOrControl+Shift+Space`.
    pub shortcut: String,
    /// Whether it is registered now.
    pub registered: bool,
    /// Why it is not (taken by another program, not a valid accelerator).
    pub error: Option<String>,
}
