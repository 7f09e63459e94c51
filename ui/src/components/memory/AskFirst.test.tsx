// @vitest-environment jsdom
// "Ask before remembering" on the memory page, in jsdom against an in-memory engine: the
// switch shows the setting when the page opens, saves when switched and says so; a refused
// save is said (an alert) and the switch goes back. "Waiting for your yes" lists what waits
// (and is absent when nothing does); Keep writes it (the memory list shows it), Discard
// drops it, and one decided elsewhere is said.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryEngine, proposal } from '../../memory/testFakes';
import { TransportError } from '../../transport';
import { byTestId, cleanup, flush, mount } from '../settings/testing';
import { MemoryView } from './MemoryView';

afterEach(cleanup);

const all = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const click = async (el: Element | null | undefined) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};
const rows = (root: ParentNode) => all(root, 'memory-row').map((r) => r.querySelector('.memory-content')?.textContent);

describe('Ask before remembering on the memory page', () => {
  it('shows the setting, saves it when switched, and says what was saved', async () => {
    const engine = memoryEngine(1);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    const toggle = byTestId<HTMLInputElement>(container, 'ask-first-toggle');
    expect(toggle?.checked).toBe(false);
    expect(toggle?.closest('label')?.textContent).toBe('Ask before remembering');
    expect(document.getElementById(toggle?.getAttribute('aria-describedby') ?? '')?.textContent).toBe(
      'What the assistant learns from a conversation waits for your Keep or Discard under the answer; nothing is remembered until you keep it.',
    );
    expect(byTestId(container, 'memory-waiting')).toBeNull();

    await click(toggle);
    expect(engine.sent('update_memory_settings')).toEqual([{ ask_before_remembering: true }]);
    expect(byTestId<HTMLInputElement>(container, 'ask-first-toggle')?.checked).toBe(true);
    expect(byTestId(container, 'ask-first-status')?.textContent).toBe('Saved: the assistant asks before remembering.');
    expect(engine.asking()).toBe(true);
    await click(byTestId(container, 'ask-first-toggle'));
    expect(engine.sent('update_memory_settings')).toEqual([{ ask_before_remembering: true }, { ask_before_remembering: false }]);
    expect(byTestId(container, 'ask-first-status')?.textContent).toBe('Saved: what the assistant learns is remembered at once.');
    act(() => root.unmount());
  });

  it('says when saving failed and shows the setting still in force', async () => {
    const engine = memoryEngine(1);
    engine.handlers.update_memory_settings = () => {
      throw new TransportError('internal', 'config.toml is read-only');
    };
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await click(byTestId(container, 'ask-first-toggle'));
    const alert = byTestId(container, 'ask-first-error');
    expect(alert?.getAttribute('role')).toBe('alert');
    expect(alert?.textContent).toBe('Not saved: config.toml is read-only');
    expect(byTestId<HTMLInputElement>(container, 'ask-first-toggle')?.checked).toBe(false);
    expect(byTestId(container, 'ask-first-status')?.textContent).toBe('');
    act(() => root.unmount());
  });

  it('lists what waits for a yes; Keep puts it in the list of memories, Discard drops it', async () => {
    const engine = memoryEngine(1);
    engine.propose(proposal(2, { content: 'Has a cat.' }), proposal(1, { content: 'Likes tea.' }));
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    expect(byTestId(container, 'memory-waiting')?.querySelector('h3')?.textContent).toBe('Waiting for your yes (2)');
    expect(all(container, 'memory-waiting-item').map((li) => li.querySelector('.memory-waiting-content')?.textContent)).toEqual([
      'Has a cat.',
      'Likes tea.',
    ]);
    const button = (label: string) => container.querySelector(`[data-testid="memory-waiting"] button[aria-label="${label}"]`);
    expect(rows(container)).toEqual(['Memory number 0']);

    await click(button('Keep: Likes tea.'));
    expect(engine.sent('memory_keep_proposal')).toEqual([{ id: 'mp-1' }]);
    expect(rows(container)).toEqual(['Likes tea.', 'Memory number 0']);
    expect(byTestId(container, 'memory-waiting')?.querySelector('h3')?.textContent).toBe('Waiting for your yes (1)');
    expect(byTestId(container, 'ask-first-status')?.textContent).toBe('Kept: it is in memory now.');

    await click(button('Discard: Has a cat.'));
    expect(engine.sent('memory_discard_proposal')).toEqual([{ id: 'mp-2' }]);
    expect(byTestId(container, 'memory-waiting')).toBeNull();
    expect(byTestId(container, 'ask-first-status')?.textContent).toBe('Discarded: it will not be remembered.');
    expect(rows(container)).toEqual(['Likes tea.', 'Memory number 0']);
    expect(engine.memories().map((m) => m.content)).toEqual(['Likes tea.', 'Memory number 0']);
    act(() => root.unmount());
  });

  it('says a proposal was decided elsewhere, and drops it from the list', async () => {
    const engine = memoryEngine(0);
    engine.propose(proposal(1, { content: 'Likes tea.' }));
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await engine.call('memory_keep_proposal', { id: 'mp-1' });
    await click(container.querySelector('[data-testid="memory-waiting-discard"]'));
    expect(byTestId(container, 'memory-waiting-error')?.textContent).toBe('Already kept or discarded elsewhere.');
    expect(byTestId(container, 'memory-waiting-error')?.getAttribute('role')).toBe('alert');
    expect(byTestId(container, 'memory-waiting')).toBeNull();
    act(() => root.unmount());
  });
});
