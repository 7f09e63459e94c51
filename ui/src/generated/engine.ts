// Generated from the engine's Rust types by
// `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript`. Do not edit.

export type EventEnvelope = { 
/**
 * Protocol version ([`EVENT_PROTOCOL_VERSION`]).
 */
v: number, 
/**
 * The turn this event belongs to.
 */
turn_id: string, 
/**
 * Position of this event within the turn, from 0.
 */
seq: number, } & ({ "type": "turn_started", 
/**
 * Session id.
 */
session_id: string, 
/**
 * Session name.
 */
session_name: string, } | { "type": "token", 
/**
 * Text to append.
 */
text: string, } | { "type": "reasoning", 
/**
 * Text to append.
 */
text: string, } | { "type": "memory_recalled", 
/**
 * The memories, best first.
 */
memories: Array<RecalledMemory>, 
/**
 * Whether vector search took part (false: keyword search only).
 */
semantic: boolean, } | { "type": "tool_call_started", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Tool name.
 */
name: string, } | { "type": "tool_call_args_delta", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Argument JSON fragment.
 */
delta: string, } | { "type": "tool_call_executing", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Complete argument JSON as the model sent it.
 */
arguments: string, } | { "type": "approval_requested", 
/**
 * Id to answer with.
 */
request_id: string, 
/**
 * The tool call it is about.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * `read_only`, `write`, `exec`, `network` or `dangerous`.
 */
risk: string, 
/**
 * The exact action: command and cwd, path, or the diff a write would apply.
 */
detail: string, 
/**
 * Why the gate asks.
 */
reason: string, 
/**
 * The narrowest rule pattern that would cover this call (for "allow for session" and
 * "always allow"), if there is one.
 */
suggested_pattern: string | null, 
/**
 * Seconds until an unanswered question counts as "deny".
 */
timeout_secs: number, } | { "type": "approval_explanation", 
/**
 * The question it belongs to.
 */
request_id: string, 
/**
 * Text to append.
 */
text: string, } | { "type": "approval_resolved", 
/**
 * The question, or empty when nothing was asked (a policy denial).
 */
request_id: string, 
/**
 * The tool call.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * `allow` or `deny`.
 */
decision: string, 
/**
 * Who decided: `user`, `timeout`, `non_interactive`, `rule`, `hard_deny`, `path_policy`,
 * `risk`, `disabled`.
 */
decided_by: string, 
/**
 * Why.
 */
reason: string, } | { "type": "tool_result", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Whether the tool succeeded.
 */
ok: boolean, 
/**
 * The result text given to the model.
 */
content: string, 
/**
 * Wall time of the call.
 */
duration_ms: number, } | { "type": "degraded", 
/**
 * Machine-readable reason, e.g. `retry`, `fallback_model`, `max_iterations`.
 */
reason: string, 
/**
 * One line for people.
 */
detail: string, } | { "type": "final", 
/**
 * The complete answer text.
 */
text: string, } | { "type": "error", 
/**
 * Machine-readable error code.
 */
code: string, 
/**
 * One line for people.
 */
message: string, } | { "type": "turn_finished", 
/**
 * `completed`, `failed` or `interrupted`.
 */
status: string, 
/**
 * Tokens used by all model calls of the turn.
 */
usage: Usage, 
/**
 * The trace id (equal to the turn id).
 */
trace_id: string, });

