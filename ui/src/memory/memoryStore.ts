// The memory page's state: what the assistant remembers (filtered, by project too, and sorted
// on the server, loaded a page at a time as the person scrolls), the projects (to name a
// memory's project and move it to another), the selection for bulk deletion, the open
// memory's detail and its fading curve, the actions on it, the confirmation steps before
// anything is deleted for good, the queue of open conflicts to review (settled by keeping one,
// both, or editing the two into one), the store's counts, and export and import as a file
// (and reading everything again after another assistant's memories are imported). No
// React here; components read it through `useSyncExternalStore` (see
// `components/settings/useSettingsStore.ts`).

import type {
  Conflict,
  Fading,
  ImportReport,
  Memory,
  MemoryDetail,
  MemoryList,
  MemorySort,
  MemoryStats,
  MemoryStatus,
  MemoryTier,
  Project,
  Recalled,
} from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from '../settings/store';
import { type Download, browserDownload } from '../trace/traceStore';
import type { ConflictBadge } from './conflictBadge';

/** How many memories a search by meaning asks for. */
export const SEARCH_SIZE = 50;

/** Rows asked for at a time. */
export const PAGE_SIZE = 100;

/** What `memory_delete_all` requires, typed by the person exactly (the engine checks it too). */
export const DELETE_ALL_PHRASE = 'delete all memories';

/** The filter values, in the order the selects offer them (the variants of the wire types). */
export const TIERS: readonly MemoryTier[] = ['working', 'episodic', 'semantic', 'archival'];
export const STATUSES: readonly MemoryStatus[] = ['active', 'superseded', 'archived', 'deleted'];
/** The status filter's extra choice: active memories whose expiry falls within this many days. */
export const EXPIRING = 'expiring';
export const EXPIRING_DAYS = 7;
export const STATUS_FILTERS: readonly (MemoryStatus | typeof EXPIRING)[] = [...STATUSES, EXPIRING];
/** The orders; `effective` is the importance after decay as of now, highest first (the engine ranks it). */
export const SORTS: readonly MemorySort[] = ['created', 'updated', 'last_used', 'importance', 'effective'];
export const CONFLICT_FILTERS = ['any', 'yes', 'no'] as const;
export type ConflictFilter = (typeof CONFLICT_FILTERS)[number];

/**
 * Whose memories the list shows: all (''), the global ones only, or one project's (by name).
 * A select's value as it is kept.
 */
export type ScopeFilter = '' | 'global' | `project:${string}`;

/** The filter value for a project's memories. */
export function projectFilter(name: string): ScopeFilter {
  return `project:${name}`;
}

/** A select's value read back as a scope filter ('' for anything else). */
export function scopeFilter(value: string): ScopeFilter {
  return value === 'global' || value.startsWith('project:') ? (value as ScopeFilter) : '';
}

/** The project (by name) a scope filter names, if any. */
export function filteredProject(scope: ScopeFilter): string | undefined {
  return scope.startsWith('project:') ? scope.slice('project:'.length) : undefined;
}

/** The filters bar as set; empty means "any". */
export interface MemoryFilters {
  scope: ScopeFilter;
  tier: MemoryTier | '';
  status: MemoryStatus | typeof EXPIRING | '';
  text: string;
  inConflict: ConflictFilter;
  sort: MemorySort;
}

export const DEFAULT_FILTERS: MemoryFilters = { scope: '', tier: '', status: '', text: '', inConflict: 'any', sort: 'created' };

/** The `memory_list` request for the filters and a page. */
export function listRequest(f: MemoryFilters, offset: number, limit = PAGE_SIZE): MemoryList {
  const text = f.text.trim();
  const project = filteredProject(f.scope);
  return {
    ...(f.scope === 'global' ? { global: true } : project !== undefined ? { project } : {}),
    ...(f.tier ? { tier: f.tier } : {}),
    ...(f.status === EXPIRING
      ? { status: 'active' as const, expiring_within_days: EXPIRING_DAYS }
      : f.status
        ? { status: f.status }
        : {}),
    ...(text ? { text } : {}),
    ...(f.inConflict === 'any' ? {} : { in_conflict: f.inConflict === 'yes' }),
    sort: f.sort,
    offset,
    limit,
  };
}

