// The memory store against an in-memory engine: paging on the server (offset, append, stop at
// the total), filters starting paging over, the detail and its actions, deletion only after
// confirmation (and delete all only with the exact phrase), the conflicts queue (edit into one
// included), the fading curve and the store's counts read again after changes, undoing one
// change from the history, and export and import.

import { describe, expect, it } from 'vitest';
import { TransportError } from '../transport';
import { DELETE_ALL_PHRASE, MemoryStore, PAGE_SIZE, listRequest, DEFAULT_FILTERS, exportFileName } from './memoryStore';
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
    // Whose memories: one project's (by name), or the global ones only.
    expect(listRequest({ ...DEFAULT_FILTERS, scope: 'project:Kitchen' }, 0)).toEqual({ project: 'Kitchen', sort: 'created', offset: 0, limit: 100 });
    expect(listRequest({ ...DEFAULT_FILTERS, scope: 'global' }, 0)).toEqual({ global: true, sort: 'created', offset: 0, limit: 100 });
    // "Expiring soon" is active memories whose expiry falls within the week.
    expect(listRequest({ ...DEFAULT_FILTERS, status: 'expiring' }, 0)).toEqual({
      status: 'active', expiring_within_days: 7, sort: 'created', offset: 0, limit: 100,
    });
  });

  it('sorts by importance after fading, which the engine ranks', async () => {
    const engine = memoryEngine(3);
    const store = new MemoryStore(engine);
    await store.reload();
    await store.setFilters({ sort: 'effective' });
    expect(engine.sent('memory_list').at(-1)).toEqual({ sort: 'effective', offset: 0, limit: 100 });
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
      engine.memories().slice(0, 2).reverse().map((memory, i) => ({ memory, score: 1 / (i + 1), bm25_rank: i + 1, vector_rank: null, dated_rank: null }))
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

describe('MemoryStore fading and counts', () => {
  it('reads the open memory\'s fading curve with its detail, and again after an action', async () => {
    const engine = memoryEngine(3);
    const store = new MemoryStore(engine);
    await store.open('m-0001');
    expect(store.getState().fading?.memory_id).toBe('m-0001');
    expect(store.getState().fading?.points).toHaveLength(10);
    await store.setPinned(true);
    expect(engine.sent('memory_fading')).toEqual([{ id: 'm-0001' }, { id: 'm-0001' }]);
    expect(store.getState().fading?.pinned).toBe(true);
    store.close();
    expect(store.getState().fading).toBeNull();
  });

  it('shows a fading curve that cannot be read as text, keeping the detail', async () => {
    const engine = memoryEngine(2);
    engine.handlers.memory_fading = () => Promise.reject(new TransportError('store', 'database is locked', 500));
    const store = new MemoryStore(engine);
    await store.open('m-0000');
    expect(store.getState()).toMatchObject({ fading: null, fadingError: 'database is locked', detailError: null });
    expect(store.getState().detail?.id).toBe('m-0000');
  });

  it('reads the counts on load and again after every change to the memories', async () => {
    const engine = memoryEngine(4, [conflict('c1', 'm-0000', 'm-0001')]);
    const store = new MemoryStore(engine);
    await store.load();
    expect(store.getState().stats).toMatchObject({ open_conflicts: 1, counts: [{ tier: 'semantic', status: 'active', count: 4 }] });
    await store.open('m-0002');
    expect(engine.sent('memory_stats')).toHaveLength(1);
    await store.forget();
    expect(store.getState().stats?.counts).toEqual([
      { tier: 'semantic', status: 'active', count: 3 },
      { tier: 'semantic', status: 'deleted', count: 1 },
    ]);
    await store.resolve('c1', null);
    expect(store.getState().stats?.open_conflicts).toBe(0);
    store.editDraft({ content: 'I keep bees' });
    await store.add();
    store.requestDelete(['m-0003']);
    await store.confirmDelete();
    expect(engine.sent('memory_stats')).toHaveLength(5);
    expect(store.getState().stats?.counts.find((c) => c.status === 'active')?.count).toBe(3);
  });

  it('shows counts that cannot be read as text', async () => {
    const engine = memoryEngine(1);
    engine.handlers.memory_stats = () => Promise.reject(new TransportError('store', 'disk I/O error', 500));
    const store = new MemoryStore(engine);
    await store.load();
    expect(store.getState()).toMatchObject({ stats: undefined, statsError: 'disk I/O error' });
  });
});

describe('MemoryStore undo of one change', () => {
  it('undoes the last change without naming it, or the named change', async () => {
    const engine = memoryEngine(2);
    const store = new MemoryStore(engine);
    await store.open('m-0001');
    await store.setPinned(true);
    await store.forget();
    const pinned = store.getState().detail?.history.find((h) => h.action === 'pinned')?.change_id;
    expect(pinned).toBeDefined();
    await store.undo(pinned);
    await store.undo();
    expect(engine.sent('memory_undo')).toEqual([{ id: 'm-0001', change: pinned }, { id: 'm-0001' }]);
    expect(store.getState().detail?.history.map((h) => h.action)).toEqual(['created', 'pinned', 'deleted', 'undo', 'undo']);
  });

  it('shows the refusal of an undo', async () => {
    const engine = memoryEngine(2);
    const store = new MemoryStore(engine);
    await store.open('m-0001');
    await store.undo('c-99');
    expect(store.getState().actionError).toBe('no change c-99 on m-0001');
  });
});

describe('MemoryStore edit into one', () => {
  it('opens with both texts kept by A, sends keep and merged, and drops the badge at once', async () => {
    const engine = memoryEngine(4, [conflict('c1', 'm-0000', 'm-0001'), conflict('c2', 'm-0002', 'm-0003')]);
    const badge = new ConflictBadge(engine);
    const store = new MemoryStore(engine, badge);
    await store.load();
    expect(badge.getState().open).toBe(2);
    store.startMerge('c1');
    expect(store.getState().merge).toEqual({ conflictId: 'c1', keep: 'm-0000', text: 'Memory number 0\nMemory number 1' });
    store.editMerge({ keep: 'm-0001', text: ' Memory number 1, and also 0 ' });
    await store.submitMerge();
    expect(engine.sent('memory_resolve')).toEqual([{ conflict_id: 'c1', keep: 'm-0001', merged: 'Memory number 1, and also 0' }]);
    expect(store.getState().merge).toBeNull();
    expect(badge.getState().open).toBe(1);
    expect(store.getState().conflicts?.map((c) => c.id)).toEqual(['c2']);
    const rows = store.getState().items;
    expect(rows.find((m) => m.id === 'm-0001')?.content).toBe('Memory number 1, and also 0');
    expect(rows.find((m) => m.id === 'm-0000')?.status).toBe('superseded');
  });

  it('sends nothing for a blank text, and keeps the form with the engine\'s refusal', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001')]);
    const store = new MemoryStore(engine);
    await store.load();
    store.startMerge('c1');
    store.editMerge({ text: '   ' });
    await store.submitMerge();
    expect(engine.sent('memory_resolve')).toEqual([]);
    engine.handlers.memory_resolve = () => Promise.reject(new TransportError('not_found', 'no memory m-0000', 404));
    store.editMerge({ text: 'One memory' });
    await store.submitMerge();
    expect(store.getState().actionError).toBe('no memory m-0000');
    expect(store.getState().merge).toEqual({ conflictId: 'c1', keep: 'm-0000', text: 'One memory' });
    expect(store.getState().conflicts?.map((c) => c.id)).toEqual(['c1']);
    store.cancelMerge();
    expect(store.getState().merge).toBeNull();
  });

  it('keeps resolve without merged as it was', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001')]);
    const store = new MemoryStore(engine);
    await store.load();
    expect(await store.resolve('c1', 'm-0000')).toBe(true);
    expect(engine.sent('memory_resolve')).toEqual([{ conflict_id: 'c1', keep: 'm-0000' }]);
  });
});

