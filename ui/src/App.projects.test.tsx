// @vitest-environment jsdom
// Projects across the page, against an in-memory engine: the sidebar groups conversations by
// project; a group's "New chat" starts one with its project chosen in the select under the
// empty chat, the first message carries it and the chat then says its project; a project
// added in Settings gets its group in the sidebar at once.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from './App';
import { ChatStore } from './chatStore';
import type { EventEnvelope, SessionSummary } from './generated/engine';
import { project } from './memory/testFakes';
import { projectsTransport } from './settings/testFakes';
import { fill, flush } from './components/settings/testing';
import type { TurnOptions } from './transport';

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
  return { container, root, turns, finish, groups, send };
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
});