export type TurnEvent = { "type": "turn_started", 
/**
 * Session id.
 */
session_id: string, 
/**
 * Session name.
 */
session_name: string, } | { "type": "token", 
/**
 * Text to append.
 */
text: string, } | { "type": "reasoning", 
/**
 * Text to append.
 */
text: string, } | { "type": "memory_recalled", 
/**
 * The memories, best first.
 */
memories: Array<RecalledMemory>, 
/**
 * Whether vector search took part (false: keyword search only).
 */
semantic: boolean, } | { "type": "tool_call_started", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Tool name.
 */
name: string, } | { "type": "tool_call_args_delta", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Argument JSON fragment.
 */
delta: string, } | { "type": "tool_call_executing", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Complete argument JSON as the model sent it.
 */
arguments: string, } | { "type": "approval_requested", 
/**
 * Id to answer with.
 */
request_id: string, 
/**
 * The tool call it is about.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * `read_only`, `write`, `exec`, `network` or `dangerous`.
 */
risk: string, 
/**
 * The exact action: command and cwd, path, or the diff a write would apply.
 */
detail: string, 
/**
 * Why the gate asks.
 */
reason: string, 
/**
 * The narrowest rule pattern that would cover this call (for "allow for session" and
 * "always allow"), if there is one.
 */
suggested_pattern: string | null, 
/**
 * Seconds until an unanswered question counts as "deny".
 */
timeout_secs: number, } | { "type": "approval_explanation", 
/**
 * The question it belongs to.
 */
request_id: string, 
/**
 * Text to append.
 */
text: string, } | { "type": "approval_resolved", 
/**
 * The question, or empty when nothing was asked (a policy denial).
 */
request_id: string, 
/**
 * The tool call.
 */
call_id: string, 
/**
 * Tool name.
 */
tool: string, 
/**
 * `allow` or `deny`.
 */
decision: string, 
/**
 * Who decided: `user`, `timeout`, `non_interactive`, `rule`, `hard_deny`, `path_policy`,
 * `risk`, `disabled`.
 */
decided_by: string, 
/**
 * Why.
 */
reason: string, } | { "type": "tool_result", 
/**
 * Call id.
 */
call_id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Whether the tool succeeded.
 */
ok: boolean, 
/**
 * The result text given to the model.
 */
content: string, 
/**
 * Wall time of the call.
 */
duration_ms: number, } | { "type": "degraded", 
/**
 * Machine-readable reason, e.g. `retry`, `fallback_model`, `max_iterations`.
 */
reason: string, 
/**
 * One line for people.
 */
detail: string, } | { "type": "final", 
/**
 * The complete answer text.
 */
text: string, } | { "type": "error", 
/**
 * Machine-readable error code.
 */
code: string, 
/**
 * One line for people.
 */
message: string, } | { "type": "turn_finished", 
/**
 * `completed`, `failed` or `interrupted`.
 */
status: string, 
/**
 * Tokens used by all model calls of the turn.
 */
usage: Usage, 
/**
 * The trace id (equal to the turn id).
 */
trace_id: string, };

export type RecalledMemory = { 
/**
 * Memory id.
 */
id: string, 
/**
 * Its text.
 */
content: string, 
/**
 * Its tier.
 */
tier: string, 
/**
 * Its source.
 */
source: string, };

export type Usage = { 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Completion tokens.
 */
output_tokens: number, };

export type SessionSummary = { 
/**
 * Id.
 */
id: string, 
/**
 * Unique name (what `--session` takes).
 */
name: string, 
/**
 * Title, from the first message.
 */
title: string | null, 
/**
 * Creation time.
 */
created_at: string, 
/**
 * Last activity.
 */
updated_at: string, 
/**
 * Number of stored messages.
 */
message_count: number, 
/**
 * Number of turns.
 */
turn_count: number, 
/**
 * Messages up to this `seq` are consolidated into long-term memory.
 */
consolidated_seq: number, };

export type StoredMessage = { 
/**
 * Id.
 */
id: string, 
/**
 * Session.
 */
session_id: string, 
/**
 * Turn that produced it.
 */
turn_id: string | null, 
/**
 * Order within the session, from 1.
 */
seq: number, 
/**
 * Role.
 */
role: Role, 
/**
 * Text.
 */
content: string, 
/**
 * Reasoning removed from the visible text, if any.
 */
reasoning: string | null, 
/**
 * Tool calls of an assistant message.
 */
tool_calls: Array<ToolCall>, 
/**
 * The call a tool message answers.
 */
tool_call_id: string | null, 
/**
 * Tool name of a tool message.
 */
name: string | null, 
/**
 * `complete`, or `partial` for an answer cut short.
 */
status: string, 
/**
 * When it was stored.
 */
created_at: string, };

export type ToolCall = { 
/**
 * Provider-assigned call id; a tool result refers to it.
 */
id: string, 
/**
 * Tool name.
 */
name: string, 
/**
 * Arguments as raw JSON text.
 */
arguments: string, };

export type Role = "system" | "user" | "assistant" | "tool";

export type Rule = { 
/**
 * Stable id (`r-` + 8 hex digits).
 */
id: string, 
/**
 * Tool name, or a glob over names (`github__*`, `*`).
 */
tool: string, 
/**
 * Argument pattern: a command prefix for `shell`, a path glob for file tools, a host
 * (`example.com`, `*.example.com`) for network tools, a server name for MCP tools.
 * `None` matches every call of the tool.
 */
pattern: string | null, 
/**
 * What to do with a matching call.
 */
decision: RuleDecision, 
/**
 * How long it holds.
 */
scope: RuleScope, 
/**
 * The session of a session rule.
 */
session_id: string | null, 
/**
 * Who made it (`cli`, `user`, `settings`).
 */
created_by: string, 
/**
 * When (RFC 3339).
 */
created_at: string, };

