// Generated from the engine's Rust types and its operation table by
// `ECHO_UPDATE_TS=1 cargo test -p echo-agent --test typescript`. Do not edit.

/** Version of the turn event protocol (`EventEnvelope.v`). */
export const EVENT_PROTOCOL_VERSION = 1;

export type AccessEvent = { 
/**
 * Id.
 */
id: string, 
/**
 * What happened.
 */
kind: AccessEventKind, 
/**
 * The device it concerned, if one.
 */
device_id: string | null, 
/**
 * That device's name at the time.
 */
device_name: string | null, 
/**
 * The address a pairing request came from (a reverse proxy's, behind one); none for
 * what the owner did (codes made, revocations).
 */
peer: string | null, 
/**
 * When (RFC 3339).
 */
at: string, };

export type AccessEventKind = "pairing_started" | "paired" | "page_paired" | "wrong_code" | "codes_locked" | "revoked";

export type AddAutomation = { 
/**
 * Unique name; its runs' sessions are named after it.
 */
name: string, 
/**
 * What it does.
 */
spec: AutomationSpec, 
/**
 * Switched on (default yes).
 */
enabled?: boolean, };

export type AddProject = { 
/**
 * Its name (unique).
 */
name: string, 
/**
 * Standing instructions for its conversations.
 */
instructions?: string, 
/**
 * Absolute paths of existing folders: its conversations' workspace.
 */
folders?: Array<string>, };

export type AddRule = { 
/**
 * Tool name or glob.
 */
tool: string, 
/**
 * Command prefix, path glob, host or MCP server.
 */
pattern?: string, 
/**
 * What the rule decides.
 */
decision: RuleDecision, 
/**
 * `always` (the default) or `session`.
 */
scope?: RuleScope, 
/**
 * Session name, for session rules.
 */
session?: string, };

export type AnswerApproval = { 
/**
 * The question (`ApprovalRequested.request_id`).
 */
request_id: ApprovalId, 
/**
 * The answer.
 */
answer: ApprovalAnswer, };

export type ApprovalAnswer = "allow_once" | "allow_session" | "allow_always" | "allow_automation" | "deny";

export type ApprovalId = string;

export type ApprovalQueue = { 
/**
 * Answered and expired ones too (the latest 200, newest first).
 */
all?: boolean, };

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
risk: Risk, 
/**
 * `allow` or `deny`.
 */
decision: RuleDecision, 
/**
 * Which step of the gate (or who) decided.
 */
decided_by: DecidedBy, 
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

export type Automation = { 
/**
 * Stable id.
 */
id: AutomationId, 
/**
 * Unique name; its runs' sessions are named after it.
 */
name: string, 
/**
 * Switched on.
 */
enabled: boolean, 
/**
 * The definition.
 */
spec: AutomationSpec, 
/**
 * What its watcher/scheduler is doing.
 */
state: AutomationState, 
/**
 * Why it is in `error` or `rate_limited`.
 */
state_reason?: string, 
/**
 * Schedules: the last fire time handled (RFC 3339).
 */
last_fire?: string, 
/**
 * Watch rules: file events up to this time were seen and queued (RFC 3339); what
 * changed later while nothing watched is queued when a process takes the rule up.
 */
watched_until?: string, 
/**
 * When it was made (RFC 3339).
 */
created_at: string, 
/**
 * When it last changed (RFC 3339).
 */
updated_at: string, };

export type AutomationId = string;

export type AutomationNotice = { 
/**
 * What happened.
 */
kind: AutomationNoticeKind, 
/**
 * The automation.
 */
automation_id: AutomationId, 
/**
 * Its name.
 */
automation: string, 
/**
 * The run.
 */
run_id: RunId, 
/**
 * The file that set the run off.
 */
path?: string, 
/**
 * Failed: why. Needs approval: the exact action.
 */
detail?: string, 
/**
 * Needs approval: the tool that asks.
 */
tool?: string, 
/**
 * Needs approval: the question's id.
 */
question_id?: string, 
/**
 * The run's session.
 */
session?: string, 
/**
 * The run's turn (and trace).
 */
turn_id?: string, 
/**
 * When it happened (RFC 3339).
 */
at: string, };

export type AutomationNoticeKind = "done" | "failed" | "needs_approval";

export type AutomationNotices = { 
/**
 * Oldest first.
 */
notices: Array<AutomationNotice>, 
/**
 * Pass it back to get only what came later.
 */
cursor: string, 
/**
 * Questions waiting for an answer.
 */
pending_approvals: number, 
/**
 * Automations switched on.
 */
enabled: number, 
/**
 * All automations.
 */
automations: number, };

export type AutomationPreview = { 
/**
 * Schedules: the cron expression in force (a phrase's translation).
 */
cron?: string, 
/**
 * Schedules: the zone it is read in.
 */
time_zone?: string, 
/**
 * Schedules: the next fire times (RFC 3339 in that zone).
 */
next_fires: Array<string>, 
/**
 * Watch rules: the folders, `~` expanded.
 */
folders: Array<string>, 
/**
 * Watch rules: folders that do not exist now (the rule will wait for them).
 */
missing_folders: Array<string>, };

export type AutomationRun = { 
/**
 * Stable id.
 */
id: RunId, 
/**
 * Arrival order.
 */
seq: number, 
/**
 * Its automation.
 */
automation_id: AutomationId, 
/**
 * Where it is.
 */
status: RunStatus, 
/**
 * What set it off.
 */
cause: RunCause, 
/**
 * The file event (file runs).
 */
event?: FileEvent, 
/**
 * The file (file runs).
 */
path?: string, 
/**
 * Where a renamed file was.
 */
old_path?: string, 
/**
 * The fire time (schedules), RFC 3339.
 */
fire_time?: string, 
/**
 * Automations whose runs led to this one.
 */
chain: Array<AutomationId>, 
/**
 * Why it was skipped, failed or requeued.
 */
reason?: string, 
/**
 * Its session (once it started).
 */
session?: string, 
/**
 * Its turn, which is also its trace (once it started).
 */
turn_id?: string, 
/**
 * How many times it was started (a run cut off by a quit starts again once).
 */
attempts: number, 
/**
 * Queued at (RFC 3339).
 */
created_at: string, 
/**
 * Started at.
 */
started_at?: string, 
/**
 * Ended at.
 */
finished_at?: string, };

export type AutomationRuns = { 
/**
 * Its id or name.
 */
automation: string, 
/**
 * At most this many (default 100).
 */
limit?: number, };

export type AutomationSpec = { 
/**
 * What sets a run off.
 */
trigger: AutomationTrigger, 
/**
 * The message each run sends, a template over `{{path}}`, `{{name}}`, `{{ext}}`,
 * `{{event}}`, `{{old_path}}` (renames) and `{{time}}`.
 */
prompt: string, 
/**
 * The tools a run may use (names from the registry); absent: every tool.
 */
tools?: Array<string>, 
/**
 * Calls this automation may make without asking (its runs only). Hard-deny patterns and
 * secret paths still apply.
 */
allow: Array<PreApproval>, 
/**
 * The task type its runs are routed as (`[routing]`); absent: judged from the prompt.
 */
task?: TaskType, 
/**
 * The project its runs' conversations belong to (by name); absent: no project.
 */
project?: string, 
/**
 * Runs of this automation at a time (1–4). Runs start in the order their events came.
 */
concurrency: number, 
/**
 * Most runs queued in one hour; past it, events are skipped (with that reason) and the
 * automation shows `rate_limited`.
 */
max_runs_per_hour: number, 
/**
 * Most runs for one and the same file in one hour (a file rewritten over and over).
 */
max_runs_per_file_per_hour: number, };

export type AutomationState = "active" | "paused" | "error" | "rate_limited" | "idle";

export type AutomationTrigger = { "kind": "watch" } & Watch | { "kind": "schedule" } & Schedule;

export type AutomationView = { 
/**
 * The automation.
 */
automation: Automation, 
/**
 * Schedules: the next fire times (RFC 3339 in the schedule's zone).
 */
next_fires: Array<string>, 
/**
 * Its runs by status.
 */
runs: RunCounts, };

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

export type BootstrapFiles = Record<symbol, never>;

export type CancelTurn = { 
/**
 * The turn.
 */
turn_id: TurnId, };

export type CapturedRequest = { 
/**
 * The messages, system messages included, in order.
 */
messages: Array<Message>, 
/**
 * The tools offered.
 */
tools: Array<ToolSpec>, 
/**
 * Upper bound on answer tokens (0 = the server's default).
 */
max_tokens: number, 
/**
 * Sampling temperature; the server's default when `None`.
 */
temperature: number | null, 
/**
 * `auto`, `none` or the name of the tool the model had to call.
 */
tool_choice: string, };

export type CapturedResponse = { 
/**
 * The text as streamed (with any `<think>` block).
 */
text: string, 
/**
 * Reasoning sent on its own channel.
 */
reasoning: string, 
/**
 * Tool calls, in order.
 */
tool_calls: Array<ToolCall>, 
/**
 * Token usage.
 */
usage: Usage, 
/**
 * Why generation stopped, as the server named it.
 */
finish_reason: string | null, };

