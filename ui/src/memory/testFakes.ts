// An in-memory memory engine for the memory store's and page's tests: it pages, filters by
// text, status and scope (a project's memories by its name, or the global ones) like
// `memory_list`, keeps every request (through `FakeEngine.requests`), lists its projects with
// their memory counts, moves a memory between projects and the global memories, undoes a
// change by putting back what that change altered (a move included),
// refuses `memory_delete_all` without the exact phrase like the engine does, counts by tier
// and status, exports one JSON line per memory after a header and imports only a file whose
// every line is good (else nothing, naming the line), edits the kept memory of a conflict
// settled with a merged text, reads pasted text into import cards (one a line, a duplicate
// clash for a text already known; tests script other clashes) and writes the kept cards with
// source `imported`. With "ask before remembering" it keeps the setting, the proposals waiting
// (`propose` adds some), writes a kept one as a memory of its turn and drops a discarded one
// (either refused with `not_found` once decided), and says what a turn taught (`turn_memory`):
// the memories made from it and its proposals still waiting.

import type {
  Conflict,
  Fading,
  HistoryEntry,
  ImportCandidate,
  ImportCard,
  ImportClash,
  Memory,
  MemoryDetail,
  MemoryProposal,
  MemoryReadEntry,
  Project,
  TierStatusCount,
  WriteOutcome,
} from '../generated/engine';
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

/** A fading curve as the engine draws it: half the importance per half-life, two days apart. */
export function fadingOf(m: Memory, now = '2026-11-05T00:00:00Z'): Fading {
  const start = Date.parse(m.last_accessed ?? m.created_at);
  const at = (i: number) => new Date(start + i * 2 * 86_400_000).toISOString();
  const value = (i: number) => m.importance / 2 ** ((i * 2) / m.stability);
  return {
    memory_id: m.id,
    now,
    pinned: m.pinned,
    importance: m.importance,
    half_life_days: m.stability,
    effective_now: m.effective_importance,
    archive_below: 0.05,
    last_touch: m.last_accessed ?? m.created_at,
    valid_until: m.valid_until,
    archives_at: null,
    archive_reason: null,
    points: Array.from({ length: 10 }, (_, i) => ({ at: at(i), effective: value(i) })),
    uses: m.last_accessed ? [m.last_accessed] : [],
  };
}

/** A project as the engine lists it; `n` makes its id (its memories' scope is `project:<id>`). */
export function project(n: number, name: string, change: Partial<Project> = {}): Project {
  return { id: `p-${n}`, name, instructions: null, folders: [], created_at: '2026-11-01T09:00:00Z', sessions: 0, memories: 0, ...change };
}

const EXPORT_HEADER = '{"format":"echo-desk-memory","version":1,"exported_at":"2026-11-04T08:00:00Z","count":0}';

/**
 * The engine with `count` memories (global ones unless `scopes` gives the i-th its scope),
 * open `conflicts` and `projects`.
 */
