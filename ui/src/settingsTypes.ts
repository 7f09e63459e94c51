// Response types of the settings routes (`/api/rules`, `/api/mcp`, `/api/approvals`),
// written by hand from the Rust types they serialize — `echo-gate` `rules.rs` `Rule`,
// `audit.rs` `AuditEntry`, `echo-mcp` `manager.rs` `ServerStatus` — because the generated
// bindings (`generated/engine.ts`) do not cover them yet. Keep them in step with those files.

/** What the gate does with a matching call (`echo_gate::Decision`). */
export type RuleDecision = 'allow' | 'ask' | 'deny';

/** How long a rule holds (`echo_gate::RuleScope`). */
export type RuleScope = 'session' | 'always';

/** An approval rule (`echo_gate::Rule`). */
export interface Rule {
  /** Stable id (`r-` + 8 hex digits). */
  id: string;
  /** Tool name, or a glob over names (`github__*`, `*`). */
  tool: string;
  /** Command prefix, path glob, host or MCP server; `null` matches every call of the tool. */
  pattern: string | null;
  decision: RuleDecision;
  scope: RuleScope;
  /** The session of a session rule. */
  session_id: string | null;
  /** Who made it (`cli`, `user`, `settings`). */
  created_by: string;
  /** RFC 3339. */
  created_at: string;
}

/** The body of `POST /api/rules`. */
export interface NewRule {
  tool: string;
  pattern?: string;
  decision: RuleDecision;
  scope: RuleScope;
  /** Session name, for session rules. */
  session?: string;
}

/** A recorded gate decision (`echo_gate::AuditEntry`). */
export interface AuditEntry {
  id: string;
  session_id: string | null;
  turn_id: string | null;
  call_id: string;
  tool: string;
  /** Arguments with secrets masked. */
  arguments: string;
  risk: string;
  /** `allow` or `deny`. */
  decision: string;
  /** `hard_deny`, `path_policy`, `rule`, `risk`, `user`, `timeout`, `non_interactive`, `disabled`. */
  decided_by: string;
  rule_id: string | null;
  reason: string;
  /** RFC 3339. */
  created_at: string;
}

/** How an MCP server is reached (`echo_mcp::TransportKind`). */
export type McpTransportKind = 'stdio' | 'http';

/** Where an MCP server is in its life (`echo_mcp::ServerState`, non-exhaustive). */
export type McpServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'disabled' | 'stopped';

/** One MCP server (`echo_mcp::ServerStatus`). */
export interface McpServerStatus {
  name: string;
  transport: McpTransportKind;
  state: McpServerState;
  /** Why it is not ready, or why it last broke. */
  error: string | null;
  /** Tools registered now. */
  tools: number;
  /** Connection attempts after the first. */
  restarts: number;
  /** Process id while a stdio server runs. */
  pid: number | null;
}
