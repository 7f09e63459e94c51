// @vitest-environment jsdom
// "Memory updated" under an answer: each memory the turn made, with what it replaced, and
// Undo and Open acting on that memory; "Remembering…" while extraction runs; nothing at all
// when the turn taught nothing. With "ask before remembering": what the turn found, each with
// Keep and Discard naming it, what a decision did and why one failed; and in the chat, Keep
// writes it (the line then shows it learned, with Undo) and Discard drops it.

import { act, useSyncExternalStore } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatStore } from '../chatStore';
import type { LearnedInTurn, TurnEvent } from '../generated/engine';
import { memory, memoryEngine, proposal } from '../memory/testFakes';
import { ChatView } from './ChatView';
import { LearnedLine } from './LearnedLine';
import { cleanup, flush, mount } from './settings/testing';

const byTestId = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const labels = (root: ParentNode, id: string) => byTestId(root, id).map((b) => b.getAttribute('aria-label'));

afterEach(cleanup);

describe('LearnedLine', () => {
  it('lists what the turn taught, with Undo and Open on each memory', () => {
    const learned: LearnedInTurn[] = [
      { memory: memory(1, { content: 'The user eats fish now' }), change_id: 'c1', replaced: 'The user is vegetarian' },
      { memory: memory(2, { content: 'The user lives in Lyon' }), change_id: 'c2', replaced: null },
    ];
    const undone: string[] = [];
    const opened: string[] = [];
    const { container, root } = mount(
      <LearnedLine learned={learned} onUndo={(l) => undone.push(l.change_id)} onOpen={(id) => opened.push(id)} />,
    );
    expect(byTestId(container, 'memory-updated')[0]?.getAttribute('role')).toBe('status');
    expect(byTestId(container, 'memory-learned').map((li) => li.querySelector('.learned-text')?.textContent)).toEqual([
      'The user eats fish now (was: The user is vegetarian)',
      'The user lives in Lyon',
    ]);
    expect(labels(container, 'memory-learned-undo')).toEqual(['Undo: The user eats fish now', 'Undo: The user lives in Lyon']);
    act(() => byTestId(container, 'memory-learned-undo')[1]?.click());
    act(() => byTestId(container, 'memory-learned-open')[0]?.click());
    expect(undone).toEqual(['c2']);
    expect(opened).toEqual(['m-0001']);
    act(() => root.unmount());
    const none = mount(<LearnedLine learned={[]} />);
    expect(none.container.textContent).toBe('');
    act(() => none.root.unmount());
    const pending = mount(<LearnedLine learned={[]} remembering />);
    expect(byTestId(pending.container, 'memory-remembering')[0]?.textContent).toBe('Remembering what matters from this answer…');
    act(() => pending.root.unmount());
  });

  it('asks about what the turn found, with Keep and Discard naming it; waits while one is decided', () => {
    const found = [proposal(1, { content: 'The user is vegetarian.' }), proposal(2, { content: 'The user has a cat.' })];
    const kept: string[] = [];
    const discarded: string[] = [];
    const { container, root } = mount(
      <LearnedLine
        learned={[]}
        proposals={found}
        decisions={{ pending: ['mp-2'], done: null, error: null }}
        onKeep={(p) => kept.push(p.id)}
        onDiscard={(p) => discarded.push(p.id)}
      />,
    );
    expect(byTestId(container, 'memory-proposals')[0]?.querySelector('.learned-title')?.textContent).toBe('Remember these?');
    expect(byTestId(container, 'memory-proposal').map((li) => li.querySelector('.learned-text')?.textContent)).toEqual([
      'The user is vegetarian.',
      'The user has a cat.',
    ]);
    expect(labels(container, 'memory-proposal-keep')).toEqual(['Keep: The user is vegetarian.', 'Keep: The user has a cat.']);
    expect(labels(container, 'memory-proposal-discard')).toEqual(['Discard: The user is vegetarian.', 'Discard: The user has a cat.']);
    expect(byTestId(container, 'memory-proposal-keep').map((b) => (b as HTMLButtonElement).disabled)).toEqual([false, true]);
    expect(container.textContent).not.toContain('Memory updated');
    act(() => byTestId(container, 'memory-proposal-keep')[0]?.click());
    act(() => byTestId(container, 'memory-proposal-discard')[0]?.click());
    expect(kept).toEqual(['mp-1']);
    expect(discarded).toEqual(['mp-1']);
    act(() => root.unmount());

    const one = mount(<LearnedLine learned={[]} proposals={found.slice(0, 1)} />, 'zh-CN');
    expect(one.container.querySelector('.learned-title')?.textContent).toBe('要记住吗？');
    act(() => one.root.unmount());
  });

  it('says what a decision did, and why one failed', () => {
    const done = mount(<LearnedLine learned={[]} proposals={[]} decisions={{ pending: [], done: 'discarded', error: null }} />);
    expect(byTestId(done.container, 'memory-updated')[0]?.textContent).toBe('Discarded: it will not be remembered.');
    expect(done.container.querySelector('[role="alert"]')).toBeNull();
    act(() => done.root.unmount());
    const failed = mount(
      <LearnedLine
        learned={[]}
        proposals={[proposal(1)]}
        decisions={{ pending: [], done: null, error: { decision: 'kept', code: 'internal', message: 'the disk is full' } }}
      />,
    );
    const alert = byTestId(failed.container, 'memory-proposal-error')[0];
    expect(alert?.getAttribute('role')).toBe('alert');
    expect(alert?.textContent).toBe('Could not keep it: the disk is full');
    act(() => failed.root.unmount());
    const gone = mount(
      <LearnedLine learned={[]} decisions={{ pending: [], done: null, error: { decision: 'discarded', code: 'not_found', message: 'gone' } }} />,
    );
    expect(byTestId(gone.container, 'memory-proposal-error')[0]?.textContent).toBe('Already kept or discarded elsewhere.');
    act(() => gone.root.unmount());
  });
});

