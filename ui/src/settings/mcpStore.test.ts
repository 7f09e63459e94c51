// The MCP store without a page: the form's own checks never reach the engine, a save sends
// the whole list (an edit in place, a new server last), toggling follows into an open form,
// and the states are polled while servers start, until `dispose`.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { MCP_POLL_MS, MCP_POLL_TRIES, McpStore } from './mcpStore';
import { docs, gh, mcpTransport, stateOf } from './testFakes';

async function loaded(initial = [gh, docs]) {
  const transport = mcpTransport(initial);
  const store = new McpStore(transport);
  await store.load();
  return { transport, store };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('McpStore', () => {
  it('loads the list and the states; a failed state read is shown', async () => {
    const { store, transport } = await loaded();
    expect(store.getState().configs?.map((c) => c.name)).toEqual(['gh', 'docs']);
    expect(store.getState().states?.map((s) => s.state)).toEqual(['ready', 'disabled']);
    transport.handlers.mcp_servers = () => Promise.reject(new Error('engine gone'));
    await store.refresh();
    expect(store.getState().statesError).toBe('engine gone');
    expect(store.getState().states).toHaveLength(2);
  });

  it('refuses a duplicate name itself, then saves a new server last and closes the form', async () => {
    const { store, transport } = await loaded();
    store.openNew();
    store.change({ name: 'gh', command: 'uvx' });
    await store.submit();
    expect(store.getState().failure).toEqual({ problem: { key: 'mcp.check.nameTwice', vars: { name: 'gh' } } });
    expect(transport.sets).toEqual([]);
    // "Add" again keeps what was typed.
    store.openNew();
    expect(store.getState().editing?.form.name).toBe('gh');
    store.change({ name: 'fetch' });
    await store.submit();
    expect(transport.sets.map((list) => list.map((c) => c.name))).toEqual([['gh', 'docs', 'fetch']]);
    expect(store.getState()).toMatchObject({ editing: null, saved: true, failure: null, busy: false });
  });

  it('edits in place, and keeps the form with the engine’s refusal', async () => {
    const { store, transport } = await loaded();
    store.openEdit('docs');
    store.change({ url: 'ftp://x' });
    await store.submit();
    expect(store.getState().failure).toEqual({ message: 'MCP server docs: `url` must start with http:// or https://, not "ftp://x"' });
    expect(store.getState().editing?.original).toBe('docs');
    store.change({ name: 'handbook', url: 'https://h.example.com' });
    await store.submit();
    expect(transport.sets[1]).toEqual([gh, { ...docs, name: 'handbook', url: 'https://h.example.com' }]);
  });

  it('toggles a server and its open form; removing it closes the form', async () => {
    const { store, transport } = await loaded();
    store.openEdit('docs');
    await store.toggle('docs');
    expect(transport.sets[0]).toEqual([gh, { ...docs, enabled: true }]);
    expect(store.getState().editing?.form.enabled).toBe(true);
    await store.remove('docs');
    expect(transport.sets[1]).toEqual([gh]);
    expect(store.getState().editing).toBeNull();
  });

  it('polls every second while a server starts, at most ten times, and stops on dispose', async () => {
    const { store, transport } = await loaded([gh]);
    vi.useFakeTimers();
    const before = transport.polls;
    transport.saved = (list) => list.map((c) => stateOf(c, 'starting'));
    transport.states = (list) => list.map((c) => stateOf(c, 'starting'));
    await store.toggle('gh');
    await vi.advanceTimersByTimeAsync(MCP_POLL_MS * 3);
    expect(transport.polls).toBe(before + 3);
    await vi.advanceTimersByTimeAsync(MCP_POLL_MS * 30);
    expect(transport.polls).toBe(before + MCP_POLL_TRIES);

    // A new save starts a new round; dispose (the panel going away) ends it.
    await store.toggle('gh');
    await vi.advanceTimersByTimeAsync(MCP_POLL_MS);
    expect(transport.polls).toBe(before + MCP_POLL_TRIES + 1);
    store.dispose();
    await vi.advanceTimersByTimeAsync(MCP_POLL_MS * 30);
    expect(transport.polls).toBe(before + MCP_POLL_TRIES + 1);
  });

  it('schedules no more reads after dispose, even for a read that was under way and failed', async () => {
    const { store, transport } = await loaded([gh]);
    vi.useFakeTimers();
    transport.saved = (list) => list.map((c) => stateOf(c, 'starting'));
    await store.toggle('gh');
    let fail: (e: Error) => void = () => {};
    let reads = 0;
    transport.handlers.mcp_servers = () => {
      reads += 1;
      return new Promise((_, reject) => {
        fail = reject;
      });
    };
    await vi.advanceTimersByTimeAsync(MCP_POLL_MS);
    expect(reads).toBe(1);
    store.dispose();
    fail(new Error('engine gone'));
    await vi.advanceTimersByTimeAsync(MCP_POLL_MS * 30);
    expect(reads).toBe(1);
  });
});
