// @vitest-environment jsdom
// The rules panel in jsdom against an in-memory engine: adding a rule sends the form and the
// list shows it; the server's refusal is shown; removing empties the list; a load failure is shown.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../transport';
import { fakeTransport } from '../../settings/testFakes';
import { cleanup, fill, flush, mount } from './testing';
import { RulesPanel } from './RulesPanel';

afterEach(cleanup);

describe('RulesPanel', () => {
  it('adds a rule, lists it, and removes it', async () => {
    const transport = fakeTransport();
    const { container, root } = mount(<RulesPanel transport={transport} session="web" />);
    await flush();
    expect(container.querySelector('.rules-empty')?.textContent).toBe('No rules yet.');
    const q = <T extends Element>(s: string) => container.querySelector(s) as T;
    act(() => fill(q<HTMLInputElement>('input[name="tool"]'), 'shell'));
    act(() => fill(q<HTMLInputElement>('input[name="pattern"]'), ' echo '));
    act(() => fill(q<HTMLSelectElement>('select[name="decision"]'), 'allow'));
    act(() => fill(q<HTMLSelectElement>('select[name="scope"]'), 'always'));
    await act(async () => q<HTMLButtonElement>('button.add-rule').click());
    await flush();
    expect(transport.sent).toEqual([{ tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'always' }]);
    const rows = [...container.querySelectorAll('table.rules tbody tr')];
    expect(rows).toHaveLength(1);
    expect(rows[0]?.getAttribute('data-rule-id')).toBe('r-00000000');
    expect(rows[0]?.textContent).toContain('shell');
    expect(rows[0]?.textContent).toContain('echo');
    expect(rows[0]?.textContent).toContain('allow');
    expect(rows[0]?.textContent).toContain('always');
    expect(q<HTMLInputElement>('input[name="tool"]').value).toBe('');
    expect(container.querySelector('.rule-error')).toBeNull();

    await act(async () => q<HTMLButtonElement>('button.remove-rule').click());
    await flush();
    expect(container.querySelector('table.rules')).toBeNull();
    expect(container.querySelector('.rules-empty')).not.toBeNull();
    act(() => root.unmount());
  });

  it('shows "any" for a rule without a pattern and a session rule’s session', async () => {
    const transport = fakeTransport();
    const { container, root } = mount(<RulesPanel transport={transport} session="web" />);
    await flush();
    act(() => fill(container.querySelector('input[name="tool"]') as HTMLInputElement, 'read_file'));
    act(() => fill(container.querySelector('select[name="scope"]') as HTMLSelectElement, 'session'));
    expect((container.querySelector('input[name="session"]') as HTMLInputElement).value).toBe('web');
    await act(async () => (container.querySelector('button.add-rule') as HTMLButtonElement).click());
    await flush();
    expect(transport.sent[0]).toEqual({ tool: 'read_file', decision: 'allow', scope: 'session', session: 'web' });
    const row = container.querySelector('table.rules tbody tr');
    expect(row?.textContent).toContain('any');
    expect(row?.textContent).toContain('session web');
    act(() => root.unmount());
  });

  it('shows the server’s message when it refuses a rule, and keeps the form', async () => {
    const transport = fakeTransport();
    const { container, root } = mount(<RulesPanel transport={transport} session={null} />, 'zh-CN');
    await flush();
    act(() => fill(container.querySelector('input[name="tool"]') as HTMLInputElement, 'bad'));
    await act(async () => (container.querySelector('button.add-rule') as HTMLButtonElement).click());
    await flush();
    const alert = container.querySelector('.rule-error[role="alert"]');
    expect(alert?.textContent).toBe('未保存：rule: tool: it is empty');
    expect((container.querySelector('input[name="tool"]') as HTMLInputElement).value).toBe('bad');
    expect(container.querySelector('table.rules')).toBeNull();
    act(() => root.unmount());
  });

  it('shows a load failure', async () => {
    const transport = fakeTransport();
    transport.handlers.list_rules = () => Promise.reject(new TransportError('unauthorized', 'missing or wrong bearer token', 401));
    const { container, root } = mount(<RulesPanel transport={transport} session={null} />);
    await flush();
    expect(container.querySelector('[role="alert"]')?.textContent).toBe('Could not load: missing or wrong bearer token');
    act(() => root.unmount());
  });
});
