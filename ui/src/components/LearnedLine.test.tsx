// @vitest-environment jsdom
// "Memory updated" under an answer: each memory the turn made, with what it replaced, and
// Undo and Open acting on that memory; "Remembering…" while extraction runs; nothing at all
// when the turn taught nothing.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LearnedInTurn } from '../generated/engine';
import { memory } from '../memory/testFakes';
import { LearnedLine } from './LearnedLine';
import { cleanup, mount } from './settings/testing';

const byTestId = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

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
});
