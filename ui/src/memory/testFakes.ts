// An in-memory memory engine for the memory store's and page's tests: it pages, filters by
// text and status like `memory_list`, keeps every request (through `FakeEngine.requests`),
// and refuses `memory_delete_all` without the exact phrase like the engine does.

import type { Conflict, HistoryEntry, Memory, MemoryDetail } from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { TransportError } from '../transport';
import { DELETE_ALL_PHRASE } from './memoryStore';

/** A memory with the engine's defaults; `n` makes its id and text. */
export function memory(n: number, change: Partial<Memory> = {}): Memory {
  return {
    id: `m-${String(n).padStart(4, '0')}`,
    tier: 'semantic',
    kind: 'fact',
    subject: 'user',
    slot: null,
    content: `Memory number ${n}`,
    value: null,
    source: 'user_stated',
    confidence: 0.9,
    importance: 0.5,
    effective_importance: 0.5,
    pinned: false,
    access_count: 0,
    last_accessed: null,
    stability: 30,
    created_at: '2026-11-01T10:00:00Z',
    updated_at: '2026-11-01T10:00:00Z',
    valid_from: null,
    valid_until: null,
    status: 'active',
    superseded_by: null,
    invalid_at: null,
    archived_from: null,
    version: 1,
    scope: 'global',
    source_session_id: null,
    source_turn_id: null,
    source_message_id: null,
    evidence: null,
    ...change,
  };
}

export function memoryEngine(count: number, conflicts: Conflict[] = []) {
  let memories = Array.from({ length: count }, (_, i) => memory(i));
  let open = [...conflicts];
  const history = new Map<string, HistoryEntry[]>();
  const record = (m: Memory, action: HistoryEntry['action']) => {
    const list = history.get(m.id) ?? [];
    list.push({ id: list.length + 1, change_id: `c-${list.length}`, memory_id: m.id, action, actor: 'user', reason: null, before: null, after: null, at: '2026-11-02T09:00:00Z' });
    history.set(m.id, list);
  };
  for (const m of memories) record(m, 'created');
  const find = (id: string) => {
    const m = memories.find((x) => x.id === id);
    if (!m) throw new TransportError('not_found', `no memory ${id}`, 404);
    return m;
  };
  const change = (id: string, c: Partial<Memory>, action: HistoryEntry['action']) => {
    const m = { ...find(id), ...c };
    memories = memories.map((x) => (x.id === id ? m : x));
    record(m, action);
    return m;
  };
  const engine = new FakeEngine({
    memory_list: ({ status, text, offset = 0, limit = 100 }) => {
      const matching = memories.filter(
        (m) => (status ? m.status === status : m.status !== 'deleted') && (!text || m.content.includes(text)),
      );
      return { items: matching.slice(offset, offset + limit), total: matching.length };
    },
    memory_show: ({ id }): MemoryDetail => {
      const m = find(id);
      return {
        ...m,
        superseded_by_memory: m.superseded_by ? find(m.superseded_by) : null,
        supersedes: memories.filter((x) => x.superseded_by === id),
        history: history.get(id) ?? [],
        conflicts: open.filter((c) => c.memory_a === id || c.memory_b === id),
      };
    },
    memory_add: ({ content, pinned }) => {
      const m = memory(memories.length + 1000, { content, pinned: pinned ?? false });
      memories = [m, ...memories];
      record(m, 'created');
      return { memory: m, effects: [{ effect: 'created' }], judge_failures: [] };
    },
    memory_edit: ({ id, content }) => change(id, { content }, 'edited'),
    memory_pin: ({ id, pinned }) => change(id, { pinned }, pinned ? 'pinned' : 'unpinned'),
    memory_forget: ({ id }) => change(id, { status: 'deleted' }, 'deleted'),
    memory_restore: ({ id }) => change(id, { status: 'active' }, 'restored'),
    memory_set_expiry: ({ id, valid_until }) => change(id, { valid_until: valid_until ?? null }, 'edited'),
    memory_undo: ({ id }) => [change(id, { status: 'active' }, 'undo')],
    memory_delete: ({ ids }) => {
      memories = memories.filter((m) => !ids.includes(m.id));
      return { deleted: [...ids] };
    },
    memory_delete_all: ({ confirm }) => {
      if (confirm !== DELETE_ALL_PHRASE) throw new TransportError('invalid_input', 'the confirmation does not match', 400);
      const deleted = memories.map((m) => m.id);
      memories = [];
      return { deleted };
    },
    memory_conflicts: () => [...open],
    memory_resolve: ({ conflict_id, keep }) => {
      const c = open.find((x) => x.id === conflict_id);
      if (!c) throw new TransportError('not_found', `no conflict ${conflict_id}`, 404);
      open = open.filter((x) => x.id !== conflict_id);
      if (keep !== null) {
        const loser = keep === c.memory_a ? c.memory_b : c.memory_a;
        change(loser, { status: 'superseded', superseded_by: keep }, 'superseded');
      }
      return { ...c, status: 'resolved', resolution: keep ?? 'both', resolved_at: '2026-11-03T00:00:00Z' };
    },
  });
  return Object.assign(engine, {
    memories: () => memories,
    /** The requests of one operation, in order. */
    sent: (op: string) => engine.requests.filter((r) => r.op === op).map((r) => r.request),
  });
}

export function conflict(id: string, a: string, b: string): Conflict {
  return { id, memory_a: a, memory_b: b, verdict: 'contradiction', explanation: 'They disagree.', status: 'open', resolution: null, created_at: '2026-11-02T00:00:00Z', resolved_at: null };
}
