// @vitest-environment jsdom
// Projects across the page, against an in-memory engine: the sidebar groups conversations by
// project; a group's "New chat" starts one with its project chosen in the select under the
// empty chat, the first message carries it and the chat then says its project; a project
// added in Settings gets its group in the sidebar at once; "Move to project…" on a
// conversation sends `move_session` (no project for "No project"), the sidebar then lists it
// in its new group and the open chat says its new project, and a refusal shows by the row.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from './App';
import { ChatStore } from './chatStore';
import type { EventEnvelope, SessionSummary } from './generated/engine';
import { project } from './memory/testFakes';
import { projectsTransport } from './settings/testFakes';
import { fill, flush } from './components/settings/testing';
import { TransportError, type TurnOptions } from './transport';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => {
  document.body.innerHTML = '';
});

async function setup() {
  const engine = projectsTransport([project(1, 'Kitchen', { sessions: 1 }), project(2, 'Thesis')]);
  let sessions = [
    { id: 's-1', name: 'tiles', title: 'Floor tiles', message_count: 2, project: 'Kitchen' },
    { id: 's-2', name: 'holiday', title: 'Trip to Kyoto', message_count: 2 },
  ] as SessionSummary[];
  Object.assign(engine.handlers, {
    list_sessions: () => sessions,
    history: () => [],
    provider: () => Promise.reject(new Error('not in this test')),
    memory_conflicts: () => [],
    list_rules: () => [],
    mcp_servers: () => [],
    mcp_config: () => [],
    approvals: () => [],
    bootstrap_files: () => [],
  });
  // Like the engine: the session and the project must exist; no project moves it out of any.
  engine.handlers.move_session = ({ name, project }) => {
    const found = sessions.find((s) => s.name === name);
    if (!found) throw new TransportError('not_found', `no session ${name}`, 404);
    if (project !== undefined && !engine.projects().some((p) => p.name === project)) {
      throw new TransportError('not_found', `no project ${project}`, 404);
    }
    const moved: SessionSummary = { ...found };
    delete moved.project;
    if (project !== undefined) moved.project = project;
    sessions = sessions.map((s) => (s.name === name ? moved : s));
    return moved;
  };
  const turns: { session: string; input: string; options: TurnOptions | undefined }[] = [];
  let emit: (e: EventEnvelope) => void = () => {};
  let end: () => void = () => {};
  engine.sendTurn = (session, input, onEvent, options) => {
    turns.push({ session, input, options });
    if (!sessions.some((s) => s.name === session)) {
      sessions = [...sessions, { id: `s-${sessions.length + 1}`, name: session, title: input, message_count: 2, ...(options?.project ? { project: options.project } : {}) } as SessionSummary];
    }
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
  const finish = async () => {
    act(() => emit({ v: 1, turn_id: 't1', seq: 1, type: 'final', text: 'Noted.' }));
    act(() =>
      emit({ v: 1, turn_id: 't1', seq: 2, type: 'turn_finished', status: 'completed', usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0 }, trace_id: 't1' }),
    );
    await act(async () => end());
    await flush();
  };
  const groups = () => [...container.querySelectorAll<HTMLElement>('.sessions .session-group')];
  const send = async (text: string) => {
    act(() => fill(container.querySelector('.composer textarea') as HTMLTextAreaElement, text));
    await act(async () => (container.querySelector('.composer button.send') as HTMLButtonElement).click());
  };
  const row = (name: string) => container.querySelector(`.sessions [data-row="${name}"]`) as HTMLElement;
  /** "Move to project…" on a conversation, then the place labelled so. */
  const move = async (name: string, label: string) => {
    act(() => (row(name).querySelector('[data-testid="session-move"]') as HTMLButtonElement).click());
    const choices = [...row(name).querySelectorAll<HTMLButtonElement>('[data-testid="session-move-choice"]')];
    await act(async () => (choices.find((b) => b.textContent === label) as HTMLButtonElement).click());
    await flush();
  };
  const moves = () => engine.requests.filter((r) => r.op === 'move_session').map((r) => r.request);
  const titlesIn = (el: ParentNode | null | undefined) => [...(el?.querySelectorAll('.session-title') ?? [])].map((e) => e.textContent);
  const loose = () => container.querySelector('nav.sessions > ul');
  const label = () => container.querySelector('[data-testid="chat-project"]')?.textContent ?? null;
  return { container, root, engine, turns, finish, groups, send, row, move, moves, titlesIn, loose, label };
}