export type CaseMemory = { 
/**
 * Its text.
 */
content: string, 
/**
 * Its slot.
 */
slot: string | null, 
/**
 * Whether it was pinned.
 */
pinned: boolean, };

export type CaseToolCall = { 
/**
 * Tool name.
 */
name: string, 
/**
 * Arguments as the model wrote them (JSON text).
 */
arguments: string, 
/**
 * What the tool returned to the model.
 */
result: string, 
/**
 * How it failed, if it did (`denied`, `timeout`, ...).
 */
error_kind: string | null, };

export type CheckData = Record<symbol, never>;

export type Checksum = "pinned" | "published_by_host";

export type Conflict = { 
/**
 * Id.
 */
id: string, 
/**
 * One side.
 */
memory_a: string, 
/**
 * The other side.
 */
memory_b: string, 
/**
 * The judge's verdict.
 */
verdict: MemoryVerdict, 
/**
 * The judge's explanation.
 */
explanation: string | null, 
/**
 * Open (waiting for the person) or resolved.
 */
status: ConflictStatus, 
/**
 * How it was resolved.
 */
resolution: string | null, 
/**
 * When it was found.
 */
created_at: string, 
/**
 * When it was resolved.
 */
resolved_at: string | null, };

export type ConflictId = string;

export type ConflictStatus = "open" | "resolved";

export type ConnectionReport = { 
/**
 * Whether the model answered.
 */
ok: boolean, 
/**
 * The model error's code when it did not answer.
 */
code: TurnErrorCode | null, 
/**
 * What happened, naming the server and model.
 */
message: string, 
/**
 * Time to the answer (or the failure).
 */
latency_ms: number, };

export type DataCheck = { 
/**
 * What is wrong, one sentence each; empty when all is well.
 */
problems: Array<string>, 
/**
 * SQLite's integrity check: `ok`, or its findings.
 */
integrity: string, 
/**
 * Conversations.
 */
sessions: number, 
/**
 * Messages across them.
 */
messages: number, 
/**
 * Turns left accepted or running by a process that is gone (recovered when this
 * process opened the data directory, so this is 0 unless recovery failed).
 */
unfinished_turns: number, 
/**
 * Consolidation claims left by a process that is gone (given back the same way).
 */
unfinished_consolidations: number, 
/**
 * Memories that are not deleted, in SQLite (the source of truth).
 */
memories: number, 
/**
 * Memories in the keyword search index.
 */
search_index: number, 
/**
 * Memories in the vector index, after it repaired itself and caught up; absent without
 * an embedder, or when the index cannot be opened (a problem says why).
 */
vectors: number | null, };

export type DataDeleted = { 
/**
 * Conversations deleted.
 */
sessions: number, 
/**
 * Memories deleted (every tier, every status).
 */
memories: number, 
/**
 * Rows deleted across every table (conversations, traces, memories, automations, …).
 */
rows: number, 
/**
 * Whether the person's `USER.md` was removed (the default comes back).
 */
user_notes: boolean, };

export type DecidedBy = "disabled" | "hard_deny" | "path_policy" | "rule" | "risk" | "user" | "timeout" | "non_interactive";

export type Degradation = "retry" | "model_busy" | "fallback_model" | "max_iterations" | "circuit_open" | "context_trimmed" | "tools_trimmed" | "summary_failed" | "planner_failed" | "embedding_failed" | "memory_unavailable" | "judge_fallback" | "invalid_sequence" | "bootstrap_cut" | "research_retry" | "research_cache" | "research_node_skipped" | "partial_report" | "citation_unresolved" | "citation_unsupported" | "citation_check_failed" | "side_model_failed";

export type DegradationCount = { 
/**
 * The fallback.
 */
reason: Degradation, 
/**
 * Turns that took it.
 */
turns: number, 
/**
 * Its share of all turns in the window.
 */
rate: number, };

export type DegradationStats = { 
/**
 * The start of the window (RFC 3339).
 */
since: string, 
/**
 * Turns accepted since then.
 */
turns: number, 
/**
 * Those that took at least one fallback.
 */
degraded_turns: number, 
/**
 * `degraded_turns / turns` (0 without turns).
 */
rate: number, 
/**
 * Turns that took each fallback, most first.
 */
by_reason: Array<DegradationCount>, };

export type DeleteAllData = { 
/**
 * The typed confirmation.
 */
confirm: string, };

export type DeleteSession = { 
/**
 * Session name.
 */
name: string, 
/**
 * Keep, forget or delete the memories learned in it.
 */
memories: LearnedMemories, };

export type DesktopSettings = Record<symbol, never>;

export type DesktopSettingsView = { 
/**
 * The quick-ask global shortcut, e.g. `CommandOrControl+Shift+Space`.
 */
quick_ask_shortcut: string, 
/**
 * Whether closing the main window keeps the app in the tray.
 */
close_to_tray: boolean, };

export type DetectOllama = Record<symbol, never>;

export type Device = { 
/**
 * Id (what `revoke_device` takes).
 */
id: string, 
/**
 * What the person called it.
 */
name: string, 
/**
 * Waiting for its code, paired, or revoked.
 */
state: DeviceState, 
/**
 * When its pairing started.
 */
created_at: string, 
/**
 * When its pairing code expires (waiting only).
 */
code_expires_at: string | null, 
/**
 * When it paired.
 */
paired_at: string | null, 
/**
 * Its last request with its token.
 */
last_seen_at: string | null, 
/**
 * When it was revoked.
 */
revoked_at: string | null, };

export type DevicePairing = { 
/**
 * The device it will pair.
 */
device: Device, 
/**
 * The code the device gives `POST /api/pair` (or the address's `#pair=` fragment).
 */
code: string, };

export type DeviceState = "waiting" | "paired" | "revoked";

export type DownloadState = { 
/**
 * Bytes on disk.
 */
done: number, 
/**
 * The whole size, once the server said.
 */
total: number | null, 
/**
 * Whether it ended (then `error` says whether it failed).
 */
finished: boolean, 
/**
 * Why it failed.
 */
error: string | null, };

export type EditAutomation = { 
/**
 * Its id or name.
 */
automation: string, 
/**
 * The new name.
 */
name?: string, 
/**
 * The new definition.
 */
spec?: AutomationSpec, };

export type EditProject = { 
/**
 * The project's name now.
 */
name: string, 
/**
 * Its new name.
 */
new_name?: string, 
/**
 * New instructions (empty: none).
 */
instructions?: string, 
/**
 * New folders (replacing the old list).
 */
folders?: Array<string>, };

export type EntryPoint = "cli" | "desktop" | "quick_ask" | "gateway" | "automation" | "bench";

export type ErrorBody = { 
/**
 * The error.
 */
error: ErrorDetail, };

export type ErrorCode = "invalid_input" | "not_found" | "busy" | "store" | "model_config" | "model_call" | "memory" | "data_dir" | "keychain" | "unauthorized" | "foreign_host" | "foreign_origin" | "rate_limited" | "internal";

export type ErrorDetail = { 
/**
 * The kind of failure.
 */
code: ErrorCode, 
/**
 * One line for people.
 */
message: string, };

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
 * How much harm the tool can do.
 */
risk: Risk, 
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
decision: RuleDecision, 
/**
 * Who (or which step of the gate) decided.
 */
decided_by: DecidedBy, 
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
 * Which fallback.
 */
reason: Degradation, 
/**
 * One line for people.
 */
detail: string, } | { "type": "research_progress", 
/**
 * The whole picture.
 */
progress: ResearchProgress, } | { "type": "final", 
/**
 * The complete answer text.
 */
text: string, } | { "type": "follow_ups", 
/**
 * The questions, one line each.
 */
questions: Array<string>, } | { "type": "error", 
/**
 * Machine-readable error code.
 */
code: TurnErrorCode, 
/**
 * One line for people.
 */
message: string, } | { "type": "turn_finished", 
/**
 * `completed`, `failed` or `interrupted`.
 */
status: TurnStatus, 
/**
 * Tokens used by all model calls of the turn.
 */
usage: Usage, 
/**
 * The trace id (equal to the turn id).
 */
trace_id: string, });

export type Fading = { 
/**
 * The memory.
 */
memory_id: string, 
/**
 * As of when.
 */
now: string, 
/**
 * Pinned memories do not decay.
 */
pinned: boolean, 
/**
 * Importance before decay.
 */
importance: number, 
/**
 * Current half-life in days (it grows with each use).
 */
half_life_days: number, 
/**
 * Effective importance now.
 */
effective_now: number, 
/**
 * Below this the sweep archives it.
 */
archive_below: number, 
/**
 * When it was last used in a prompt (or created, when never).
 */
last_touch: string | null, 
/**
 * When it stops being valid.
 */
valid_until: string | null, 
/**
 * When the sweep will archive it unless it is used again: when it fades below the
 * threshold or expires, whichever comes first; `None` when neither will happen (pinned
 * without expiry, or a tier that does not fade).
 */
archives_at: string | null, 
/**
 * `faded` or `expired`, with `archives_at`.
 */
archive_reason: string | null, 
/**
 * The curve, oldest first.
 */
points: Array<FadingPoint>, 
/**
 * When it was used in prompts (from the traces), oldest first.
 */
uses: Array<string>, };