describe('MemoryStore export and import', () => {
  it('names the download echo-memories-<date>.jsonl after the engine\'s date', () => {
    expect(exportFileName('echo-desk-memories-2026-11-04.jsonl')).toBe('echo-memories-2026-11-04.jsonl');
    expect(exportFileName('memories.jsonl', new Date('2027-02-03T10:00:00Z'))).toBe('echo-memories-2027-02-03.jsonl');
  });

  it('downloads the engine\'s export text, then imports it back into the same store', async () => {
    const engine = memoryEngine(3);
    const files: { name: string; blob: Blob }[] = [];
    const store = new MemoryStore(engine, undefined, { download: (name, blob) => files.push({ name, blob }) });
    await store.load();
    await store.exportMemories();
    expect(files.map((f) => f.name)).toEqual(['echo-memories-2026-11-04.jsonl']);
    expect(store.getState().exported).toEqual({ fileName: 'echo-memories-2026-11-04.jsonl', count: 3 });
    const text = await files[0]!.blob.text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(4);

    await store.importMemories(text);
    expect(engine.sent('memory_import')).toEqual([{ text }]);
    expect(store.getState()).toMatchObject({ imported: { created: 0, duplicates: 3, skipped_inactive: 0 }, exported: null, transferError: null, transferring: false });
    // The list and the counts are read again.
    expect(engine.sent('memory_list')).toHaveLength(2);
    expect(engine.sent('memory_stats')).toHaveLength(2);
  });

  it('shows the engine\'s error naming the bad line, and nothing is lost', async () => {
    const engine = memoryEngine(3);
    const store = new MemoryStore(engine, undefined, { download: () => {} });
    await store.load();
    const before = engine.memories();
    await store.importMemories('{"format":"echo-desk-memory","version":1}\n{"content": "ok"}\nnot json\n');
    expect(store.getState()).toMatchObject({ imported: null, transferError: 'invalid text: nothing imported; line 3: expected value' });
    expect(engine.memories()).toEqual(before);
    expect(store.getState().items.map((m) => m.id)).toEqual(['m-0000', 'm-0001', 'm-0002']);
    store.dismissTransfer();
    expect(store.getState().transferError).toBeNull();
  });

  it('shows a failed export as text and downloads nothing', async () => {
    const engine = memoryEngine(1);
    engine.handlers.memory_export = () => Promise.reject(new TransportError('store', 'database is locked', 500));
    const files: string[] = [];
    const store = new MemoryStore(engine, undefined, { download: (name) => files.push(name) });
    await store.exportMemories();
    expect(files).toEqual([]);
    expect(store.getState()).toMatchObject({ exported: null, transferError: 'database is locked', transferring: false });
  });
});