describe('App projects', () => {
  it('starts a chat in a project from its sidebar group, sends the project with the first message only and says it', async () => {
    const { container, root, turns, finish, groups, send } = await setup();
    expect(groups().map((g) => g.querySelector('h3')?.textContent)).toEqual(['Kitchen', 'Thesis']);
    expect(groups()[0]?.textContent).toContain('Floor tiles');

    await act(async () => (groups()[1]?.querySelector('[data-testid="session-group-new"]') as HTMLButtonElement).click());
    const select = container.querySelector('[data-testid="project-select"]') as HTMLSelectElement;
    expect(select.value).toBe('Thesis');
    expect(container.querySelector('[data-testid="chat-project"]')).toBeNull();
    // The new conversation shows in its project's group.
    expect(groups()[1]?.querySelector('.session.current')?.textContent).toContain('Untitled');

    await send('Outline chapter 3');
    await finish();
    expect(container.querySelector('[data-testid="project-select"]')).toBeNull();
    expect(container.querySelector('[data-testid="chat-project"]')?.textContent).toBe('Project: Thesis');
    expect(groups()[1]?.textContent).toContain('Outline chapter 3');

    await send('And chapter 4');
    expect(turns.map((t) => [t.input, t.options?.project])).toEqual([
      ['Outline chapter 3', 'Thesis'],
      ['And chapter 4', undefined],
    ]);
    act(() => root.unmount());
  });

  it('lets the select choose the project of a new chat, or none', async () => {
    const { container, root, turns, send } = await setup();
    await act(async () => (container.querySelector('.new-session') as HTMLButtonElement).click());
    const select = () => container.querySelector('[data-testid="project-select"]') as HTMLSelectElement;
    expect(select().value).toBe('');
    act(() => fill(select(), 'Kitchen'));
    expect(select().value).toBe('Kitchen');
    act(() => fill(select(), ''));
    await send('Hello');
    expect(turns.map((t) => t.options?.project)).toEqual([undefined]);
    act(() => root.unmount());
  });

  it('gives a project added in Settings its group in the sidebar', async () => {
    const { container, root, groups } = await setup();
    await act(async () => (container.querySelector('.topbar button.nav-settings') as HTMLButtonElement).click());
    await flush();
    await act(async () => (container.querySelector('[data-testid="project-add"]') as HTMLButtonElement).click());
    act(() => fill(container.querySelector('[data-testid="project-name"]') as HTMLInputElement, 'Garden'));
    await act(async () => (container.querySelector('[data-testid="project-save"]') as HTMLButtonElement).click());
    await flush();
    expect(groups().map((g) => g.querySelector('h3')?.textContent)).toEqual(['Garden', 'Kitchen', 'Thesis']);
    act(() => root.unmount());
  });

  it('moves the open conversation to another project: the sidebar lists it there and the chat says so', async () => {
    const { root, groups, move, moves, titlesIn, loose, label } = await setup();
    // "tiles" (Kitchen) is open.
    expect(label()).toBe('Project: Kitchen');
    await move('tiles', 'Thesis');
    expect(moves()).toEqual([{ name: 'tiles', project: 'Thesis' }]);
    expect(groups().map((g) => [g.dataset.project, titlesIn(g)])).toEqual([
      ['Kitchen', []],
      ['Thesis', ['Floor tiles']],
    ]);
    expect(label()).toBe('Project: Thesis');

    // "No project" sends none, and takes it out of every group.
    await move('tiles', 'No project');
    expect(moves()[1]).toStrictEqual({ name: 'tiles' });
    expect(titlesIn(loose())).toEqual(['Floor tiles', 'Trip to Kyoto']);
    expect(groups().map((g) => titlesIn(g))).toEqual([[], []]);
    expect(label()).toBeNull();
    act(() => root.unmount());
  });

  it('moves a conversation that is not open, leaving the open chat\'s project as it is', async () => {
    const { root, groups, move, moves, titlesIn, loose, label } = await setup();
    await move('holiday', 'Kitchen');
    expect(moves()).toEqual([{ name: 'holiday', project: 'Kitchen' }]);
    expect(titlesIn(groups()[0])).toEqual(['Floor tiles', 'Trip to Kyoto']);
    expect(titlesIn(loose())).toEqual([]);
    expect(label()).toBe('Project: Kitchen');
    act(() => root.unmount());
  });

  it('shows the refusal to move a conversation next to it, and keeps it where it was', async () => {
    const { root, engine, groups, move, row, titlesIn, label } = await setup();
    engine.handlers.move_session = () => Promise.reject(new TransportError('invalid_input', '"tiles" has a turn running; stop it first', 400));
    await move('tiles', 'Thesis');
    expect(row('tiles').querySelector('.session-error')?.textContent).toBe('"tiles" has a turn running; stop it first');
    expect(groups().map((g) => titlesIn(g))).toEqual([['Floor tiles'], []]);
    expect(label()).toBe('Project: Kitchen');
    act(() => root.unmount());
  });
});