export type FadingPoint = { 
/**
 * When.
 */
at: string, 
/**
 * Effective importance then.
 */
effective: number, };

export type FetchLocalModel = { 
/**
 * Catalog id, e.g. `qwen2.5-0.5b`.
 */
id: string, };

export type FileEvent = "created" | "modified" | "deleted" | "renamed";

export type FlushReport = { 
/**
 * Vectors written.
 */
embedded: number, 
/**
 * Vectors removed.
 */
deleted: number, };

export type GetAutomation = { 
/**
 * Its id or name.
 */
automation: string, };

export type GetAutomationNotices = { 
/**
 * The cursor the last call returned; absent: start now (nothing older is news).
 */
after?: string, };

export type GetMemorySettings = Record<symbol, never>;

export type GetProvider = Record<symbol, never>;

export type GetSearch = Record<symbol, never>;

export type GetTrace = { 
/**
 * The turn.
 */
turn_id: TurnId, };

export type GetTraceSettings = Record<symbol, never>;

export type History = { 
/**
 * Session name.
 */
session: string, };

export type HistoryEntry = { 
/**
 * Row id.
 */
id: number, 
/**
 * Rows of one change share this id.
 */
change_id: string, 
/**
 * Memory.
 */
memory_id: string, 
/**
 * `created`, `edited`, `superseded`, `reinforced`, `archived`, `restored`, `deleted`, `pinned`, `unpinned`, `undo`, `conflict`, `resolved`.
 */
action: MemoryAction, 
/**
 * Who.
 */
actor: MemoryActor, 
/**
 * Why.
 */
reason: string | null, 
/**
 * The row before (`None` for a creation).
 */
before: unknown, 
/**
 * The row after.
 */
after: unknown, 
/**
 * When.
 */
at: string, };

export type ImportCandidate = { 
/**
 * The card.
 */
card: ImportCard, 
/**
 * Its clashes with the memories there (empty: it adds a new memory and changes none).
 */
clashes: Array<ImportClash>, };

export type ImportCard = { 
/**
 * The memory as a sentence.
 */
content: string, 
/**
 * What it is about, snake_case (`home_city`), when the model named it.
 */
slot?: string, 
/**
 * The slot's value in a few words.
 */
value?: string, 
/**
 * When it stops holding (RFC 3339 date), when the text says.
 */
valid_until?: string, 
/**
 * The words of the pasted text it was read from (kept as the memory's evidence).
 */
evidence: string, 
/**
 * The project it goes to (its name); absent: a global memory.
 */
project?: string, };

export type ImportClash = { 
/**
 * What would happen to it.
 */
kind: ImportClashKind, 
/**
 * The memory there.
 */
memory: Memory, 
/**
 * The judge's reason.
 */
explanation: string, };

export type ImportClashKind = "duplicate" | "replaces" | "loses_to" | "review";

export type ImportPreview = { 
/**
 * The cards, in the order of the text.
 */
cards: Array<ImportCandidate>, 
/**
 * What the model proposed and was left out, with why (not in the text, not a valid
 * memory).
 */
dropped: Array<string>, };

export type ImportReport = { 
/**
 * Memories written (new).
 */
created: number, 
/**
 * Memories that matched one already there (reinforced instead).
 */
duplicates: number, 
/**
 * Lines skipped because the memory was not active in the export (superseded, archived, deleted).
 */
skipped_inactive: number, 
/**
 * Memories of a project the file does not describe (exported before projects were),
 * imported as global ones.
 */
outside_projects: number, 
/**
 * Working notes of conversations that are not in this data directory, left out: such a
 * note belongs to its conversation alone and would be recalled nowhere here.
 */
outside_sessions: number, };

export type KeySource = "environment" | "keychain" | "none";

export type LearnedInTurn = { 
/**
 * The memory as it is now.
 */
memory: Memory, 
/**
 * The change that made it: `memory_undo` with it takes the memory back out (and puts
 * back what it replaced).
 */
change_id: string, 
/**
 * The text of the memory it replaced, when it updated one.
 */
replaced: string | null, };

export type LearnedMemories = "keep" | "forget" | "delete";

export type ListAccessEvents = { 
/**
 * At most this many entries (default 100).
 */
limit?: number, };

export type ListApprovals = { 
/**
 * At most this many (default 100).
 */
limit?: number, };

export type ListAutomations = Record<symbol, never>;

export type ListDevices = Record<symbol, never>;

export type ListLocalModels = Record<symbol, never>;

export type ListProjects = Record<symbol, never>;

export type ListRules = Record<symbol, never>;

export type ListSessions = Record<symbol, never>;

export type ListTraces = { 
/**
 * At most this many (default 50, at most 1000).
 */
limit?: number, 
/**
 * Only this session (its name).
 */
session?: string, 
/**
 * Only turns with this status.
 */
status?: TurnStatus, 
/**
 * Only degraded (`true`) or only clean (`false`) turns.
 */
degraded?: boolean, 
/**
 * Only turns this model answered.
 */
model?: string, 
/**
 * Only turns that asked (`true`) or did not ask (`false`) for approval.
 */
has_approvals?: boolean, 
/**
 * Accepted at or after this time (RFC 3339).
 */
since?: string, 
/**
 * Accepted before this time (RFC 3339).
 */
until?: string, };

export type LocalModelEntry = { 
/**
 * Short name (`echod model fetch ID`).
 */
id: string, 
/**
 * What a person reads.
 */
name: string, 
/**
 * Approximate download size.
 */
size_bytes: number, 
/**
 * Licence of the weights.
 */
license: string, 
/**
 * What it is good for.
 */
note: string, 
/**
 * What its download is checked against.
 */
checksum: Checksum, 
/**
 * The installed file, if any.
 */
path: string | null, 
/**
 * Whether it is the model in force.
 */
in_use: boolean, 
/**
 * Its download in this process, if one was started.
 */
download: DownloadState | null, };

export type LocalModels = { 
/**
 * Where downloads go.
 */
dir: string, 
/**
 * The GGUF file in force when the provider is the built-in model.
 */
in_use: string | null, 
/**
 * Recommended models, smallest first.
 */
models: Array<LocalModelEntry>, 
/**
 * Threads the built-in model computes with in this process: `llm.threads` when it was
 * set at start, else the machine's physical cores.
 */
threads: number, };

export type McpConfig = Record<symbol, never>;

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

export type McpServerState = "starting" | "ready" | "restarting" | "failed" | "disabled" | "stopped";

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

export type McpServers = { 
/**
 * Wait up to this many seconds (at most 30) for servers still starting; absent: 0.
 */
settle_secs?: number, };

export type McpTransportKind = "stdio" | "http";

export type Memory = { 
/**
 * Id (UUIDv7).
 */
id: string, 
/**
 * Tier.
 */
tier: MemoryTier, 
/**
 * `fact`, `preference`, `plan`, `relationship`, `episode`, `note`, ...
 */
kind: string, 
/**
 * Who or what it is about (`user` by default).
 */
subject: string, 
/**
 * Normalised slot, e.g. `diet`; two memories with the same subject and slot compete.
 */
slot: string | null, 
/**
 * The memory as a sentence.
 */
content: string, 
/**
 * The slot's value, when it has one (e.g. `vegetarian`).
 */
value: string | null, 
/**
 * Provenance.
 */
source: MemorySource, 
/**
 * 0..1.
 */
confidence: number, 
/**
 * 0..1, before decay.
 */
importance: number, 
/**
 * Importance after decay, as of when this record was read (computed, not stored).
 */
effective_importance: number, 
/**
 * Pinned memories never decay.
 */
pinned: boolean, 
/**
 * Times injected into a prompt.
 */
access_count: number, 
/**
 * Last injection.
 */
last_accessed: string | null, 
/**
 * Half-life in days.
 */
stability: number, 
/**
 * Creation time.
 */
created_at: string, 
/**
 * Last change.
 */
updated_at: string, 
/**
 * From when it holds.
 */
valid_from: string | null, 
/**
 * Until when it holds; archived at once after that.
 */
valid_until: string | null, 
/**
 * Lifecycle.
 */
status: MemoryStatus, 
/**
 * The memory that replaced this one.
 */
superseded_by: string | null, 
/**
 * When it stopped being valid (superseded or expired).
 */
invalid_at: string | null, 
/**
 * Tier before archival.
 */
archived_from: MemoryTier | null, 
/**
 * Incremented on every change.
 */
version: number, 
/**
 * `global` or `session:<id>`.
 */
scope: string, 
/**
 * Session it came from.
 */
source_session_id: string | null, 
/**
 * Turn it came from.
 */
source_turn_id: string | null, 
/**
 * Message it came from.
 */
source_message_id: string | null, 
/**
 * Quote that supports it.
 */
evidence: string | null, 
/**
 * Surrounding text indexed for search but never shown or injected (e.g. the neighbouring
 * turns of a conversation excerpt).
 */
context?: string | null, };

