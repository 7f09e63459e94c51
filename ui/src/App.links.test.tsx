// @vitest-environment jsdom
// The links between pages, in the whole app against an in-memory engine: "Show trace" on an
// answer (stored or still streaming) opens that turn on the trace page, whose session leads
// back to the chat; "Show where it was learned" opens the conversation at the message, marked
// (or says the source is gone); the Memory button counts open conflicts, drops at once when
// one is settled, and is read again when a turn ends; a memory id in a trace opens the memory;
// the Automations button counts the questions in the approval queue, and a run on the
// automations page opens its trace and its conversation.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from './App';
import { automation, automationsEngine, question, run, watchSpec } from './automations/testFakes';
import { ChatStore } from './chatStore';
import type { Conflict, EventEnvelope, SessionSummary, StoredMessage } from './generated/engine';
import { conflict, memoryEngine } from './memory/testFakes';
import { toolTurnSpans, traceEngine, turnRecord } from './trace/testFakes';
import type { Handlers } from './testing/fakeEngine';
import { TransportError } from './transport';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const stored = (id: string, role: 'user' | 'assistant', content: string, turn: string, seq: number): StoredMessage => ({
  id, session_id: 's-1', turn_id: turn, seq, role, content, reasoning: null, tool_calls: [], tool_call_id: null, name: null, status: 'complete', created_at: '',
});
const history = [
  stored('u1', 'user', 'I am vegetarian', 't-1', 1),
  stored('a1', 'assistant', 'Noted, no meat.', 't-1', 2),
  stored('u2', 'user', 'Plan a dinner', 't-2', 3),
  stored('a2', 'assistant', 'Lentil curry.', 't-2', 4),
];
const sessions = [
  { id: 's-0', name: 'other' },
  { id: 's-1', name: 'travel plans' },
] as SessionSummary[];

async function setup(conflicts: Conflict[] = [], extra: Handlers = {}) {
  const engine = memoryEngine(3, conflicts);
  const traces = traceEngine([turnRecord('t-1'), turnRecord('t-2'), turnRecord('t-9')], (id) => toolTurnSpans(id));
  const show = engine.handlers.memory_show!;
  Object.assign(engine.handlers, {
    list_sessions: () => sessions,
    history: ({ session }: { session: string }) => (session === 'travel plans' ? history : []),
    traces: traces.handlers.traces,
    trace: traces.handlers.trace,
    trace_call: traces.handlers.trace_call,
    // m-0001 was learned from the answer of turn t-1; m-0002 from a turn and session since deleted.
    memory_show: async (r: { id: string }) => ({
      ...(await show(r)),
      ...(r.id === 'm-0001' ? { source_session_id: 's-1', source_turn_id: 't-1', source_message_id: 'a1' } : {}),
      ...(r.id === 'm-0002' ? { source_session_id: 's-gone', source_turn_id: 't-gone', source_message_id: 'x' } : {}),
    }),
    ...extra,
  });
  let emit: (e: EventEnvelope) => void = () => {};
  let end: () => void = () => {};
  engine.sendTurn = (_s, _input, onEvent) => {
    emit = onEvent;
    return { done: new Promise<void>((ok) => (end = ok)) };
  };
  const store = new ChatStore(engine);
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<App store={store} transport={engine} initialLocale="en" initialTheme="system" hasToken />));
  await act(async () => store.init());
  await flush();
  return {
    engine,
    store,
    container,
    root,
    emit: (e: EventEnvelope) => act(() => emit(e)),
    end: async () => {
      await act(async () => end());
      await flush();
    },
  };
}

