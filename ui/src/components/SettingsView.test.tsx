// @vitest-environment jsdom
// The rules panel in jsdom against an in-memory transport: adding a rule sends the form and
// the list shows it; the server's refusal is shown; removing empties the list; the MCP panel
// says when no server is configured.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { I18nContext, translator } from '../i18n';
import type { McpServerStatus, NewRule, Rule } from '../settingsTypes';
import { TransportError } from '../transport';
import { McpPanel, RulesPanel } from './SettingsView';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

function fakeTransport() {
  const rules: Rule[] = [];
  const sent: NewRule[] = [];
  return {
    rules,
    sent,
    listRules: async () => [...rules],
    addRule: async (r: NewRule) => {
      sent.push(r);
      if (r.tool === 'bad') throw new TransportError('invalid_input', 'rule: tool: it is empty', 400);
      const rule: Rule = {
        id: `r-${String(rules.length).padStart(8, '0')}`,
        tool: r.tool,
        pattern: r.pattern ?? null,
        decision: r.decision,
        scope: r.scope,
        session_id: r.session ?? null,
        created_by: 'user',
        created_at: '2026-01-01T00:00:00Z',
      };
      rules.push(rule);
      return rule;
    },
    removeRule: async (id: string) => {
      const i = rules.findIndex((r) => r.id === id);
      if (i < 0) throw new TransportError('not_found', `no rule ${id}`, 404);
      return rules.splice(i, 1)[0] as Rule;
    },
    mcpServers: async (): Promise<McpServerStatus[]> => [],
    approvals: async () => [],
  };
}

/** Sets a controlled input's or select's value the way a user would. */
function fill(el: HTMLInputElement | HTMLSelectElement, value: string) {
  const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value);
  el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
}

async function flush() {
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

function mount(ui: React.ReactNode, locale: 'en' | 'zh-CN' = 'en') {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<I18nContext.Provider value={translator(locale)}>{ui}</I18nContext.Provider>));
  return { container, root };
}

afterEach(() => {
  document.body.innerHTML = '';
});

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
    const transport = { ...fakeTransport(), listRules: async () => Promise.reject(new TransportError('unauthorized', 'missing or wrong bearer token', 401)) };
    const { container, root } = mount(<RulesPanel transport={transport} session={null} />);
    await flush();
    expect(container.querySelector('[role="alert"]')?.textContent).toBe('Could not load: missing or wrong bearer token');
    act(() => root.unmount());
  });
});

describe('McpPanel', () => {
  it('says no servers are configured, and lists them after a refresh', async () => {
    const transport = fakeTransport();
    let servers: McpServerStatus[] = [];
    transport.mcpServers = async () => servers;
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    expect(container.querySelector('.mcp-empty')?.textContent).toBe('No servers configured.');
    servers = [{ name: 'gh', transport: 'stdio', state: 'failed', error: 'spawn failed', tools: 0, restarts: 2, pid: null }];
    await act(async () => (container.querySelector('button.refresh-mcp') as HTMLButtonElement).click());
    await flush();
    const row = container.querySelector('tr[data-server="gh"]');
    expect(row?.textContent).toContain('failed');
    expect(row?.textContent).toContain('spawn failed');
    act(() => root.unmount());
  });
});
