// @vitest-environment jsdom
// TauriTransport against fake Tauri functions: each command with its camelCase arguments, a
// turn's events through its channel (also a late `turn_finished`), IPC rejections turned into
// TransportErrors, and the `open-session` event; then once against `@tauri-apps/api` itself
// with its `mockIPC`, so the real `invoke` and `Channel` are exercised too.

import { Channel, invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from './events';
import { type McpServerConfig, providerUpdate } from './settingsTypes';
import { type IpcChannel, type TauriApi, TauriTransport } from './tauriTransport';
import { TransportError } from './transport';

type Args = Record<string, unknown> | undefined;

/** Fake Tauri functions: `respond` answers each command; channels and listeners are kept. */
function fake(respond: (cmd: string, args: Args) => unknown = () => null) {
  const calls: [string, Args][] = [];
  const listeners = new Map<string, (event: { payload: unknown }) => void>();
  const unlistened: string[] = [];
  class FakeChannel<T> implements IpcChannel<T> {
    onmessage: (message: T) => void = () => {};
  }
  const api: TauriApi = {
    invoke: async <T,>(cmd: string, args?: Record<string, unknown>) => {
      calls.push([cmd, args]);
      return (await respond(cmd, args)) as T;
    },
    Channel: FakeChannel,
    listen: async <T,>(event: string, handler: (event: { payload: T }) => void) => {
      listeners.set(event, handler as (event: { payload: unknown }) => void);
      return () => void unlistened.push(event);
    },
  };
  return { calls, listeners, unlistened, transport: new TauriTransport(api) };
}

const event = (seq: number, rest: Record<string, unknown>): EventEnvelope =>
  ({ v: 1, turn_id: 't1', seq, ...rest }) as EventEnvelope;
const started = event(0, { type: 'turn_started', session_id: 's', session_name: 'web' });
const token = event(1, { type: 'token', text: 'hi' });
const finished = event(2, {
  type: 'turn_finished',
  status: 'completed',
  usage: { input_tokens: 1, output_tokens: 1 },
  trace_id: 't1',
});

const mcpServer: McpServerConfig = {
  name: 'gh',
  command: 'npx',
  args: ['-y', 'server-github'],
  env: { GITHUB_TOKEN: 't' },
  url: null,
  headers: {},
  enabled: true,
};

const update = providerUpdate(
  { kind: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'llama3', fallback_models: [] },
  'k',
);

afterEach(() => {
  clearMocks();
});

describe('TauriTransport', () => {
  it('invokes each command with its arguments in camelCase', async () => {
    const { calls, transport } = fake((cmd) => (cmd === 'detect_ollama' ? null : cmd === 'delete_session' ? undefined : { cmd }));
    await transport.listSessions();
    await transport.history('my chat');
    await transport.renameSession('a', 'b');
    await transport.deleteSession('b');
    await transport.cancel('t1');
    await transport.answerApproval('r1', 'allow_session');
    await transport.listRules();
    await transport.addRule({ tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'session', session: 'web' });
    await transport.removeRule('r-1');
    await transport.mcpServers();
    await transport.mcpConfig();
    await transport.setMcpConfig([mcpServer]);
    await transport.approvals(20);
    expect(await transport.provider()).toEqual({ cmd: 'provider' });
    await transport.updateProvider(update);
    await transport.testProvider(update);
    expect(await transport.detectOllama()).toBeNull();
    await transport.bootstrapFiles();
    await transport.saveBootstrapFile('USER.md', 'My name is Lin.');
    await transport.saveBootstrapFile('TOOLS.md', null);
    await transport.desktop.quickShortcut();
    await transport.desktop.setQuickShortcut('Alt+Space');
    await transport.desktop.openInMain('Quick ask 2026-11-30 23:10:05');
    await transport.desktop.dismissQuick();
    expect(calls).toEqual([
      ['list_sessions', undefined],
      ['history', { session: 'my chat' }],
      ['rename_session', { name: 'a', newName: 'b' }],
      ['delete_session', { name: 'b' }],
      ['cancel_turn', { turnId: 't1' }],
      ['answer_approval', { requestId: 'r1', answer: 'allow_session' }],
      ['list_rules', undefined],
      ['add_rule', { rule: { tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'session', session: 'web' } }],
      ['remove_rule', { id: 'r-1' }],
      ['mcp_servers', undefined],
      ['mcp_config', undefined],
      ['set_mcp_config', { servers: [mcpServer] }],
      ['approvals', { limit: 20 }],
      ['provider', undefined],
      ['update_provider', { update }],
      ['test_provider', { update }],
      ['detect_ollama', undefined],
      ['bootstrap_files', undefined],
      ['save_bootstrap_file', { name: 'USER.md', content: 'My name is Lin.' }],
      ['save_bootstrap_file', { name: 'TOOLS.md', content: null }],
      ['quick_shortcut', undefined],
      ['set_quick_shortcut', { shortcut: 'Alt+Space' }],
      ['open_in_main', { session: 'Quick ask 2026-11-30 23:10:05' }],
      ['dismiss_quick', undefined],
    ]);
  });

  it('runs a turn: events arrive through its channel, done settles when the command returns', async () => {
    const { calls, transport } = fake((_cmd, args) => {
      const channel = args?.onEvent as IpcChannel<EventEnvelope>;
      for (const e of [started, token, finished]) channel.onmessage(e);
      return null;
    });
    const got: EventEnvelope[] = [];
    await transport.sendTurn('web', 'hi', (e) => got.push(e), { quick: true, replaceFrom: 'm-3' }).done;
    expect(got).toEqual([started, token, finished]);
    const [cmd, args] = calls[0] ?? [];
    expect(cmd).toBe('send_turn');
    expect(Object.keys(args ?? {}).sort()).toEqual(['input', 'onEvent', 'quick', 'replaceFrom', 'session']);
    expect(args).toMatchObject({ session: 'web', input: 'hi', quick: true, replaceFrom: 'm-3' });

    await transport.sendTurn('web', 'plain', () => {}).done;
    expect(Object.keys(calls[1]?.[1] ?? {}).sort()).toEqual(['input', 'onEvent', 'session']);
  });

  it('waits for a turn_finished that arrives after the command returned', async () => {
    let channel: IpcChannel<EventEnvelope> | undefined;
    const { transport } = fake((_cmd, args) => {
      channel = args?.onEvent as IpcChannel<EventEnvelope>;
      channel.onmessage(started);
      return null;
    });
    const got: string[] = [];
    let settled = false;
    const done = transport.sendTurn('web', 'hi', (e) => got.push(e.type)).done.then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    channel?.onmessage(finished);
    await done;
    expect(got).toEqual(['turn_started', 'turn_finished']);
  });

  it('turns IPC rejections into TransportErrors with their code', async () => {
    const { transport } = fake((cmd) => {
      if (cmd === 'send_turn') throw { code: 'invalid_input', message: 'input: it is empty' };
      if (cmd === 'set_quick_shortcut') throw 'the shortcut Alt+Space is taken';
      throw { code: 'not_found', message: 'no session gone' };
    });
    const err = await transport.history('gone').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'not_found', message: 'no session gone' });
    await expect(transport.sendTurn('web', ' ', () => {}).done).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'input: it is empty',
    });
    await expect(transport.desktop.setQuickShortcut('Alt+Space')).rejects.toMatchObject({
      code: 'ipc',
      message: 'the shortcut Alt+Space is taken',
    });
  });

  it('rejects a refused bootstrap save with the engine’s message', async () => {
    const { transport } = fake(() => {
      throw { code: 'invalid_input', message: 'AGENTS.md is 300000 bytes; the limit is 262144' };
    });
    await expect(transport.saveBootstrapFile('AGENTS.md', 'x')).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'AGENTS.md is 300000 bytes; the limit is 262144',
    });
  });

  it('passes open-session events on until unsubscribed', async () => {
    const { listeners, unlistened, transport } = fake();
    const opened: string[] = [];
    const stop = transport.desktop.onOpenSession((name) => opened.push(name));
    await new Promise((r) => setTimeout(r, 0));
    listeners.get('open-session')?.({ payload: 'Quick ask 1' });
    expect(opened).toEqual(['Quick ask 1']);
    stop();
    expect(unlistened).toEqual(['open-session']);
    // Unsubscribed before `listen` settled: it is undone as soon as it does.
    const early = fake();
    early.transport.desktop.onOpenSession(() => {})();
    await new Promise((r) => setTimeout(r, 0));
    expect(early.unlistened).toEqual(['open-session']);
  });
});

