// The audit store without a page: it asks for the most recent decisions and keeps a failure.

import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { AUDIT_LIMIT, AuditStore } from './auditStore';

describe('AuditStore', () => {
  it('asks for the most recent decisions, and shows a failure', async () => {
    const asked: (number | undefined)[] = [];
    const entry: AuditEntry = {
      id: 'a1',
      session_id: 'web',
      turn_id: 't1',
      call_id: 'c1',
      tool: 'shell',
      arguments: '{"command":"ls"}',
      risk: 'exec',
      decision: 'allow',
      decided_by: 'rule',
      rule_id: 'r1',
      reason: 'rule r1',
      created_at: '2026-01-01T00:00:00Z',
    };
    const store = new AuditStore(
      new FakeEngine({
        approvals: ({ limit }) => {
          asked.push(limit);
          if (asked.length > 1) throw new Error('database is locked');
          return [entry];
        },
      }),
    );
    await store.load();
    expect(asked).toEqual([AUDIT_LIMIT]);
    expect(store.getState()).toEqual({ entries: [entry], loadError: null });
    await store.load();
    expect(store.getState()).toEqual({ entries: [entry], loadError: 'database is locked' });
  });
});
