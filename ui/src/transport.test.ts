// HttpTransport against a stubbed fetch: `call` maps each operation to its route from the
// generated table (path parameters URL-encoded, the rest in the query or the JSON body, 204 as
// null), error bodies turn into readable messages, and events stream in awkward chunks; the
// token taken from the URL.

import { describe, expect, it } from 'vitest';
import type { EventEnvelope, McpServerConfig, Paired, ProviderView } from './generated/engine';
import { providerUpdate } from './settings/providerStore';
import { HttpTransport, pairPage, TOKEN_KEY, type Transport, TransportError } from './transport';

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A fetch that records its calls and answers with `respond`. */
function stub(respond: (call: Call) => Response) {
  const calls: Call[] = [];
  const fetchFn = async (input: RequestInfo | URL, init?: RequestInit) => {
    const call: Call = {
      url: String(input),
      method: init?.method ?? 'GET',
      headers: (init?.headers ?? {}) as Record<string, string>,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(call);
    return respond(call);
  };
  return { calls, transport: new HttpTransport('http://127.0.0.1:4000/', 'secret', fetchFn as typeof fetch) };
}

/** A streamed body delivering `chunks` one by one. */
function streamed(chunks: string[]): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
}

const json = (value: unknown, status = 200) =>
  new Response(JSON.stringify(value), { status, headers: { 'Content-Type': 'application/json' } });

describe('HttpTransport.call', () => {
  it('URL-encodes a path parameter and leaves it out of the query and the body', async () => {
    const { calls, transport } = stub(() => json([]));
    await transport.call('history', { session: 'a/b c?d#e%' });
    await transport.call('memory_edit', { id: 'm 1/2', content: 'tea, no sugar' });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'http://127.0.0.1:4000/api/sessions/a%2Fb%20c%3Fd%23e%25/messages', undefined],
      ['PATCH', 'http://127.0.0.1:4000/api/memory/m%201%2F2', { content: 'tea, no sugar' }],
    ]);
  });

  it('puts a GET’s fields in the query, leaving out those not given', async () => {
    const { calls, transport } = stub(() => json([]));
    await transport.call('memory_search', { query: 'tea & milk?', k: 3 });
    await transport.call('memory_list', { tier: 'semantic', status: undefined });
    await transport.call('memory_conflicts', { all: false });
    await transport.call('approvals', {});
    await transport.call('traces', { limit: undefined });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'http://127.0.0.1:4000/api/memory/search?query=tea+%26+milk%3F&k=3', undefined],
      ['GET', 'http://127.0.0.1:4000/api/memory?tier=semantic', undefined],
      ['GET', 'http://127.0.0.1:4000/api/memory/conflicts?all=false', undefined],
      ['GET', 'http://127.0.0.1:4000/api/approvals', undefined],
      ['GET', 'http://127.0.0.1:4000/api/traces', undefined],
    ]);
    for (const c of calls) expect(c.headers['Content-Type']).toBeUndefined();
  });

  it('sends the fields of a POST, PUT or PATCH but its path parameters as the JSON body, nulls included', async () => {
    const { calls, transport } = stub(() => json({}));
    await transport.call('memory_resolve', { conflict_id: 'c-1', keep: null });
    await transport.call('memory_pin', { id: 'm-1', pinned: false });
    await transport.call('memory_sweep', {});
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', 'http://127.0.0.1:4000/api/memory/conflicts/c-1', { keep: null }],
      ['PUT', 'http://127.0.0.1:4000/api/memory/m-1/pin', { pinned: false }],
      ['POST', 'http://127.0.0.1:4000/api/memory/sweep', {}],
    ]);
    for (const c of calls) expect(c.headers['Content-Type']).toBe('application/json');
  });

  it('answers null for 204 No Content, and rejects an answer that is not JSON', async () => {
    const { transport } = stub((c) => (c.method === 'POST' ? new Response(null, { status: 204 }) : new Response('<html>', { status: 200 })));
    expect(await transport.call('cancel_turn', { turn_id: 't-1' })).toBeNull();
    await expect(transport.call('list_sessions', {})).rejects.toMatchObject({ code: 'protocol' });
  });
});

