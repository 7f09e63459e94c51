// Pure view-model logic, no React: folds a turn's events into the assistant message the chat
// shows, and turns a session's stored history into the same shapes, so a reload looks like
// the live view. The engine decides; this only records what it said.

import type {
  DecidedBy,
  EventEnvelope,
  LearnedInTurn,
  MemoryProposal,
  ResearchProgress,
  Risk,
  RuleDecision,
  StoredMessage,
  TurnStatus as EngineTurnStatus,
} from './generated/engine';

/** A tool call as shown inline in an answer. */
export interface ToolCallView {
  callId: string;
  name: string;
  /** Argument JSON: streamed fragments, then the complete text. */
  args: string;
  result?: string;
  ok?: boolean;
  durationMs?: number;
  /** How the approval gate decided it, when it was asked about or denied. */
  decision?: { decision: RuleDecision; decidedBy: DecidedBy; reason: string };
}

/** An approval question waiting for the user's answer. */
export interface PendingApproval {
  requestId: string;
  callId: string;
  tool: string;
  risk: Risk;
  detail: string;
  reason: string;
  suggestedPattern: string | null;
  timeoutSecs: number;
  /** The model-written explanation, streamed in after the question. */
  explanation: string;
}

/** `running` until `turn_finished`, then the engine's status (a shown turn is never `accepted`). */
export type TurnStatus = Exclude<EngineTurnStatus, 'accepted'>;

/** One assistant message: the result of one turn. */
export interface AssistantView {
  role: 'assistant';
  /** Local key for rendering. */
  key: string;
  turnId: string | undefined;
  text: string;
  reasoning: string;
  tools: ToolCallView[];
  approval: PendingApproval | null;
  degradations: { reason: string; detail: string }[];
  error: { code: string; message: string } | null;
  status: TurnStatus;
  /** A research run's progress, when the turn is one (its report arrives as the text). */
  research?: ResearchProgress;
  /** Questions the person might ask next (from the side model, after the answer). */
  followUps?: string[];
  /** What the turn taught memory (after the answer, once extraction ran), each undoable. */
  learned?: LearnedInTurn[];
  /** The turn's memory extraction is still running (what it learns is not known yet). */
  remembering?: boolean;
  /**
   * With "ask before remembering": what the turn found, waiting for the person's Keep or
   * Discard (nothing of it is in memory yet).
   */
  proposals?: MemoryProposal[];
  /** Keep and Discard on those proposals: what is on its way, what went through, what failed. */
  decisions?: ProposalDecisions;
  /** The stored messages it shows (from history: the turn's answers and tool results). */
  storedIds?: string[];
}

/** Keep and Discard on a turn's proposals, as the memory line under its answer tells them. */
export interface ProposalDecisions {
  /** The proposals (by id) whose Keep or Discard is on its way. */
  pending: string[];
  /** The last decision that went through. */
  done: 'kept' | 'discarded' | null;
  /**
   * The last one that failed: which it was, the engine's code (`not_found`: it was decided
   * elsewhere) and message.
   */
  error: { decision: 'kept' | 'discarded'; code: string; message: string } | null;
}

/** A user's message. */
export interface UserView {
  role: 'user';
  key: string;
  text: string;
  /** Its stored id, once known: what regenerate and edit-and-resend replace from. */
  id?: string;
}

/** What the chat shows, in order. */
export type ChatMessage = UserView | AssistantView;

/** A fresh assistant message for a turn that has just been sent. */
export function newTurn(key: string): AssistantView {
  return {
    role: 'assistant',
    key,
    turnId: undefined,
    text: '',
    reasoning: '',
    tools: [],
    approval: null,
    degradations: [],
    error: null,
    status: 'running',
  };
}

function updateTool(
  tools: ToolCallView[],
  callId: string,
  name: string,
  change: (tool: ToolCallView) => Partial<ToolCallView>,
): ToolCallView[] {
  const index = tools.findIndex((t) => t.callId === callId);
  if (index < 0) {
    const tool: ToolCallView = { callId, name, args: '' };
    return [...tools, { ...tool, ...change(tool) }];
  }
  const existing = tools[index] as ToolCallView;
  const copy = tools.slice();
  copy[index] = { ...existing, ...change(existing) };
  return copy;
}