export type RuleDecision = "allow" | "ask" | "deny";

export type RuleScope = "session" | "always";

export type AuditEntry = { 
/**
 * Id.
 */
id: string, 
/**
 * Session.
 */
session_id: string | null, 
/**
 * Turn.
 */
turn_id: string | null, 
/**
 * Tool-call id.
 */
call_id: string, 
/**
 * Tool.
 */
tool: string, 
/**
 * Arguments with secrets masked.
 */
arguments: string, 
/**
 * Risk level.
 */
risk: string, 
/**
 * `allow` or `deny`.
 */
decision: string, 
/**
 * `hard_deny`, `path_policy`, `rule`, `risk`, `user`, `timeout`, `non_interactive`,
 * `disabled`.
 */
decided_by: string, 
/**
 * The deciding rule.
 */
rule_id: string | null, 
/**
 * Why.
 */
reason: string, 
/**
 * When (RFC 3339).
 */
created_at: string, };

export type McpServerStatus = { 
/**
 * Configured name; its tools are `name__tool`.
 */
name: string, 
/**
 * How it is reached.
 */
transport: McpTransportKind, 
/**
 * Where it is in its life.
 */
state: McpServerState, 
/**
 * Why it is not ready, or why it last broke.
 */
error: string | null, 
/**
 * Tools it has registered now.
 */
tools: number, 
/**
 * Connection attempts after the first.
 */
restarts: number, 
/**
 * Process id while a stdio server runs.
 */
pid: number | null, };

export type McpTransportKind = "stdio" | "http";

export type McpServerState = "starting" | "ready" | "restarting" | "failed" | "disabled" | "stopped";

export type McpServerConfig = { 
/**
 * Short name; its tools appear as `name__tool`. Letters, digits, `-` and `_`.
 */
name: string, 
/**
 * Program to start (stdio transport).
 */
command: string | null, 
/**
 * Its arguments.
 */
args: Array<string>, 
/**
 * Extra environment variables for the program.
 */
env: { [key in string]: string }, 
/**
 * Streamable-HTTP endpoint (instead of `command`).
 */
url: string | null, 
/**
 * Extra HTTP headers (e.g. `Authorization`).
 */
headers: { [key in string]: string }, 
/**
 * Whether the server is used.
 */
enabled: boolean, };

export type ProviderKind = "openai" | "anthropic" | "ollama";

export type ProviderSettings = { 
/**
 * Wire protocol.
 */
kind: ProviderKind, 
/**
 * Server base URL, e.g. `https://api.openai.com/v1`.
 */
base_url: string, 
/**
 * Main model.
 */
model: string, 
/**
 * Models tried in order on the same server when the main one keeps failing.
 */
fallback_models: Array<string>, };

export type KeySource = "environment" | "keychain" | "none";

export type ProviderView = { 
/**
 * Kind, base URL and models in force.
 */
settings: ProviderSettings, 
/**
 * Where the API key in force comes from.
 */
key_source: KeySource, 
/**
 * Which keychain keeps keys (or why none can).
 */
keychain: string, 
/**
 * Whether keys can be saved at all.
 */
keychain_available: boolean, 
/**
 * `ECHO_LLM_*` variables set for this process: they win over saved settings at the
 * next start.
 */
env_overrides: Array<string>, };

export type ProviderUpdate = { 
/**
 * Kind, base URL and models.
 */
settings: ProviderSettings, 
/**
 * A new API key for this server (kept in the keychain); absent keeps the stored one.
 */
api_key?: string, 
/**
 * Remove the stored key for this server.
 */
clear_api_key?: boolean, };

export type ConnectionReport = { 
/**
 * Whether the model answered.
 */
ok: boolean, 
/**
 * `ok`, or the model error's code (`auth`, `connect`, `timeout`, `status`, …).
 */
code: string, 
/**
 * What happened, naming the server and model.
 */
message: string, 
/**
 * Time to the answer (or the failure).
 */
latency_ms: number, };

export type OllamaInfo = { 
/**
 * Base URL to use for it (its OpenAI-compatible endpoint).
 */
base_url: string, 
/**
 * Models it has pulled.
 */
models: Array<string>, };

export type BootstrapFile = { 
/**
 * `AGENTS.md`, `SOUL.md`, `USER.md` or `TOOLS.md`.
 */
name: string, 
/**
 * Its text (the default's when the user has not saved one).
 */
content: string, 
/**
 * Whether this is the built-in default (no file in the data directory).
 */
is_default: boolean, 
/**
 * Where the user's copy lives (or will live once saved).
 */
path: string, };
