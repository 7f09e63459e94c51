//! The approval gate's audit entries and rules, and MCP servers' status, as front ends see
//! them (from `echo_gate` and `echo_mcp`).

use echo_core::vocab::{RuleDecision, RuleScope};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

/// A recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
pub struct AuditEntry {
    /// Id.
    pub id: String,
    /// Session.
    pub session_id: Option<String>,
    /// Turn.
    pub turn_id: Option<String>,
    /// Tool-call id.
    pub call_id: String,
    /// Tool.
    pub tool: String,
    /// Arguments with secrets masked.
    pub arguments: String,
    /// Risk level.
    pub risk: echo_core::Risk,
    /// `allow` or `deny`.
    pub decision: echo_core::RuleDecision,
    /// Which step of the gate (or who) decided.
    pub decided_by: echo_core::DecidedBy,
    /// The deciding rule.
    pub rule_id: Option<String>,
    /// Why.
    pub reason: String,
    /// When (RFC 3339).
    pub created_at: String,
}

/// The person's answer to an approval question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Run this call only.
    AllowOnce,
    /// Run it, and allow calls like it for the rest of this session.
    AllowSession,
    /// Run it, and always allow calls like it.
    AllowAlways,
    /// Run it, and let this automation make calls like it without asking (a pre-approval of
    /// that automation only). Outside an automation's run it allows this call once.
    AllowAutomation,
    /// Do not run it.
    Deny,
}

impl From<echo_gate::AuditEntry> for AuditEntry {
    fn from(v: echo_gate::AuditEntry) -> Self {
        Self {
            id: v.id,
            session_id: v.session_id,
            turn_id: v.turn_id,
            call_id: v.call_id,
            tool: v.tool,
            arguments: v.arguments,
            risk: v.risk,
            decision: v.decision,
            decided_by: v.decided_by,
            rule_id: v.rule_id,
            reason: v.reason,
            created_at: v.created_at,
        }
    }
}
/// A stored rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
pub struct Rule {
    /// Stable id (`r-` + 8 hex digits).
    pub id: String,
    /// Tool name, or a glob over names (`github__*`, `*`).
    pub tool: String,
    /// Argument pattern: a command prefix for `shell`, a path glob for file tools, a host
    /// (`example.com`, `*.example.com`) for network tools, a server name for MCP tools.
    /// `None` matches every call of the tool.
    pub pattern: Option<String>,
    /// What to do with a matching call.
    pub decision: RuleDecision,
    /// How long it holds.
    pub scope: RuleScope,
    /// The session of a session rule.
    pub session_id: Option<String>,
    /// Who made it: `user` (from any front end or an approval dialog), or `automation NAME`
    /// for an automation's pre-approval.
    pub created_by: String,
    /// When (RFC 3339).
    pub created_at: String,
}

impl From<echo_gate::Rule> for Rule {
    fn from(v: echo_gate::Rule) -> Self {
        Self {
            id: v.id,
            tool: v.tool,
            pattern: v.pattern,
            decision: v.decision,
            scope: v.scope,
            session_id: v.session_id,
            created_by: v.created_by,
            created_at: v.created_at,
        }
    }
}
/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpTransportKind {
    /// A child process speaking MCP on stdin/stdout.
    Stdio,
    /// A streamable-HTTP endpoint.
    Http,
}

/// Where a server is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    /// The first connection attempt is under way.
    Starting,
    /// Connected; its tools are registered.
    Ready,
    /// Not working now (see `error`); it is retried in the background.
    Restarting,
    /// Not working and not retried: the configuration must change (see `error`).
    Failed,
    /// Switched off in the configuration.
    Disabled,
    /// The manager was shut down.
    Stopped,
}

/// One server as the CLI and UI show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, TS, ToSchema)]
pub struct McpServerStatus {
    /// Configured name; its tools are `name__tool`.
    pub name: String,
    /// How it is reached.
    pub transport: McpTransportKind,
    /// Where it is in its life.
    pub state: McpServerState,
    /// Why it is not ready, or why it last broke.
    pub error: Option<String>,
    /// Tools it has registered now.
    pub tools: usize,
    /// Connection attempts after the first.
    pub restarts: u32,
    /// Process id while a stdio server runs.
    pub pid: Option<u32>,
}

impl From<echo_mcp::TransportKind> for McpTransportKind {
    fn from(v: echo_mcp::TransportKind) -> Self {
        match v {
            echo_mcp::TransportKind::Stdio => Self::Stdio,
            echo_mcp::TransportKind::Http => Self::Http,
        }
    }
}

impl From<echo_mcp::ServerState> for McpServerState {
    fn from(v: echo_mcp::ServerState) -> Self {
        match v {
            echo_mcp::ServerState::Starting => Self::Starting,
            echo_mcp::ServerState::Ready => Self::Ready,
            echo_mcp::ServerState::Restarting => Self::Restarting,
            echo_mcp::ServerState::Failed => Self::Failed,
            echo_mcp::ServerState::Disabled => Self::Disabled,
            echo_mcp::ServerState::Stopped => Self::Stopped,
        }
    }
}

impl From<echo_mcp::ServerStatus> for McpServerStatus {
    fn from(v: echo_mcp::ServerStatus) -> Self {
        Self {
            name: v.name,
            transport: v.transport.into(),
            state: v.state.into(),
            error: v.error,
            tools: v.tools,
            restarts: v.restarts,
            pid: v.pid,
        }
    }
}
