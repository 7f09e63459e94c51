// @vitest-environment jsdom
// The settings panels in jsdom against in-memory transports: adding a rule sends the form and
// the list shows it; the server's refusal is shown; removing empties the list. The MCP panel
// lists the configured servers with their state (never an env or header value), and adds,
// edits, removes and toggles them by sending the whole list, then polls the states while they
// start; its own checks and the engine's refusals are shown inline. The provider panel saves (and says so), tests the
// connection, offers a running Ollama and a kind's usual address; the desktop panel sets the
// quick-ask shortcut; the view shows it only in the desktop app. The standing-instructions
// panel shows the four bootstrap files, saves the edited text, keeps unsaved text per file
// across tabs, restores a default (null) after a confirmation and shows the server's refusal.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nContext, translator } from '../i18n';
import type { ShortcutStatus } from '../desktopTypes';
import type { BootstrapFile, ConnectionReport, McpServerConfig, McpServerStatus, NewRule, OllamaInfo, ProviderUpdate, ProviderView, Rule } from '../settingsTypes';
import { TransportError } from '../transport';
import { BootstrapPanel, DesktopPanel, McpPanel, ProviderPanel, RulesPanel, SettingsView } from './SettingsView';

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
    mcpConfig: async (): Promise<McpServerConfig[]> => [],
    setMcpConfig: async (): Promise<McpServerStatus[]> => [],
    approvals: async () => [],
    bootstrapFiles: async (): Promise<BootstrapFile[]> => [],
    saveBootstrapFile: async (): Promise<BootstrapFile> => Promise.reject(new Error('not in this test')),
  };
}