/**
 * The name an export downloads as: `echo-memories-<date>.jsonl`, with the date the engine
 * stamped on it (from its suggested name), else today's.
 */
export function exportFileName(engineName: string, today: Date = new Date()): string {
  const date = /\d{4}-\d{2}-\d{2}/.exec(engineName)?.[0] ?? today.toISOString().slice(0, 10);
  return `echo-memories-${date}.jsonl`;
}

/** "Edit into one" as typed: the conflict, the memory that keeps the text, and the text. */
export interface MergeDraft {
  conflictId: string;
  keep: string;
  text: string;
}

/** The add form as typed. */
export interface MemoryDraft {
  content: string;
  slot: string;
  pinned: boolean;
}

/** A deletion waiting for the person's confirmation. */
export type PendingDelete = { kind: 'ids'; ids: string[] } | { kind: 'all'; typed: string };

export interface MemoryState {
  filters: MemoryFilters;
  /** The rows loaded so far, in the server's order. */
  items: Memory[];
  /** How many match the filters; undefined before the first page arrives. */
  total: number | undefined;
  /** A page is on its way. */
  loading: boolean;
  loadError: string | null;
  /** Ids ticked for bulk deletion. */
  selected: string[];
  /** The open memory's id, and its detail once read. */
  openId: string | null;
  detail: MemoryDetail | null;
  detailError: string | null;
  /** The open memory's fading curve (the engine's), once read. */
  fading: Fading | null;
  fadingError: string | null;
  /** The detail's content being edited, or null. */
  editing: string | null;
  draft: MemoryDraft;
  /** A deletion waiting for confirmation. */
  pending: PendingDelete | null;
  /** How many memories the last deletion removed (older versions included). */
  deleted: number | null;
  /** The engine's refusal of the last action. */
  actionError: string | null;
  busy: boolean;
  /** Open conflicts, and the memories on their sides as read. */
  conflicts: Conflict[] | undefined;
  conflictMemories: Record<string, Memory>;
  conflictsError: string | null;
  /** "Edit into one" open on a conflict, or null. */
  merge: MergeDraft | null;
  /** The store's counts (memory_stats), read again after every change. */
  stats: MemoryStats | undefined;
  statsError: string | null;
  /** Export and import: running, what the last one did, or why it failed. */
  transferring: boolean;
  exported: { fileName: string; count: number } | null;
  imported: ImportReport | null;
  transferError: string | null;
  /** A search by meaning (memory_search): its query and the engine's ranking, or null. */
  search: { query: string; results: Recalled[] | undefined; error: string | null } | null;
  /** The projects (empty until read, or when they cannot be: the page works without them). */
  projects: Project[];
}

export interface MemoryStoreOptions {
  /** How an export is saved (the browser's download unless a test passes one). */
  download?: Download;
}

export class MemoryStore extends SettingsStore<MemoryState> {
  private readonly transport: SettingsTransport;
  private readonly download: Download;
  /** The Memory button's count of open conflicts, told of every change to the queue. */
  private readonly badge: ConflictBadge | undefined;
  /** Bumped when the list starts over, so a page for older filters is dropped. */
  private generation = 0;

  constructor(transport: SettingsTransport, badge?: ConflictBadge, options: MemoryStoreOptions = {}) {
    super({
      filters: DEFAULT_FILTERS,
      items: [],
      total: undefined,
      loading: false,
      loadError: null,
      selected: [],
      openId: null,
      detail: null,
      detailError: null,
      fading: null,
      fadingError: null,
      editing: null,
      draft: { content: '', slot: '', pinned: false },
      pending: null,
      deleted: null,
      actionError: null,
      busy: false,
      conflicts: undefined,
      conflictMemories: {},
      conflictsError: null,
      merge: null,
      stats: undefined,
      statsError: null,
      transferring: false,
      exported: null,
      imported: null,
      transferError: null,
      search: null,
      projects: [],
    });
    this.transport = transport;
    this.badge = badge;
    this.download = options.download ?? browserDownload;
  }