describe('HttpTransport', () => {
  it('sends the bearer token and reads sessions and history', async () => {
    const { calls, transport } = stub((c) =>
      json(c.url.endsWith('/api/sessions') ? [{ name: 'web' }] : [{ id: 'm1', role: 'user' }]),
    );
    expect(await transport.call('list_sessions', {})).toEqual([{ name: 'web' }]);
    expect(await transport.call('history', { session: 'my chat' })).toEqual([{ id: 'm1', role: 'user' }]);
    expect(calls.map((c) => c.url)).toEqual([
      'http://127.0.0.1:4000/api/sessions',
      'http://127.0.0.1:4000/api/sessions/my%20chat/messages',
    ]);
    for (const c of calls) expect(c.headers.Authorization).toBe('Bearer secret');
  });

  it('posts approvals and cancels to their routes', async () => {
    const { calls, transport } = stub(() => new Response(null, { status: 204 }));
    expect(await transport.call('answer_approval', { request_id: 'r1', answer: 'allow_session' })).toBeNull();
    expect(await transport.call('cancel_turn', { turn_id: 't1' })).toBeNull();
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', 'http://127.0.0.1:4000/api/approvals/r1', { answer: 'allow_session' }],
      ['POST', 'http://127.0.0.1:4000/api/turns/t1/cancel', {}],
    ]);
  });

  it('turns the server’s error body into a TransportError with its code and message', async () => {
    const { transport } = stub(() =>
      json({ error: { code: 'unauthorized', message: 'missing or wrong bearer token' } }, 401),
    );
    const err = await transport.call('list_sessions', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'unauthorized', message: 'missing or wrong bearer token', status: 401 });
  });

  it('describes an error that has no JSON body by its status', async () => {
    const { transport } = stub(() => new Response('upstream down', { status: 502, statusText: 'Bad Gateway' }));
    await expect(transport.call('history', { session: 'x' })).rejects.toThrow('HTTP 502 Bad Gateway: upstream down');
    // JSON, but not the engine's error body: described the same way.
    const other = stub(() => json({ message: 'teapot' }, 418));
    await expect(other.transport.call('list_sessions', {})).rejects.toMatchObject({ code: 'http', status: 418 });
  });

  it('says so when the engine cannot be reached', async () => {
    const transport = new HttpTransport('http://x', 't', (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch);
    await expect(transport.call('cancel_turn', { turn_id: 't1' })).rejects.toMatchObject({ code: 'network' });
  });

  it('lists, adds and removes rules, and reads MCP servers and approvals', async () => {
    const rule = { id: 'r-0000abcd', tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'always', session_id: null, created_by: 'user', created_at: '2026-01-01T00:00:00Z' };
    const { calls, transport } = stub((c) => {
      if (c.url.endsWith('/api/mcp')) return json([{ name: 'gh', transport: 'stdio', state: 'ready', error: null, tools: 3, restarts: 0, pid: 7 }]);
      if (c.url.includes('/api/approvals')) return json([]);
      return json(c.method === 'GET' ? [rule] : rule);
    });
    expect(await transport.call('list_rules', {})).toEqual([rule]);
    expect(await transport.call('add_rule', { tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'always' })).toEqual(rule);
    expect(await transport.call('remove_rule', { id: 'r-0000abcd/x' })).toEqual(rule);
    expect((await transport.call('mcp_servers', {}))[0]).toMatchObject({ name: 'gh', tools: 3 });
    expect(await transport.call('approvals', { limit: 20 })).toEqual([]);
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'http://127.0.0.1:4000/api/rules', undefined],
      ['POST', 'http://127.0.0.1:4000/api/rules', { tool: 'shell', pattern: 'echo', decision: 'allow', scope: 'always' }],
      ['DELETE', 'http://127.0.0.1:4000/api/rules/r-0000abcd%2Fx', undefined],
      ['GET', 'http://127.0.0.1:4000/api/mcp', undefined],
      ['GET', 'http://127.0.0.1:4000/api/approvals?limit=20', undefined],
    ]);
    for (const c of calls) expect(c.headers.Authorization).toBe('Bearer secret');
    expect(calls[1]?.headers['Content-Type']).toBe('application/json');
    expect(calls[2]?.headers['Content-Type']).toBeUndefined();
  });

  it('rejects an invalid rule with the server’s message, and an unknown id with 404', async () => {
    const { transport } = stub((c) =>
      c.method === 'POST'
        ? json({ error: { code: 'invalid_input', message: 'rule: unknown decision "maybe"' } }, 400)
        : json({ error: { code: 'not_found', message: 'no rule r-1' } }, 404),
    );
    await expect(transport.call('add_rule', { tool: 'shell', decision: 'allow', scope: 'always' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'rule: unknown decision "maybe"',
      status: 400,
    });
    await expect(transport.call('remove_rule', { id: 'r-1' })).rejects.toMatchObject({ code: 'not_found', status: 404 });
  });

  it('renames and deletes sessions by their URL-encoded name, saying what becomes of their memories', async () => {
    const summary = { id: 's1', name: 'new/name', title: null, message_count: 2 };
    const { calls, transport } = stub((c) => (c.method === 'PATCH' ? json(summary) : json({ memories: 4 })));
    expect(await transport.call('rename_session', { name: 'my chat/1', new_name: 'new/name' })).toEqual(summary);
    expect(await transport.call('delete_session', { name: 'new/name?x', memories: 'forget' })).toEqual({ memories: 4 });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['PATCH', 'http://127.0.0.1:4000/api/sessions/my%20chat%2F1', { new_name: 'new/name' }],
      ['DELETE', 'http://127.0.0.1:4000/api/sessions/new%2Fname%3Fx?memories=forget', undefined],
    ]);
    for (const c of calls) expect(c.headers.Authorization).toBe('Bearer secret');
    expect(calls[0]?.headers['Content-Type']).toBe('application/json');
  });

  it('rejects a bad rename and a busy or missing delete with the server’s code', async () => {
    const { transport } = stub((c) =>
      c.method === 'PATCH'
        ? json({ error: { code: 'invalid_input', message: 'the name b is taken' } }, 400)
        : new URL(c.url).pathname.endsWith('/busy')
          ? json({ error: { code: 'invalid_input', message: 'a turn of busy is running' } }, 400)
          : json({ error: { code: 'not_found', message: 'no session gone' } }, 404),
    );
    await expect(transport.call('rename_session', { name: 'a', new_name: 'b' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'the name b is taken',
      status: 400,
    });
    await expect(transport.call('delete_session', { name: 'busy', memories: 'keep' })).rejects.toMatchObject({ code: 'invalid_input', status: 400 });
    const err = await transport.call('delete_session', { name: 'gone', memories: 'delete' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'not_found', message: 'no session gone', status: 404 });
  });

  it('streams a turn’s events from chunks cut anywhere', async () => {
    const events = [
      { v: 1, turn_id: 't1', seq: 0, type: 'turn_started', session_id: 's', session_name: 'web' },
      { v: 1, turn_id: 't1', seq: 1, type: 'token', text: 'hé' },
      { v: 1, turn_id: 't1', seq: 2, type: 'turn_finished', status: 'completed', usage: { input_tokens: 1, output_tokens: 1 }, trace_id: 't1' },
    ];
    const wire = `: keep-alive\n\n${events.map((e) => `id: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n`).join('')}`;
    const cut = [wire.slice(0, 20), wire.slice(20, 95), wire.slice(95, 96), wire.slice(96)];
    const { calls, transport } = stub(() => streamed(cut));
    const got: EventEnvelope[] = [];
    await transport.sendTurn('web', 'hi', (e) => got.push(e)).done;
    expect(got).toEqual(events);
    expect(calls[0]).toMatchObject({
      method: 'POST',
      url: 'http://127.0.0.1:4000/api/turns',
      body: { session: 'web', input: 'hi' },
      headers: { Authorization: 'Bearer secret', 'Content-Type': 'application/json' },
    });
  });

  it('sends replace_from with a regenerated or edited turn, and never quick', async () => {
    const { calls, transport } = stub(() => streamed([]));
    await transport.sendTurn('web', 'again', () => {}, { replaceFrom: 'm-7', quick: true }).done;
    await transport.sendTurn('web', 'plain', () => {}, {}).done;
    await transport.sendTurn('web', 'kyoto', () => {}, { research: true }).done;
    await transport.sendTurn('new chat', 'tiles?', () => {}, { project: 'Kitchen' }).done;
    expect(calls.map((c) => c.body)).toEqual([
      { session: 'web', input: 'again', replace_from: 'm-7' },
      { session: 'web', input: 'plain' },
      { session: 'web', input: 'kyoto', research: true },
      { session: 'new chat', input: 'tiles?', project: 'Kitchen' },
    ]);
  });

  it('reads, saves and tests the provider settings, and detects Ollama', async () => {
    const view: ProviderView = {
      settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4o', fallback_models: [] },
      key_source: 'keychain',
      keychain: 'Secret Service',
      keychain_available: true,
      env_overrides: [],
      kinds: [{ kind: 'openai', default_base_url: 'https://api.openai.com/v1' }],
      notice: null,
    };
    const report = { ok: true, code: 'ok', message: 'fine', latency_ms: 42 };
    let ollama: unknown = { base_url: 'http://127.0.0.1:11434/v1', models: ['llama3'] };
    const { calls, transport } = stub((c) => {
      if (c.url.endsWith('/test')) return json(report);
      if (c.url.endsWith('/ollama')) return json(ollama);
      return json(view);
    });
    const update = providerUpdate({ ...view.settings, kind: 'openai', model: 'gpt-4.1' }, 'sk-secret');
    expect(await transport.call('provider', {})).toEqual(view);
    expect(await transport.call('update_provider', update)).toEqual(view);
    expect(await transport.call('test_provider', update)).toEqual(report);
    expect(await transport.call('detect_ollama', {})).toEqual(ollama);
    ollama = null;
    expect(await transport.call('detect_ollama', {})).toBeNull();
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'http://127.0.0.1:4000/api/settings/provider', undefined],
      ['PUT', 'http://127.0.0.1:4000/api/settings/provider', update],
      ['POST', 'http://127.0.0.1:4000/api/settings/provider/test', update],
      ['GET', 'http://127.0.0.1:4000/api/settings/ollama', undefined],
      ['GET', 'http://127.0.0.1:4000/api/settings/ollama', undefined],
    ]);
    expect(update).toEqual({ settings: { ...view.settings, model: 'gpt-4.1' }, api_key: 'sk-secret' });
    for (const c of calls) expect(c.headers.Authorization).toBe('Bearer secret');
    expect((transport as Transport).desktop).toBeUndefined();
  });

  it('rejects invalid provider settings with the server’s code and message', async () => {
    const { transport } = stub(() => json({ error: { code: 'invalid_input', message: 'model: it is empty' } }, 400));
    const update = providerUpdate({ kind: 'openai', base_url: 'x', model: '', fallback_models: [] });
    await expect(transport.call('update_provider', update)).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'model: it is empty',
      status: 400,
    });
  });

  it('reads the MCP server list and replaces it whole with PUT, getting the states back', async () => {
    const servers: McpServerConfig[] = [
      { name: 'gh', command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: 't' }, url: null, headers: {}, enabled: true },
      { name: 'docs', command: null, args: [], env: {}, url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer x' }, enabled: false },
    ];
    const states = [
      { name: 'gh', transport: 'stdio', state: 'starting', error: null, tools: 0, restarts: 0, pid: null },
      { name: 'docs', transport: 'http', state: 'disabled', error: null, tools: 0, restarts: 0, pid: null },
    ];
    const { calls, transport } = stub((c) => json(c.method === 'GET' ? servers : states));
    expect(await transport.call('mcp_config', {})).toEqual(servers);
    expect(await transport.call('set_mcp_config', { servers })).toEqual(states);
    expect(await transport.call('set_mcp_config', { servers: [] })).toEqual(states);
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'http://127.0.0.1:4000/api/settings/mcp', undefined],
      ['PUT', 'http://127.0.0.1:4000/api/settings/mcp', { servers }],
      ['PUT', 'http://127.0.0.1:4000/api/settings/mcp', { servers: [] }],
    ]);
    for (const c of calls) expect(c.headers.Authorization).toBe('Bearer secret');
    expect(calls[0]?.headers['Content-Type']).toBeUndefined();
    expect(calls[1]?.headers['Content-Type']).toBe('application/json');
  });

  it('rejects an invalid MCP server list with the server’s code and message', async () => {
    const { transport } = stub(() =>
      json({ error: { code: 'invalid_input', message: 'MCP server name "gh" is used twice' } }, 400),
    );
    await expect(transport.call('set_mcp_config', { servers: [] })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'MCP server name "gh" is used twice',
      status: 400,
    });
  });

  it('reads the bootstrap files, saves one with PUT and restores a default with PUT of null', async () => {
    const file = (name: string, content: string, is_default: boolean) => ({ name, content, is_default, path: `/data/${name}` });
    const files = ['AGENTS.md', 'SOUL.md', 'USER.md', 'TOOLS.md'].map((n) => file(n, `<!-- ${n} -->`, true));
    const { calls, transport } = stub((c) => {
      if (c.method === 'GET') return json(files);
      const content = typeof c.body === 'object' && c.body !== null && 'content' in c.body ? c.body.content : undefined;
      return typeof content === 'string' ? json(file('USER.md', content, false)) : json(file('TOOLS.md', '<!-- TOOLS.md -->', true));
    });
    expect(await transport.call('bootstrap_files', {})).toEqual(files);
    expect(await transport.call('save_bootstrap_file', { name: 'USER.md', content: 'My name is Lin.\n' })).toEqual(file('USER.md', 'My name is Lin.\n', false));
    expect(await transport.call('save_bootstrap_file', { name: 'TOOLS.md', content: null })).toEqual(file('TOOLS.md', '<!-- TOOLS.md -->', true));
    // An empty text is a save (the file is then left out of the prompt), not a restore.
    await transport.call('save_bootstrap_file', { name: 'USER.md', content: '' });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', 'http://127.0.0.1:4000/api/settings/bootstrap', undefined],
      ['PUT', 'http://127.0.0.1:4000/api/settings/bootstrap/USER.md', { content: 'My name is Lin.\n' }],
      ['PUT', 'http://127.0.0.1:4000/api/settings/bootstrap/TOOLS.md', { content: null }],
      ['PUT', 'http://127.0.0.1:4000/api/settings/bootstrap/USER.md', { content: '' }],
    ]);
    for (const c of calls) expect(c.headers.Authorization).toBe('Bearer secret');
    expect(calls[1]?.headers['Content-Type']).toBe('application/json');
    expect(calls[2]?.headers['Content-Type']).toBe('application/json');
  });

  it('URL-encodes a bootstrap file name and rejects a refused save with the server’s message', async () => {
    const { calls, transport } = stub(() =>
      json({ error: { code: 'invalid_input', message: 'AGENTS.md is 300000 bytes; the limit is 262144' } }, 400),
    );
    await expect(transport.call('save_bootstrap_file', { name: 'AGENTS.md', content: 'x'.repeat(300_000) })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'AGENTS.md is 300000 bytes; the limit is 262144',
      status: 400,
    });
    await expect(transport.call('save_bootstrap_file', { name: '../config.toml', content: null })).rejects.toBeInstanceOf(TransportError);
    expect(calls[1]?.url).toBe('http://127.0.0.1:4000/api/settings/bootstrap/..%2Fconfig.toml');
  });

  it('rejects a turn the server refuses, with its message', async () => {
    const { transport } = stub(() =>
      json({ error: { code: 'invalid_input', message: 'input: it is empty' } }, 400),
    );
    await expect(transport.sendTurn('web', ' ', () => {}).done).rejects.toThrow('input: it is empty');
  });
});