/** Sets a controlled input's, textarea's or select's value the way a user would. */
function fill(el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, value: string) {
  const proto =
    el instanceof HTMLSelectElement
      ? HTMLSelectElement.prototype
      : el instanceof HTMLTextAreaElement
        ? HTMLTextAreaElement.prototype
        : HTMLInputElement.prototype;
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

const gh: McpServerConfig = {
  name: 'gh',
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-github'],
  env: { GITHUB_TOKEN: 'ghp_SECRET1' },
  url: null,
  headers: {},
  enabled: true,
};
const docs: McpServerConfig = {
  name: 'docs',
  command: null,
  args: [],
  env: {},
  url: 'https://docs.example.com/mcp',
  headers: { Authorization: 'Bearer SECRET2' },
  enabled: false,
};

/** A server's state as the fake engine reports it. */
function stateOf(c: McpServerConfig, state?: McpServerStatus['state']): McpServerStatus {
  const s = state ?? (c.enabled ? 'ready' : 'disabled');
  return { name: c.name, transport: c.url ? 'http' : 'stdio', state: s, error: null, tools: s === 'ready' ? 2 : 0, restarts: 0, pid: null };
}

const copy = <T,>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** An MCP transport over an in-memory list; it refuses a non-HTTP URL like the engine does. */
function mcpTransport(initial: McpServerConfig[] = [gh, docs]) {
  let configs = copy(initial);
  const sets: McpServerConfig[][] = [];
  const t = {
    sets,
    polls: 0,
    /** What `mcpServers` answers. */
    states: (list: McpServerConfig[]) => list.map((c) => stateOf(c)),
    /** What a save answers. */
    saved: (list: McpServerConfig[]) => list.map((c) => stateOf(c)),
    mcpConfig: async () => copy(configs),
    mcpServers: async () => {
      t.polls += 1;
      return t.states(configs);
    },
    setMcpConfig: async (list: McpServerConfig[]) => {
      sets.push(copy(list));
      const bad = list.find((c) => c.url !== null && !/^https?:\/\//.test(c.url));
      if (bad) throw new TransportError('invalid_input', `MCP server ${bad.name}: \`url\` must start with http:// or https://, not "${bad.url}"`, 400);
      configs = copy(list);
      return t.saved(configs);
    },
  };
  return t;
}

const rowNames = (root: ParentNode) => [...root.querySelectorAll('tr[data-server]')].map((r) => r.getAttribute('data-server'));
const inRow = <T extends Element>(root: ParentNode, server: string, id: string) =>
  root.querySelector(`tr[data-server="${server}"] [data-testid="${id}"]`) as T;

describe('McpPanel', () => {
  it('says no servers are configured', async () => {
    const { container, root } = mount(<McpPanel transport={mcpTransport([])} />);
    await flush();
    expect(container.querySelector('.mcp-empty')?.textContent).toBe('No servers configured.');
    expect(container.querySelector('tr[data-server]')).toBeNull();
    act(() => root.unmount());
  });

  it('lists the configured servers with their live state, and refreshes it', async () => {
    const transport = mcpTransport();
    transport.states = () => [];
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    expect(rowNames(container)).toEqual(['gh', 'docs']);
    const row = (name: string) => container.querySelector(`tr[data-server="${name}"]`) as HTMLElement;
    expect(row('gh').textContent).toContain('npx -y @modelcontextprotocol/server-github');
    expect(row('gh').textContent).toContain('not reported');
    expect(row('docs').textContent).toContain('https://docs.example.com/mcp');
    expect(inRow<HTMLInputElement>(container, 'gh', 'mcp-toggle').checked).toBe(true);
    expect(inRow<HTMLInputElement>(container, 'docs', 'mcp-toggle').checked).toBe(false);
    expect(inRow(container, 'docs', 'mcp-toggle').getAttribute('aria-label')).toBe('Use docs');

    transport.states = () => [{ ...stateOf(gh, 'failed'), error: 'spawn failed', restarts: 2 }, stateOf(docs)];
    await act(async () => (container.querySelector('button.refresh-mcp') as HTMLButtonElement).click());
    await flush();
    expect(row('gh').textContent).toContain('failed');
    expect(row('gh').textContent).toContain('spawn failed');
    expect(row('gh').textContent).toContain('restarted 2×');
    expect(row('docs').textContent).toContain('disabled');
    act(() => root.unmount());
  });

  it('never shows an env or header value in the list, only the names', async () => {
    const { container, root } = mount(<McpPanel transport={mcpTransport()} />);
    await flush();
    expect(container.textContent).toContain('Environment: GITHUB_TOKEN (values hidden)');
    expect(container.textContent).toContain('Headers: Authorization (values hidden)');
    expect(container.innerHTML).not.toContain('SECRET');

    // In the form the values are there to edit, but masked until asked for.
    await act(async () => inRow<HTMLButtonElement>(container, 'gh', 'mcp-edit').click());
    const env = byTestId<HTMLTextAreaElement>(container, 'mcp-env') as HTMLTextAreaElement;
    expect(env.value).toBe('GITHUB_TOKEN=ghp_SECRET1');
    expect(env.className).toBe('secret-text');
    expect(container.querySelector('table')?.innerHTML).not.toContain('SECRET');
    const reveal = [...container.querySelectorAll('label')].find((l) => l.textContent === 'Show values')?.querySelector('input');
    await act(async () => reveal?.click());
    expect(env.className).toBe('secret-text revealed');
    act(() => root.unmount());
  });

  it('adds a stdio server: sends the whole list with it appended and says it is saved', async () => {
    const transport = mcpTransport();
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    expect(q('mcp-name')).toBeNull();
    await act(async () => q<HTMLButtonElement>('mcp-add').click());
    expect(q<HTMLSelectElement>('mcp-transport').value).toBe('stdio');
    expect(q<HTMLInputElement>('mcp-enabled').checked).toBe(true);
    expect(q('mcp-url')).toBeNull();
    act(() => fill(q<HTMLInputElement>('mcp-name'), ' fs '));
    act(() => fill(q<HTMLInputElement>('mcp-command'), 'npx'));
    act(() => fill(q<HTMLInputElement>('mcp-args'), `-y @modelcontextprotocol/server-filesystem "/home/me/My Documents" 'a b'`));
    act(() => fill(q<HTMLTextAreaElement>('mcp-env'), 'ROOT=/home/me\n\nTOKEN = s3cret=x\n'));
    await act(async () => q<HTMLButtonElement>('mcp-save').click());
    await flush();
    expect(transport.sets).toEqual([
      [
        gh,
        docs,
        {
          name: 'fs',
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/My Documents', 'a b'],
          env: { ROOT: '/home/me', TOKEN: 's3cret=x' },
          url: null,
          headers: {},
          enabled: true,
        },
      ],
    ]);
    expect(q('mcp-saved')?.textContent).toBe('Saved — servers restarting.');
    expect(q('mcp-saved')?.getAttribute('role')).toBe('status');
    expect(q('mcp-error')).toBeNull();
    expect(q('mcp-name')).toBeNull();
    expect(rowNames(container)).toEqual(['gh', 'docs', 'fs']);
    const fs = container.querySelector('tr[data-server="fs"]')?.textContent;
    expect(fs).toContain(`npx -y @modelcontextprotocol/server-filesystem '/home/me/My Documents' 'a b'`);
    expect(fs).toContain('Environment: ROOT, TOKEN (values hidden)');
    expect(fs).toContain('ready');
    expect(container.querySelector('table')?.innerHTML).not.toContain('s3cret');
    act(() => root.unmount());
  });

  it('adds an HTTP server with its headers', async () => {
    const transport = mcpTransport([]);
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    await act(async () => q<HTMLButtonElement>('mcp-add').click());
    act(() => fill(q<HTMLInputElement>('mcp-name'), 'web'));
    act(() => fill(q<HTMLSelectElement>('mcp-transport'), 'http'));
    expect(q('mcp-command')).toBeNull();
    act(() => fill(q<HTMLInputElement>('mcp-url'), 'https://mcp.example.com/'));
    act(() => fill(q<HTMLTextAreaElement>('mcp-headers'), 'Authorization: Bearer tok:1\nX-Team: core'));
    expect(q<HTMLTextAreaElement>('mcp-headers').className).toBe('secret-text');
    act(() => q<HTMLInputElement>('mcp-enabled').click());
    await act(async () => q<HTMLButtonElement>('mcp-save').click());
    await flush();
    expect(transport.sets).toEqual([
      [{ name: 'web', command: null, args: [], env: {}, url: 'https://mcp.example.com/', headers: { Authorization: 'Bearer tok:1', 'X-Team': 'core' }, enabled: false }],
    ]);
    expect(container.querySelector('tr[data-server="web"]')?.textContent).toContain('Headers: Authorization, X-Team (values hidden)');
    expect(container.querySelector('.mcp-panel')?.innerHTML).not.toContain('tok:1');
    act(() => root.unmount());
  });

  it('edits a server in place, keeping the others and their order', async () => {
    const third: McpServerConfig = { ...gh, name: 'fs', args: ['server-fs'], env: {} };
    const transport = mcpTransport([gh, docs, third]);
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    await act(async () => inRow<HTMLButtonElement>(container, 'docs', 'mcp-edit').click());
    expect(container.querySelector('.mcp-form h3')?.textContent).toBe('Edit docs');
    expect(q<HTMLInputElement>('mcp-name').value).toBe('docs');
    expect(q<HTMLSelectElement>('mcp-transport').value).toBe('http');
    expect(q<HTMLInputElement>('mcp-url').value).toBe('https://docs.example.com/mcp');
    expect(q<HTMLTextAreaElement>('mcp-headers').value).toBe('Authorization: Bearer SECRET2');
    expect(q<HTMLInputElement>('mcp-enabled').checked).toBe(false);
    act(() => fill(q<HTMLInputElement>('mcp-name'), 'handbook'));
    act(() => fill(q<HTMLInputElement>('mcp-url'), 'https://handbook.example.com/mcp'));
    await act(async () => q<HTMLButtonElement>('mcp-save').click());
    await flush();
    expect(transport.sets).toEqual([[gh, { ...docs, name: 'handbook', url: 'https://handbook.example.com/mcp' }, third]]);
    expect(rowNames(container)).toEqual(['gh', 'handbook', 'fs']);

    // The arguments come back as one line that splits the same.
    await act(async () => inRow<HTMLButtonElement>(container, 'gh', 'mcp-edit').click());
    expect(q<HTMLInputElement>('mcp-args').value).toBe('-y @modelcontextprotocol/server-github');
    act(() => fill(q<HTMLInputElement>('mcp-args'), `${q<HTMLInputElement>('mcp-args').value} --label "My Repos"`));
    await act(async () => q<HTMLButtonElement>('mcp-save').click());
    await flush();
    expect(transport.sets[1]?.[0]).toEqual({ ...gh, args: ['-y', '@modelcontextprotocol/server-github', '--label', 'My Repos'] });
    expect(transport.sets[1]?.map((c) => c.name)).toEqual(['gh', 'handbook', 'fs']);
    act(() => root.unmount());
  });

  it('removes a server and toggles one, each by sending the whole list', async () => {
    const transport = mcpTransport();
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    await act(async () => inRow<HTMLInputElement>(container, 'docs', 'mcp-toggle').click());
    await flush();
    expect(transport.sets).toEqual([[gh, { ...docs, enabled: true }]]);
    expect(inRow<HTMLInputElement>(container, 'docs', 'mcp-toggle').checked).toBe(true);
    expect(container.querySelector('tr[data-server="docs"]')?.textContent).toContain('ready');
    expect(byTestId(container, 'mcp-saved')?.textContent).toBe('Saved — servers restarting.');

    await act(async () => inRow<HTMLButtonElement>(container, 'gh', 'mcp-remove').click());
    await flush();
    expect(transport.sets[1]).toEqual([{ ...docs, enabled: true }]);
    expect(rowNames(container)).toEqual(['docs']);
    expect(inRow(container, 'docs', 'mcp-remove').getAttribute('aria-label')).toBe('Remove docs');
    act(() => root.unmount());
  });

  it('shows the engine’s refusal inline and keeps what was typed', async () => {
    const transport = mcpTransport();
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    await act(async () => q<HTMLButtonElement>('mcp-add').click());
    act(() => fill(q<HTMLInputElement>('mcp-name'), 'bad'));
    act(() => fill(q<HTMLSelectElement>('mcp-transport'), 'http'));
    act(() => fill(q<HTMLInputElement>('mcp-url'), 'ftp://x'));
    act(() => fill(q<HTMLTextAreaElement>('mcp-headers'), 'Authorization: Bearer t'));
    await act(async () => q<HTMLButtonElement>('mcp-save').click());
    await flush();
    expect(transport.sets).toHaveLength(1);
    const alert = q('mcp-error');
    expect(alert?.getAttribute('role')).toBe('alert');
    expect(alert?.textContent).toBe('Not saved: MCP server bad: `url` must start with http:// or https://, not "ftp://x"');
    expect(q('mcp-saved')).toBeNull();
    expect(q<HTMLInputElement>('mcp-name').value).toBe('bad');
    expect(q<HTMLSelectElement>('mcp-transport').value).toBe('http');
    expect(q<HTMLInputElement>('mcp-url').value).toBe('ftp://x');
    expect(q<HTMLTextAreaElement>('mcp-headers').value).toBe('Authorization: Bearer t');
    expect(rowNames(container)).toEqual(['gh', 'docs']);

    // Fixed, it goes through and the error goes away.
    act(() => fill(q<HTMLInputElement>('mcp-url'), 'https://x.example.com'));
    await act(async () => q<HTMLButtonElement>('mcp-save').click());
    await flush();
    expect(q('mcp-error')).toBeNull();
    expect(rowNames(container)).toEqual(['gh', 'docs', 'bad']);
    act(() => root.unmount());
  });

  it('refuses a duplicate or empty name and a missing command without asking the engine', async () => {
    const transport = mcpTransport();
    const { container, root } = mount(<McpPanel transport={transport} />, 'zh-CN');
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    const save = async () => {
      await act(async () => q<HTMLButtonElement>('mcp-save').click());
      await flush();
      return q('mcp-error')?.textContent;
    };
    await act(async () => q<HTMLButtonElement>('mcp-add').click());
    act(() => fill(q<HTMLInputElement>('mcp-command'), 'uvx'));
    expect(await save()).toBe('未保存：MCP 服务器名称无效：名称为空');
    act(() => fill(q<HTMLInputElement>('mcp-name'), 'gh'));
    expect(await save()).toBe('未保存：MCP 服务器名称“gh”重复使用');
    act(() => fill(q<HTMLInputElement>('mcp-name'), 'fetch'));
    act(() => fill(q<HTMLInputElement>('mcp-command'), ' '));
    expect(await save()).toBe('未保存：MCP 服务器 fetch：请填写要启动的命令');
    expect(q('mcp-error')?.getAttribute('role')).toBe('alert');
    expect(transport.sets).toEqual([]);
    expect(q<HTMLInputElement>('mcp-name').value).toBe('fetch');
    act(() => root.unmount());

    // In English too, and an edited server may keep its own name.
    const second = mount(<McpPanel transport={transport} />);
    await flush();
    await act(async () => byTestId<HTMLButtonElement>(second.container, 'mcp-add')?.click());
    act(() => fill(byTestId<HTMLInputElement>(second.container, 'mcp-name') as HTMLInputElement, 'docs'));
    act(() => fill(byTestId<HTMLInputElement>(second.container, 'mcp-command') as HTMLInputElement, 'x'));
    await act(async () => byTestId<HTMLButtonElement>(second.container, 'mcp-save')?.click());
    expect(byTestId(second.container, 'mcp-error')?.textContent).toBe('Not saved: MCP server name "docs" is used twice');
    await act(async () => inRow<HTMLButtonElement>(second.container, 'docs', 'mcp-edit').click());
    expect(byTestId(second.container, 'mcp-error')).toBeNull();
    await act(async () => byTestId<HTMLButtonElement>(second.container, 'mcp-save')?.click());
    await flush();
    expect(transport.sets).toEqual([[gh, docs]]);
    act(() => second.root.unmount());
  });

  it('polls the states every second after a save until none is starting, ten times at most', async () => {
    const transport = mcpTransport([gh]);
    const { container, root } = mount(<McpPanel transport={transport} />);
    await flush();
    vi.useFakeTimers();
    try {
      const tick = async (ms: number) => act(async () => void (await vi.advanceTimersByTimeAsync(ms)));
      const state = () => container.querySelector('tr[data-server="gh"] .state')?.textContent;
      const before = transport.polls;
      transport.saved = (list) => list.map((c) => stateOf(c, 'starting'));
      let startingFor = 2;
      transport.states = (list) => list.map((c) => stateOf(c, startingFor-- > 0 ? 'starting' : undefined));
      await act(async () => inRow<HTMLInputElement>(container, 'gh', 'mcp-toggle').click());
      await tick(0);
      expect(state()).toBe('starting');
      expect(transport.polls).toBe(before);
      await tick(1000);
      expect(transport.polls).toBe(before + 1);
      expect(state()).toBe('starting');
      await tick(2000);
      expect(transport.polls).toBe(before + 3);
      expect(state()).toBe('disabled');
      await tick(5000);
      expect(transport.polls).toBe(before + 3);

      // A server that never comes up: ten reads, then it stops asking.
      transport.states = (list) => list.map((c) => stateOf(c, 'starting'));
      await act(async () => inRow<HTMLInputElement>(container, 'gh', 'mcp-toggle').click());
      await tick(30_000);
      expect(transport.polls).toBe(before + 13);
      expect(state()).toBe('starting');
    } finally {
      act(() => root.unmount());
      vi.useRealTimers();
    }
  });
});

const keychainView: ProviderView = {
  settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4o', fallback_models: ['gpt-4o-mini'] },
  key_source: 'keychain',
  keychain: 'Secret Service',
  keychain_available: true,
  env_overrides: [],
};

/** A provider transport keeping what it was sent; `ollama` is what detection finds. */
function providerTransport(options: { view?: ProviderView; ollama?: OllamaInfo | null; report?: ConnectionReport } = {}) {
  let view = options.view ?? keychainView;
  const saved: ProviderUpdate[] = [];
  const tested: ProviderUpdate[] = [];
  return {
    saved,
    tested,
    provider: async () => view,
    updateProvider: async (u: ProviderUpdate) => {
      saved.push(u);
      if (u.settings.model === '') throw new TransportError('invalid_input', 'model: it is empty', 400);
      view = {
        ...view,
        settings: u.settings,
        key_source: u.clear_api_key ? 'none' : u.api_key ? 'keychain' : view.key_source,
      };
      return view;
    },
    testProvider: async (u: ProviderUpdate) => {
      tested.push(u);
      return options.report ?? { ok: true, code: 'ok', message: 'the model answered', latency_ms: 42 };
    },
    detectOllama: async () => options.ollama ?? null,
  };
}

const byTestId = <T extends Element>(root: ParentNode, id: string) => root.querySelector(`[data-testid="${id}"]`) as T | null;

describe('ProviderPanel', () => {
  it('shows the settings without the key, saves the form and says so', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    expect(q<HTMLSelectElement>('provider-kind').value).toBe('openai');
    expect(q<HTMLInputElement>('provider-base-url').value).toBe('https://api.openai.com/v1');
    expect(q<HTMLInputElement>('provider-model').value).toBe('gpt-4o');
    expect(q<HTMLInputElement>('provider-fallbacks').value).toBe('gpt-4o-mini');
    expect(q<HTMLInputElement>('provider-api-key').value).toBe('');
    expect(q<HTMLInputElement>('provider-api-key').type).toBe('password');
    expect(q('provider-key-source').textContent).toContain('Key in use: saved in Secret Service.');
    expect(q('provider-saved')).toBeNull();

    act(() => fill(q<HTMLInputElement>('provider-model'), ' gpt-4.1 '));
    act(() => fill(q<HTMLInputElement>('provider-fallbacks'), 'a, ,b ,'));
    act(() => fill(q<HTMLInputElement>('provider-api-key'), 'sk-new'));
    await act(async () => q<HTMLButtonElement>('provider-save').click());
    await flush();
    expect(transport.saved).toEqual([
      {
        settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4.1', fallback_models: ['a', 'b'] },
        api_key: 'sk-new',
      },
    ]);
    expect(q('provider-saved')?.textContent).toBe('Settings saved.');
    expect(q<HTMLInputElement>('provider-api-key').value).toBe('');
    expect(q('provider-error')).toBeNull();

    // A refusal is shown inline and "saved" goes away.
    act(() => fill(q<HTMLInputElement>('provider-model'), ''));
    expect(q('provider-saved')).toBeNull();
    await act(async () => q<HTMLButtonElement>('provider-save').click());
    await flush();
    expect(q('provider-error')?.textContent).toBe('Not saved: model: it is empty');
    expect(q('provider-saved')).toBeNull();
    act(() => root.unmount());
  });

  it('removes the saved key', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    await act(async () => byTestId<HTMLButtonElement>(container, 'provider-clear-key')?.click());
    await flush();
    expect(transport.saved).toEqual([{ settings: keychainView.settings, clear_api_key: true }]);
    expect(byTestId(container, 'provider-saved')?.textContent).toBe('Saved key removed.');
    expect(byTestId(container, 'provider-key-source')?.textContent).toContain('No key is set.');
    expect(byTestId(container, 'provider-clear-key')).toBeNull();
    act(() => root.unmount());
  });

  it('tests the connection without saving and shows the result', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    act(() => fill(byTestId<HTMLInputElement>(container, 'provider-api-key') as HTMLInputElement, 'sk-try'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'provider-test')?.click());
    await flush();
    const result = byTestId(container, 'provider-test-result');
    expect(result?.textContent).toBe('Connected: the model answered');
    expect(result?.className).toContain('ok');
    expect(transport.tested).toEqual([{ settings: keychainView.settings, api_key: 'sk-try' }]);
    expect(transport.saved).toEqual([]);
    act(() => root.unmount());

    const failing = providerTransport({ report: { ok: false, code: 'unauthorized', message: 'the key was refused', latency_ms: 80 } });
    const second = mount(<ProviderPanel transport={failing} />, 'zh-CN');
    await flush();
    await act(async () => byTestId<HTMLButtonElement>(second.container, 'provider-test')?.click());
    await flush();
    const failed = byTestId(second.container, 'provider-test-result');
    expect(failed?.textContent).toBe('连接失败（unauthorized）：the key was refused');
    expect(failed?.className).toContain('failed');
    act(() => second.root.unmount());
  });

  it('offers a running Ollama and fills the form with it and its models', async () => {
    const transport = providerTransport({ ollama: { base_url: 'http://127.0.0.1:11434/v1', models: ['llama3.2', 'qwen2.5'] } });
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    expect(byTestId(container, 'ollama-offer')?.textContent).toContain('Ollama is running on this computer with 2 models.');
    await act(async () => byTestId<HTMLButtonElement>(container, 'ollama-use')?.click());
    expect(byTestId<HTMLSelectElement>(container, 'provider-kind')?.value).toBe('ollama');
    expect(byTestId<HTMLInputElement>(container, 'provider-base-url')?.value).toBe('http://127.0.0.1:11434/v1');
    const model = byTestId<HTMLSelectElement>(container, 'provider-model') as HTMLSelectElement;
    expect(model.tagName).toBe('SELECT');
    expect([...model.options].map((o) => o.value)).toEqual(['llama3.2', 'qwen2.5']);
    expect(model.value).toBe('llama3.2');
    expect(byTestId(container, 'ollama-offer')).toBeNull();
    act(() => fill(model, 'qwen2.5'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'provider-save')?.click());
    await flush();
    expect(transport.saved[0]?.settings).toEqual({
      kind: 'ollama',
      base_url: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5',
      fallback_models: ['gpt-4o-mini'],
    });
    act(() => root.unmount());
  });

  it('gives a new kind its usual address, and offers it over a custom one', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    const kind = byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement;
    const url = () => byTestId<HTMLInputElement>(container, 'provider-base-url') as HTMLInputElement;
    act(() => fill(kind, 'anthropic'));
    expect(url().value).toBe('https://api.anthropic.com');
    expect(byTestId(container, 'provider-default-url')).toBeNull();
    act(() => fill(url(), 'https://proxy.example.com'));
    act(() => fill(kind, 'ollama'));
    expect(url().value).toBe('https://proxy.example.com');
    const offer = byTestId(container, 'provider-default-url');
    expect(offer?.textContent).toContain('http://127.0.0.1:11434/v1');
    await act(async () => offer?.querySelector('button')?.click());
    expect(url().value).toBe('http://127.0.0.1:11434/v1');
    expect(byTestId(container, 'provider-default-url')).toBeNull();
    act(() => root.unmount());
  });

  it('names the environment variables that win, and says when no keychain exists', async () => {
    const transport = providerTransport({
      view: { ...keychainView, key_source: 'environment', keychain: '', keychain_available: false, env_overrides: ['ECHO_LLM_MODEL', 'ECHO_LLM_API_KEY'] },
    });
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    expect(byTestId(container, 'provider-env')?.textContent).toContain('ECHO_LLM_MODEL, ECHO_LLM_API_KEY');
    const source = byTestId(container, 'provider-key-source')?.textContent;
    expect(source).toContain('Key in use: from the environment.');
    expect(source).toContain('No system keychain is available');
    expect(byTestId(container, 'provider-clear-key')).toBeNull();
    act(() => root.unmount());
  });
});

