// The trace store against an in-memory engine: the list and its filters (only what is set is
// sent, an answer for older filters is dropped), opening a turn, selecting spans (a model
// call is read once, only when selected, and only when it may have been captured), following
// a live turn, and exporting a turn as a replay case (the call, the file name, the JSON).

import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../transport';
import { T0, at, replayCase, span, traceEngine, turnRecord } from './testFakes';
import { DEFAULT_FILTERS, TraceStore, isLive, listRequest } from './traceStore';

afterEach(() => {
  vi.useRealTimers();
});

const turns = [
  turnRecord('t-3', { session_name: 'taxes', status: 'failed', degraded: true, created_at: at(3000) }),
  turnRecord('t-2', { approvals: 2, model: 'backup', created_at: at(2000) }),
  turnRecord('t-1', { created_at: at(1000) }),
];

describe('TraceStore list', () => {
  it('lists the turns and sends only the filters that are set', async () => {
    const engine = traceEngine(turns);
    const store = new TraceStore(engine);
    await store.load();
    expect(store.getState().turns?.map((t) => t.id)).toEqual(['t-3', 't-2', 't-1']);
    expect(engine.sent('traces')).toEqual([{ limit: 100 }]);

    await store.setFilters({ session: ' taxes ', status: 'failed', degraded: 'yes' });
    expect(engine.sent('traces').at(-1)).toEqual({ limit: 100, session: 'taxes', status: 'failed', degraded: true });
    expect(store.getState().turns?.map((t) => t.id)).toEqual(['t-3']);

    await store.resetFilters();
    await store.setFilters({ approvals: 'yes', model: 'backup' });
    expect(engine.sent('traces').at(-1)).toEqual({ limit: 100, model: 'backup', has_approvals: true });
    expect(store.getState().turns?.map((t) => t.id)).toEqual(['t-2']);
  });

  it('sends a time range as RFC 3339', () => {
    const since = new Date(T0).toISOString();
    const local = (iso: string) => {
      // The datetime-local value the person picks for that instant, in this machine's zone.
      const d = new Date(iso);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
    };
    expect(listRequest({ ...DEFAULT_FILTERS, since: local(since), until: 'not a time', degraded: 'no', approvals: 'no' })).toEqual({
      limit: 100,
      degraded: false,
      has_approvals: false,
      since,
    });
  });

  it('drops the answer for older filters and shows a failure as text', async () => {
    const engine = traceEngine(turns);
    let release: () => void = () => {};
    const slow = engine.handlers.traces!;
    engine.handlers.traces = (r) => (r.session === undefined ? new Promise((ok) => (release = () => ok(slow(r) as never))) : slow(r));
    const store = new TraceStore(engine);
    const first = store.list();
    await store.setFilters({ session: 'taxes' });
    release();
    await first;
    expect(store.getState().turns?.map((t) => t.id)).toEqual(['t-3']);

    engine.handlers.traces = () => Promise.reject(new TransportError('store', 'database is locked', 500));
    await store.list();
    expect(store.getState().listError).toBe('database is locked');
    expect(store.getState().loading).toBe(false);
  });
});