  /** The first page, the open conflicts, the counts and the projects. */
  async load(): Promise<void> {
    await Promise.all([this.reload(), this.loadConflicts(), this.loadStats(), this.loadProjects()]);
  }

  /**
   * Reads the projects (their names for the filter, the rows and "Move to"). A failure
   * leaves them as they were: the memories show without their projects' names.
   */
  async loadProjects(): Promise<void> {
    try {
      this.set({ projects: await this.transport.call('list_projects', {}) });
    } catch {
      // Nothing to show: the filter offers all and global memories only.
    }
  }

  /** Reads the store's counts (by tier and status, conflicts, the next sweep). */
  async loadStats(): Promise<void> {
    try {
      this.set({ stats: await this.transport.call('memory_stats', {}), statsError: null });
    } catch (e) {
      this.set({ statsError: describe(e) });
    }
  }

  /** Starts the list over from its first page (after a filter change or a deletion). */
  async reload(): Promise<void> {
    this.generation += 1;
    this.set({ items: [], total: undefined, loading: false, loadError: null });
    await this.loadMore();
  }

  /** Whether rows past the loaded ones match. */
  hasMore(): boolean {
    const { items, total } = this.getState();
    return total === undefined || items.length < total;
  }

  /** Asks for the next page (offset: the rows loaded so far) and appends it; one at a time. */
  async loadMore(): Promise<void> {
    const { loading, items, filters, loadError } = this.getState();
    if (loading || !this.hasMore() || (loadError && items.length > 0)) return;
    const generation = this.generation;
    this.set({ loading: true });
    try {
      const page = await this.transport.call('memory_list', listRequest(filters, items.length));
      if (generation !== this.generation) return;
      const known = new Set(this.getState().items.map((m) => m.id));
      this.set({
        items: [...this.getState().items, ...page.items.filter((m) => !known.has(m.id))],
        total: page.total,
        loadError: null,
      });
    } catch (e) {
      if (generation === this.generation) this.set({ loadError: describe(e) });
    } finally {
      if (generation === this.generation) this.set({ loading: false });
    }
  }

  /** Changes filters or sort; paging starts over and the selection is cleared. */
  async setFilters(change: Partial<MemoryFilters>): Promise<void> {
    this.set({ filters: { ...this.getState().filters, ...change }, selected: [] });
    await this.reload();
  }

  toggleSelected(id: string): void {
    const { selected } = this.getState();
    this.set({ selected: selected.includes(id) ? selected.filter((s) => s !== id) : [...selected, id] });
  }

  /** Ticks every loaded row, or clears the selection when all are ticked. */
  toggleAllLoaded(): void {
    const { items, selected } = this.getState();
    const all = items.length > 0 && items.every((m) => selected.includes(m.id));
    this.set({ selected: all ? [] : items.map((m) => m.id) });
  }

  clearSelection(): void {
    this.set({ selected: [] });
  }

  /** Opens a memory: reads its detail (chain, history, conflicts). */
  async open(id: string): Promise<void> {
    this.set({ openId: id, detail: null, detailError: null, fading: null, fadingError: null, editing: null, actionError: null });
    await this.refreshDetail();
  }

  close(): void {
    this.set({ openId: null, detail: null, detailError: null, fading: null, fadingError: null, editing: null });
  }

  /** Reads the open memory's detail and its fading curve again. */
  private async refreshDetail(): Promise<void> {
    const id = this.getState().openId;
    if (id === null) return;
    await Promise.all([this.readDetail(id), this.readFading(id)]);
  }

  private async readFading(id: string): Promise<void> {
    try {
      const fading = await this.transport.call('memory_fading', { id });
      if (this.getState().openId === id) this.set({ fading, fadingError: null });
    } catch (e) {
      if (this.getState().openId === id) this.set({ fading: null, fadingError: describe(e) });
    }
  }

