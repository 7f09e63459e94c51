// Where a memory was learned: the turn's trace names the session; without the trace (pruned)
// the recorded session id is looked up; null when neither exists; other failures reject.

import { describe, expect, it } from 'vitest';
import type { SessionSummary } from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { turnRecord } from '../trace/testFakes';
import { TransportError } from '../transport';
import { findSource, hasProvenance } from './provenance';
import { memory } from './testFakes';

const learned = memory(1, { source_session_id: 's-7', source_turn_id: 't-7', source_message_id: 'msg-7' });
const sessions = [{ id: 's-7', name: 'weekend' }] as SessionSummary[];

describe('findSource', () => {
  it('names the session through the turn that taught it', async () => {
    const engine = new FakeEngine({ trace: ({ turn_id }) => ({ turn: turnRecord(turn_id, { session_name: 'trip' }), spans: [] }) });
    expect(await findSource(engine, learned)).toEqual({ session: 'trip', messageId: 'msg-7' });
  });

  it('falls back to the session id when the trace is gone, and gives up when that is gone too', async () => {
    const engine = new FakeEngine({
      trace: ({ turn_id }) => Promise.reject(new TransportError('not_found', `no turn ${turn_id}`, 404)),
      list_sessions: () => sessions,
    });
    expect(await findSource(engine, learned)).toEqual({ session: 'weekend', messageId: 'msg-7' });
    engine.handlers.list_sessions = () => [];
    expect(await findSource(engine, learned)).toBeNull();
    expect(await findSource(engine, memory(2))).toBeNull();
  });

  it('rejects when the engine cannot be asked', async () => {
    const engine = new FakeEngine({ trace: () => Promise.reject(new TransportError('network', 'cannot reach the engine')) });
    await expect(findSource(engine, learned)).rejects.toThrow('cannot reach the engine');
  });

  it('says whether a memory records where it came from', () => {
    expect(hasProvenance(learned)).toBe(true);
    expect(hasProvenance(memory(3))).toBe(false);
  });
});