describe('TauriTransport with @tauri-apps/api mocks', () => {
  it('streams a turn through a real Channel and maps a real invoke rejection', async () => {
    const internals = () => (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
    const seen: [string, unknown][] = [];
    mockIPC((cmd, payload) => {
      const args = payload as Record<string, unknown>;
      seen.push([cmd, cmd === 'send_turn' ? { ...args, onEvent: 'channel' } : args]);
      if (cmd === 'send_turn') {
        const channel = args.onEvent as Channel<EventEnvelope>;
        // Out of order on purpose: the channel puts messages back in order by index.
        internals().runCallback(channel.id, { index: 1, message: token });
        internals().runCallback(channel.id, { index: 0, message: started });
        internals().runCallback(channel.id, { index: 2, message: finished });
        return null;
      }
      if (cmd === 'rename_session') return Promise.reject({ code: 'invalid_input', message: 'the name b is taken' });
      return [];
    });
    expect('__TAURI_INTERNALS__' in window).toBe(true);
    const transport = new TauriTransport({ invoke, Channel, listen });
    const got: EventEnvelope[] = [];
    await transport.sendTurn('web', 'hi', (e) => got.push(e), { replaceFrom: 'm-1' }).done;
    expect(got).toEqual([started, token, finished]);
    await expect(transport.renameSession('a', 'b')).rejects.toMatchObject({ code: 'invalid_input', message: 'the name b is taken' });
    // `content: null` (restore the default) reaches the command as null, not left out.
    await transport.saveBootstrapFile('USER.md', null);
    expect(seen).toEqual([
      ['send_turn', { session: 'web', input: 'hi', replaceFrom: 'm-1', onEvent: 'channel' }],
      ['rename_session', { name: 'a', newName: 'b' }],
      ['save_bootstrap_file', { name: 'USER.md', content: null }],
    ]);
  });
});