export type MemoryAction = "created" | "confirmed" | "edited" | "superseded" | "moved" | "pinned" | "unpinned" | "archived" | "restored" | "deleted" | "undo";

export type MemoryActor = "user" | "extraction" | "consolidation" | "tool" | "import" | "sweep";

export type MemoryAdd = { 
/**
 * The text.
 */
content: string, 
/**
 * A slot such as `preference.drink`.
 */
slot?: string, 
/**
 * Never fades.
 */
pinned?: boolean, 
/**
 * The project it belongs to (by name); absent: a global memory.
 */
project?: string, };

export type MemoryConflicts = { 
/**
 * Settled ones too.
 */
all?: boolean, };

export type MemoryDelete = { 
/**
 * The memories.
 */
ids: Array<MemoryId>, };

export type MemoryDeleteAll = { 
/**
 * The typed confirmation.
 */
confirm: string, };

export type MemoryDetail = { 
/**
 * The memory that superseded it, if any.
 */
superseded_by_memory: Memory | null, 
/**
 * Memories it superseded.
 */
supersedes: Array<Memory>, 
/**
 * Every recorded change, oldest first.
 */
history: Array<HistoryEntry>, 
/**
 * Conflicts it is part of.
 */
conflicts: Array<Conflict>, 
/**
 * How many answers (turns) had it in their request, as far as the read log keeps.
 */
answers: number, 
/**
 * The read log kept (the newest reads), newest first.
 */
reads: Array<MemoryReadEntry>, 
/**
 * Id (UUIDv7).
 */
id: string, 
/**
 * Tier.
 */
tier: MemoryTier, 
/**
 * `fact`, `preference`, `plan`, `relationship`, `episode`, `note`, ...
 */
kind: string, 
/**
 * Who or what it is about (`user` by default).
 */
subject: string, 
/**
 * Normalised slot, e.g. `diet`; two memories with the same subject and slot compete.
 */
slot: string | null, 
/**
 * The memory as a sentence.
 */
content: string, 
/**
 * The slot's value, when it has one (e.g. `vegetarian`).
 */
value: string | null, 
/**
 * Provenance.
 */
source: MemorySource, 
/**
 * 0..1.
 */
confidence: number, 
/**
 * 0..1, before decay.
 */
importance: number, 
/**
 * Importance after decay, as of when this record was read (computed, not stored).
 */
effective_importance: number, 
/**
 * Pinned memories never decay.
 */
pinned: boolean, 
/**
 * Times injected into a prompt.
 */
access_count: number, 
/**
 * Last injection.
 */
last_accessed: string | null, 
/**
 * Half-life in days.
 */
stability: number, 
/**
 * Creation time.
 */
created_at: string, 
/**
 * Last change.
 */
updated_at: string, 
/**
 * From when it holds.
 */
valid_from: string | null, 
/**
 * Until when it holds; archived at once after that.
 */
valid_until: string | null, 
/**
 * Lifecycle.
 */
status: MemoryStatus, 
/**
 * The memory that replaced this one.
 */
superseded_by: string | null, 
/**
 * When it stopped being valid (superseded or expired).
 */
invalid_at: string | null, 
/**
 * Tier before archival.
 */
archived_from: MemoryTier | null, 
/**
 * Incremented on every change.
 */
version: number, 
/**
 * `global` or `session:<id>`.
 */
scope: string, 
/**
 * Session it came from.
 */
source_session_id: string | null, 
/**
 * Turn it came from.
 */
source_turn_id: string | null, 
/**
 * Message it came from.
 */
source_message_id: string | null, 
/**
 * Quote that supports it.
 */
evidence: string | null, 
/**
 * Surrounding text indexed for search but never shown or injected (e.g. the neighbouring
 * turns of a conversation excerpt).
 */
context?: string | null, };

export type MemoryDiscardProposal = { 
/**
 * Proposal id.
 */
id: string, };

export type MemoryEdit = { 
/**
 * The memory.
 */
id: MemoryId, 
/**
 * The new text.
 */
content: string, };

export type MemoryEffect = { "effect": "created" } | { "effect": "duplicate", 
/**
 * The existing memory.
 */
of: string, } | { "effect": "superseded", 
/**
 * Old memory.
 */
old: string, 
/**
 * Judge verdict.
 */
verdict: MemoryVerdict, } | { "effect": "lost", 
/**
 * The winner.
 */
winner: string, } | { "effect": "conflict", 
/**
 * Conflict id.
 */
conflict_id: string, 
/**
 * The other memory.
 */
with: string, };

export type MemoryExport = { 
/**
 * `echo-desk-memories-YYYY-MM-DD.jsonl`.
 */
file_name: string, 
/**
 * Memories in it.
 */
count: number, 
/**
 * The JSON Lines text: a header line, then one memory per line.
 */
text: string, };

export type MemoryExportFile = Record<symbol, never>;

export type MemoryFading = { 
/**
 * Memory id.
 */
id: MemoryId, };

export type MemoryForget = { 
/**
 * The memory.
 */
id: MemoryId, };

export type MemoryForgetSession = { 
/**
 * The session's name.
 */
session: string, };

export type MemoryId = string;

export type MemoryImportCards = { 
/**
 * The kept cards, as the preview gave them or edited.
 */
cards: Array<ImportCard>, };

export type MemoryImportFile = { 
/**
 * The file's text (versioned JSON Lines).
 */
text: string, };

export type MemoryImportPreview = { 
/**
 * The pasted text.
 */
text: string, 
/**
 * Cards about the project's work go to this project (its name); the rest stay global.
 */
project?: string, };

export type MemoryKeepProposal = { 
/**
 * Proposal id.
 */
id: string, };

export type MemoryList = { 
/**
 * Only this tier.
 */
tier?: MemoryTier, 
/**
 * Only this status (default: every status but deleted).
 */
status?: MemoryStatus, 
/**
 * Only memories whose text contains this.
 */
text?: string, 
/**
 * Only the memories of this project (by name).
 */
project?: string, 
/**
 * Only global memories (in no project, no conversation).
 */
global?: boolean, 
/**
 * Only memories in an open conflict (`true`) or in none (`false`).
 */
in_conflict?: boolean, 
/**
 * Only memories that expire within this many days.
 */
expiring_within_days?: number, 
/**
 * The order (default: newest first).
 */
sort?: MemorySort, 
/**
 * Rows to skip (default 0).
 */
offset?: number, 
/**
 * Page size (default 100, at most 1000).
 */
limit?: number, };

export type MemoryMove = { 
/**
 * The memory.
 */
id: MemoryId, 
/**
 * The project (by name); absent: global.
 */
project?: string, };

export type MemoryPage = { 
/**
 * The memories of this page.
 */
items: Array<Memory>, 
/**
 * How many memories match the filter (every page).
 */
total: number, };

export type MemoryPin = { 
/**
 * The memory.
 */
id: MemoryId, 
/**
 * Pinned or not.
 */
pinned: boolean, };

export type MemoryProposal = { 
/**
 * Id (`memory_keep_proposal` / `memory_discard_proposal` take it).
 */
id: string, 
/**
 * The turn whose memory work found it.
 */
turn_id: string, 
/**
 * That turn's conversation (the proposal goes with it).
 */
session_id: string | null, 
/**
 * The memory as a sentence.
 */
content: string, 
/**
 * Tier it would have.
 */
tier: MemoryTier, 
/**
 * Slot, if any.
 */
slot: string | null, 
/**
 * Provenance it would have.
 */
source: MemorySource, 
/**
 * `global`, `project:<id>` or `session:<id>`.
 */
scope: string, 
/**
 * The words it rests on.
 */
evidence: string | null, 
/**
 * When it was found.
 */
created_at: string, };

export type MemoryProposals = Record<symbol, never>;

export type MemoryReadEntry = { 
/**
 * The turn (its trace).
 */
turn_id: string, 
/**
 * Its session.
 */
session_id: string | null, 
/**
 * How the memory came to be in the request.
 */
how: MemoryReadKind, 
/**
 * When.
 */
at: string, };

export type MemoryReadKind = "snapshot" | "recalled" | "research" | "tool";

export type MemoryReindex = Record<symbol, never>;

export type MemoryResolve = { 
/**
 * The conflict.
 */
conflict_id: ConflictId, 
/**
 * The memory to keep; null keeps both.
 */
keep: MemoryId | null, 
/**
 * Edit into one: the kept memory's new text (needs `keep`).
 */
merged?: string, };

export type MemoryRestore = { 
/**
 * The memory.
 */
id: MemoryId, };

export type MemorySearch = { 
/**
 * The query.
 */
query: string, 
/**
 * At most this many (default 10).
 */
k?: number, };

export type MemorySetExpiry = { 
/**
 * The memory.
 */
id: MemoryId, 
/**
 * `YYYY-MM-DD` or RFC 3339; absent or null clears it.
 */
valid_until?: string, };

export type MemorySettings = { 
/**
 * Ask before remembering: what memory work finds waits for Keep or Discard.
 */
ask_before_remembering: boolean, };

export type MemoryShow = { 
/**
 * The memory.
 */
id: MemoryId, };

