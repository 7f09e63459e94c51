// @vitest-environment jsdom
// TauriTransport against fake Tauri functions: an engine operation is the command of its name
// with `{ request }`, the desktop's own commands take camelCase arguments, a turn's events
// come through its channel (also a late `turn_finished`), the engine's `{error: {code,
// message}}` rejections become TransportErrors, and the `open-session` event; then once
// against `@tauri-apps/api` itself with its `mockIPC`, so the real `invoke` and `Channel` are
// exercised too.

import { Channel, invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope, McpServerConfig } from './generated/engine';
import { providerUpdate } from './settings/providerStore';
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
  it('invokes an operation as the command of its name with the request, and desktop commands in camelCase', async () => {
    const { calls, transport } = fake((cmd) => (cmd === 'detect_ollama' ? null : cmd === 'delete_session' ? { memories: 2 } : { cmd }));
    await transport.call('list_sessions', {});
    await transport.call('history', { session: 'my chat' });
    await transport.call('rename_session', { name: 'a', new_name: 'b' });
    expect(await transport.call('delete_session', { name: 'b', memories: 'forget' })).toEqual({ memories: 2 });
    await transport.call('cancel_turn', { turn_id: 't1' });
    await transport.call('answer_approval', { request_id: 'r1', answer: 'allow_session' });
    await transport.call('add_rule', { tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'session', session: 'web' });
    await transport.call('set_mcp_config', { servers: [mcpServer] });
    await transport.call('approvals', { limit: 20 });
    expect(await transport.call('provider', {})).toEqual({ cmd: 'provider' });
    await transport.call('update_provider', update);
    await transport.call('test_provider', update);
    expect(await transport.call('detect_ollama', {})).toBeNull();
    await transport.call('save_bootstrap_file', { name: 'USER.md', content: 'My name is Lin.' });
    await transport.call('save_bootstrap_file', { name: 'TOOLS.md', content: null });
    await transport.desktop.quickShortcut();
    await transport.desktop.setQuickShortcut('Alt+Space');
    await transport.desktop.openInMain('Quick ask 2026-11-30 23:10:05');
    await transport.desktop.dismissQuick();
    expect(calls).toEqual([
      ['list_sessions', { request: {} }],
      ['history', { request: { session: 'my chat' } }],
      ['rename_session', { request: { name: 'a', new_name: 'b' } }],
      ['delete_session', { request: { name: 'b', memories: 'forget' } }],
      ['cancel_turn', { request: { turn_id: 't1' } }],
      ['answer_approval', { request: { request_id: 'r1', answer: 'allow_session' } }],
      ['add_rule', { request: { tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'session', session: 'web' } }],
      ['set_mcp_config', { request: { servers: [mcpServer] } }],
      ['approvals', { request: { limit: 20 } }],
      ['provider', { request: {} }],
      ['update_provider', { request: update }],
      ['test_provider', { request: update }],
      ['detect_ollama', { request: {} }],
      ['save_bootstrap_file', { request: { name: 'USER.md', content: 'My name is Lin.' } }],
      ['save_bootstrap_file', { request: { name: 'TOOLS.md', content: null } }],
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
    expect(Object.keys(args ?? {}).sort()).toEqual(['onEvent', 'quick', 'request']);
    expect(args).toMatchObject({ request: { session: 'web', input: 'hi', replace_from: 'm-3' }, quick: true });

    await transport.sendTurn('web', 'plain', () => {}).done;
    expect(Object.keys(calls[1]?.[1] ?? {}).sort()).toEqual(['onEvent', 'request']);
    expect(calls[1]?.[1]?.request).toEqual({ session: 'web', input: 'plain' });

    await transport.sendTurn('new chat', 'tiles?', () => {}, { project: 'Kitchen' }).done;
    expect(calls[2]?.[1]?.request).toEqual({ session: 'new chat', input: 'tiles?', project: 'Kitchen' });
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

  it('turns the engine’s error body and Tauri’s own rejections into TransportErrors', async () => {
    const { transport } = fake((cmd) => {
      if (cmd === 'send_turn') throw { error: { code: 'invalid_input', message: 'input: it is empty' } };
      if (cmd === 'set_quick_shortcut') throw { error: { code: 'invalid_input', message: 'the shortcut Alt+Space is taken' } };
      if (cmd === 'list_rules') throw 'invalid args `request` for command `list_rules`';
      throw { error: { code: 'not_found', message: 'no session gone' } };
    });
    const err = await transport.call('history', { session: 'gone' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'not_found', message: 'no session gone' });
    await expect(transport.sendTurn('web', ' ', () => {}).done).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'input: it is empty',
    });
    await expect(transport.desktop.setQuickShortcut('Alt+Space')).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'the shortcut Alt+Space is taken',
    });
    await expect(transport.call('list_rules', {})).rejects.toMatchObject({
      code: 'ipc',
      message: 'invalid args `request` for command `list_rules`',
    });
  });

  it('rejects a refused bootstrap save with the engine’s message', async () => {
    const { transport } = fake(() => {
      throw { error: { code: 'invalid_input', message: 'AGENTS.md is 300000 bytes; the limit is 262144' } };
    });
    await expect(transport.call('save_bootstrap_file', { name: 'AGENTS.md', content: 'x' })).rejects.toMatchObject({
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
      if (cmd === 'rename_session') return Promise.reject({ error: { code: 'invalid_input', message: 'the name b is taken' } });
      return [];
    });
    expect('__TAURI_INTERNALS__' in window).toBe(true);
    const transport = new TauriTransport({ invoke, Channel, listen });
    const got: EventEnvelope[] = [];
    await transport.sendTurn('web', 'hi', (e) => got.push(e), { replaceFrom: 'm-1' }).done;
    expect(got).toEqual([started, token, finished]);
    await expect(transport.call('rename_session', { name: 'a', new_name: 'b' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'the name b is taken',
    });
    // `content: null` (restore the default) reaches the command as null, not left out.
    await transport.call('save_bootstrap_file', { name: 'USER.md', content: null });
    expect(seen).toEqual([
      ['send_turn', { request: { session: 'web', input: 'hi', replace_from: 'm-1' }, onEvent: 'channel' }],
      ['rename_session', { request: { name: 'a', new_name: 'b' } }],
      ['save_bootstrap_file', { request: { name: 'USER.md', content: null } }],
    ]);
  });
});
