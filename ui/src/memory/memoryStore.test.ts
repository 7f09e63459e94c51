// The memory store against an in-memory engine: paging on the server (offset, append, stop at
// the total), filters starting paging over, the detail and its actions, deletion only after
// confirmation (and delete all only with the exact phrase), and the conflicts queue.

import { describe, expect, it } from 'vitest';
import { TransportError } from '../transport';
import { DELETE_ALL_PHRASE, MemoryStore, PAGE_SIZE, listRequest, DEFAULT_FILTERS } from './memoryStore';
import { ConflictBadge } from './conflictBadge';
import { conflict, memoryEngine } from './testFakes';

describe('MemoryStore paging', () => {
  it('loads the first page, asks for the second at offset 100 and appends it, then stops at the total', async () => {
    const engine = memoryEngine(250);
    const store = new MemoryStore(engine);
    await store.reload();
    expect(store.getState().items).toHaveLength(100);
    expect(store.getState().total).toBe(250);
    await store.loadMore();
    await store.loadMore();
    const lists = engine.sent('memory_list');
    expect(lists.map((r) => (r as { offset: number }).offset)).toEqual([0, 100, 200]);
    expect(lists.every((r) => (r as { limit: number }).limit === PAGE_SIZE)).toBe(true);
    const ids = store.getState().items.map((m) => m.id);
    expect(ids).toHaveLength(250);
    expect(ids[100]).toBe('m-0100');
    expect(ids[249]).toBe('m-0249');
    expect(store.hasMore()).toBe(false);
    await store.loadMore();
    expect(engine.sent('memory_list')).toHaveLength(3);
  });

  it('asks for one page at a time', async () => {
    const engine = memoryEngine(250);
    const store = new MemoryStore(engine);
    await store.reload();
    await Promise.all([store.loadMore(), store.loadMore()]);
    expect(engine.sent('memory_list')).toHaveLength(2);
  });

  it('starts paging over when a filter changes, and drops a page for the old filters', async () => {
    const engine = memoryEngine(250);
    const store = new MemoryStore(engine);
    await store.reload();
    await store.loadMore();
    store.toggleSelected('m-0001');
    const stale = store.loadMore();
    await store.setFilters({ text: 'number 1', status: 'active', sort: 'importance', inConflict: 'no' });
    await stale;
    const last = engine.sent('memory_list').at(-1);
    expect(last).toEqual({ status: 'active', text: 'number 1', in_conflict: false, sort: 'importance', offset: 0, limit: 100 });
    const { items, total, selected } = store.getState();
    expect(total).toBe(111);
    expect(items).toHaveLength(100);
    expect(items.every((m) => m.content.includes('number 1'))).toBe(true);
    expect(selected).toEqual([]);
  });

  it('sends only the filters that are set', () => {
    expect(listRequest(DEFAULT_FILTERS, 0)).toEqual({ sort: 'created', offset: 0, limit: 100 });
    expect(listRequest({ ...DEFAULT_FILTERS, tier: 'episodic', inConflict: 'yes', text: '  ' }, 200)).toEqual({
      tier: 'episodic', in_conflict: true, sort: 'created', offset: 200, limit: 100,
    });
    // "Expiring soon" is active memories whose expiry falls within the week.
    expect(listRequest({ ...DEFAULT_FILTERS, status: 'expiring' }, 0)).toEqual({
      status: 'active', expiring_within_days: 7, sort: 'created', offset: 0, limit: 100,
    });
  });

  it('shows a load failure as text', async () => {
    const engine = memoryEngine(3);
    engine.handlers.memory_list = () => Promise.reject(new TransportError('store', 'database is locked', 500));
    const store = new MemoryStore(engine);
    await store.reload();
    expect(store.getState().loadError).toBe('database is locked');
    expect(store.getState().loading).toBe(false);
  });
});