describe('TraceStore trace and spans', () => {
  it('opens a turn, and reads a model call only when its span is selected, once', async () => {
    const engine = traceEngine(turns);
    const store = new TraceStore(engine);
    await store.open('t-1');
    expect(store.getState().trace?.turn.id).toBe('t-1');
    expect(store.getState().trace?.spans).toHaveLength(12);
    expect(engine.sent('trace_call')).toEqual([]);

    await store.select('tool');
    expect(store.getState().selected).toBe('tool');
    expect(engine.sent('trace_call')).toEqual([]);

    await store.select('call1');
    expect(engine.sent('trace_call')).toEqual([{ turn_id: 't-1', span_id: 'call1' }]);
    const read = store.getState().calls.call1;
    expect(read?.state === 'ok' && read.call.request.messages[1]?.content).toBe('Where did I say I am going in May?');
    await store.select('tool');
    await store.select('call1');
    expect(engine.sent('trace_call')).toHaveLength(1);
  });

  it('does not ask for a call that was not captured, and says when the engine has none', async () => {
    const engine = traceEngine(turns, () => [
      span('root', null, 0, 100),
      span('off', 'root', 0, 50, { level: 'call', kind: 'model', attrs: { captured: false } }),
      span('pruned', 'root', 50, 50, { level: 'call', kind: 'model', attrs: {} }),
      // Background calls (extraction, the judge) are stored with `null` attributes.
      span('judge', 'root', 100, 50, { level: 'call', kind: 'model', attrs: null as unknown as Record<string, unknown> }),
    ]);
    const store = new TraceStore(engine);
    await store.open('t-1');
    await store.select('off');
    expect(engine.sent('trace_call')).toEqual([]);
    await store.select('pruned');
    expect(engine.sent('trace_call')).toEqual([{ turn_id: 't-1', span_id: 'pruned' }]);
    expect(store.getState().calls.pruned).toEqual({ state: 'missing' });
    await store.select('judge');
    expect(store.getState().calls.judge).toEqual({ state: 'missing' });

    engine.handlers.trace_call = () => Promise.reject(new TransportError('network', 'cannot reach the engine'));
    await store.loadCall('pruned');
    expect(store.getState().calls.pruned).toEqual({ state: 'error', message: 'cannot reach the engine' });
  });

  it('opening another turn starts the selection over; a missing turn is an error', async () => {
    const engine = traceEngine(turns);
    const store = new TraceStore(engine);
    await store.open('t-1');
    await store.select('call1');
    await store.open('t-2');
    expect(store.getState().selected).toBeNull();
    expect(store.getState().calls).toEqual({});
    await store.open('t-404');
    expect(store.getState().trace).toBeNull();
    expect(store.getState().traceError).toBe('no turn t-404');
  });

  it('reads a running turn again every second until it has ended', async () => {
    vi.useFakeTimers();
    let status: 'running' | 'completed' = 'running';
    const engine = traceEngine([]);
    engine.handlers.trace = ({ turn_id }) => ({
      turn: turnRecord(turn_id, { status, finished_at: status === 'running' ? null : new Date().toISOString() }),
      spans: [span('root', null, 0, status === 'running' ? null : 500)],
    });
    const store = new TraceStore(engine);
    await store.open('t-9');
    await vi.advanceTimersByTimeAsync(1000);
    expect(engine.sent('trace')).toHaveLength(2);
    status = 'completed';
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(5000);
    expect(engine.sent('trace')).toHaveLength(3);
    expect(store.getState().trace?.turn.status).toBe('completed');
    store.dispose();
  });

  it('starts no polling for an answer that arrives after the page has gone', async () => {
    vi.useFakeTimers();
    const engine = traceEngine([]);
    let answer: () => void = () => {};
    engine.handlers.trace = ({ turn_id }) =>
      new Promise((ok) => (answer = () => ok({ turn: turnRecord(turn_id, { status: 'running', finished_at: null }), spans: [] })));
    const store = new TraceStore(engine);
    const opening = store.open('t-9');
    store.dispose();
    answer();
    await opening;
    await vi.advanceTimersByTimeAsync(5000);
    expect(engine.sent('trace')).toHaveLength(1);
  });

  it('follows background spans only shortly after the turn ended', () => {
    const trace = { turn: turnRecord('t-1', { finished_at: at(2400) }), spans: [span('root', null, 0, 2400), span('bg', 'root', 2500, null)] };
    expect(isLive(trace, T0 + 5000)).toBe(true);
    expect(isLive(trace, T0 + 2400 + 60_001)).toBe(false);
    expect(isLive({ ...trace, spans: [span('root', null, 0, 2400)] }, T0 + 5000)).toBe(false);
  });
});

describe('TraceStore export', () => {
  it('downloads the replay case as <turn_id>.case.json', async () => {
    const engine = traceEngine(turns);
    const files: { name: string; blob: Blob }[] = [];
    const store = new TraceStore(engine, { download: (name, blob) => files.push({ name, blob }) });
    await store.open('t-2');
    await store.exportCase();
    expect(engine.sent('trace_case')).toEqual([{ turn_id: 't-2' }]);
    expect(files.map((f) => f.name)).toEqual(['t-2.case.json']);
    expect(files[0]?.blob.type).toBe('application/json');
    expect(JSON.parse(await (files[0]?.blob as Blob).text())).toEqual(replayCase('t-2'));
    expect(store.getState().exported).toBe('t-2.case.json');
  });

  it('shows why an export failed and downloads nothing', async () => {
    const engine = traceEngine(turns);
    engine.handlers.trace_case = () => Promise.reject(new TransportError('not_found', 'the turn was pruned', 404));
    const files: string[] = [];
    const store = new TraceStore(engine, { download: (name) => files.push(name) });
    await store.open('t-1');
    await store.exportCase();
    expect(files).toEqual([]);
    expect(store.getState().exportError).toBe('the turn was pruned');
    expect(store.getState().exporting).toBe(false);
  });
});