function desktopBridge(taken: string) {
  let status: ShortcutStatus = { shortcut: 'CommandOrControl+Shift+Space', registered: true, error: null };
  const set: string[] = [];
  return {
    set,
    quickShortcut: async () => status,
    setQuickShortcut: async (s: string) => {
      set.push(s);
      if (s === taken) throw new TransportError('ipc', `${s} is taken by another application`);
      status = { shortcut: s, registered: true, error: null };
      return status;
    },
    openInMain: async () => {},
    dismissQuick: async () => {},
    onOpenSession: () => () => {},
  };
}

describe('DesktopPanel', () => {
  it('shows the quick-ask shortcut, applies a new one and shows a refusal', async () => {
    const desktop = desktopBridge('Alt+Space');
    const { container, root } = mount(<DesktopPanel desktop={desktop} />);
    await flush();
    const input = byTestId<HTMLInputElement>(container, 'shortcut-input') as HTMLInputElement;
    expect(input.value).toBe('CommandOrControl+Shift+Space');
    expect(byTestId(container, 'shortcut-status')?.textContent).toBe('Registered: CommandOrControl+Shift+Space opens quick ask.');
    act(() => fill(input, 'Alt+Space'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'shortcut-apply')?.click());
    await flush();
    expect(byTestId(container, 'shortcut-error')?.textContent).toBe('Not applied: Alt+Space is taken by another application');
    act(() => fill(input, 'Control+Alt+E'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'shortcut-apply')?.click());
    await flush();
    expect(desktop.set).toEqual(['Alt+Space', 'Control+Alt+E']);
    expect(byTestId(container, 'shortcut-status')?.textContent).toBe('Registered: Control+Alt+E opens quick ask.');
    expect(byTestId(container, 'shortcut-error')).toBeNull();
    act(() => root.unmount());
  });

  it('is part of the settings only in the desktop app', async () => {
    const base = { ...fakeTransport(), ...providerTransport() };
    const web = mount(<SettingsView transport={base} session={null} />);
    await flush();
    expect(web.container.querySelector('.desktop-panel')).toBeNull();
    act(() => web.root.unmount());
    const app = mount(<SettingsView transport={{ ...base, desktop: desktopBridge('x') }} session={null} />);
    await flush();
    expect(app.container.querySelector('.desktop-panel h2')?.textContent).toBe('Desktop');
    act(() => app.root.unmount());
  });
});