describe('MemoryStore detail and actions', () => {
  it('opens a memory, edits, pins, forgets, restores and undoes it, patching the row', async () => {
    const engine = memoryEngine(5);
    const store = new MemoryStore(engine);
    await store.reload();
    await store.open('m-0002');
    expect(store.getState().detail?.content).toBe('Memory number 2');
    expect(store.getState().detail?.history.map((h) => h.action)).toEqual(['created']);

    store.startEdit();
    store.editText(' I drink tea, not coffee ');
    await store.saveEdit();
    expect(engine.sent('memory_edit')).toEqual([{ id: 'm-0002', content: 'I drink tea, not coffee' }]);
    expect(store.getState().editing).toBeNull();
    expect(store.getState().items[2]?.content).toBe('I drink tea, not coffee');

    await store.setPinned(true);
    expect(engine.sent('memory_pin')).toEqual([{ id: 'm-0002', pinned: true }]);
    expect(store.getState().detail?.pinned).toBe(true);

    await store.forget();
    expect(store.getState().items[2]?.status).toBe('deleted');
    await store.restore();
    expect(store.getState().detail?.status).toBe('active');
    await store.undo();
    expect(engine.sent('memory_undo')).toEqual([{ id: 'm-0002' }]);
    expect(store.getState().detail?.history.map((h) => h.action)).toEqual(['created', 'edited', 'pinned', 'deleted', 'restored', 'undo']);
  });

  it('sets the expiry to a date and clears it, patching the row and the detail', async () => {
    const engine = memoryEngine(3);
    const store = new MemoryStore(engine);
    await store.reload();
    await store.open('m-0001');
    await store.setExpiry('2027-01-31');
    expect(engine.sent('memory_set_expiry')).toEqual([{ id: 'm-0001', valid_until: '2027-01-31' }]);
    expect(store.getState().detail?.valid_until).toBe('2027-01-31');
    expect(store.getState().items[1]?.valid_until).toBe('2027-01-31');
    await store.setExpiry(null);
    expect(engine.sent('memory_set_expiry').at(-1)).toEqual({ id: 'm-0001' });
    expect(store.getState().detail?.valid_until).toBeNull();
    expect(store.getState().items[1]?.valid_until).toBeNull();
  });

  it('shows the refusal of an expiry', async () => {
    const engine = memoryEngine(2);
    engine.handlers.memory_set_expiry = () => Promise.reject(new TransportError('invalid_input', 'valid_until: not a date', 400));
    const store = new MemoryStore(engine);
    await store.open('m-0001');
    await store.setExpiry('soon');
    expect(store.getState().actionError).toBe('valid_until: not a date');
    expect(store.getState().detail?.valid_until).toBeNull();
  });

  it('keeps the edit open and shows the refusal', async () => {
    const engine = memoryEngine(2);
    engine.handlers.memory_edit = () => Promise.reject(new TransportError('invalid_input', 'content: it is empty', 400));
    const store = new MemoryStore(engine);
    await store.open('m-0001');
    store.startEdit();
    store.editText('');
    await store.saveEdit();
    expect(store.getState().actionError).toBe('content: it is empty');
    expect(store.getState().editing).toBe('');
  });

  it('adds a memory and opens what the engine kept', async () => {
    const engine = memoryEngine(2);
    const store = new MemoryStore(engine);
    await store.load();
    store.editDraft({ content: ' I am vegetarian ', slot: 'diet', pinned: true });
    await store.add();
    expect(engine.sent('memory_add')).toEqual([{ content: 'I am vegetarian', slot: 'diet', pinned: true }]);
    expect(store.getState().detail?.content).toBe('I am vegetarian');
    expect(store.getState().items[0]?.content).toBe('I am vegetarian');
    expect(store.getState().draft).toEqual({ content: '', slot: '', pinned: false });
  });
});

