// Types of the settings routes (`/api/rules`, `/api/mcp`, `/api/approvals`,
// `/api/settings/provider`, `/api/settings/ollama`, `/api/settings/mcp`,
// `/api/settings/bootstrap`). The response and provider types are
// generated from the Rust types (`generated/engine.ts`, see `events.ts`); only the request
// body of `POST /api/rules` (echod's own `RuleBody`) and a builder of the provider update
// are written here.

export type {
  AuditEntry,
  BootstrapFile,
  ConnectionReport,
  KeySource,
  OllamaInfo,
  ProviderKind,
  ProviderSettings,
  ProviderUpdate,
  ProviderView,
  McpServerConfig,
  McpServerState,
  McpServerStatus,
  McpTransportKind,
  Rule,
  RuleDecision,
  RuleScope,
} from './generated/engine';

import type { ProviderSettings, ProviderUpdate, RuleDecision, RuleScope } from './generated/engine';

/** The body of `POST /api/rules`. */
export interface NewRule {
  tool: string;
  pattern?: string;
  decision: RuleDecision;
  scope: RuleScope;
  /** Session name, for session rules. */
  session?: string;
}

/**
 * The body of a provider save or test: the key only when one was typed, its removal only
 * when asked for (both are optional on the wire).
 */
export function providerUpdate(settings: ProviderSettings, apiKey = '', clearKey = false): ProviderUpdate {
  const update: { settings: ProviderSettings; api_key?: string; clear_api_key?: boolean } = { settings };
  if (apiKey.trim() !== '') update.api_key = apiKey.trim();
  if (clearKey) update.clear_api_key = true;
  return update as ProviderUpdate;
}
