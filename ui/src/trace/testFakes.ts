// Traces for the trace store's and page's tests: spans and turns with the engine's defaults,
// a realistic turn (context, an inference with its model call, a tool call with its approval,
// the response, memory recall, and extraction after the turn ended) and an in-memory engine
// that answers `traces` (filtering like the engine), `trace`, `trace_call` and `trace_case`.

import type { ModelCall, ReplayCase, SpanRecord, Trace, TurnRecord } from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { TransportError } from '../transport';

export const T0 = Date.parse('2026-11-05T10:00:00.000Z');

/** An RFC 3339 time `ms` after T0. */
export const at = (ms: number) => new Date(T0 + ms).toISOString();

/** A span with the engine's defaults; `start` is ms after T0. */
export function span(id: string, parent: string | null, start: number, duration: number | null, change: Partial<SpanRecord> = {}): SpanRecord {
  return {
    id,
    turn_id: 't-1',
    parent_id: parent,
    level: parent === null ? 'turn' : 'node',
    kind: 'stage',
    name: id,
    started_at: at(start),
    duration_ms: duration,
    status: duration === null ? 'running' : 'ok',
    model: null,
    tokens_in: null,
    tokens_out: null,
    degraded: false,
    degraded_reason: null,
    error: null,
    attrs: {},
    ...change,
  };
}

/** A finished turn with the engine's defaults. */
export function turnRecord(id: string, change: Partial<TurnRecord> = {}): TurnRecord {
  return {
    id,
    session_id: 's-1',
    session_name: 'travel plans',
    status: 'completed',
    input: `Question of ${id}`,
    entry_point: 'desktop',
    model: 'primary',
    error_code: null,
    error: null,
    input_tokens: 1200,
    output_tokens: 80,
    created_at: at(0),
    started_at: at(0),
    finished_at: at(2400),
    degraded: false,
    approvals: 0,
    ...change,
  };
}

/** The spans of a turn that read a file after an approval and learned a memory afterwards. */
export function toolTurnSpans(turn = 't-1'): SpanRecord[] {
  const s = (id: string, parent: string | null, start: number, duration: number | null, c: Partial<SpanRecord> = {}) =>
    span(id, parent, start, duration, { turn_id: turn, ...c });
  return [
    s('root', null, 0, 2400, { name: 'turn' }),
    s('ctx', 'root', 5, 40, { name: 'context' }),
    s('recall', 'ctx', 10, 20, { level: 'call', kind: 'memory_read', name: 'memory_recall', attrs: { memory_ids: ['m-0001', 'm-0002'] } }),
    s('inf1', 'root', 50, 900, { name: 'inference#1' }),
    s('call1', 'inf1', 55, 840, {
      level: 'call', kind: 'model', name: 'model_request', model: 'primary', tokens_in: 1000, tokens_out: 30,
      degraded: true, degraded_reason: 'retry', attrs: { captured: true },
    }),
    s('tools1', 'root', 960, 800, { name: 'tools#1' }),
    s('appr', 'tools1', 965, 600, {
      level: 'call', kind: 'approval', name: 'approval',
      attrs: { tool: 'read_file', question: 'read_file ../notes.txt', reason: 'read_file reads outside the workspace', decision: 'allow', decided_by: 'user', request_id: 'r-1' },
    }),
    s('tool', 'tools1', 1570, 180, {
      level: 'call', kind: 'tool', name: 'tool:read_file',
      attrs: { arguments: '{"path":"notes.txt","limit":10}', result: 'Lisbon in May', risk: 'read', error_kind: null, exit_code: 0 },
    }),
    s('inf2', 'root', 1770, 600, { name: 'inference#2' }),
    s('call2', 'inf2', 1775, 590, { level: 'call', kind: 'model', name: 'model_request', model: 'primary', tokens_in: 200, tokens_out: 50, attrs: { captured: false } }),
    s('resp', 'root', 2375, 20, { name: 'response' }),
    s('bg', 'root', 2500, 700, { kind: 'memory_write', name: 'background:extract_memories', attrs: { memory_ids: ['m-0009'] } }),
  ];
}

/** What `trace_call` answers for the captured model call. */
export function modelCall(spanId = 'call1'): ModelCall {
  return {
    span_id: spanId,
    model: 'primary',
    request: {
      messages: [
        { role: 'system', content: 'You are Echo, a careful assistant.' },
        { role: 'user', content: 'Where did I say I am going in May?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c0', name: 'memory_search', arguments: '{"query":"May"}' }] },
        { role: 'tool', content: 'nothing found', tool_call_id: 'c0', name: 'memory_search' },
      ],
      tools: [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
      max_tokens: 4096,
      temperature: 0.2,
      tool_choice: 'auto',
    },
    response: {
      text: 'Let me look at your notes.',
      reasoning: 'The notes file may say.',
      tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"notes.txt"}' }],
      usage: { input_tokens: 1000, output_tokens: 30, cached_input_tokens: 0 },
      finish_reason: 'tool_calls',
    },
    error: null,
  };
}

/** What `trace_case` answers (abridged). */
export function replayCase(turnId: string): ReplayCase {
  return {
    format: 1,
    turn_id: turnId,
    created_at: at(0),
    input: 'Where did I say I am going in May?',
    max_iterations: 8,
    tools_offered: [],
    memories: [],
    replies: [],
    tool_calls: [{ name: 'read_file', arguments: '{"path":"notes.txt"}', result: 'Lisbon in May', error_kind: null }],
    final_text: 'Lisbon, in May.',
  };
}

/** An engine with these turns; `trace` answers each with `spans(id)`. */
export function traceEngine(turns: TurnRecord[], spans: (turnId: string) => SpanRecord[] = toolTurnSpans) {
  const engine = new FakeEngine({
    traces: (r) =>
      turns
        .filter((t) => (r.session === undefined || t.session_name === r.session)
          && (r.status === undefined || t.status === r.status)
          && (r.degraded === undefined || t.degraded === r.degraded)
          && (r.model === undefined || t.model === r.model)
          && (r.has_approvals === undefined || t.approvals > 0 === r.has_approvals)
          && (r.since === undefined || t.created_at >= r.since)
          && (r.until === undefined || t.created_at <= r.until))
        .slice(0, r.limit ?? 50),
    trace: ({ turn_id }): Trace => {
      const turn = turns.find((t) => t.id === turn_id);
      if (!turn) throw new TransportError('not_found', `no turn ${turn_id}`, 404);
      return { turn, spans: spans(turn_id) };
    },
    trace_call: ({ span_id }) => {
      if (span_id !== 'call1') throw new TransportError('not_found', `nothing captured for ${span_id}`, 404);
      return modelCall(span_id);
    },
    trace_case: ({ turn_id }) => replayCase(turn_id),
  });
  return Object.assign(engine, {
    /** The requests of one operation, in order. */
    sent: (op: string) => engine.requests.filter((r) => r.op === op).map((r) => r.request),
  });
}
