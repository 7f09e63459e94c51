// The bootstrap-files store without a page: the first file is open, drafts are kept per file,
// a save keeps text typed while it ran, a restore drops the draft, and a refusal is kept for
// the file it concerns.

import { describe, expect, it } from 'vitest';
import { BootstrapStore, currentFile, isDirty, neighbour, shownStatus, textOf } from './bootstrapStore';
import { BOOTSTRAP_DEFAULTS, bootstrapTransport } from './testFakes';

async function loaded(custom: Record<string, string> = {}) {
  const transport = bootstrapTransport(custom);
  const store = new BootstrapStore(transport);
  await store.load();
  return { transport, store };
}

describe('BootstrapStore', () => {
  it('opens the first file and keeps drafts per file', async () => {
    const { store } = await loaded();
    const s = () => store.getState();
    expect(currentFile(s())?.name).toBe('AGENTS.md');
    store.edit('AGENTS.md', 'Small steps.');
    store.select('SOUL.md');
    expect(currentFile(s())?.name).toBe('SOUL.md');
    const agents = s().files?.[0];
    if (!agents) throw new Error('no AGENTS.md');
    expect(textOf(s(), agents)).toBe('Small steps.');
    expect(isDirty(s(), agents)).toBe(true);
    // Typing the engine's text back is not a change.
    store.edit('AGENTS.md', BOOTSTRAP_DEFAULTS['AGENTS.md'] ?? '');
    expect(isDirty(s(), agents)).toBe(false);
    store.discard('AGENTS.md');
    expect(s().drafts).toEqual({});
  });

  it('saves the text as shown, and keeps a draft typed while the save ran', async () => {
    const { store, transport } = await loaded();
    store.select('USER.md');
    store.edit('USER.md', 'I am Lin.');
    const saving = store.save('USER.md');
    expect(store.getState().busy).toBe(true);
    store.edit('USER.md', 'I am Lin. More.');
    await saving;
    expect(transport.saved).toEqual([['USER.md', 'I am Lin.']]);
    const user = currentFile(store.getState());
    expect(user).toMatchObject({ name: 'USER.md', content: 'I am Lin.', is_default: false });
    expect(store.getState().drafts).toEqual({ 'USER.md': 'I am Lin. More.' });
    expect(shownStatus(store.getState())).toEqual({ name: 'USER.md', kind: 'saved' });
    // Saved as typed, the draft goes.
    await store.save('USER.md');
    expect(store.getState().drafts).toEqual({});
    expect(currentFile(store.getState())?.content).toBe('I am Lin. More.');
  });

  it('restores the default after asking, dropping the draft; the status shows on its file only', async () => {
    const { store, transport } = await loaded({ 'USER.md': 'My name is Lin.' });
    store.select('USER.md');
    store.edit('USER.md', 'An unsaved edit.');
    store.askRestore();
    expect(store.getState().confirming).toBe(true);
    await store.restore('USER.md');
    expect(transport.saved).toEqual([['USER.md', null]]);
    expect(store.getState()).toMatchObject({ confirming: false, busy: false });
    expect(store.getState().drafts).toEqual({});
    expect(currentFile(store.getState())?.is_default).toBe(true);
    expect(shownStatus(store.getState())?.kind).toBe('restored');
    store.select('TOOLS.md');
    expect(shownStatus(store.getState())).toBeNull();
  });

  it('keeps the text and the engine’s refusal', async () => {
    const { store } = await loaded();
    const huge = 'x'.repeat(2000);
    store.edit('AGENTS.md', huge);
    await store.save('AGENTS.md');
    expect(shownStatus(store.getState())).toEqual({ name: 'AGENTS.md', kind: 'saveFailed', message: 'AGENTS.md is 2000 bytes; the limit is 262144' });
    expect(store.getState().drafts['AGENTS.md']).toBe(huge);
    // Typing again keeps a failure shown (only "saved" goes stale).
    store.edit('AGENTS.md', 'short');
    expect(shownStatus(store.getState())?.kind).toBe('saveFailed');
  });

  it('moves between tabs with the arrow keys, wrapping', async () => {
    const { store } = await loaded();
    const files = store.getState().files ?? [];
    expect(neighbour(files, 0, 'ArrowLeft')?.name).toBe('TOOLS.md');
    expect(neighbour(files, 3, 'ArrowRight')?.name).toBe('AGENTS.md');
    expect(neighbour(files, 1, 'ArrowRight')?.name).toBe('USER.md');
    expect(neighbour(files, 1, 'Enter')).toBeUndefined();
  });
});