describe('pairPage', () => {
  const storage = (store: Map<string, string>) => ({
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
  });
  async function page(
    hash: string,
    stored: string | null,
    pair: (code: string) => Promise<Paired>,
    device: Map<string, string> = new Map(),
  ) {
    const store = new Map<string, string>(stored ? [[TOKEN_KEY, stored]] : []);
    const replaced: string[] = [];
    const paired: string[] = [];
    const result = pairPage(
      { hash, pathname: '/', search: '' },
      { page: storage(store), device: storage(device) },
      { replaceState: (_d, _t, url) => void replaced.push(String(url)) },
      (code) => {
        paired.push(code);
        return pair(code);
      },
    );
    const token = await result.catch((e: Error) => `rejected: ${e.message}`);
    return { token, stored: store.get(TOKEN_KEY), replaced, paired };
  }
  const grant = async (code: string): Promise<Paired> => ({ token: `token-for-${code}` });

  it('trades the code for a token, keeps the token and takes the code out of the address first', async () => {
    expect(await page('#pair=abc', null, grant)).toEqual({
      token: 'token-for-abc',
      stored: 'token-for-abc',
      replaced: ['/'],
      paired: ['abc'],
    });
    expect((await page('#x=1&pair=abc', 'old', grant)).replaced).toEqual(['/#x=1']);
  });

  it("keeps a device's token for good (not just for the tab) and falls back to it", async () => {
    const device = new Map<string, string>();
    const asDevice = async (code: string): Promise<Paired> => ({ token: `device-token-${code}`, device: 'd-1' });
    const paired = await page('#pair=ABCDE-FGHJK', null, asDevice, device);
    expect(paired.token).toBe('device-token-ABCDE-FGHJK');
    expect(paired.stored).toBeUndefined();
    expect(device.get(TOKEN_KEY)).toBe('device-token-ABCDE-FGHJK');
    // A new tab (an empty session store) still has the device's token.
    expect((await page('', null, grant, device)).token).toBe('device-token-ABCDE-FGHJK');
    // This tab's own pairing comes first.
    expect((await page('', 'tab', grant, device)).token).toBe('tab');
  });

  it('falls back to the kept token, and to none, without pairing', async () => {
    expect(await page('', 'kept', grant)).toEqual({ token: 'kept', stored: 'kept', replaced: [], paired: [] });
    expect((await page('', null, grant)).token).toBeUndefined();
  });

  it("rejects with the server's reason when the code is spent, and keeps nothing new", async () => {
    const spent = async () => {
      throw new TransportError('unauthorized', 'this pairing code was used already');
    };
    expect(await page('#pair=old', 'kept', spent)).toEqual({
      token: 'rejected: this pairing code was used already',
      stored: 'kept',
      replaced: ['/'],
      paired: ['old'],
    });
  });

  it('pairs through POST /api/pair without a token', async () => {
    const calls: { url: string; headers: Record<string, string>; body: unknown }[] = [];
    const fetchFn = async (input: RequestInfo | URL, init?: RequestInit) => {
      calls.push({
        url: String(input),
        headers: (init?.headers ?? {}) as Record<string, string>,
        body: JSON.parse(String(init?.body)),
      });
      return new Response(JSON.stringify({ token: 't' }), { status: 200 });
    };
    expect(await new HttpTransport('http://127.0.0.1:4000', undefined, fetchFn as typeof fetch).pair('c')).toEqual({ token: 't' });
    expect(calls).toEqual([
      { url: 'http://127.0.0.1:4000/api/pair', headers: { 'Content-Type': 'application/json' }, body: { code: 'c' } },
    ]);
  });
});
