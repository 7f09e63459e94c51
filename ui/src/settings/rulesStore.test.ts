// The rules store without a page: the body a draft stands for, adding (which reads the list
// again and clears tool and pattern), a refusal that keeps the draft, and removing.

import { describe, expect, it } from 'vitest';
import type { AddRule } from '../generated/engine';
import { type RuleDraft, RulesStore, newRule } from './rulesStore';
import { fakeTransport } from './testFakes';

const draft = (d: Partial<RuleDraft>): RuleDraft => ({ tool: '', pattern: '', decision: 'allow', scope: 'always', session: '', ...d });

function check(d: Partial<RuleDraft>, expected: AddRule) {
  expect(newRule(draft(d))).toEqual(expected);
}

describe('newRule', () => {
  it('trims, sends a pattern only when given and a session only for session rules', () => {
    check({ tool: ' shell ', pattern: ' echo ' }, { tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'always' });
    check({ tool: 'shell', pattern: '  ', decision: 'deny' }, { tool: 'shell', decision: 'deny', scope: 'always' });
    check({ tool: 'read_file', scope: 'session', session: ' web ' }, { tool: 'read_file', decision: 'allow', scope: 'session', session: 'web' });
    check({ tool: 'read_file', scope: 'session', session: ' ' }, { tool: 'read_file', decision: 'allow', scope: 'session' });
    check({ tool: 'read_file', scope: 'always', session: 'web' }, { tool: 'read_file', decision: 'allow', scope: 'always' });
  });
});

describe('RulesStore', () => {
  it('offers the selected session, adds a rule, reads the list again and clears tool and pattern', async () => {
    const transport = fakeTransport();
    const store = new RulesStore(transport, 'web');
    await store.load();
    expect(store.getState().rules).toEqual([]);
    expect(store.getState().draft.session).toBe('web');
    store.editDraft({ tool: 'shell', pattern: 'echo', decision: 'ask' });
    await store.add();
    expect(transport.sent).toEqual([{ tool: 'shell', pattern: 'echo', decision: 'ask', scope: 'always' }]);
    expect(store.getState().rules?.map((r) => r.id)).toEqual(['r-00000000']);
    expect(store.getState().draft).toEqual({ tool: '', pattern: '', decision: 'ask', scope: 'always', session: 'web' });
    expect(store.getState()).toMatchObject({ formError: null, busy: false });
  });

  it('keeps the draft and the engine’s message when a rule is refused', async () => {
    const transport = fakeTransport();
    const store = new RulesStore(transport, null);
    await store.load();
    store.editDraft({ tool: 'bad' });
    await store.add();
    expect(store.getState()).toMatchObject({ formError: 'rule: tool: it is empty', busy: false, rules: [] });
    expect(store.getState().draft.tool).toBe('bad');
  });

  it('removes a rule, and shows a failed removal while reading the list again', async () => {
    const transport = fakeTransport();
    const store = new RulesStore(transport, null);
    store.editDraft({ tool: 'shell' });
    await store.add();
    await store.remove('r-00000000');
    expect(store.getState().rules).toEqual([]);
    transport.rules.push({ id: 'r-1', tool: 'x', pattern: null, decision: 'deny', scope: 'always', session_id: null, created_by: 'user', created_at: '2026-01-01T00:00:00Z' });
    await store.remove('r-missing');
    expect(store.getState().formError).toBe('no rule r-missing');
    expect(store.getState().rules?.map((r) => r.id)).toEqual(['r-1']);
  });
});