  private async readDetail(id: string): Promise<void> {
    try {
      const detail = await this.transport.call('memory_show', { id });
      if (this.getState().openId === id) this.set({ detail, detailError: null });
    } catch (e) {
      if (this.getState().openId === id) this.set({ detailError: describe(e) });
    }
  }

  /** Replaces loaded rows by the engine's newer copies. */
  private patch(changed: Memory[]): void {
    const byId = new Map(changed.map((m) => [m.id, m]));
    this.set({ items: this.getState().items.map((m) => byId.get(m.id) ?? m) });
  }

  /** Runs one action on the open memory; on success patches the rows and reads the detail again. */
  private async act(run: () => Promise<Memory[]>): Promise<boolean> {
    this.set({ busy: true, actionError: null, deleted: null });
    try {
      this.patch(await run());
      await Promise.all([this.refreshDetail(), this.loadStats()]);
      return true;
    } catch (e) {
      this.set({ actionError: describe(e) });
      return false;
    } finally {
      this.set({ busy: false });
    }
  }

  startEdit(): void {
    const { detail } = this.getState();
    if (detail) this.set({ editing: detail.content });
  }

  editText(text: string): void {
    this.set({ editing: text });
  }

  cancelEdit(): void {
    this.set({ editing: null });
  }

  /** Saves the edited content; the edit form stays open when the engine refuses it. */
  async saveEdit(): Promise<void> {
    const { openId: id, editing } = this.getState();
    if (id === null || editing === null) return;
    const content = editing.trim();
    if (await this.act(async () => [await this.transport.call('memory_edit', { id, content })])) {
      this.set({ editing: null });
    }
  }

  async setPinned(pinned: boolean): Promise<void> {
    const id = this.getState().openId;
    if (id !== null) await this.act(async () => [await this.transport.call('memory_pin', { id, pinned })]);
  }

  /** Takes the open memory out of prompts and search (reversible with `restore`). */
  async forget(): Promise<void> {
    const id = this.getState().openId;
    if (id !== null) await this.act(async () => [await this.transport.call('memory_forget', { id })]);
  }

  async restore(): Promise<void> {
    const id = this.getState().openId;
    if (id !== null) await this.act(async () => [await this.transport.call('memory_restore', { id })]);
  }

  /**
   * Sets when the open memory stops applying (`YYYY-MM-DD` or RFC 3339), or clears it with
   * null or a blank date (the request then leaves `valid_until` out, which the engine reads as
   * "no expiry").
   */
  async setExpiry(validUntil: string | null): Promise<void> {
    const id = this.getState().openId;
    if (id === null) return;
    const date = validUntil?.trim() ?? '';
    await this.act(async () => [
      await this.transport.call('memory_set_expiry', date ? { id, valid_until: date } : { id }),
    ]);
  }

  /**
   * Undoes the open memory's last change, or `change` (a history entry's change id): every
   * memory that change touched goes back to its state before it, as a new change.
   */
  async undo(change?: string): Promise<void> {
    const id = this.getState().openId;
    if (id === null) return;
    const undone = await this.act(() => this.transport.call('memory_undo', change ? { id, change } : { id }));
    // An undone move changes which project's list the memory is in.
    if (undone && this.getState().filters.scope !== '') await Promise.all([this.reload(), this.loadProjects()]);
  }

  /**
   * Moves the open memory into the project named `project`, or out to the global memories
   * (null): one change, which Undo brings back. Then the list (it may leave a filtered one)
   * and the projects' counts are read again.
   */
  async move(project: string | null): Promise<void> {
    const id = this.getState().openId;
    if (id === null) return;
    const moved = await this.act(async () => [
      await this.transport.call('memory_move', project === null ? { id } : { id, project }),
    ]);
    if (moved) await Promise.all([this.reload(), this.loadProjects()]);
  }

  /** Opens another memory of the chain (a link in the detail). */
  async follow(id: string): Promise<void> {
    await this.open(id);
  }

  editDraft(change: Partial<MemoryDraft>): void {
    this.set({ draft: { ...this.getState().draft, ...change } });
  }

