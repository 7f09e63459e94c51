// The "ask before remembering" store against an in-memory engine: it reads the setting and
// what waits; the switch shows the value being saved, then the engine's answer, and goes back
// when saving fails (never pretending it saved); Keep and Discard take a proposal out of the
// list (Keep writes it), a second press while one runs is ignored, and a proposal decided
// elsewhere is said and leaves the list.

import { describe, expect, it } from 'vitest';
import type { MemorySettings } from '../generated/engine';
import { TransportError } from '../transport';
import { AskFirstStore, asking } from './askFirst';
import { memoryEngine, proposal } from './testFakes';

describe('AskFirstStore', () => {
  it('reads the setting and the waiting proposals, and saves the switch', async () => {
    const engine = memoryEngine(0);
    engine.propose(proposal(2), proposal(1));
    const store = new AskFirstStore(engine);
    await store.load();
    expect(asking(store.getState())).toBe(false);
    expect(store.getState().proposals?.map((p) => p.id)).toEqual(['mp-2', 'mp-1']);

    const saving = store.setAsking(true);
    expect(store.getState()).toMatchObject({ saving: true, saved: false });
    expect(asking(store.getState())).toBe(true);
    await saving;
    expect(engine.sent('update_memory_settings')).toEqual([{ ask_before_remembering: true }]);
    expect(store.getState()).toMatchObject({ saving: null, saved: true, saveError: null, settings: { ask_before_remembering: true } });
    expect(engine.asking()).toBe(true);
  });

  it('goes back to the setting in force when saving fails, and says why', async () => {
    const engine = memoryEngine(0);
    let refuse: (e: Error) => void = () => {};
    engine.handlers.update_memory_settings = () =>
      new Promise<MemorySettings>((_resolve, reject) => {
        refuse = reject;
      });
    const store = new AskFirstStore(engine);
    await store.load();
    const saving = store.setAsking(true);
    await store.setAsking(false); // ignored while the first save runs
    expect(asking(store.getState())).toBe(true);
    refuse(new TransportError('internal', 'config.toml is read-only'));
    await saving;
    expect(engine.sent('update_memory_settings')).toEqual([{ ask_before_remembering: true }]);
    expect(store.getState()).toMatchObject({ saving: null, saved: false, saveError: 'config.toml is read-only' });
    expect(asking(store.getState())).toBe(false);
  });

  it('keeps and discards proposals, once each; one decided elsewhere leaves the list with a word', async () => {
    const engine = memoryEngine(0);
    const [a, b, c] = [proposal(1, { content: 'Likes tea.' }), proposal(2), proposal(3)];
    engine.propose(a, b, c);
    const store = new AskFirstStore(engine);
    await store.load();

    const keeping = store.keep(a);
    expect(store.getState().pending).toEqual(['mp-1']);
    expect(await store.keep(a)).toBe(false); // a second press while it runs
    expect(await keeping).toBe(true);
    expect(engine.sent('memory_keep_proposal')).toEqual([{ id: 'mp-1' }]);
    expect(engine.memories().map((m) => m.content)).toEqual(['Likes tea.']);
    expect(store.getState()).toMatchObject({ pending: [], done: 'kept', decideError: null });
    expect(store.getState().proposals?.map((p) => p.id)).toEqual(['mp-2', 'mp-3']);

    expect(await store.discard(b)).toBe(true);
    expect(engine.sent('memory_discard_proposal')).toEqual([{ id: 'mp-2' }]);
    expect(store.getState()).toMatchObject({ done: 'discarded' });
    expect(store.getState().proposals?.map((p) => p.id)).toEqual(['mp-3']);

    // Discarded from the chat meanwhile: Keep here is refused and the list read again.
    await engine.call('memory_discard_proposal', { id: 'mp-3' });
    expect(await store.keep(c)).toBe(false);
    expect(store.getState()).toMatchObject({ done: null, decideError: { decision: 'kept', code: 'not_found' }, proposals: [] });
    expect(engine.memories()).toHaveLength(1);
  });
});