export type MemorySort = "created" | "updated" | "last_used" | "importance" | "effective";

export type MemorySource = "user_stated" | "consolidated" | "inferred" | "manual" | "imported";

export type MemoryStats = { 
/**
 * As of when.
 */
now: string, 
/**
 * Memories by tier and status (deleted ones are gone, not counted).
 */
counts: Array<TierStatusCount>, 
/**
 * Conflicts waiting for the person.
 */
open_conflicts: number, 
/**
 * Active memories the next sweep would archive because they expired.
 */
will_expire: number, 
/**
 * Active memories the next sweep would archive because they faded.
 */
will_fade: number, 
/**
 * When the last sweep ran.
 */
last_sweep: string | null, };

export type MemoryStatsRequest = Record<symbol, never>;

export type MemoryStatus = "active" | "superseded" | "archived" | "deleted";

export type MemorySweep = { 
/**
 * As of this time (RFC 3339 or YYYY-MM-DD), e.g. to see what a month of disuse does;
 * absent: now.
 */
now?: string, };

export type MemoryTier = "working" | "episodic" | "semantic" | "archival";

export type MemoryUndo = { 
/**
 * The memory.
 */
id: MemoryId, 
/**
 * Undo this change (a history entry's `change_id`) instead of the last one.
 */
change?: string, };

export type MemoryVerdict = "duplicate" | "update" | "contradiction" | "unrelated";

export type Message = { 
/**
 * Who said it.
 */
role: Role, 
/**
 * Text content (may be empty for an assistant message that only calls tools).
 */
content: string, 
/**
 * Tool calls requested by an assistant message.
 */
tool_calls?: Array<ToolCall>, 
/**
 * For a tool message: the call it answers.
 */
tool_call_id?: string, 
/**
 * For a tool message: the tool's name (Anthropic and some OpenAI servers want it).
 */
name?: string, };

export type MessageId = string;

export type MessageStatus = "complete" | "partial";

export type MissedRuns = "run_once" | "skip";

export type ModelCall = { 
/**
 * The call span it belongs to.
 */
span_id: string, 
/**
 * The model asked.
 */
model: string, 
/**
 * What was sent.
 */
request: CapturedRequest, 
/**
 * What came back; `None` when the attempt failed.
 */
response: CapturedResponse | null, 
/**
 * Why the attempt failed.
 */
error: string | null, };

export type MoveSession = { 
/**
 * The session's name.
 */
name: string, 
/**
 * The project (by name); absent: none.
 */
project?: string, };

export type OllamaInfo = { 
/**
 * Base URL to use for it (its OpenAI-compatible endpoint).
 */
base_url: string, 
/**
 * Models it has pulled.
 */
models: Array<string>, };

export type PairDevice = { 
/**
 * What to call the device (default: "device").
 */
name?: string, };

export type PairRequest = { 
/**
 * The code; it works once: a page's only for the run of `echod serve` that printed it,
 * a device's (`pair_device`) until it expires.
 */
code: string, };

export type Paired = { 
/**
 * Sent as `Authorization: Bearer <token>`.
 */
token: string, 
/**
 * The device the token is for, when a device's code was given.
 */
device?: string, };

export type PendingApprovals = Record<symbol, never>;

export type PreApproval = { 
/**
 * Tool name (or a glob over names).
 */
tool: string, 
/**
 * Argument pattern (a path glob for file tools, a command prefix for `shell`); absent:
 * every call of the tool.
 */
pattern?: string, };

export type PreviewAutomation = { 
/**
 * The definition.
 */
spec: AutomationSpec, };

export type Project = { 
/**
 * Id (its memories' scope is `project:<id>`).
 */
id: string, 
/**
 * Unique name.
 */
name: string, 
/**
 * Standing instructions for its conversations.
 */
instructions: string | null, 
/**
 * Its conversations' workspace folders (empty: the settings' roots).
 */
folders: Array<string>, 
/**
 * Creation time.
 */
created_at: string, 
/**
 * Conversations in it.
 */
sessions: number, 
/**
 * Memories of it (deleted ones aside).
 */
memories: number, };

export type ProjectMemories = "global" | "delete";

export type ProjectRemoved = { 
/**
 * The project as it was.
 */
project: Project, 
/**
 * Memories that became global.
 */
moved: number, 
/**
 * Memories deleted for good.
 */
deleted: number, };

export type ProviderKind = "openai" | "anthropic" | "ollama" | "local";

export type ProviderKindInfo = { 
/**
 * The kind.
 */
kind: ProviderKind, 
/**
 * Its default base URL.
 */
default_base_url: string, };

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
env_overrides: Array<string>, 
/**
 * Every provider kind with its usual base URL, in the order to offer them (so a
 * settings page keeps no copy of the engine's defaults).
 */
kinds: Array<ProviderKindInfo>, 
/**
 * What the engine chose at start because nobody chose a provider (the built-in model
 * when no Ollama answered), or how to get a model; shown once.
 */
notice: string | null, };

export type PurgeReport = { 
/**
 * Every memory removed: the ones asked for and the older versions they superseded.
 */
deleted: Array<string>, };

export type QueuedApproval = { 
/**
 * The question's id (answer it with `answer_approval`).
 */
id: string, 
/**
 * The run that waits.
 */
run_id: RunId, 
/**
 * Its automation.
 */
automation_id: AutomationId, 
/**
 * The automation's name.
 */
automation: string, 
/**
 * The run's turn (and trace).
 */
turn_id: string, 
/**
 * The tool call.
 */
call_id: string, 
/**
 * The tool.
 */
tool: string, 
/**
 * Its risk.
 */
risk: Risk, 
/**
 * The exact action (command, path, diff).
 */
detail: string, 
/**
 * Why the gate asks.
 */
reason: string, 
/**
 * The argument pattern "always" would allow.
 */
suggested_pattern?: string, 
/**
 * Where it is.
 */
status: QueuedApprovalStatus, 
/**
 * Asked at (RFC 3339).
 */
created_at: string, 
/**
 * Expires at (RFC 3339); then the call is denied.
 */
expires_at: string, 
/**
 * Answered or expired at.
 */
answered_at?: string, };

export type QueuedApprovalStatus = "pending" | "allowed" | "denied" | "expired";

export type Recalled = { 
/**
 * The memory.
 */
memory: Memory, 
/**
 * Fused score (higher is better).
 */
score: number, 
/**
 * Rank in the BM25 list, from 1.
 */
bm25_rank: number | null, 
/**
 * Rank in the vector list, from 1.
 */
vector_rank: number | null, 
/**
 * Rank among the memories from the days the query names, from 1.
 */
dated_rank: number | null, };

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
tier: MemoryTier, 
/**
 * Its source.
 */
source: MemorySource, };

export type RemoveAutomation = { 
/**
 * Its id or name.
 */
automation: string, };

export type RemoveProject = { 
/**
 * The project's name.
 */
name: string, 
/**
 * What becomes of its memories.
 */
memories?: ProjectMemories, };

export type RemoveRule = { 
/**
 * The rule.
 */
id: RuleId, };

export type RenameSession = { 
/**
 * The session's name now.
 */
name: string, 
/**
 * Its new name.
 */
new_name: string, };

export type ReplayCase = { 
/**
 * [`CASE_FORMAT`].
 */
format: number, 
/**
 * The turn it was exported from.
 */
turn_id: string, 
/**
 * When that turn was accepted.
 */
created_at: string, 
/**
 * The user's message.
 */
input: string, 
/**
 * `[agent] max_iterations` in force.
 */
max_iterations: number, 
/**
 * The tools the model was offered (their definitions, as sent).
 */
tools_offered: Array<ToolSpec>, 
/**
 * The memories injected into the request.
 */
memories: Array<CaseMemory>, 
/**
 * The main loop's model replies, in order.
 */
replies: Array<CapturedResponse>, 
/**
 * Every tool call of the turn, in order, with what it returned.
 */
tool_calls: Array<CaseToolCall>, 
/**
 * The final answer as saved.
 */
final_text: string, };

export type ResearchPhase = "planning" | "gathering" | "writing" | "checking" | "done";

export type ResearchProgress = { 
/**
 * The run (it keeps its id when a later turn resumes it).
 */
run_id: string, 
/**
 * Where the run is in its graph.
 */
phase: ResearchPhase, 
/**
 * The plan, in order (empty while it is being made).
 */
sub_questions: Array<SubQuestionProgress>, 
/**
 * Search results found over all sub-questions.
 */
sources_found: number, 
/**
 * Pages read.
 */
sources_read: number, 
/**
 * Notes taken (each a quote with its page).
 */
notes: number, 
/**
 * Time since this turn's part of the run began.
 */
elapsed_ms: number, };

export type RevokeDevice = { 
/**
 * The device's id.
 */
id: string, };

export type Risk = "read_only" | "write" | "exec" | "network" | "dangerous";

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
 * Who made it: `user` (from any front end or an approval dialog), or `automation NAME`
 * for an automation's pre-approval.
 */
created_by: string, 
/**
 * When (RFC 3339).
 */
created_at: string, };

export type RuleDecision = "allow" | "ask" | "deny";

