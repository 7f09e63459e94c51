// Types of the settings routes (`/api/rules`, `/api/mcp`, `/api/approvals`). The response
// types are generated from the Rust types (`generated/engine.ts`, see `events.ts`); only the
// request body of `POST /api/rules` (echod's own `RuleBody`) is written here.

export type {
  AuditEntry,
  McpServerState,
  McpServerStatus,
  McpTransportKind,
  Rule,
  RuleDecision,
  RuleScope,
} from './generated/engine';

import type { RuleDecision, RuleScope } from './generated/engine';

/** The body of `POST /api/rules`. */
export interface NewRule {
  tool: string;
  pattern?: string;
  decision: RuleDecision;
  scope: RuleScope;
  /** Session name, for session rules. */
  session?: string;
}