const BOOTSTRAP_DEFAULTS: Record<string, string> = {
  'AGENTS.md': '<!-- How the assistant should work for you. -->\n- Prefer small, checkable steps.\n',
  'SOUL.md': '<!-- The assistant’s voice. -->\nCalm, direct and warm.\n',
  'USER.md': '<!-- About you. -->\n',
  'TOOLS.md': '<!-- Notes about your machine. -->\n',
};

/** An in-memory engine of bootstrap files keeping what it was asked to save. */
function bootstrapTransport(custom: Record<string, string> = {}) {
  const saved: [string, string | null][] = [];
  const copies = new Map(Object.entries(custom));
  const view = (name: string): BootstrapFile => ({
    name,
    content: copies.get(name) ?? BOOTSTRAP_DEFAULTS[name] ?? '',
    is_default: !copies.has(name),
    path: `/home/lin/.local/share/echo-desk/${name}`,
  });
  return {
    saved,
    bootstrapFiles: async () => Object.keys(BOOTSTRAP_DEFAULTS).map(view),
    saveBootstrapFile: async (name: string, content: string | null) => {
      saved.push([name, content]);
      if (content !== null && content.length > 1000) {
        throw new TransportError('invalid_input', `${name} is ${content.length} bytes; the limit is 262144`, 400);
      }
      if (content === null) copies.delete(name);
      else copies.set(name, content);
      return view(name);
    },
  };
}

