// @vitest-environment jsdom
// The MCP panel in jsdom against an in-memory engine: it lists the configured servers with
// their state (never an env or header value), and adds, edits, removes and toggles them by
// sending the whole list, then polls the states while they start; its own checks and the
// engine's refusals are shown inline.

import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { McpServerConfig } from '../../generated/engine';
import { docs, gh, mcpTransport, stateOf } from '../../settings/testFakes';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { McpPanel } from './McpPanel';

afterEach(cleanup);

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
