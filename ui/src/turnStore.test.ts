// The turn reducer and the history mapping, on event streams shaped like the engine's.

import { describe, expect, it } from 'vitest';
import type { EventEnvelope, StoredMessage, TurnEvent, TurnStatus } from './generated/engine';
import { type AssistantView, failTurn, fromHistory, keyForStored, newTurn, reduceTurn } from './turnStore';

/** Wraps events in envelopes of turn `t1` and folds them into a fresh assistant message. */
function run(events: TurnEvent[]): AssistantView {
  return events
    .map((e, seq): EventEnvelope => ({ v: 1, turn_id: 't1', seq, ...e }))
    .reduce(reduceTurn, newTurn('k'));
}

const started: TurnEvent = { type: 'turn_started', session_id: 's1', session_name: 'web' };
const finished = (status: TurnStatus): TurnEvent => ({
  type: 'turn_finished',
  status,
  usage: { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0 },
  trace_id: 't1',
});

describe('reduceTurn', () => {
  it('streams tokens and reasoning, and the final text wins', () => {
    const partial = run([
      started,
      { type: 'reasoning', text: 'let me ' },
      { type: 'reasoning', text: 'think' },
      { type: 'token', text: 'Hel' },
      { type: 'token', text: 'lo' },
    ]);
    expect(partial).toMatchObject({ turnId: 't1', text: 'Hello', reasoning: 'let me think', status: 'running' });
    const done = [
      { type: 'final', text: 'Hello!' } as TurnEvent,
      finished('completed'),
    ].reduce((m, e, i) => reduceTurn(m, { v: 1, turn_id: 't1', seq: 10 + i, ...e }), partial);
    expect(done).toMatchObject({ text: 'Hello!', status: 'completed', error: null });
  });

  it('builds a tool call from its start, argument deltas, execution and result', () => {
    const m = run([
      started,
      { type: 'tool_call_started', call_id: 'c1', name: 'shell' },
      { type: 'tool_call_args_delta', call_id: 'c1', delta: '{"command":' },
      { type: 'tool_call_args_delta', call_id: 'c1', delta: ' "ls"}' },
    ]);
    expect(m.tools).toEqual([{ callId: 'c1', name: 'shell', args: '{"command": "ls"}' }]);
    const after = run([
      started,
      { type: 'tool_call_started', call_id: 'c1', name: 'shell' },
      { type: 'tool_call_executing', call_id: 'c1', name: 'shell', arguments: '{"command":"ls"}' },
      { type: 'tool_result', call_id: 'c1', name: 'shell', ok: true, content: 'a.txt', duration_ms: 12 },
      { type: 'token', text: 'There is a.txt' },
    ]);
    expect(after.tools).toEqual([
      { callId: 'c1', name: 'shell', args: '{"command":"ls"}', result: 'a.txt', ok: true, durationMs: 12 },
    ]);
    expect(after.text).toBe('There is a.txt');
  });

  it('holds an approval question, streams its explanation and clears it when resolved', () => {
    const asked: TurnEvent[] = [
      started,
      { type: 'tool_call_executing', call_id: 'c1', name: 'shell', arguments: '{"command":"rm x"}' },
      {
        type: 'approval_requested',
        request_id: 'r1',
        call_id: 'c1',
        tool: 'shell',
        risk: 'exec',
        detail: '$ rm x\n(cwd: /tmp, timeout 60s)',
        reason: 'shell runs commands',
        suggested_pattern: 'rm',
        timeout_secs: 120,
      },
      { type: 'approval_explanation', request_id: 'r1', text: 'Deletes ' },
      { type: 'approval_explanation', request_id: 'r1', text: 'the file x.' },
      { type: 'approval_explanation', request_id: 'other', text: 'ignored' },
    ];
    expect(run(asked).approval).toEqual({
      requestId: 'r1',
      callId: 'c1',
      tool: 'shell',
      risk: 'exec',
      detail: '$ rm x\n(cwd: /tmp, timeout 60s)',
      reason: 'shell runs commands',
      suggestedPattern: 'rm',
      timeoutSecs: 120,
      explanation: 'Deletes the file x.',
    });
    const resolved = run([
      ...asked,
      {
        type: 'approval_resolved',
        request_id: 'r1',
        call_id: 'c1',
        tool: 'shell',
        decision: 'allow',
        decided_by: 'user',
        reason: 'allowed once',
      },
    ]);
    expect(resolved.approval).toBeNull();
    expect(resolved.tools[0]?.decision).toEqual({ decision: 'allow', decidedBy: 'user', reason: 'allowed once' });
  });

  it('marks an interrupted turn and keeps its partial text and error', () => {
    const m = run([
      started,
      { type: 'token', text: 'partial ans' },
      { type: 'error', code: 'interrupted', message: 'the turn was stopped' },
      finished('interrupted'),
    ]);
    expect(m).toMatchObject({
      text: 'partial ans',
      status: 'interrupted',
      error: { code: 'interrupted', message: 'the turn was stopped' },
    });
  });

  it('records degradations and a failure', () => {
    const m = run([
      started,
      { type: 'degraded', reason: 'retry', detail: 'retrying after HTTP 500' },
      { type: 'error', code: 'llm_status', message: 'the model server answered 500' },
      finished('failed'),
    ]);
    expect(m.degradations).toEqual([{ reason: 'retry', detail: 'retrying after HTTP 500' }]);
    expect(m).toMatchObject({ status: 'failed', error: { code: 'llm_status' } });
  });

  it('fails a running turn whose stream broke, but not a finished one', () => {
    expect(failTurn(run([started]), 'network', 'gone')).toMatchObject({
      status: 'failed',
      error: { code: 'network', message: 'gone' },
    });
    expect(failTurn(run([started, finished('completed')]), 'network', 'gone').status).toBe('completed');
  });
});