export function memoryEngine(count: number, conflicts: Conflict[] = [], projects: Project[] = [], scopes: string[] = []) {
  let memories = Array.from({ length: count }, (_, i) => memory(i, scopes[i] ? { scope: scopes[i] } : {}));
  let open = [...conflicts];
  const history = new Map<string, HistoryEntry[]>();
  /** What each change altered, as it was before it (by memory and change id): what undo puts back. */
  const before = new Map<string, Partial<Memory>>();
  /** The read log, by memory (empty unless a test fills it). */
  const reads = new Map<string, MemoryReadEntry[]>();
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
    const old = find(id);
    const m = { ...old, ...c };
    memories = memories.map((x) => (x.id === id ? m : x));
    record(m, action);
    const entries = history.get(id) ?? [];
    before.set(`${id} ${entries[entries.length - 1]?.change_id}`, Object.fromEntries(Object.keys(c).map((k) => [k, old[k as keyof Memory]])));
    return m;
  };
  /** The scope of the project named `name` (the engine refuses a name it does not know). */
  const scopeOf = (name: string) => {
    const p = projects.find((x) => x.name === name);
    if (!p) throw new TransportError('not_found', `no project ${name}`, 404);
    return `project:${p.id}`;
  };
  const engine = new FakeEngine({
    memory_list: ({ status, text, project: name, global, offset = 0, limit = 100 }) => {
      const scope = name !== undefined ? scopeOf(name) : global ? 'global' : undefined;
      const matching = memories.filter(
        (m) =>
          (status ? m.status === status : m.status !== 'deleted') &&
          (!text || m.content.includes(text)) &&
          (scope === undefined || m.scope === scope),
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
        answers: new Set((reads.get(id) ?? []).map((r) => r.turn_id)).size,
        reads: reads.get(id) ?? [],
      };
    },
    memory_add: ({ content, pinned, project: name }) => {
      const m = memory(memories.length + 1000, { content, pinned: pinned ?? false, scope: name === undefined ? 'global' : scopeOf(name) });
      memories = [m, ...memories];
      record(m, 'created');
      return { memory: m, effects: [{ effect: 'created' }], judge_failures: [] };
    },
    memory_edit: ({ id, content }) => change(id, { content }, 'edited'),
    memory_pin: ({ id, pinned }) => change(id, { pinned }, pinned ? 'pinned' : 'unpinned'),
    memory_forget: ({ id }) => change(id, { status: 'deleted' }, 'deleted'),
    memory_restore: ({ id }) => change(id, { status: 'active' }, 'restored'),
    memory_set_expiry: ({ id, valid_until }) => change(id, { valid_until: valid_until ?? null }, 'edited'),
    memory_move: ({ id, project: name }) => change(id, { scope: name === undefined ? 'global' : scopeOf(name) }, 'moved'),
    memory_undo: ({ id, change: changeId }) => {
      const entries = history.get(id) ?? [];
      const undone = changeId ?? entries[entries.length - 1]?.change_id;
      if (!entries.some((h) => h.change_id === undone)) throw new TransportError('not_found', `no change ${changeId} on ${id}`, 404);
      return [change(id, before.get(`${id} ${undone}`) ?? {}, 'undo')];
    },
    list_projects: () =>
      projects.map((p) => ({ ...p, memories: memories.filter((m) => m.scope === `project:${p.id}` && m.status !== 'deleted').length })),
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
    memory_resolve: ({ conflict_id, keep, merged }) => {
      const c = open.find((x) => x.id === conflict_id);
      if (!c) throw new TransportError('not_found', `no conflict ${conflict_id}`, 404);
      if (merged !== undefined && keep === null) {
        throw new TransportError('invalid_input', 'invalid merged: name the memory that keeps the merged text (keep)', 400);
      }
      if (merged !== undefined && merged.trim() === '') throw new TransportError('invalid_input', 'invalid merged: the merged text is empty', 400);
      open = open.filter((x) => x.id !== conflict_id);
      if (keep !== null) {
        const loser = keep === c.memory_a ? c.memory_b : c.memory_a;
        change(loser, { status: 'superseded', superseded_by: keep }, 'superseded');
        if (merged !== undefined) change(keep, { content: merged.trim() }, 'edited');
      }
      return { ...c, status: 'resolved', resolution: keep ?? 'both', resolved_at: '2026-11-03T00:00:00Z' };
    },
    memory_fading: ({ id }) => fadingOf(find(id)),
    memory_stats: () => {
      const counts = new Map<string, TierStatusCount>();
      for (const m of memories) {
        const key = `${m.tier} ${m.status}`;
        const c = counts.get(key) ?? { tier: m.tier, status: m.status, count: 0 };
        counts.set(key, { ...c, count: c.count + 1 });
      }
      const expired = memories.filter((m) => m.status === 'active' && m.valid_until !== null && m.valid_until < '2026-11-05');
      return {
        now: '2026-11-05T00:00:00Z',
        counts: [...counts.values()],
        open_conflicts: open.length,
        will_expire: expired.length,
        will_fade: memories.filter((m) => m.status === 'active' && m.effective_importance < 0.05).length,
        last_sweep: '2026-11-04T03:00:00Z',
      };
    },
    memory_export: () => {
      const kept = memories.filter((m) => m.status !== 'deleted');
      return {
        file_name: 'echo-desk-memories-2026-11-04.jsonl',
        count: kept.length,
        text: [EXPORT_HEADER, ...kept.map((m) => JSON.stringify(m))].join('\n') + '\n',
      };
    },
    memory_import: ({ text }) => {
      const lines = text.split('\n').map((l, i) => ({ l, n: i + 1 })).filter(({ l }) => l.trim() !== '');
      if (lines.length === 0) throw new TransportError('invalid_input', 'invalid text: the file is empty', 400);
      if (!lines[0]!.l.includes('"echo-desk-memory"')) {
        throw new TransportError('invalid_input', 'invalid text: line 1: not an Echo Desk memory export header', 400);
      }
      const read: Memory[] = [];
      const problems: string[] = [];
      for (const { l, n } of lines.slice(1)) {
        try {
          read.push(JSON.parse(l) as Memory);
        } catch {
          problems.push(`line ${n}: expected value`);
        }
      }
      if (problems.length) throw new TransportError('invalid_input', `invalid text: nothing imported; ${problems.join('; ')}`, 400);
      const report = { created: 0, duplicates: 0, skipped_inactive: 0, outside_projects: 0, outside_sessions: 0 };
      for (const m of read) {
        if (m.status !== 'active') report.skipped_inactive += 1;
        else if (memories.some((x) => x.content === m.content && x.status === 'active')) report.duplicates += 1;
        else {
          const added = memory(memories.length + 2000, { content: m.content });
          memories = [added, ...memories];
          record(added, 'created');
          report.created += 1;
        }
      }
      return report;
    },
  });
  /** The memory a card's text already is (an active one), if any. */
  const known = (content: string) => memories.find((m) => m.status === 'active' && m.content === content);
  engine.handlers.memory_import_preview = ({ text, project: name }) => {
    if (name !== undefined) scopeOf(name);
    const lines = text.split('\n').map((l) => l.replace(/^[-*•]\s*/, '').trim()).filter((l) => l !== '');
    if (lines.length === 0) throw new TransportError('invalid_input', 'invalid text: it has 0 characters; paste between 1 and 100000', 400);
    const cards = lines.map((line): ImportCandidate => {
      const there = known(line);
      return { card: { content: line, evidence: line }, clashes: there ? [importClash('duplicate', there, 'The same fact.')] : [] };
    });
    return { cards, dropped: [] };
  };
  engine.handlers.memory_import_cards = ({ cards }) =>
    cards.map((card): WriteOutcome => {
      const there = known(card.content);
      if (there) return { memory: there, effects: [{ effect: 'duplicate', of: there.id }], judge_failures: [] };
      const scope = card.project === undefined ? 'global' : scopeOf(card.project);
      const m = memory(memories.length + 3000, { content: card.content, slot: card.slot ?? null, value: card.value ?? null, evidence: card.evidence, source: 'imported', scope });
      memories = [m, ...memories];
      record(m, 'created');
      return { memory: m, effects: [{ effect: 'created' }], judge_failures: [] };
    });
  let asking = false;
  /** The proposals waiting for Keep or Discard, newest first. */
  let waiting: MemoryProposal[] = [];
  const take = (id: string) => {
    const p = waiting.find((x) => x.id === id);
    if (!p) throw new TransportError('not_found', `memory proposal not found: ${id}`, 404);
    waiting = waiting.filter((x) => x.id !== id);
    return p;
  };
  engine.handlers.memory_settings = () => ({ ask_before_remembering: asking });
  engine.handlers.update_memory_settings = ({ ask_before_remembering }) => {
    asking = ask_before_remembering;
    return { ask_before_remembering: asking };
  };
  engine.handlers.memory_proposals = () => [...waiting];
  engine.handlers.memory_keep_proposal = ({ id }) => {
    const p = take(id);
    const m = memory(memories.length + 4000, {
      content: p.content, tier: p.tier, slot: p.slot, source: p.source, scope: p.scope, evidence: p.evidence,
      source_turn_id: p.turn_id, source_session_id: p.session_id,
    });
    memories = [m, ...memories];
    record(m, 'created');
    return { memory: m, effects: [{ effect: 'created' }], judge_failures: [] };
  };
  engine.handlers.memory_discard_proposal = ({ id }) => {
    take(id);
    return null;
  };
  engine.handlers.turn_memory = ({ turn_id }) => ({
    settled: true,
    memories: memories
      .filter((m) => m.source_turn_id === turn_id && m.status !== 'deleted')
      .map((m) => ({ memory: m, change_id: history.get(m.id)?.[0]?.change_id ?? 'c-0', replaced: null })),
    proposals: waiting.filter((p) => p.turn_id === turn_id),
  });
  return Object.assign(engine, {
    /** Adds proposals, as a turn's memory work does with "ask before remembering" on. */
    propose: (...found: MemoryProposal[]) => {
      waiting = [...found, ...waiting];
    },
    proposals: () => waiting,
    asking: () => asking,
    memories: () => memories,
    projects,
    reads,
    /** The requests of one operation, in order. */
    sent: (op: string) => engine.requests.filter((r) => r.op === op).map((r) => r.request),
  });
}

export function conflict(id: string, a: string, b: string): Conflict {
  return { id, memory_a: a, memory_b: b, verdict: 'contradiction', explanation: 'They disagree.', status: 'open', resolution: null, created_at: '2026-11-02T00:00:00Z', resolved_at: null };
}

/** What keeping an import card would do to `m`, with the judge's reason. */
export function importClash(kind: ImportClash['kind'], m: Memory, explanation = 'They say different things.'): ImportClash {
  return { kind, memory: m, explanation };
}

/** An import card read from `evidence` (its text too unless `change` gives another). */
export function importCard(evidence: string, change: Partial<ImportCard> = {}): ImportCard {
  return { content: evidence, evidence, ...change };
}

/** A proposal of turn `t1` ("ask before remembering"); `n` makes its id and text. */
export function proposal(n: number, change: Partial<MemoryProposal> = {}): MemoryProposal {
  return {
    id: `mp-${n}`,
    turn_id: 't1',
    session_id: 's1',
    content: `Proposal number ${n}`,
    tier: 'semantic',
    slot: null,
    source: 'user_stated',
    scope: 'global',
    evidence: `words ${n}`,
    created_at: '2026-11-04T10:00:00Z',
    ...change,
  };
}
