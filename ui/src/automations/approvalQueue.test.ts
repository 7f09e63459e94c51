// The approval queue of unattended runs: pending questions only, read every few seconds while
// the app is open (and no more after), kept as they were when the engine cannot be asked,
// answered with the chosen answer and dropped at once.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../transport';
import { ApprovalQueue, QUEUE_POLL_MS } from './approvalQueue';
import { automationsEngine, question } from './testFakes';

afterEach(() => {
  vi.useRealTimers();
});

describe('ApprovalQueue', () => {
  it('keeps the pending questions, asking for pending ones only', async () => {
    const engine = automationsEngine([], [], [question('q1'), question('q2', { status: 'expired' }), question('q3')]);
    engine.handlers.approval_queue = () => [question('q1'), question('q2', { status: 'expired' }), question('q3')];
    const queue = new ApprovalQueue(engine);
    await queue.load();
    queue.dispose();
    expect(engine.sent('approval_queue')).toEqual([{ all: false }]);
    expect(queue.getState().pending.map((q) => q.id)).toEqual(['q1', 'q3']);
    expect(queue.getState().loaded).toBe(true);
  });

  it('reads again every few seconds until disposed', async () => {
    vi.useFakeTimers();
    const engine = automationsEngine();
    const queue = new ApprovalQueue(engine);
    await queue.load();
    expect(queue.getState().pending).toEqual([]);
    engine.handlers.approval_queue = () => [question('q9')];
    await vi.advanceTimersByTimeAsync(QUEUE_POLL_MS);
    expect(queue.getState().pending.map((q) => q.id)).toEqual(['q9']);
    queue.dispose();
    await vi.advanceTimersByTimeAsync(QUEUE_POLL_MS * 4);
    expect(engine.sent('approval_queue')).toHaveLength(2);
  });

  it('keeps what it knew when the engine cannot be asked', async () => {
    const engine = automationsEngine([], [], [question('q1')]);
    const queue = new ApprovalQueue(engine);
    await queue.refresh();
    engine.handlers.approval_queue = () => Promise.reject(new TransportError('network', 'down'));
    await queue.refresh();
    expect(queue.getState().pending.map((q) => q.id)).toEqual(['q1']);
    expect(queue.getState().error).toBe('down');
  });

  it('answers with the chosen answer and drops the question', async () => {
    const engine = automationsEngine([], [], [question('q1'), question('q2')]);
    const queue = new ApprovalQueue(engine);
    await queue.refresh();
    await queue.answer('q1', 'allow_automation');
    await queue.answer('q2', 'deny');
    expect(engine.sent('answer_approval')).toEqual([
      { request_id: 'q1', answer: 'allow_automation' },
      { request_id: 'q2', answer: 'deny' },
    ]);
    expect(engine.questions().map((q) => q.status)).toEqual(['allowed', 'denied']);
    expect(queue.getState().pending).toEqual([]);
    await queue.answer('q2', 'allow_once');
    expect(queue.getState().answerError).toContain('no pending question q2');
  });
});