function stored(m: Partial<StoredMessage> & Pick<StoredMessage, 'id' | 'role' | 'content'>): StoredMessage {
  return {
    session_id: 's1',
    turn_id: 't1',
    seq: 0,
    reasoning: null,
    tool_calls: [],
    tool_call_id: null,
    name: null,
    status: 'complete',
    created_at: '',
    ...m,
  };
}

describe('fromHistory', () => {
  it('gathers a turn’s assistant and tool messages into one answer', () => {
    const view = fromHistory([
      stored({ id: 'm1', role: 'user', content: 'make a file' }),
      stored({
        id: 'm2',
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', name: 'shell', arguments: '{"command":"touch a"}' }],
      }),
      stored({ id: 'm3', role: 'tool', content: 'exit 0', tool_call_id: 'c1', name: 'shell' }),
      stored({ id: 'm4', role: 'assistant', content: 'made the file', reasoning: 'easy' }),
      stored({ id: 'm5', role: 'user', content: 'again', turn_id: 't2' }),
      stored({ id: 'm6', role: 'assistant', content: 'half', turn_id: 't2', status: 'partial' }),
    ]);
    expect(view.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(view[1]).toMatchObject({
      text: 'made the file',
      reasoning: 'easy',
      status: 'completed',
      tools: [{ callId: 'c1', name: 'shell', args: '{"command":"touch a"}', result: 'exit 0' }],
    });
    expect(view[3]).toMatchObject({ text: 'half', status: 'interrupted' });
  });

  it('keeps the research run a report came from, for its card and Export', () => {
    const research = {
      run_id: 'r1', phase: 'done' as const, sources_found: 4, sources_read: 4, notes: 3, elapsed_ms: 5200,
      sub_questions: [{ question: 'kyoto trains', state: 'done' as const, found: 2, read: 2 }],
    };
    const view = fromHistory([
      stored({ id: 'm1', role: 'user', content: 'plan kyoto', turn_id: 't1' }),
      stored({ id: 'm2', role: 'assistant', content: 'Short answer [^1]', turn_id: 't1', research }),
      stored({ id: 'm3', role: 'user', content: 'thanks', turn_id: 't2' }),
      stored({ id: 'm4', role: 'assistant', content: 'You are welcome', turn_id: 't2' }),
    ]);
    expect(view[1]).toMatchObject({ text: 'Short answer [^1]', research });
    expect((view[3] as AssistantView).research).toBeUndefined();
  });
});

describe('keyForStored', () => {
  it('finds the chat message showing a stored message: a question itself, an answer or tool result in its turn', () => {
    const view = fromHistory([
      stored({ id: 'm1', role: 'user', content: 'make a file', turn_id: 't1' }),
      stored({ id: 'm2', role: 'assistant', content: '', turn_id: 't1', tool_calls: [{ id: 'c1', name: 'shell', arguments: '{}' }] }),
      stored({ id: 'm3', role: 'tool', content: 'exit 0', turn_id: 't1', tool_call_id: 'c1', name: 'shell' }),
      stored({ id: 'm4', role: 'assistant', content: 'made it', turn_id: 't1' }),
      stored({ id: 'm5', role: 'user', content: 'thanks', turn_id: 't2' }),
    ]);
    expect(keyForStored(view, 'm1')).toBe('m1');
    expect(keyForStored(view, 'm2')).toBe('m2');
    expect(keyForStored(view, 'm3')).toBe('m2');
    expect(keyForStored(view, 'm4')).toBe('m2');
    expect(keyForStored(view, 'm5')).toBe('m5');
    expect(keyForStored(view, 'replaced-long-ago')).toBeNull();
  });
});