  /**
   * Adds the typed memory (to the project the list is filtered on, if it is), then starts
   * the list over and opens what the engine kept.
   */
  async add(): Promise<void> {
    const { draft, filters } = this.getState();
    const project = filteredProject(filters.scope);
    const content = draft.content.trim();
    if (!content) return;
    this.set({ busy: true, actionError: null, deleted: null });
    try {
      const outcome = await this.transport.call('memory_add', {
        content,
        ...(draft.slot.trim() ? { slot: draft.slot.trim() } : {}),
        ...(draft.pinned ? { pinned: true } : {}),
        ...(project !== undefined ? { project } : {}),
      });
      this.set({ draft: { content: '', slot: '', pinned: false } });
      await Promise.all([this.reload(), this.open(outcome.memory.id), this.loadConflicts(), this.loadStats()]);
    } catch (e) {
      this.set({ actionError: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }

  /** Asks to delete the ticked memories (or the open one when none is ticked); nothing is sent yet. */
  requestDelete(ids?: string[]): void {
    const { selected, openId } = this.getState();
    const chosen = ids ?? (selected.length > 0 ? selected : openId !== null ? [openId] : []);
    if (chosen.length > 0) this.set({ pending: { kind: 'ids', ids: [...chosen] }, actionError: null });
  }

  /** Asks to delete everything; it goes through only once the phrase is typed. */
  requestDeleteAll(): void {
    this.set({ pending: { kind: 'all', typed: '' }, actionError: null });
  }

  typeConfirmation(typed: string): void {
    const { pending } = this.getState();
    if (pending?.kind === 'all') this.set({ pending: { kind: 'all', typed } });
  }

  cancelDelete(): void {
    this.set({ pending: null });
  }

  /** Whether the pending deletion may be confirmed (delete all: the phrase typed exactly). */
  canConfirm(): boolean {
    const { pending } = this.getState();
    return pending !== null && (pending.kind === 'ids' || pending.typed === DELETE_ALL_PHRASE);
  }

  /** Carries out the confirmed deletion, for good, then starts the list over. */
  async confirmDelete(): Promise<void> {
    const { pending, openId } = this.getState();
    if (pending === null || !this.canConfirm()) return;
    this.set({ busy: true, actionError: null });
    try {
      const report =
        pending.kind === 'ids'
          ? await this.transport.call('memory_delete', { ids: pending.ids })
          : await this.transport.call('memory_delete_all', { confirm: pending.typed });
      const gone = new Set(report.deleted);
      this.set({
        pending: null,
        deleted: report.deleted.length,
        selected: this.getState().selected.filter((id) => !gone.has(id)),
      });
      if (pending.kind === 'all' || (openId !== null && gone.has(openId))) this.close();
      await Promise.all([this.reload(), this.loadConflicts(), this.refreshDetail(), this.loadStats()]);
    } catch (e) {
      this.set({ actionError: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }

  /** Reads the open conflicts and the memories on both sides of each. */
  async loadConflicts(): Promise<void> {
    try {
      const conflicts = (await this.transport.call('memory_conflicts', {})).filter((c) => c.status === 'open');
      const known = this.getState().conflictMemories;
      const missing = [...new Set(conflicts.flatMap((c) => [c.memory_a, c.memory_b]))].filter((id) => !(id in known));
      const read = await Promise.all(
        missing.map((id) => this.transport.call('memory_show', { id }).then((d): Memory => d, () => null)),
      );
      const conflictMemories = { ...this.getState().conflictMemories };
      for (const m of read) if (m) conflictMemories[m.id] = m;
      this.set({ conflicts, conflictMemories, conflictsError: null });
      this.badge?.report(conflicts.length);
    } catch (e) {
      this.set({ conflictsError: describe(e) });
    }
  }

  /**
   * Settles a conflict: keep one side (`keep` its id) or both (`null`); with `merged`, the
   * kept one's text becomes `merged` (edit into one). Whether the engine took it.
   */
  async resolve(conflictId: string, keep: string | null, merged?: string): Promise<boolean> {
    this.set({ busy: true, actionError: null });
    try {
      await this.transport.call(
        'memory_resolve',
        merged === undefined ? { conflict_id: conflictId, keep } : { conflict_id: conflictId, keep, merged },
      );
      const conflicts = this.getState().conflicts?.filter((c) => c.id !== conflictId);
      this.set({ conflicts, conflictMemories: {} });
      if (conflicts) this.badge?.report(conflicts.length);
      await Promise.all([this.loadConflicts(), this.reload(), this.refreshDetail(), this.loadStats()]);
      return true;
    } catch (e) {
      this.set({ actionError: describe(e) });
      return false;
    } finally {
      this.set({ busy: false });
    }
  }

  /** Opens "edit into one" on a conflict: both texts (A then B), kept by A until chosen. */
  startMerge(conflictId: string): void {
    const c = this.getState().conflicts?.find((x) => x.id === conflictId);
    if (!c) return;
    const known = this.getState().conflictMemories;
    const text = [known[c.memory_a]?.content, known[c.memory_b]?.content].filter((t) => t !== undefined).join('\n');
    this.set({ merge: { conflictId, keep: c.memory_a, text }, actionError: null });
  }

  editMerge(change: Partial<Pick<MergeDraft, 'keep' | 'text'>>): void {
    const { merge } = this.getState();
    if (merge) this.set({ merge: { ...merge, ...change } });
  }

  cancelMerge(): void {
    this.set({ merge: null });
  }

  /** Settles the conflict with the typed text kept by the chosen memory; the form stays on a refusal. */
  async submitMerge(): Promise<void> {
    const { merge } = this.getState();
    if (!merge || merge.text.trim() === '') return;
    if (await this.resolve(merge.conflictId, merge.keep, merge.text.trim())) this.set({ merge: null });
  }

  /** Downloads every memory that is not deleted as the engine's JSON Lines export. */
  async exportMemories(): Promise<void> {
    this.set({ transferring: true, exported: null, imported: null, transferError: null });
    try {
      const file = await this.transport.call('memory_export', {});
      const fileName = exportFileName(file.file_name);
      this.download(fileName, new Blob([file.text], { type: 'application/x-ndjson' }));
      this.set({ exported: { fileName, count: file.count } });
    } catch (e) {
      this.set({ transferError: describe(e) });
    } finally {
      this.set({ transferring: false });
    }
  }

  /**
   * Sends an export file's text to the engine, which writes nothing unless every line is good
   * (its error names the bad line); then reads the list, the conflicts and the counts again.
   */
  async importMemories(text: string): Promise<void> {
    this.set({ transferring: true, exported: null, imported: null, transferError: null });
    try {
      const imported = await this.transport.call('memory_import', { text });
      this.set({ imported });
      await this.refreshAfterImport();
    } catch (e) {
      this.set({ transferError: describe(e) });
    } finally {
      this.set({ transferring: false });
    }
  }

  /**
   * Reads the list, the conflicts, the counts and the open memory again after memories were
   * written from outside the page's own actions (a file, another assistant's memories).
   */
  async refreshAfterImport(): Promise<void> {
    await Promise.all([this.reload(), this.loadConflicts(), this.loadStats(), this.refreshDetail()]);
  }

  dismissTransfer(): void {
    this.set({ exported: null, imported: null, transferError: null });
  }

  /** Searches by meaning (the engine's hybrid recall, best first); a blank query ends the search. */
  async searchByMeaning(query: string): Promise<void> {
    const q = query.trim();
    if (!q) {
      this.endSearch();
      return;
    }
    this.set({ search: { query: q, results: undefined, error: null } });
    try {
      const results = await this.transport.call('memory_search', { query: q, k: SEARCH_SIZE });
      if (this.getState().search?.query === q) this.set({ search: { query: q, results, error: null } });
    } catch (e) {
      if (this.getState().search?.query === q) this.set({ search: { query: q, results: [], error: describe(e) } });
    }
  }

  /** Back to the filtered list. */
  endSearch(): void {
    this.set({ search: null });
  }

  dismissError(): void {
    this.set({ actionError: null, deleted: null });
  }
}