/** The chat as the page wires it: the store's messages, Keep and Discard through the store. */
function Chat({ store }: { store: ChatStore }) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  return (
    <ChatView
      messages={state.messages}
      loading={false}
      onUndoLearned={(key, item) => void store.undoLearned(key, item)}
      onKeepProposal={(key, p) => void store.keepProposal(key, p)}
      onDiscardProposal={(key, p) => void store.discardProposal(key, p)}
    />
  );
}

describe('LearnedLine in the chat', () => {
  it('keeps one proposal (then shows it learned, with Undo) and discards the other', async () => {
    const engine = memoryEngine(0);
    engine.handlers.list_sessions = () => [];
    engine.handlers.history = () => [];
    engine.sendTurn = (_session, _input, onEvent) => {
      let seq = 0;
      const emit = (e: TurnEvent) => onEvent({ v: 1, turn_id: 't1', seq: seq++, ...e });
      emit({ type: 'turn_started', session_id: 's1', session_name: 'web' });
      emit({ type: 'final', text: 'Noted.' });
      emit({ type: 'turn_finished', status: 'completed', usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0 }, trace_id: 't1' });
      // What the turn's memory work found, waiting: ask before remembering is on.
      engine.propose(proposal(1, { content: 'The user is vegetarian.' }), proposal(2, { content: 'The user has a cat.' }));
      return { done: Promise.resolve() };
    };
    const store = new ChatStore(engine, undefined, { learnedPollMs: 1 });
    const { container, root } = mount(<Chat store={store} />);
    await act(async () => store.send('I am vegetarian and I have a cat'));
    await flush();
    const button = (label: string) => container.querySelector(`button[aria-label="${label}"]`) as HTMLButtonElement | null;
    expect(byTestId(container, 'memory-proposal').map((li) => li.dataset.proposal)).toEqual(['mp-1', 'mp-2']);
    expect(engine.memories()).toEqual([]);

    await act(async () => button('Keep: The user is vegetarian.')?.click());
    await flush();
    expect(engine.sent('memory_keep_proposal')).toEqual([{ id: 'mp-1' }]);
    const learned = byTestId(container, 'memory-learned');
    expect(learned.map((li) => li.querySelector('.learned-text')?.textContent)).toEqual(['The user is vegetarian.']);
    expect(learned[0]?.querySelector('[data-testid="memory-learned-undo"]')).not.toBeNull();
    expect(byTestId(container, 'memory-proposal').map((li) => li.dataset.proposal)).toEqual(['mp-2']);
    expect(byTestId(container, 'memory-proposal-done')[0]?.textContent).toBe('Kept: it is in memory now.');

    await act(async () => button('Discard: The user has a cat.')?.click());
    await flush();
    expect(engine.sent('memory_discard_proposal')).toEqual([{ id: 'mp-2' }]);
    expect(byTestId(container, 'memory-proposal')).toEqual([]);
    expect(byTestId(container, 'memory-proposal-done')[0]?.textContent).toBe('Discarded: it will not be remembered.');
    expect(container.textContent).not.toContain('The user has a cat.');
    // The button pressed is gone: the keyboard stays on the line.
    expect(document.activeElement?.className).toBe('learned-line');
    expect(engine.memories().map((m) => m.content)).toEqual(['The user is vegetarian.']);
    expect(engine.proposals()).toEqual([]);
    act(() => root.unmount());
  });
});