describe('MemoryStore deletion', () => {
  it('deletes the selected memories only after confirmation', async () => {
    const engine = memoryEngine(5);
    const store = new MemoryStore(engine);
    await store.reload();
    store.toggleSelected('m-0001');
    store.toggleSelected('m-0003');
    store.requestDelete();
    expect(store.getState().pending).toEqual({ kind: 'ids', ids: ['m-0001', 'm-0003'] });
    expect(engine.sent('memory_delete')).toEqual([]);
    store.cancelDelete();
    expect(engine.sent('memory_delete')).toEqual([]);

    store.requestDelete();
    await store.confirmDelete();
    expect(engine.sent('memory_delete')).toEqual([{ ids: ['m-0001', 'm-0003'] }]);
    expect(store.getState().deleted).toBe(2);
    expect(store.getState().selected).toEqual([]);
    expect(store.getState().items.map((m) => m.id)).toEqual(['m-0000', 'm-0002', 'm-0004']);
    expect(store.getState().total).toBe(3);
  });

  it('deletes the open memory when nothing is ticked, and closes it', async () => {
    const engine = memoryEngine(3);
    const store = new MemoryStore(engine);
    await store.reload();
    await store.open('m-0002');
    store.requestDelete();
    await store.confirmDelete();
    expect(engine.sent('memory_delete')).toEqual([{ ids: ['m-0002'] }]);
    expect(store.getState().openId).toBeNull();
  });

  it('deletes everything only once the phrase is typed exactly', async () => {
    const engine = memoryEngine(3);
    const store = new MemoryStore(engine);
    await store.reload();
    store.requestDeleteAll();
    store.typeConfirmation('delete all');
    expect(store.canConfirm()).toBe(false);
    await store.confirmDelete();
    expect(engine.sent('memory_delete_all')).toEqual([]);
    store.typeConfirmation(DELETE_ALL_PHRASE);
    await store.confirmDelete();
    expect(engine.sent('memory_delete_all')).toEqual([{ confirm: 'delete all memories' }]);
    expect(store.getState().items).toEqual([]);
    expect(store.getState().total).toBe(0);
    expect(store.getState().pending).toBeNull();
  });

  it('keeps the confirmation and shows the refusal when a deletion fails', async () => {
    const engine = memoryEngine(3);
    engine.handlers.memory_delete = () => Promise.reject(new TransportError('busy', 'the store is busy', 503));
    const store = new MemoryStore(engine);
    await store.reload();
    store.requestDelete(['m-0000']);
    await store.confirmDelete();
    expect(store.getState().actionError).toBe('the store is busy');
    expect(store.getState().pending).toEqual({ kind: 'ids', ids: ['m-0000'] });
  });
});

describe('MemoryStore conflicts', () => {
  it('lists open conflicts with both memories and resolves keep A, keep both', async () => {
    const engine = memoryEngine(4, [conflict('c1', 'm-0000', 'm-0001'), conflict('c2', 'm-0002', 'm-0003')]);
    const store = new MemoryStore(engine);
    await store.load();
    expect(store.getState().conflicts?.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(store.getState().conflictMemories['m-0001']?.content).toBe('Memory number 1');

    await store.resolve('c1', 'm-0000');
    expect(engine.sent('memory_resolve')).toEqual([{ conflict_id: 'c1', keep: 'm-0000' }]);
    expect(store.getState().conflicts?.map((c) => c.id)).toEqual(['c2']);
    expect(store.getState().items.find((m) => m.id === 'm-0001')?.status).toBe('superseded');

    await store.resolve('c2', null);
    expect(engine.sent('memory_resolve').at(-1)).toEqual({ conflict_id: 'c2', keep: null });
    expect(store.getState().conflicts).toEqual([]);
  });

  it('tells the Memory button\'s count the moment a conflict is settled, before the queue is read again', async () => {
    const engine = memoryEngine(4, [conflict('c1', 'm-0000', 'm-0001'), conflict('c2', 'm-0002', 'm-0003')]);
    const badge = new ConflictBadge(engine);
    const store = new MemoryStore(engine, badge);
    await store.load();
    expect(badge.getState().open).toBe(2);
    // The queue is read again after the resolve; hold that answer back.
    engine.handlers.memory_conflicts = () => new Promise(() => {});
    const counts: number[] = [];
    badge.subscribe(() => counts.push(badge.getState().open));
    void store.resolve('c1', 'm-0000');
    await new Promise((r) => setTimeout(r, 0));
    expect(counts).toEqual([1]);
  });
});

describe('MemoryStore search by meaning', () => {
  it('asks memory_search and keeps its ranking; a blank query ends the search', async () => {
    const engine = memoryEngine(3);
    engine.handlers.memory_search = ({ query }) =>
      engine.memories().slice(0, 2).reverse().map((memory, i) => ({ memory, score: 1 / (i + 1), bm25_rank: i + 1, vector_rank: null }))
        .filter(() => query === 'tea');
    const store = new MemoryStore(engine);
    await store.searchByMeaning('  tea ');
    expect(engine.sent('memory_search')).toEqual([{ query: 'tea', k: 50 }]);
    expect(store.getState().search?.results?.map((r) => r.memory.id)).toEqual(['m-0001', 'm-0000']);
    await store.searchByMeaning(' ');
    expect(store.getState().search).toBeNull();
    expect(engine.sent('memory_search')).toHaveLength(1);
  });

  it('shows a failed search as text', async () => {
    const engine = memoryEngine(1);
    engine.handlers.memory_search = () => Promise.reject(new TransportError('memory', 'the embedder is not configured', 500));
    const store = new MemoryStore(engine);
    await store.searchByMeaning('tea');
    expect(store.getState().search).toEqual({ query: 'tea', results: [], error: 'the embedder is not configured' });
  });
});