async function flush() {
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

const q = <T extends Element = HTMLElement>(root: ParentNode, selector: string) => root.querySelector(selector) as T | null;
const all = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const click = async (el: Element | null | undefined) => {
  if (!el) throw new Error('nothing to click');
  await act(async () => (el as HTMLElement).click());
  await flush();
};
const nav = (root: ParentNode, name: string) => q<HTMLButtonElement>(root, `.topbar button.${name}`);

afterEach(() => {
  document.body.innerHTML = '';
});

describe('Show trace', () => {
  it('opens the turn of a stored answer on the trace page, and its session back in the chat', async () => {
    const { engine, store, container, root } = await setup();
    await act(async () => store.select('travel plans'));
    const links = all(container, 'show-trace');
    expect(links).toHaveLength(2);
    expect(links[1]?.closest('.message')?.textContent).toContain('Lentil curry.');
    await click(links[1]);
    expect(nav(container, 'nav-traces')?.getAttribute('aria-pressed')).toBe('true');
    expect(engine.sent('trace')).toEqual([{ turn_id: 't-2' }]);
    expect(q(container, '[data-testid="turn-summary"]')?.getAttribute('data-turn-id')).toBe('t-2');
    expect(all(container, 'span-row').length).toBeGreaterThan(5);

    await act(async () => store.select('other'));
    await click(q(container, '[data-testid="trace-session"]'));
    expect(nav(container, 'nav-chat')?.getAttribute('aria-pressed')).toBe('true');
    expect(store.getState().selected).toBe('travel plans');
    expect(q(container, '.chat')?.textContent).toContain('Lentil curry.');
    act(() => root.unmount());
  });

  it('is offered on the answer being streamed once its turn id is known', async () => {
    const { engine, store, container, root, emit } = await setup();
    await act(async () => store.select('travel plans'));
    await act(async () => void store.send('Where am I going?'));
    const answers = () => [...container.querySelectorAll('.message.assistant')];
    expect(answers().at(-1)?.querySelector('[data-testid="show-trace"]')).toBeNull();
    emit({ v: 1, turn_id: 't-9', seq: 1, type: 'turn_started', session_id: 's-1', session_name: 'travel plans' });
    expect(store.getState().running?.turnId).toBe('t-9');
    await click(answers().at(-1)?.querySelector('[data-testid="show-trace"]'));
    expect(engine.sent('trace')).toEqual([{ turn_id: 't-9' }]);
    expect(q(container, '[data-testid="turn-summary"]')?.getAttribute('data-turn-id')).toBe('t-9');
    act(() => root.unmount());
  });
});

describe('Memory links in a trace', () => {
  it('open the memory page at the memory a span read', async () => {
    const { engine, container, root } = await setup();
    await click(nav(container, 'nav-traces'));
    await click(q(container, '[data-testid="trace-row"][data-turn-id="t-1"] .trace-open'));
    await click(q(container, '[data-testid="span-row"][data-span-id="recall"]'));
    await click(q(container, '[data-testid="span-memory-link"][data-memory-id="m-0002"]'));
    expect(nav(container, 'nav-memory')?.getAttribute('aria-pressed')).toBe('true');
    expect(engine.sent('memory_show')).toContainEqual({ id: 'm-0002' });
    expect(q(container, '[data-testid="memory-detail"]')?.getAttribute('data-memory-id')).toBe('m-0002');
    act(() => root.unmount());
  });
});

describe('Show where it was learned', () => {
  it('opens the conversation at the message, marked, from the memory page', async () => {
    const { engine, store, container, root } = await setup();
    await act(async () => store.select('other'));
    await click(nav(container, 'nav-memory'));
    await click(q(container, '[data-testid="memory-row"][data-memory-id="m-0001"] .memory-open'));
    await click(q(container, '[data-testid="memory-provenance"]'));
    expect(engine.sent('trace')).toEqual([{ turn_id: 't-1' }]);
    expect(nav(container, 'nav-chat')?.getAttribute('aria-pressed')).toBe('true');
    expect(store.getState().selected).toBe('travel plans');
    const marked = all(container, 'message-highlighted');
    expect(marked).toHaveLength(1);
    expect(marked[0]?.textContent).toContain('Noted, no meat.');
    expect(marked[0]?.classList.contains('highlighted')).toBe(true);
    act(() => root.unmount());
  });

  it('says so when the conversation is gone', async () => {
    const { engine, container, root } = await setup();
    await click(nav(container, 'nav-memory'));
    await click(q(container, '[data-testid="memory-row"][data-memory-id="m-0002"] .memory-open'));
    await click(q(container, '[data-testid="memory-provenance"]'));
    expect(engine.sent('trace')).toEqual([{ turn_id: 't-gone' }]);
    expect(q(container, '[data-testid="memory-provenance-gone"]')?.textContent).toBe('The conversation it was learned from is gone.');
    expect(nav(container, 'nav-memory')?.getAttribute('aria-pressed')).toBe('true');
    // A memory typed in by hand records no source: no link.
    await click(q(container, '[data-testid="memory-row"][data-memory-id="m-0000"] .memory-open'));
    expect(q(container, '[data-testid="memory-provenance"]')).toBeNull();
    act(() => root.unmount());
  });

  it('says so when the message is no longer in the conversation', async () => {
    const { store, container, root } = await setup();
    await act(async () => store.openAt('travel plans', 'replaced'));
    expect(q(container, '[data-testid="chat-source-missing"]')?.textContent).toContain('no longer in this conversation');
    expect(all(container, 'message-highlighted')).toHaveLength(0);
    act(() => root.unmount());
  });
});

describe('The conflict badge', () => {
  it('counts open conflicts and drops at once when one is settled', async () => {
    const { container, root } = await setup([conflict('c1', 'm-0000', 'm-0001'), conflict('c2', 'm-0001', 'm-0002')]);
    const badge = () => q(container, '[data-testid="nav-conflicts-badge"]');
    expect(badge()?.textContent).toBe('2');
    expect(badge()?.closest('button')?.classList.contains('nav-memory')).toBe(true);
    await click(nav(container, 'nav-memory'));
    await click(q(container, '[data-testid="memory-tab-conflicts"]'));
    await click(q(container, '[data-conflict-id="c1"] [data-testid="conflict-keep-a"]'));
    expect(badge()?.textContent).toBe('1');
    await click(q(container, '[data-conflict-id="c2"] [data-testid="conflict-keep-both"]'));
    expect(badge()).toBeNull();
    act(() => root.unmount());
  });

  it('is read again when a turn ends (extraction may have opened a conflict)', async () => {
    const { engine, store, container, root, end } = await setup();
    expect(q(container, '[data-testid="nav-conflicts-badge"]')).toBeNull();
    await act(async () => void store.send('I eat fish now'));
    engine.handlers.memory_conflicts = () => [conflict('c7', 'm-0000', 'm-0001')];
    await flush();
    expect(q(container, '[data-testid="nav-conflicts-badge"]')).toBeNull();
    await end();
    expect(q(container, '[data-testid="nav-conflicts-badge"]')?.textContent).toBe('1');
    act(() => root.unmount());
  });

  it('stays hidden when the engine cannot be asked', async () => {
    const { engine, container, root } = await setup();
    engine.handlers.memory_conflicts = () => Promise.reject(new TransportError('network', 'down'));
    await click(nav(container, 'nav-traces'));
    expect(q(container, '[data-testid="nav-conflicts-badge"]')).toBeNull();
    act(() => root.unmount());
  });
});

describe('Automations', () => {
  const automations = () =>
    automationsEngine(
      [automation(1, watchSpec(), { name: 'inbox' })],
      [run(1, 'a-1', { session: 'travel plans', turn_id: 't-1' })],
      [question('q1'), question('q2')],
    );

  it('counts the questions waiting in the approval queue on the Automations button', async () => {
    const fake = automations();
    const { engine, container, root } = await setup([], fake.handlers);
    const badge = () => q(container, '[data-testid="nav-approvals-badge"]');
    expect(engine.sent('approval_queue')).toEqual([{ all: false }]);
    expect(badge()?.textContent).toBe('2');
    expect(badge()?.closest('button')?.classList.contains('nav-automations')).toBe(true);
    await click(nav(container, 'nav-automations'));
    expect(nav(container, 'nav-automations')?.getAttribute('aria-pressed')).toBe('true');
    await click(q(container, '[data-request-id="q1"] [data-testid="queue-allow-once"]'));
    expect(engine.sent('answer_approval')).toEqual([{ request_id: 'q1', answer: 'allow_once' }]);
    expect(badge()?.textContent).toBe('1');
    await click(q(container, '[data-request-id="q2"] [data-testid="queue-deny"]'));
    expect(badge()).toBeNull();
    act(() => root.unmount());
  });

  it('opens a run’s trace and its conversation', async () => {
    const fake = automations();
    const { engine, store, container, root } = await setup([], fake.handlers);
    await click(nav(container, 'nav-automations'));
    await click(q(container, '[data-testid="run-open-trace"]'));
    expect(nav(container, 'nav-traces')?.getAttribute('aria-pressed')).toBe('true');
    expect(engine.sent('trace')).toEqual([{ turn_id: 't-1' }]);
    await click(nav(container, 'nav-automations'));
    await click(q(container, '[data-testid="run-open-chat"]'));
    expect(nav(container, 'nav-chat')?.getAttribute('aria-pressed')).toBe('true');
    expect(store.getState().selected).toBe('travel plans');
    act(() => root.unmount());
  });
});
