// The "Delete all my data" store without a page: nothing is sent until the phrase is typed
// exactly (surrounding spaces aside), the deletion sends the phrase once and empties the
// field, and the engine's refusal (busy while a turn runs) is kept as its text with the field.

import { describe, expect, it } from 'vitest';
import { DELETE_ALL_DATA_PHRASE, DeleteDataStore, canDelete } from './deleteDataStore';
import { deleteDataTransport } from './testFakes';

describe('DeleteDataStore', () => {
  it('sends nothing until the phrase is typed exactly', async () => {
    const engine = deleteDataTransport();
    const store = new DeleteDataStore(engine);
    await store.load();
    for (const typed of ['', 'delete all', 'Delete all my data', 'delete all my data!', 'delete all memories']) {
      store.type(typed);
      expect(canDelete(store.getState())).toBe(false);
      expect(await store.deleteAll()).toBeNull();
    }
    expect(engine.requests).toEqual([]);
    store.type(`  ${DELETE_ALL_DATA_PHRASE} `);
    expect(canDelete(store.getState())).toBe(true);
  });

  it('deletes once with the phrase, keeps what was removed and empties the field', async () => {
    const engine = deleteDataTransport({ sessions: 2, memories: 5, rows: 31, user_notes: false });
    const store = new DeleteDataStore(engine);
    store.type(' delete all my data ');
    const running = store.deleteAll();
    expect(store.getState().busy).toBe(true);
    expect(canDelete(store.getState())).toBe(false);
    // A second click while it runs sends nothing more.
    expect(await store.deleteAll()).toBeNull();
    expect(await running).toEqual({ sessions: 2, memories: 5, rows: 31, user_notes: false });
    expect(engine.sent).toEqual([{ confirm: 'delete all my data' }]);
    expect(store.getState()).toEqual({
      typed: '',
      busy: false,
      deleted: { sessions: 2, memories: 5, rows: 31, user_notes: false },
      failure: null,
    });
    store.type('d');
    expect(store.getState().deleted).toBeNull();
  });

  it('keeps the engine\'s refusal as text and the field as typed', async () => {
    const engine = deleteDataTransport();
    engine.running = true;
    const store = new DeleteDataStore(engine);
    store.type(DELETE_ALL_DATA_PHRASE);
    expect(await store.deleteAll()).toBeNull();
    expect(store.getState()).toEqual({
      typed: DELETE_ALL_DATA_PHRASE,
      busy: false,
      deleted: null,
      failure: 'a turn is running; stop it first',
    });
    engine.running = false;
    expect(await store.deleteAll()).not.toBeNull();
    expect(store.getState()).toMatchObject({ failure: null, typed: '' });
    expect(engine.sent).toHaveLength(2);
  });
});