describe('BootstrapPanel', () => {
  const tab = (c: ParentNode, name: string) => c.querySelector(`[data-testid="bootstrap-tab"][data-file="${name}"]`) as HTMLButtonElement;
  const text = (c: ParentNode) => byTestId<HTMLTextAreaElement>(c, 'bootstrap-text') as HTMLTextAreaElement;
  const button = (c: ParentNode, id: string) => byTestId<HTMLButtonElement>(c, id) as HTMLButtonElement;

  it('loads the four files and shows the first with its description, badge and path', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    expect(container.querySelector('h2')?.textContent).toBe('Standing instructions');
    expect(container.querySelector('.help')?.textContent).toContain('cannot override the safety rules');
    const tabs = [...container.querySelectorAll('[role="tab"]')];
    expect(tabs.map((t) => t.textContent)).toEqual(['AGENTS.md', 'SOUL.md', 'USER.md', 'TOOLS.md']);
    expect(tabs.map((t) => t.getAttribute('aria-selected'))).toEqual(['true', 'false', 'false', 'false']);
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['AGENTS.md']);
    expect(byTestId(container, 'bootstrap-about')?.textContent).toBe('How the assistant should work for you: habits, steps, what to report.');
    expect(byTestId(container, 'bootstrap-default')?.textContent).toBe('Default');
    expect(byTestId(container, 'bootstrap-path')?.textContent).toBe('Built-in default; saving writes /home/lin/.local/share/echo-desk/AGENTS.md');
    expect(button(container, 'bootstrap-save').disabled).toBe(true);
    expect(button(container, 'bootstrap-restore').disabled).toBe(true);

    await act(async () => tab(container, 'TOOLS.md').click());
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['TOOLS.md']);
    expect(byTestId(container, 'bootstrap-about')?.textContent).toContain('Notes on your machine and tools');
    expect(transport.saved).toEqual([]);
    act(() => root.unmount());
  });

  it('saves the edited text and says so; the default badge goes', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    await act(async () => tab(container, 'USER.md').click());
    const sentence = '<!-- About you. -->\nMy name is Lin and I prefer metric units.\n';
    act(() => fill(text(container), sentence));
    expect(tab(container, 'USER.md').dataset.dirty).toBe('true');
    expect(button(container, 'bootstrap-save').disabled).toBe(false);
    await act(async () => button(container, 'bootstrap-save').click());
    await flush();
    expect(transport.saved).toEqual([['USER.md', sentence]]);
    expect(byTestId(container, 'bootstrap-saved')?.textContent).toBe('USER.md saved. It applies from the next message.');
    expect(byTestId(container, 'bootstrap-error')).toBeNull();
    expect(byTestId(container, 'bootstrap-default')).toBeNull();
    expect(byTestId(container, 'bootstrap-path')?.textContent).toBe('Saved in /home/lin/.local/share/echo-desk/USER.md');
    expect(text(container).value).toBe(sentence);
    expect(tab(container, 'USER.md').dataset.dirty).toBe('false');
    expect(button(container, 'bootstrap-save').disabled).toBe(true);
    expect(button(container, 'bootstrap-restore').disabled).toBe(false);
    // Typing again makes "saved" stale.
    act(() => fill(text(container), `${sentence}More.`));
    expect(byTestId(container, 'bootstrap-saved')).toBeNull();
    act(() => root.unmount());
  });

  it('keeps unsaved text per file across tabs until it is saved or discarded', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    act(() => fill(text(container), 'Work in small steps.'));
    await act(async () => tab(container, 'SOUL.md').click());
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['SOUL.md']);
    act(() => fill(text(container), 'Be brief.'));
    await act(async () => tab(container, 'AGENTS.md').click());
    expect(text(container).value).toBe('Work in small steps.');
    expect(tab(container, 'AGENTS.md').dataset.dirty).toBe('true');
    expect(tab(container, 'SOUL.md').dataset.dirty).toBe('true');
    expect(tab(container, 'SOUL.md').querySelector('.bootstrap-dirty')?.getAttribute('title')).toBe('Unsaved changes');
    expect(tab(container, 'USER.md').dataset.dirty).toBe('false');
    // Discard drops this file's draft only.
    await act(async () => button(container, 'bootstrap-discard').click());
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['AGENTS.md']);
    expect(byTestId(container, 'bootstrap-discard')).toBeNull();
    await act(async () => tab(container, 'SOUL.md').click());
    expect(text(container).value).toBe('Be brief.');
    // Arrow keys move between the tabs.
    await act(async () => tab(container, 'SOUL.md').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true })));
    expect(tab(container, 'USER.md').getAttribute('aria-selected')).toBe('true');
    expect(transport.saved).toEqual([]);
    act(() => root.unmount());
  });

  it('restores the default with null after a confirmation', async () => {
    const transport = bootstrapTransport({ 'USER.md': 'My name is Lin.' });
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    await act(async () => tab(container, 'USER.md').click());
    expect(text(container).value).toBe('My name is Lin.');
    expect(byTestId(container, 'bootstrap-default')).toBeNull();
    await act(async () => button(container, 'bootstrap-restore').click());
    expect(byTestId(container, 'bootstrap-confirm')?.textContent).toContain('Replace your USER.md with the default?');
    await act(async () => button(container, 'bootstrap-restore-no').click());
    expect(byTestId(container, 'bootstrap-confirm')).toBeNull();
    expect(transport.saved).toEqual([]);

    act(() => fill(text(container), 'An unsaved edit.'));
    await act(async () => button(container, 'bootstrap-restore').click());
    await act(async () => button(container, 'bootstrap-restore-yes').click());
    await flush();
    expect(transport.saved).toEqual([['USER.md', null]]);
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['USER.md']);
    expect(byTestId(container, 'bootstrap-default')?.textContent).toBe('Default');
    expect(byTestId(container, 'bootstrap-saved')?.textContent).toBe('USER.md is back to the default.');
    expect(button(container, 'bootstrap-restore').disabled).toBe(true);
    expect(tab(container, 'USER.md').dataset.dirty).toBe('false');
    act(() => root.unmount());
  });

  it('shows the server’s refusal and keeps the text', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />, 'zh-CN');
    await flush();
    expect(container.querySelector('h2')?.textContent).toBe('常驻指令');
    const huge = 'x'.repeat(2000);
    act(() => fill(text(container), huge));
    await act(async () => button(container, 'bootstrap-save').click());
    await flush();
    expect(byTestId(container, 'bootstrap-error')?.textContent).toBe('未保存：AGENTS.md is 2000 bytes; the limit is 262144');
    expect(byTestId(container, 'bootstrap-saved')).toBeNull();
    expect(text(container).value).toBe(huge);
    expect(button(container, 'bootstrap-save').disabled).toBe(false);
    expect(byTestId(container, 'bootstrap-default')?.textContent).toBe('默认');
    act(() => root.unmount());
  });

  it('shows a load failure', async () => {
    const transport = { ...bootstrapTransport(), bootstrapFiles: async () => Promise.reject(new TransportError('io', 'cannot read /x/USER.md: denied')) };
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    expect(container.querySelector('[role="alert"]')?.textContent).toBe('Could not load: cannot read /x/USER.md: denied');
    expect(container.querySelector('[role="tab"]')).toBeNull();
    act(() => root.unmount());
  });

  it('is part of the settings view', async () => {
    const { container, root } = mount(<SettingsView transport={{ ...fakeTransport(), ...providerTransport(), ...bootstrapTransport() }} session={null} />);
    await flush();
    expect(container.querySelectorAll('.bootstrap-panel [role="tab"]')).toHaveLength(4);
    act(() => root.unmount());
  });
});
