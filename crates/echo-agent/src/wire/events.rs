//! The turn event protocol: what the engine tells a front end while a turn runs.
//!
//! One typed enum, serialised as JSON with a `type` tag, so the UI gets a tagged union. Every
//! event travels in an [`EventEnvelope`] that carries the protocol version and the turn id.
//! `Final` is published exactly once per successful turn, after the answer is saved.

use super::{ResearchProgress, Usage};
use echo_core::vocab::{
    DecidedBy, Degradation, MemorySource, MemoryTier, Risk, RuleDecision, TurnErrorCode, TurnStatus,
};
use serde::{Deserialize, Serialize};

/// Version of the event protocol; bump it when a variant changes shape.
pub const EVENT_PROTOCOL_VERSION: u32 = 1;

/// One event of a turn, wrapped with the protocol version and the turn it belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS, utoipa::ToSchema)]
pub struct EventEnvelope {
    /// Protocol version ([`EVENT_PROTOCOL_VERSION`]).
    pub v: u32,
    /// The turn this event belongs to.
    pub turn_id: String,
    /// Position of this event within the turn, from 0.
    #[ts(type = "number")]
    pub seq: u64,
    /// The event itself.
    #[serde(flatten)]
    pub event: TurnEvent,
}

/// What happened in a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    /// The turn got its session and began (after waiting for any earlier turn of the session).
    TurnStarted {
        /// Session id.
        session_id: String,
        /// Session name.
        session_name: String,
    },
    /// A piece of the visible answer.
    Token {
        /// Text to append.
        text: String,
    },
    /// A piece of the model's reasoning (`<think>` content or a provider's reasoning channel).
    Reasoning {
        /// Text to append.
        text: String,
    },
    /// Long-term memories injected into this turn's request (the snapshot is not repeated).
    MemoryRecalled {
        /// The memories, best first.
        memories: Vec<RecalledMemory>,
        /// Whether vector search took part (false: keyword search only).
        semantic: bool,
    },
    /// The model started a tool call.
    ToolCallStarted {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
    },
    /// More argument text for a tool call that is still streaming.
    ToolCallArgsDelta {
        /// Call id.
        call_id: String,
        /// Argument JSON fragment.
        delta: String,
    },
    /// A tool call is about to run with these complete arguments.
    ToolCallExecuting {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Complete argument JSON as the model sent it.
        arguments: String,
    },
    /// The approval gate needs the user's answer before a tool call may run. Answer it with
    /// `Api::answer_approval(request_id, …)`; without an answer in `timeout_secs` it is denied.
    ApprovalRequested {
        /// Id to answer with.
        request_id: String,
        /// The tool call it is about.
        call_id: String,
        /// Tool name.
        tool: String,
        /// How much harm the tool can do.
        risk: Risk,
        /// The exact action: command and cwd, path, or the diff a write would apply.
        detail: String,
        /// Why the gate asks.
        reason: String,
        /// The narrowest rule pattern that would cover this call (for "allow for session" and
        /// "always allow"), if there is one.
        suggested_pattern: Option<String>,
        /// Seconds until an unanswered question counts as "deny".
        #[ts(type = "number")]
        timeout_secs: u64,
    },
    /// A piece of the model-written explanation of a pending approval (what the action does
    /// and what could go wrong). Arrives after the question, never delays it.
    ApprovalExplanation {
        /// The question it belongs to.
        request_id: String,
        /// Text to append.
        text: String,
    },
    /// The gate decided a call that was asked about, or denied one by policy.
    ApprovalResolved {
        /// The question, or empty when nothing was asked (a policy denial).
        request_id: String,
        /// The tool call.
        call_id: String,
        /// Tool name.
        tool: String,
        /// `allow` or `deny`.
        decision: RuleDecision,
        /// Who (or which step of the gate) decided.
        decided_by: DecidedBy,
        /// Why.
        reason: String,
    },
    /// A tool call finished (successfully or not); its result went back to the model.
    ToolResult {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Whether the tool succeeded.
        ok: bool,
        /// The result text given to the model.
        content: String,
        /// Wall time of the call.
        #[ts(type = "number")]
        duration_ms: u64,
    },
    /// The engine degraded to keep the turn alive (a retry, a fallback model, a summary at
    /// the iteration limit). Also recorded on the trace.
    Degraded {
        /// Which fallback.
        reason: Degradation,
        /// One line for people.
        detail: String,
    },
    /// A research run moved on (a node finished or started): where it is now. Its report
    /// arrives as `Final`.
    ResearchProgress {
        /// The whole picture.
        progress: ResearchProgress,
    },
    /// The final answer, with `<think>` removed. Published exactly once, after it is saved.
    Final {
        /// The complete answer text.
        text: String,
    },
    /// Up to three questions the person might ask next, from the side model; after `Final`,
    /// before `TurnFinished`.
    FollowUps {
        /// The questions, one line each.
        questions: Vec<String>,
    },
    /// The turn failed or was interrupted; `message` is one line for people.
    Error {
        /// Machine-readable error code.
        code: TurnErrorCode,
        /// One line for people.
        message: String,
    },
    /// The turn ended (any status). Always the last event.
    TurnFinished {
        /// `completed`, `failed` or `interrupted`.
        status: TurnStatus,
        /// Tokens used by all model calls of the turn.
        usage: Usage,
        /// The trace id (equal to the turn id).
        trace_id: String,
    },
}

/// A memory as shown in a `MemoryRecalled` event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ts_rs::TS, utoipa::ToSchema)]
pub struct RecalledMemory {
    /// Memory id.
    pub id: String,
    /// Its text.
    pub content: String,
    /// Its tier.
    pub tier: MemoryTier,
    /// Its source.
    pub source: MemorySource,
}