export type RuleId = string;

export type RuleScope = "session" | "always";

export type RunAutomation = { 
/**
 * Its id or name.
 */
automation: string, };

export type RunCause = "file" | "schedule" | "manual";

export type RunCounts = { 
/**
 * Waiting for a slot.
 */
queued: number, 
/**
 * Under way.
 */
running: number, 
/**
 * Paused on a queued approval question.
 */
waiting_for_approval: number, 
/**
 * Completed.
 */
done: number, 
/**
 * Failed or stopped.
 */
failed: number, 
/**
 * Never ran (a loop, the rate limit, a missed schedule).
 */
skipped: number, };

export type RunId = string;

export type RunStatus = "queued" | "running" | "waiting_for_approval" | "done" | "failed" | "skipped";

export type SaveBootstrapFile = { 
/**
 * File name, e.g. `USER.md`.
 */
name: string, 
/**
 * The new text, or null for the default.
 */
content: string | null, };

export type Schedule = { 
/**
 * A cron expression (`0 8 * * 1-5`: weekdays at 8:00; 5 or 6 fields, `@daily`…).
 */
cron: string, 
/**
 * IANA time zone (`Europe/Berlin`); absent: the computer's zone.
 */
time_zone?: string, 
/**
 * What happens to fire times missed while nothing ran it.
 */
missed: MissedRuns, };

export type SearchKind = "none" | "searxng" | "brave" | "tavily";

export type SearchTestReport = { 
/**
 * Whether the service answered.
 */
ok: boolean, 
/**
 * What happened, naming the service.
 */
message: string, 
/**
 * Results it returned.
 */
results: number, 
/**
 * Time to the answer (or the failure).
 */
latency_ms: number, };

export type SearchUpdate = { 
/**
 * The service.
 */
kind: SearchKind, 
/**
 * Its URL (required for SearXNG); absent: the service's own.
 */
url?: string, 
/**
 * Most results one search returns (1–20); absent keeps the current number.
 */
max_results?: number, 
/**
 * A new API key for this service (kept in the keychain); absent keeps the stored one.
 */
api_key?: string, 
/**
 * Remove the stored key for this service.
 */
clear_api_key?: boolean, };

export type SearchView = { 
/**
 * The service; `none` offers no `web_search` tool and no research.
 */
kind: SearchKind, 
/**
 * The URL set for it (a SearXNG instance, or a proxy for Brave and Tavily).
 */
url: string | null, 
/**
 * Where searches go: `url`, else the service's own endpoint.
 */
service_url: string | null, 
/**
 * Most results one search returns (1–20).
 */
max_results: number, 
/**
 * Whether the service asks for an API key (Brave, Tavily).
 */
needs_key: boolean, 
/**
 * Where the key in force comes from.
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
 * `ECHO_SEARCH_*` variables set for this process: they win over saved settings, which
 * cannot be changed from here while they are set.
 */
env_overrides: Array<string>, 
/**
 * Whether web search and research are available now.
 */
available: boolean, 
/**
 * Why the service named is not available (a key missing, a bad URL).
 */
problem: string | null, 
/**
 * Every service, in the order to offer them.
 */
kinds: Array<SearchKind>, };

export type SendTurn = { 
/**
 * Session name (created on first use).
 */
session: string, 
/**
 * The user's message.
 */
input: string, 
/**
 * Regenerate / edit and resend: the user message this turn replaces, with everything
 * after it.
 */
replace_from?: MessageId, 
/**
 * `true`: research (a cited report); `false`: a quick answer; absent: the router
 * decides.
 */
research?: boolean, 
/**
 * Resume the unfinished research this earlier turn of the session left (`input` may
 * then be empty: the run's question is used).
 */
resume?: TurnId, 
/**
 * Start the session as a temporary chat: no memory is written from it, and it is deleted
 * with its traces when it is left or its process ends (`recall`: it may read memory).
 * Refused for a session that exists and is kept.
 */
temporary?: TemporaryChat, 
/**
 * Start the session in this project (by name): it recalls the project's memories and
 * the global ones, never another project's. A session stays in the project it was
 * created in.
 */
project?: string, };

export type SessionDeleted = { 
/**
 * Memories forgotten or deleted with it (0 when they were kept).
 */
memories: number, };

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
consolidated_seq: number, 
/**
 * The automation this session is a run of (its runs each get a session of their own).
 */
automation?: string, 
/**
 * The name of the project it belongs to, if any.
 */
project?: string, };

export type SetAllAutomationsEnabled = { 
/**
 * On or off.
 */
enabled: boolean, };

export type SetAutomationEnabled = { 
/**
 * Its id or name.
 */
automation: string, 
/**
 * On or off.
 */
enabled: boolean, };

export type SetMcpConfig = { 
/**
 * The new list.
 */
servers: Array<McpServerConfig>, };

export type ShortcutStatus = { 
/**
 * The accelerator, e.g. `CommandOrControl+Shift+Space`.
 */
shortcut: string, 
/**
 * Whether it is registered now.
 */
registered: boolean, 
/**
 * Why it is not (taken by another program, not a valid accelerator).
 */
error: string | null, };

export type SpanId = string;

export type SpanKind = "stage" | "model" | "tool" | "approval" | "memory_read" | "memory_write" | "background";

export type SpanLevel = "turn" | "node" | "call";

export type SpanRecord = { 
/**
 * Span id.
 */
id: string, 
/**
 * Turn (trace) id.
 */
turn_id: string, 
/**
 * Parent span, `None` for the turn span.
 */
parent_id: string | null, 
/**
 * `turn`, `node` or `call`.
 */
level: SpanLevel, 
/**
 * What it covers: a stage, a model request, a tool, an approval wait, memory read/write,
 * background work.
 */
kind: SpanKind, 
/**
 * What the span covers, e.g. `context`, `inference#1`, `model_request`, `tool:read_file`.
 */
name: string, 
/**
 * Start time.
 */
started_at: string, 
/**
 * Duration; `None` while running.
 */
duration_ms: number | null, 
/**
 * Running, or how it ended.
 */
status: SpanStatus, 
/**
 * Model, for model calls.
 */
model: string | null, 
/**
 * Prompt tokens.
 */
tokens_in: number | null, 
/**
 * Completion tokens.
 */
tokens_out: number | null, 
/**
 * Whether something degraded in this span.
 */
degraded: boolean, 
/**
 * Why, e.g. `retry`, `fallback_model`, `max_iterations`.
 */
degraded_reason: string | null, 
/**
 * Error text.
 */
error: string | null, 
/**
 * Extra structured fields.
 */
attrs: Record<string, unknown>, };

export type SpanStatus = "running" | "ok" | "error" | "cancelled";

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
 * Whole, or cut short.
 */
status: MessageStatus, 
/**
 * When it was stored.
 */
created_at: string, 
/**
 * The research run whose report this answer is, as it finished; absent for other
 * messages.
 */
research?: ResearchProgress, };

export type SubQuestionProgress = { 
/**
 * The sub-question.
 */
question: string, 
/**
 * Where it is.
 */
state: SubQuestionState, 
/**
 * Search results found for it.
 */
found: number, 
/**
 * Its pages read.
 */
read: number, };

export type SubQuestionState = "pending" | "searching" | "reading" | "done" | "gap";

export type SweepReport = { 
/**
 * As of when.
 */
now: string, 
/**
 * Memories looked at.
 */
checked: number, 
/**
 * Archived because `valid_until` passed.
 */
expired: Array<string>, 
/**
 * Archived because their effective importance fell below the threshold.
 */
faded: Array<string>, };

export type TaskType = "chat" | "code" | "research" | "planning";

export type TemporaryChat = "sealed" | "recall";

export type TestProvider = ProviderUpdate;

export type TestSearch = SearchUpdate;

export type TierStatusCount = { 
/**
 * Tier.
 */
tier: MemoryTier, 
/**
 * Status.
 */
status: MemoryStatus, 
/**
 * How many.
 */
count: number, };

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

export type ToolSpec = { 
/**
 * Tool name.
 */
name: string, 
/**
 * What the tool does, for the model.
 */
description: string, 
/**
 * JSON schema of the arguments object.
 */
parameters: unknown, };

export type Trace = { 
/**
 * The turn: session, status, input, entry point, model, tokens, times.
 */
turn: TurnRecord, 
/**
 * Spans in start order (parents before children on ties).
 */
spans: Array<SpanRecord>, };

export type TraceCall = { 
/**
 * The turn.
 */
turn_id: TurnId, 
/**
 * The call span.
 */
span_id: SpanId, };

export type TraceCase = { 
/**
 * The turn.
 */
turn_id: TurnId, };

export type TraceSettings = { 
/**
 * Whether each model call's request and response are kept.
 */
capture: boolean, 
/**
 * Days they are kept (0: removed at the next sweep).
 */
retention_days: number, 
/**
 * The share of the last day's turns that fell back (0–1) from which the app says so;
 * 0: never.
 */
notice_rate: number, };

export type TraceStats = { 
/**
 * Turns accepted at or after this time (RFC 3339); default: a day ago.
 */
since?: string, };

