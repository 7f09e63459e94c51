// @vitest-environment jsdom
// The memory page in jsdom against an in-memory engine: rows show and the next page is asked
// for near the end of the loaded ones; a row opens its detail; Delete asks first (saying it
// cannot be undone) and only then calls memory_delete; the selection deletes in bulk; delete
// all waits for the typed phrase; the conflicts queue settles a conflict, also by editing the
// two into one (the badge drops at once); the store's counts and a memory's fading chart show;
// an earlier change is undone from the history; export downloads and import reports; the list
// filters by project (or the global memories) and names each memory's project; "Move to…"
// moves the open memory, and Undo brings it back.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictBadge } from '../../memory/conflictBadge';
import { conflict, memoryEngine, project } from '../../memory/testFakes';
import { byTestId, cleanup, fill, flush, mount } from '../settings/testing';
import { MemoryView } from './MemoryView';

afterEach(cleanup);

const all = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const click = async (el: Element | null | undefined) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};

describe('MemoryView', () => {
  it('says in how many answers the open memory was used, each opening its trace', async () => {
    const engine = memoryEngine(3);
    engine.reads.set('m-0001', [
      { turn_id: 't2', session_id: 's1', how: 'recalled', at: '2026-11-03T10:00:00Z' },
      { turn_id: 't1', session_id: 's1', how: 'snapshot', at: '2026-11-02T10:00:00Z' },
      { turn_id: 't1', session_id: 's1', how: 'research', at: '2026-11-02T10:00:00Z' },
    ]);
    const traces: string[] = [];
    const { container, root } = mount(<MemoryView transport={engine} onOpenTrace={(t) => traces.push(t)} />);
    await flush();
    await click(all(container, 'memory-row')[1]?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-answers')?.textContent).toBe('Used in 2 answers');
    expect(all(container, 'memory-read').map((r) => r.textContent?.includes('recalled for the message'))).toEqual([true, false, false]);
    await click(all(container, 'memory-read-trace')[1]);
    expect(traces).toEqual(['t1']);
    await click(all(container, 'memory-row')[2]?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-answers')?.textContent).toBe('Used in 0 answers');
    expect(byTestId(container, 'memory-reads')).toBeNull();
    act(() => root.unmount());
  });

  it('shows rows, opens a detail and deletes it after confirmation', async () => {
    const engine = memoryEngine(250);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    const rows = all(container, 'memory-row');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(100);
    expect(rows[0]?.textContent).toContain('Memory number 0');
    expect(byTestId(container, 'memory-count')?.textContent).toBe('100 of 250 shown');

    await click(rows[1]?.querySelector('.memory-open'));
    const detail = byTestId<HTMLElement>(container, 'memory-detail');
    expect(detail?.getAttribute('data-memory-id')).toBe('m-0001');
    expect(byTestId(container, 'memory-detail-content')?.textContent).toBe('Memory number 1');
    expect(detail?.textContent).toContain('30 days');
    expect(byTestId(container, 'memory-history')?.textContent).toContain('created by you');

    await click(byTestId(container, 'memory-delete'));
    const dialog = byTestId<HTMLElement>(container, 'memory-confirm');
    expect(dialog?.textContent).toContain('cannot be undone');
    expect(dialog?.textContent).toContain('unlike Forget');
    expect(engine.sent('memory_delete')).toEqual([]);
    await click(byTestId(container, 'memory-confirm-delete'));
    expect(engine.sent('memory_delete')).toEqual([{ ids: ['m-0001'] }]);
    expect(byTestId(container, 'memory-confirm')).toBeNull();
    expect(byTestId(container, 'memory-detail')).toBeNull();
    expect(byTestId(container, 'memory-deleted')?.textContent).toContain('Deleted 1 memory for good.');
    expect(all(container, 'memory-row').map((r) => r.dataset.memoryId).slice(0, 2)).toEqual(['m-0000', 'm-0002']);
    act(() => root.unmount());
  });

  it('asks for the next page at offset 100 when scrolled near the end of the loaded rows', async () => {
    const engine = memoryEngine(250);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    expect(engine.sent('memory_list')).toHaveLength(1);
    const list = byTestId<HTMLElement>(container, 'memory-list') as HTMLElement;
    await act(async () => {
      list.scrollTop = 58 * 90;
      list.dispatchEvent(new Event('scroll'));
    });
    await flush();
    expect(engine.sent('memory_list').map((r) => (r as { offset: number }).offset)).toEqual([0, 100]);
    expect(byTestId(container, 'memory-count')?.textContent).toBe('200 of 250 shown');
    act(() => root.unmount());
  });

  it('edits, pins, forgets and restores the open memory', async () => {
    const engine = memoryEngine(3);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await click(all(container, 'memory-row')[2]?.querySelector('.memory-open'));
    await click(byTestId(container, 'memory-edit'));
    act(() => fill(byTestId<HTMLTextAreaElement>(container, 'memory-edit-input') as HTMLTextAreaElement, 'I live in Lisbon'));
    await click(byTestId(container, 'memory-edit-save'));
    expect(engine.sent('memory_edit')).toEqual([{ id: 'm-0002', content: 'I live in Lisbon' }]);
    expect(byTestId(container, 'memory-detail-content')?.textContent).toBe('I live in Lisbon');
    expect(all(container, 'memory-row')[2]?.textContent).toContain('I live in Lisbon');
    await click(byTestId(container, 'memory-pin'));
    expect(engine.sent('memory_pin')).toEqual([{ id: 'm-0002', pinned: true }]);
    expect(byTestId(container, 'memory-pin')?.textContent).toBe('Unpin');
    await click(byTestId(container, 'memory-forget'));
    expect(engine.sent('memory_forget')).toEqual([{ id: 'm-0002' }]);
    expect(all(container, 'memory-row')[2]?.textContent).toContain('forgotten');
    expect(byTestId(container, 'memory-forget')).toBeNull();
    await click(byTestId(container, 'memory-restore'));
    expect(engine.sent('memory_restore')).toEqual([{ id: 'm-0002' }]);
    expect(byTestId(container, 'memory-detail')?.textContent).toContain('active');
    act(() => root.unmount());
  });

  it('sets and clears the open memory\'s expiry', async () => {
    const engine = memoryEngine(3);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await click(all(container, 'memory-row')[1]?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-expiry-value')?.textContent).toBe('never');
    expect(byTestId<HTMLButtonElement>(container, 'memory-expiry-set')?.disabled).toBe(true);
    expect(byTestId<HTMLButtonElement>(container, 'memory-expiry-clear')?.disabled).toBe(true);

    act(() => fill(byTestId<HTMLInputElement>(container, 'memory-expiry-input') as HTMLInputElement, '2027-03-15'));
    await click(byTestId(container, 'memory-expiry-set'));
    expect(engine.sent('memory_set_expiry')).toEqual([{ id: 'm-0001', valid_until: '2027-03-15' }]);
    expect(byTestId(container, 'memory-expiry-value')?.textContent).toBe('2027-03-15');
    expect(byTestId<HTMLInputElement>(container, 'memory-expiry-input')?.value).toBe('2027-03-15');
    expect(byTestId<HTMLButtonElement>(container, 'memory-expiry-clear')?.disabled).toBe(false);

    await click(byTestId(container, 'memory-expiry-clear'));
    expect(engine.sent('memory_set_expiry')).toEqual([{ id: 'm-0001', valid_until: '2027-03-15' }, { id: 'm-0001' }]);
    expect(byTestId(container, 'memory-expiry-value')?.textContent).toBe('never');
    expect(byTestId<HTMLInputElement>(container, 'memory-expiry-input')?.value).toBe('');
    act(() => root.unmount());
  });

  it('shows an RFC 3339 expiry as its date', async () => {
    const engine = memoryEngine(2);
    engine.handlers.memory_set_expiry = ({ id }) => ({ ...engine.memories().find((m) => m.id === id)!, valid_until: '2027-05-01T00:00:00Z' });
    const show = engine.handlers.memory_show!;
    engine.handlers.memory_show = async (r) => ({ ...(await show(r)), valid_until: '2027-05-01T00:00:00Z' });
    const { container, root } = mount(<MemoryView transport={engine} />, 'zh-CN');
    await flush();
    await click(all(container, 'memory-row')[0]?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-expiry-value')?.textContent).toBe('2027-05-01');
    expect(byTestId<HTMLInputElement>(container, 'memory-expiry-input')?.value).toBe('2027-05-01');
    expect(byTestId(container, 'memory-expiry-clear')?.textContent).toBe('清除到期');
    act(() => root.unmount());
  });

  it('deletes the selected rows in bulk, and everything only with the typed phrase', async () => {
    const engine = memoryEngine(5);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    const boxes = all(container, 'memory-row').map((r) => r.querySelector('input[type="checkbox"]'));
    await click(boxes[0]);
    await click(boxes[3]);
    await click(byTestId(container, 'memory-delete-selected'));
    expect(byTestId(container, 'memory-confirm')?.textContent).toContain('Delete 2 memories');
    await click(byTestId(container, 'memory-confirm-cancel'));
    expect(engine.sent('memory_delete')).toEqual([]);
    await click(byTestId(container, 'memory-delete-selected'));
    await click(byTestId(container, 'memory-confirm-delete'));
    expect(engine.sent('memory_delete')).toEqual([{ ids: ['m-0000', 'm-0003'] }]);

    await click(byTestId(container, 'memory-delete-all'));
    const confirm = byTestId<HTMLButtonElement>(container, 'memory-confirm-delete');
    expect(confirm?.disabled).toBe(true);
    act(() => fill(byTestId<HTMLInputElement>(container, 'memory-confirm-input') as HTMLInputElement, 'delete all memories'));
    expect(byTestId<HTMLButtonElement>(container, 'memory-confirm-delete')?.disabled).toBe(false);
    await click(byTestId(container, 'memory-confirm-delete'));
    expect(engine.sent('memory_delete_all')).toEqual([{ confirm: 'delete all memories' }]);
    expect(byTestId(container, 'memory-empty')?.textContent).toBe('No memories match.');
    act(() => root.unmount());
  });

  it('reviews a conflict and keeps one side', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001')]);
    const { container, root } = mount(<MemoryView transport={engine} />, 'zh-CN');
    await flush();
    const tab = byTestId(container, 'memory-tab-conflicts');
    expect(tab?.textContent).toBe('待审冲突（1）');
    await click(tab);
    const item = byTestId<HTMLElement>(container, 'conflict');
    expect(item?.textContent).toContain('Memory number 0');
    expect(item?.textContent).toContain('Memory number 1');
    await click(byTestId(container, 'conflict-keep-b'));
    expect(engine.sent('memory_resolve')).toEqual([{ conflict_id: 'c1', keep: 'm-0001' }]);
    expect(byTestId(container, 'conflicts-empty')?.textContent).toBe('没有未解决的冲突。');
    act(() => root.unmount());
  });

  it('searches the typed text by meaning, opens a result, and goes back to the list', async () => {
    const engine = memoryEngine(5);
    engine.handlers.memory_search = () => [{ memory: engine.memories()[3]!, score: 0.5, bm25_rank: 1, vector_rank: 2, dated_rank: null }];
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    act(() => fill(container.querySelector('.memory-filters input[name="text"]') as HTMLInputElement, 'where I live'));
    await click(byTestId(container, 'memory-search'));
    expect(engine.sent('memory_search')).toEqual([{ query: 'where I live', k: 50 }]);
    const rows = all(container, 'memory-search-row');
    expect(rows.map((r) => r.dataset.memoryId)).toEqual(['m-0003']);
    expect(rows[0]?.textContent).toContain('score 0.500');
    await click(rows[0]?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-detail')?.getAttribute('data-memory-id')).toBe('m-0003');
    await click(byTestId(container, 'memory-search-end'));
    expect(byTestId(container, 'memory-search-results')).toBeNull();
    expect(byTestId(container, 'memory-list')).not.toBeNull();
    act(() => root.unmount());
  });

  it('shows the store\'s counts and the open memory\'s fading chart', async () => {
    const engine = memoryEngine(3);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    expect(byTestId(container, 'memory-stats-total')?.textContent).toBe('3 active of 3 memories');
    expect(byTestId(container, 'memory-stats-sweep')?.textContent).toBe('Will be archived at the next sweep: 0 expired, 0 faded');
    expect(byTestId(container, 'memory-stats-conflicts')?.textContent).toBe('0 open conflicts');
    const cell = container.querySelector('[data-testid="memory-stats-table"] tr[data-tier="semantic"] td[data-status="active"]');
    expect(cell?.textContent).toBe('3');

    await click(all(container, 'memory-row')[1]?.querySelector('.memory-open'));
    const chart = byTestId<SVGElement>(container, 'fading-chart');
    expect(chart).not.toBeNull();
    expect(byTestId(container, 'fading-past')?.getAttribute('points')).toMatch(/^[\d.]+,[\d.]+ /);
    expect(byTestId(container, 'fading-projected')).not.toBeNull();
    expect(byTestId(container, 'fading-threshold')).not.toBeNull();
    expect(byTestId(container, 'fading-now')).not.toBeNull();
    expect(byTestId(container, 'fading-summary')?.textContent).toBe('It is not archived by fading or expiry.');

    await click(byTestId(container, 'memory-forget'));
    expect(byTestId(container, 'memory-stats-total')?.textContent).toBe('2 active of 3 memories');
    act(() => root.unmount());
  });

  it('offers the order by importance after fading', async () => {
    const engine = memoryEngine(3);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    const sort = container.querySelector('.memory-filters select[name="sort"]') as HTMLSelectElement;
    const option = sort.querySelector('option[value="effective"]');
    expect(option?.textContent).toBe('Importance now (after fading)');
    act(() => fill(sort, 'effective'));
    await flush();
    expect(engine.sent('memory_list').at(-1)).toMatchObject({ sort: 'effective', offset: 0 });
    act(() => root.unmount());
  });

  it('undoes an earlier change from the history, and the last one with Undo', async () => {
    const engine = memoryEngine(2);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await click(all(container, 'memory-row')[0]?.querySelector('.memory-open'));
    await click(byTestId(container, 'memory-pin'));
    await click(byTestId(container, 'memory-forget'));
    const earlier = all(container, 'memory-undo-change');
    expect(earlier.map((b) => b.textContent)).toEqual(['Undo this change', 'Undo this change']);
    expect(all(container, 'memory-undo')).toHaveLength(1);
    await click(earlier[1]);
    expect(engine.sent('memory_undo')).toEqual([{ id: 'm-0000', change: 'c-1' }]);
    await click(byTestId(container, 'memory-undo'));
    expect(engine.sent('memory_undo').at(-1)).toEqual({ id: 'm-0000' });
    act(() => root.unmount());
  });

  it('edits a conflict into one: both texts to rewrite, kept by the chosen memory, and the badge drops', async () => {
    const engine = memoryEngine(2, [conflict('c1', 'm-0000', 'm-0001')]);
    const badge = new ConflictBadge(engine);
    const { container, root } = mount(<MemoryView transport={engine} badge={badge} />);
    await flush();
    expect(badge.getState().open).toBe(1);
    await click(byTestId(container, 'memory-tab-conflicts'));
    await click(byTestId(container, 'conflict-merge'));
    const text = byTestId<HTMLTextAreaElement>(container, 'conflict-merge-text') as HTMLTextAreaElement;
    expect(text.value).toBe('Memory number 0\nMemory number 1');
    expect(byTestId<HTMLInputElement>(container, 'conflict-merge-keep-a')?.checked).toBe(true);
    act(() => fill(text, 'Memory number 0 and 1 in one'));
    await click(byTestId(container, 'conflict-merge-keep-b'));
    await click(byTestId(container, 'conflict-merge-save'));
    expect(engine.sent('memory_resolve')).toEqual([{ conflict_id: 'c1', keep: 'm-0001', merged: 'Memory number 0 and 1 in one' }]);
    expect(badge.getState().open).toBe(0);
    expect(byTestId(container, 'conflicts-empty')).not.toBeNull();
    expect(byTestId(container, 'memory-tab-conflicts')?.textContent).toBe('Review conflicts (0)');
    await click(byTestId(container, 'memory-tab-list'));
    expect(all(container, 'memory-row').map((r) => r.textContent).join(' ')).toContain('Memory number 0 and 1 in one');
    act(() => root.unmount());
  });

  it('exports to a download, imports a file and reports the count, or the line the engine refused', async () => {
    const engine = memoryEngine(2);
    const files: { name: string; blob: Blob }[] = [];
    const download = (name: string, blob: Blob) => void files.push({ name, blob });
    const { container, root } = mount(<MemoryView transport={engine} download={download} />);
    await flush();
    await click(byTestId(container, 'memory-export'));
    expect(files.map((f) => f.name)).toEqual(['echo-memories-2026-11-04.jsonl']);
    expect(byTestId(container, 'memory-transfer-outcome')?.textContent).toContain('Exported 2 memories to echo-memories-2026-11-04.jsonl.');

    const choose = async (file: File) => {
      const input = byTestId<HTMLInputElement>(container, 'memory-import') as HTMLInputElement;
      Object.defineProperty(input, 'files', { value: [file], configurable: true });
      await act(async () => input.dispatchEvent(new Event('change', { bubbles: true })));
      await flush();
      await flush();
    };
    await choose(new File([await files[0]!.blob.text()], 'echo-memories-2026-11-04.jsonl'));
    expect(byTestId(container, 'memory-transfer-outcome')?.textContent).toContain('Imported 0 new memories; 2 were already known, 0 inactive ones skipped.');

    await choose(new File(['{"format":"echo-desk-memory","version":1}\nbroken\n'], 'bad.jsonl'));
    const outcome = byTestId(container, 'memory-transfer-outcome');
    expect(outcome?.getAttribute('role')).toBe('alert');
    expect(outcome?.textContent).toContain('line 2');
    expect(all(container, 'memory-row')).toHaveLength(2);
    act(() => root.unmount());
  });

  it('says how many imported memories belonged to projects the file does not describe, and how many conversations\' notes were left out', async () => {
    const engine = memoryEngine(1);
    engine.handlers.memory_import = () => ({ created: 1, duplicates: 0, skipped_inactive: 0, outside_projects: 1, outside_sessions: 2 });
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    const input = byTestId<HTMLInputElement>(container, 'memory-import') as HTMLInputElement;
    Object.defineProperty(input, 'files', { value: [new File(['{}'], 'old.jsonl')], configurable: true });
    await act(async () => input.dispatchEvent(new Event('change', { bubbles: true })));
    await flush();
    await flush();
    expect(byTestId(container, 'memory-transfer-outcome')?.textContent).toContain(
      'Imported 1 new memories; 0 were already known, 0 inactive ones skipped. 1 belonged to projects the file does not describe and are global now. 2 working notes of conversations that are not here were left out.',
    );
    act(() => root.unmount());
  });

  it('filters by project or the global memories, names each memory\'s project, and adds to the project shown', async () => {
    const projects = [project(1, 'Kitchen'), project(2, 'Thesis')];
    const engine = memoryEngine(4, [], projects, ['global', 'project:p-1', 'project:p-2', 'session:s-9']);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    const places = () => all(container, 'memory-place').map((p) => p.textContent);
    const ids = () => all(container, 'memory-row').map((r) => r.dataset.memoryId);
    expect(places()).toEqual(['Global', 'Project: Kitchen', 'Project: Thesis', 'One conversation']);
    const scope = byTestId<HTMLSelectElement>(container, 'memory-scope-filter') as HTMLSelectElement;
    expect([...scope.options].map((o) => o.textContent)).toEqual(['All memories', 'Global', 'Kitchen', 'Thesis']);

    act(() => fill(scope, 'project:Kitchen'));
    await flush();
    expect(engine.sent('memory_list').at(-1)).toEqual({ project: 'Kitchen', sort: 'created', offset: 0, limit: 100 });
    expect(ids()).toEqual(['m-0001']);
    expect(byTestId(container, 'memory-add')?.textContent).toBe('Add to Kitchen');
    act(() => fill(byTestId<HTMLInputElement>(container, 'memory-add-content') as HTMLInputElement, 'Tiles are 30 cm'));
    await click(byTestId(container, 'memory-add'));
    expect(engine.sent('memory_add')).toEqual([{ content: 'Tiles are 30 cm', project: 'Kitchen' }]);
    expect(places()).toEqual(['Project: Kitchen', 'Project: Kitchen']);

    act(() => fill(scope, 'global'));
    await flush();
    expect(engine.sent('memory_list').at(-1)).toEqual({ global: true, sort: 'created', offset: 0, limit: 100 });
    expect(ids()).toEqual(['m-0000']);
    expect(byTestId(container, 'memory-add')?.textContent).toBe('Add');

    act(() => fill(scope, ''));
    await flush();
    expect(engine.sent('memory_list').at(-1)).toEqual({ sort: 'created', offset: 0, limit: 100 });
    expect(ids()).toHaveLength(5);
    act(() => root.unmount());
  });

  it('moves the open memory to a project, refreshes the list, and Undo brings it back', async () => {
    const engine = memoryEngine(3, [], [project(1, 'Kitchen'), project(2, 'Thesis')]);
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    act(() => fill(byTestId<HTMLSelectElement>(container, 'memory-scope-filter') as HTMLSelectElement, 'global'));
    await flush();
    await click(all(container, 'memory-row')[1]?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-detail-place')?.textContent).toBe('Global');
    const target = () => byTestId<HTMLSelectElement>(container, 'memory-move-select') as HTMLSelectElement;
    // Where it is now is not offered.
    expect([...target().options].map((o) => o.textContent)).toEqual(['Choose…', 'Kitchen', 'Thesis']);
    expect(byTestId<HTMLButtonElement>(container, 'memory-move')?.disabled).toBe(true);
    const lists = engine.sent('memory_list').length;

    act(() => fill(target(), 'project:Kitchen'));
    await click(byTestId(container, 'memory-move'));
    expect(engine.sent('memory_move')).toEqual([{ id: 'm-0001', project: 'Kitchen' }]);
    expect(engine.sent('memory_list').length).toBeGreaterThan(lists);
    // It left the global memories the list shows.
    expect(all(container, 'memory-row').map((r) => r.dataset.memoryId)).toEqual(['m-0000', 'm-0002']);
    expect(byTestId(container, 'memory-detail-place')?.textContent).toBe('Project: Kitchen');
    expect(byTestId(container, 'memory-history')?.textContent).toContain('moved by you');
    expect([...target().options].map((o) => o.textContent)).toEqual(['Choose…', 'Global', 'Thesis']);

    await click(byTestId(container, 'memory-undo'));
    expect(engine.sent('memory_undo')).toEqual([{ id: 'm-0001' }]);
    expect(byTestId(container, 'memory-detail-place')?.textContent).toBe('Global');
    expect(all(container, 'memory-row').map((r) => r.dataset.memoryId)).toEqual(['m-0000', 'm-0001', 'm-0002']);

    // Back out of a project: no project in the request.
    act(() => fill(target(), 'project:Thesis'));
    await click(byTestId(container, 'memory-move'));
    act(() => fill(target(), 'global'));
    await click(byTestId(container, 'memory-move'));
    expect(engine.sent('memory_move').slice(1)).toEqual([{ id: 'm-0001', project: 'Thesis' }, { id: 'm-0001' }]);
    expect(byTestId(container, 'memory-detail-place')?.textContent).toBe('Global');
    act(() => root.unmount());
  });
});