/** Folds one event into the assistant message of its turn. */
export function reduceTurn(state: AssistantView, event: EventEnvelope): AssistantView {
  const s = state.turnId === event.turn_id ? state : { ...state, turnId: event.turn_id };
  switch (event.type) {
    case 'turn_started':
    case 'memory_recalled':
      return s;
    case 'token':
      return { ...s, text: s.text + event.text };
    case 'reasoning':
      return { ...s, reasoning: s.reasoning + event.text };
    case 'tool_call_started':
      return { ...s, tools: updateTool(s.tools, event.call_id, event.name, () => ({})) };
    case 'tool_call_args_delta':
      return {
        ...s,
        tools: updateTool(s.tools, event.call_id, '', (t) => ({ args: t.args + event.delta })),
      };
    case 'tool_call_executing':
      return {
        ...s,
        tools: updateTool(s.tools, event.call_id, event.name, () => ({
          name: event.name,
          args: event.arguments,
        })),
      };
    case 'approval_requested':
      return {
        ...s,
        approval: {
          requestId: event.request_id,
          callId: event.call_id,
          tool: event.tool,
          risk: event.risk,
          detail: event.detail,
          reason: event.reason,
          suggestedPattern: event.suggested_pattern,
          timeoutSecs: event.timeout_secs,
          explanation: '',
        },
      };
    case 'approval_explanation':
      if (!s.approval || s.approval.requestId !== event.request_id) return s;
      return { ...s, approval: { ...s.approval, explanation: s.approval.explanation + event.text } };
    case 'approval_resolved': {
      const approval =
        s.approval && (s.approval.requestId === event.request_id || s.approval.callId === event.call_id)
          ? null
          : s.approval;
      return {
        ...s,
        approval,
        tools: updateTool(s.tools, event.call_id, event.tool, () => ({
          decision: { decision: event.decision, decidedBy: event.decided_by, reason: event.reason },
        })),
      };
    }
    case 'tool_result':
      return {
        ...s,
        tools: updateTool(s.tools, event.call_id, event.name, () => ({
          result: event.content,
          ok: event.ok,
          durationMs: event.duration_ms,
        })),
      };
    case 'research_progress':
      return { ...s, research: event.progress };
    case 'follow_ups':
      return { ...s, followUps: event.questions };
    case 'degraded':
      return { ...s, degradations: [...s.degradations, { reason: event.reason, detail: event.detail }] };
    case 'final':
      return { ...s, text: event.text };
    case 'error':
      return { ...s, error: { code: event.code, message: event.message } };
    case 'turn_finished': {
      const status: TurnStatus =
        event.status === 'completed' || event.status === 'interrupted' ? event.status : 'failed';
      return { ...s, status, approval: null };
    }
    default:
      return s;
  }
}

/** A turn whose stream broke before `turn_finished`: failed, with the transport's message. */
export function failTurn(state: AssistantView, code: string, message: string): AssistantView {
  if (state.status !== 'running') return state;
  return { ...state, status: 'failed', approval: null, error: state.error ?? { code, message } };
}

/**
 * The stored history as chat messages: each user message, then one assistant message per turn
 * gathering that turn's assistant texts, reasoning and tool calls with their results, and
 * the research run a report came from (its card, finished, with Export).
 */
export function fromHistory(stored: StoredMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let current: AssistantView | undefined;
  for (const m of stored) {
    if (m.role === 'system') continue;
    if (m.role === 'user') {
      current = undefined;
      out.push({ role: 'user', key: m.id, text: m.content, id: m.id });
      continue;
    }
    if (!current || (m.turn_id !== null && current.turnId !== m.turn_id)) {
      current = { ...newTurn(m.id), turnId: m.turn_id ?? undefined, status: 'completed' };
      out.push(current);
    }
    const turn: AssistantView = current;
    turn.storedIds = [...(turn.storedIds ?? []), m.id];
    if (m.role === 'tool') {
      turn.tools = updateTool(turn.tools, m.tool_call_id ?? m.id, m.name ?? '', () => ({
        result: m.content,
      }));
      continue;
    }
    if (m.content.trim() !== '') turn.text = turn.text ? `${turn.text}\n\n${m.content}` : m.content;
    if (m.reasoning) turn.reasoning = turn.reasoning ? `${turn.reasoning}\n\n${m.reasoning}` : m.reasoning;
    for (const call of m.tool_calls) {
      turn.tools = updateTool(turn.tools, call.id, call.name, () => ({ args: call.arguments }));
    }
    if (m.status === 'partial') turn.status = 'interrupted';
    if (m.research) turn.research = m.research;
  }
  return out;
}

/**
 * The key of the chat message that shows a stored message: a user message is keyed by its
 * own id, an answer or a tool result belongs to its turn's assistant message. Null when the
 * conversation does not show it (replaced by regenerate or edit, a system message, deleted).
 */
export function keyForStored(messages: readonly ChatMessage[], id: string): string | null {
  const shown = messages.find((m) => m.key === id || (m.role === 'user' ? m.id === id : m.storedIds?.includes(id)));
  return shown?.key ?? null;
}