export type TurnErrorCode = "interrupted" | "process_ended" | "store" | "prompt" | "context_overflow" | "research_unavailable" | "llm_connect" | "llm_timeout" | "llm_rate_limited" | "llm_model_not_found" | "llm_status" | "llm_auth" | "llm_stream_cut" | "llm_server_error" | "llm_protocol" | "llm_cancelled" | "llm_config" | "llm_local";

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
 * How much harm the tool can do.
 */
risk: Risk, 
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
decision: RuleDecision, 
/**
 * Who (or which step of the gate) decided.
 */
decided_by: DecidedBy, 
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
 * Which fallback.
 */
reason: Degradation, 
/**
 * One line for people.
 */
detail: string, } | { "type": "research_progress", 
/**
 * The whole picture.
 */
progress: ResearchProgress, } | { "type": "final", 
/**
 * The complete answer text.
 */
text: string, } | { "type": "follow_ups", 
/**
 * The questions, one line each.
 */
questions: Array<string>, } | { "type": "error", 
/**
 * Machine-readable error code.
 */
code: TurnErrorCode, 
/**
 * One line for people.
 */
message: string, } | { "type": "turn_finished", 
/**
 * `completed`, `failed` or `interrupted`.
 */
status: TurnStatus, 
/**
 * Tokens used by all model calls of the turn.
 */
usage: Usage, 
/**
 * The trace id (equal to the turn id).
 */
trace_id: string, };

export type TurnId = string;

export type TurnLearned = { 
/**
 * Whether the turn's memory extraction has ended: nothing more will come.
 */
settled: boolean, 
/**
 * The memories made from the turn, oldest first.
 */
memories: Array<LearnedInTurn>, 
/**
 * With "ask before remembering": what the turn found, waiting for Keep or Discard.
 */
proposals: Array<MemoryProposal>, };

export type TurnMemory = { 
/**
 * The turn.
 */
turn_id: string, };

export type TurnRecord = { 
/**
 * Turn id (also the trace id).
 */
id: string, 
/**
 * Session id.
 */
session_id: string, 
/**
 * Session name.
 */
session_name: string, 
/**
 * Where it is in its life.
 */
status: TurnStatus, 
/**
 * The user's input.
 */
input: string, 
/**
 * Which front end started it.
 */
entry_point: EntryPoint, 
/**
 * Model that answered.
 */
model: string | null, 
/**
 * Error code when failed or interrupted.
 */
error_code: TurnErrorCode | null, 
/**
 * Error message when failed or interrupted.
 */
error: string | null, 
/**
 * Prompt tokens of all model calls.
 */
input_tokens: number, 
/**
 * Completion tokens of all model calls.
 */
output_tokens: number, 
/**
 * When it was accepted.
 */
created_at: string, 
/**
 * When it started running.
 */
started_at: string | null, 
/**
 * When it ended.
 */
finished_at: string | null, 
/**
 * Whether any of its spans degraded (a retry, a fallback model, a trimmed context, ...).
 */
degraded: boolean, 
/**
 * How many approval questions it asked the person.
 */
approvals: number, };

export type TurnStatus = "accepted" | "running" | "completed" | "failed" | "interrupted";

export type UpdateMemorySettings = { 
/**
 * What memory work finds waits for Keep or Discard instead of being written.
 */
ask_before_remembering: boolean, };

export type UpdateProvider = ProviderUpdate;

export type UpdateSearch = SearchUpdate;

export type UpdateTraceSettings = { 
/**
 * Keep each model call's request and response.
 */
capture: boolean, 
/**
 * Days to keep them (0-3650).
 */
retention_days: number, 
/**
 * From which share of the last day's turns falling back the app says so (0–1; 0:
 * never); absent: unchanged.
 */
notice_rate?: number, };

export type Usage = { 
/**
 * Prompt tokens.
 */
input_tokens: number, 
/**
 * Completion tokens.
 */
output_tokens: number, 
/**
 * Of the prompt tokens, how many the model reused from an earlier request instead of
 * processing them again (the built-in model's prefix cache).
 */
cached_input_tokens: number, };

export type UseLocalModel = { 
/**
 * A GGUF file's path or a catalog id.
 */
model: string, };

export type Watch = { 
/**
 * Folders to watch (`~` is the home folder).
 */
folders: Array<string>, 
/**
 * Subfolders too.
 */
recursive: boolean, 
/**
 * Globs over the path inside the folder (`*.pdf`, `notes/**`); absent or empty:
 * every file.
 */
include: Array<string>, 
/**
 * Globs of files to leave alone.
 */
exclude: Array<string>, 
/**
 * Which events start a run.
 */
events: Array<FileEvent>, 
/**
 * How long a file must stay unchanged (size and mtime) before it is handed over, in
 * milliseconds; also the debounce window of the watcher.
 */
settle_ms: number, 
/**
 * Hidden files (and files in hidden folders) too; editors' temp and swap files never.
 */
include_hidden: boolean, };

export type WriteOutcome = { 
/**
 * The stored memory (for a duplicate: the existing one, reinforced).
 */
memory: Memory, 
/**
 * What happened.
 */
effects: Array<MemoryEffect>, 
/**
 * Judge calls that failed and fell back to the deterministic rule.
 */
judge_failures: Array<string>, };

/** Every engine operation: its request and response (see crates/echo-agent/src/operations.table). */
export interface Operations {
  list_sessions: { request: ListSessions; response: Array<SessionSummary> };
  history: { request: History; response: Array<StoredMessage> };
  rename_session: { request: RenameSession; response: SessionSummary };
  move_session: { request: MoveSession; response: SessionSummary };
  delete_session: { request: DeleteSession; response: SessionDeleted };
  list_projects: { request: ListProjects; response: Array<Project> };
  add_project: { request: AddProject; response: Project };
  edit_project: { request: EditProject; response: Project };
  remove_project: { request: RemoveProject; response: ProjectRemoved };
  list_devices: { request: ListDevices; response: Array<Device> };
  pair_device: { request: PairDevice; response: DevicePairing };
  revoke_device: { request: RevokeDevice; response: Device };
  list_access_events: { request: ListAccessEvents; response: Array<AccessEvent> };
  delete_all_data: { request: DeleteAllData; response: DataDeleted };
  check_data: { request: CheckData; response: DataCheck };
  cancel_turn: { request: CancelTurn; response: null };
  answer_approval: { request: AnswerApproval; response: null };
  pending_approvals: { request: PendingApprovals; response: Array<ApprovalId> };
  approvals: { request: ListApprovals; response: Array<AuditEntry> };
  list_rules: { request: ListRules; response: Array<Rule> };
  add_rule: { request: AddRule; response: Rule };
  remove_rule: { request: RemoveRule; response: Rule };
  mcp_servers: { request: McpServers; response: Array<McpServerStatus> };
  approval_queue: { request: ApprovalQueue; response: Array<QueuedApproval> };
  automations: { request: ListAutomations; response: Array<AutomationView> };
  automation: { request: GetAutomation; response: AutomationView };
  add_automation: { request: AddAutomation; response: AutomationView };
  edit_automation: { request: EditAutomation; response: AutomationView };
  remove_automation: { request: RemoveAutomation; response: Automation };
  set_automation_enabled: { request: SetAutomationEnabled; response: AutomationView };
  set_all_automations_enabled: { request: SetAllAutomationsEnabled; response: number };
  run_automation: { request: RunAutomation; response: AutomationRun };
  automation_runs: { request: AutomationRuns; response: Array<AutomationRun> };
  automation_notices: { request: GetAutomationNotices; response: AutomationNotices };
  preview_automation: { request: PreviewAutomation; response: AutomationPreview };
  mcp_config: { request: McpConfig; response: Array<McpServerConfig> };
  set_mcp_config: { request: SetMcpConfig; response: Array<McpServerStatus> };
  provider: { request: GetProvider; response: ProviderView };
  update_provider: { request: UpdateProvider; response: ProviderView };
  test_provider: { request: TestProvider; response: ConnectionReport };
  search: { request: GetSearch; response: SearchView };
  update_search: { request: UpdateSearch; response: SearchView };
  test_search: { request: TestSearch; response: SearchTestReport };
  detect_ollama: { request: DetectOllama; response: OllamaInfo | null };
  local_models: { request: ListLocalModels; response: LocalModels };
  fetch_local_model: { request: FetchLocalModel; response: null };
  use_local_model: { request: UseLocalModel; response: ProviderView };
  bootstrap_files: { request: BootstrapFiles; response: Array<BootstrapFile> };
  save_bootstrap_file: { request: SaveBootstrapFile; response: BootstrapFile };
  desktop_settings: { request: DesktopSettings; response: DesktopSettingsView };
  memory_settings: { request: GetMemorySettings; response: MemorySettings };
  update_memory_settings: { request: UpdateMemorySettings; response: MemorySettings };
  trace_settings: { request: GetTraceSettings; response: TraceSettings };
  update_trace_settings: { request: UpdateTraceSettings; response: TraceSettings };
  traces: { request: ListTraces; response: Array<TurnRecord> };
  trace_stats: { request: TraceStats; response: DegradationStats };
  trace: { request: GetTrace; response: Trace };
  trace_call: { request: TraceCall; response: ModelCall };
  trace_case: { request: TraceCase; response: ReplayCase };
  memory_list: { request: MemoryList; response: MemoryPage };
  memory_search: { request: MemorySearch; response: Array<Recalled> };
  turn_memory: { request: TurnMemory; response: TurnLearned };
  memory_show: { request: MemoryShow; response: MemoryDetail };
  memory_add: { request: MemoryAdd; response: WriteOutcome };
  memory_edit: { request: MemoryEdit; response: Memory };
  memory_pin: { request: MemoryPin; response: Memory };
  memory_move: { request: MemoryMove; response: Memory };
  memory_forget: { request: MemoryForget; response: Memory };
  memory_restore: { request: MemoryRestore; response: Memory };
  memory_undo: { request: MemoryUndo; response: Array<Memory> };
  memory_proposals: { request: MemoryProposals; response: Array<MemoryProposal> };
  memory_keep_proposal: { request: MemoryKeepProposal; response: WriteOutcome };
  memory_discard_proposal: { request: MemoryDiscardProposal; response: null };
  memory_conflicts: { request: MemoryConflicts; response: Array<Conflict> };
  memory_resolve: { request: MemoryResolve; response: Conflict };
  memory_forget_session: { request: MemoryForgetSession; response: Array<Memory> };
  memory_set_expiry: { request: MemorySetExpiry; response: Memory };
  memory_delete: { request: MemoryDelete; response: PurgeReport };
  memory_delete_all: { request: MemoryDeleteAll; response: PurgeReport };
  memory_fading: { request: MemoryFading; response: Fading };
  memory_stats: { request: MemoryStatsRequest; response: MemoryStats };
  memory_export: { request: MemoryExportFile; response: MemoryExport };
  memory_import: { request: MemoryImportFile; response: ImportReport };
  memory_import_preview: { request: MemoryImportPreview; response: ImportPreview };
  memory_import_cards: { request: MemoryImportCards; response: Array<WriteOutcome> };
  memory_sweep: { request: MemorySweep; response: SweepReport };
  memory_reindex: { request: MemoryReindex; response: FlushReport };
}

