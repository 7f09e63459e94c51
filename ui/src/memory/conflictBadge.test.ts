// The Memory button's conflict count: read from the engine (open conflicts only), told at once
// by whoever changed the queue (an older answer then dropped), and read again after a turn,
// now and a little later, when extraction may have opened one.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Conflict } from '../generated/engine';
import { TransportError } from '../transport';
import { AFTER_TURN_DELAYS, ConflictBadge } from './conflictBadge';
import { conflict, memoryEngine } from './testFakes';

afterEach(() => {
  vi.useRealTimers();
});

describe('ConflictBadge', () => {
  it('counts the open conflicts, asking for open ones only', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001'), conflict('c2', 'm-0000', 'm-0001')]);
    const badge = new ConflictBadge(engine);
    expect(badge.getState().open).toBe(0);
    await badge.load();
    expect(engine.sent('memory_conflicts')).toEqual([{ all: false }]);
    expect(badge.getState().open).toBe(2);
  });

  it('takes a reported count over an answer that started before it', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001')]);
    let answer: (list: Conflict[]) => void = () => {};
    engine.handlers.memory_conflicts = () => new Promise((ok) => (answer = ok));
    const badge = new ConflictBadge(engine);
    const reading = badge.refresh();
    badge.report(0);
    answer([conflict('c1', 'm-0000', 'm-0001')]);
    await reading;
    expect(badge.getState().open).toBe(0);
  });

  it('keeps the count when the engine cannot be asked', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001')]);
    const badge = new ConflictBadge(engine);
    await badge.refresh();
    engine.handlers.memory_conflicts = () => Promise.reject(new TransportError('network', 'down'));
    await badge.refresh();
    expect(badge.getState().open).toBe(1);
  });

  it('reads again right after a turn and a few times shortly after', async () => {
    vi.useFakeTimers();
    const engine = memoryEngine(2);
    const badge = new ConflictBadge(engine);
    badge.refreshAfterTurn();
    await vi.advanceTimersByTimeAsync(0);
    expect(engine.sent('memory_conflicts')).toHaveLength(1);
    // Extraction opens a conflict after the answer.
    engine.handlers.memory_conflicts = () => [conflict('c9', 'm-0000', 'm-0001')];
    await vi.advanceTimersByTimeAsync(AFTER_TURN_DELAYS[1] ?? 0);
    expect(badge.getState().open).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(engine.sent('memory_conflicts')).toHaveLength(AFTER_TURN_DELAYS.length);
    badge.refreshAfterTurn();
    badge.dispose();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(engine.sent('memory_conflicts')).toHaveLength(AFTER_TURN_DELAYS.length);
  });
});