/** An operation's name. */
export type OperationName = keyof Operations;

/** The HTTP method of a gateway route. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Each operation's gateway route: `{field}` path parameters come from the request. */
export const OPERATION_ROUTES: { readonly [K in OperationName]: { method: HttpMethod; path: string } } = {
  list_sessions: { method: 'GET', path: '/api/sessions' },
  history: { method: 'GET', path: '/api/sessions/{session}/messages' },
  rename_session: { method: 'PATCH', path: '/api/sessions/{name}' },
  move_session: { method: 'PUT', path: '/api/sessions/{name}/project' },
  delete_session: { method: 'DELETE', path: '/api/sessions/{name}' },
  list_projects: { method: 'GET', path: '/api/projects' },
  add_project: { method: 'POST', path: '/api/projects' },
  edit_project: { method: 'PATCH', path: '/api/projects/{name}' },
  remove_project: { method: 'DELETE', path: '/api/projects/{name}' },
  list_devices: { method: 'GET', path: '/api/devices' },
  pair_device: { method: 'POST', path: '/api/devices' },
  revoke_device: { method: 'POST', path: '/api/devices/{id}/revoke' },
  list_access_events: { method: 'GET', path: '/api/devices/events' },
  delete_all_data: { method: 'POST', path: '/api/data/delete_all' },
  check_data: { method: 'GET', path: '/api/data/check' },
  cancel_turn: { method: 'POST', path: '/api/turns/{turn_id}/cancel' },
  answer_approval: { method: 'POST', path: '/api/approvals/{request_id}' },
  pending_approvals: { method: 'GET', path: '/api/approvals/pending' },
  approvals: { method: 'GET', path: '/api/approvals' },
  list_rules: { method: 'GET', path: '/api/rules' },
  add_rule: { method: 'POST', path: '/api/rules' },
  remove_rule: { method: 'DELETE', path: '/api/rules/{id}' },
  mcp_servers: { method: 'GET', path: '/api/mcp' },
  approval_queue: { method: 'GET', path: '/api/approvals/queue' },
  automations: { method: 'GET', path: '/api/automations' },
  automation: { method: 'GET', path: '/api/automations/{automation}' },
  add_automation: { method: 'POST', path: '/api/automations' },
  edit_automation: { method: 'PUT', path: '/api/automations/{automation}' },
  remove_automation: { method: 'DELETE', path: '/api/automations/{automation}' },
  set_automation_enabled: { method: 'PUT', path: '/api/automations/{automation}/enabled' },
  set_all_automations_enabled: { method: 'PUT', path: '/api/automations-enabled' },
  run_automation: { method: 'POST', path: '/api/automations/{automation}/run' },
  automation_runs: { method: 'GET', path: '/api/automations/{automation}/runs' },
  automation_notices: { method: 'GET', path: '/api/automation-notices' },
  preview_automation: { method: 'POST', path: '/api/automations-preview' },
  mcp_config: { method: 'GET', path: '/api/settings/mcp' },
  set_mcp_config: { method: 'PUT', path: '/api/settings/mcp' },
  provider: { method: 'GET', path: '/api/settings/provider' },
  update_provider: { method: 'PUT', path: '/api/settings/provider' },
  test_provider: { method: 'POST', path: '/api/settings/provider/test' },
  search: { method: 'GET', path: '/api/settings/search' },
  update_search: { method: 'PUT', path: '/api/settings/search' },
  test_search: { method: 'POST', path: '/api/settings/search/test' },
  detect_ollama: { method: 'GET', path: '/api/settings/ollama' },
  local_models: { method: 'GET', path: '/api/settings/local-models' },
  fetch_local_model: { method: 'POST', path: '/api/settings/local-models/{id}/fetch' },
  use_local_model: { method: 'POST', path: '/api/settings/local-models/use' },
  bootstrap_files: { method: 'GET', path: '/api/settings/bootstrap' },
  save_bootstrap_file: { method: 'PUT', path: '/api/settings/bootstrap/{name}' },
  desktop_settings: { method: 'GET', path: '/api/settings/desktop' },
  memory_settings: { method: 'GET', path: '/api/settings/memory' },
  update_memory_settings: { method: 'PUT', path: '/api/settings/memory' },
  trace_settings: { method: 'GET', path: '/api/settings/trace' },
  update_trace_settings: { method: 'PUT', path: '/api/settings/trace' },
  traces: { method: 'GET', path: '/api/traces' },
  trace_stats: { method: 'GET', path: '/api/traces/stats' },
  trace: { method: 'GET', path: '/api/traces/{turn_id}' },
  trace_call: { method: 'GET', path: '/api/traces/{turn_id}/calls/{span_id}' },
  trace_case: { method: 'GET', path: '/api/traces/{turn_id}/case' },
  memory_list: { method: 'GET', path: '/api/memory' },
  memory_search: { method: 'GET', path: '/api/memory/search' },
  turn_memory: { method: 'GET', path: '/api/turns/{turn_id}/memory' },
  memory_show: { method: 'GET', path: '/api/memory/{id}' },
  memory_add: { method: 'POST', path: '/api/memory' },
  memory_edit: { method: 'PATCH', path: '/api/memory/{id}' },
  memory_pin: { method: 'PUT', path: '/api/memory/{id}/pin' },
  memory_move: { method: 'PUT', path: '/api/memory/{id}/project' },
  memory_forget: { method: 'POST', path: '/api/memory/{id}/forget' },
  memory_restore: { method: 'POST', path: '/api/memory/{id}/restore' },
  memory_undo: { method: 'POST', path: '/api/memory/{id}/undo' },
  memory_proposals: { method: 'GET', path: '/api/memory/proposals' },
  memory_keep_proposal: { method: 'POST', path: '/api/memory/proposals/{id}/keep' },
  memory_discard_proposal: { method: 'DELETE', path: '/api/memory/proposals/{id}' },
  memory_conflicts: { method: 'GET', path: '/api/memory/conflicts' },
  memory_resolve: { method: 'POST', path: '/api/memory/conflicts/{conflict_id}' },
  memory_forget_session: { method: 'POST', path: '/api/sessions/{session}/forget_memories' },
  memory_set_expiry: { method: 'PUT', path: '/api/memory/{id}/expiry' },
  memory_delete: { method: 'POST', path: '/api/memory/delete' },
  memory_delete_all: { method: 'POST', path: '/api/memory/delete_all' },
  memory_fading: { method: 'GET', path: '/api/memory/{id}/fading' },
  memory_stats: { method: 'GET', path: '/api/memory/stats' },
  memory_export: { method: 'GET', path: '/api/memory/export' },
  memory_import: { method: 'POST', path: '/api/memory/import' },
  memory_import_preview: { method: 'POST', path: '/api/memory/import-text/preview' },
  memory_import_cards: { method: 'POST', path: '/api/memory/import-text' },
  memory_sweep: { method: 'POST', path: '/api/memory/sweep' },
  memory_reindex: { method: 'POST', path: '/api/memory/reindex' },
};
