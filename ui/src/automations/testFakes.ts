// An in-memory automations engine for the automations store's and page's tests: it keeps
// automations by id (looked up by id or name), refuses a duplicate name and a spec the way the
// engine's check names the field (an empty prompt, a watch rule with no folder, a cron that
// is not five fields or a phrase, a zone without a slash), previews schedules with fixed fire
// times, queues manual runs, pauses and resumes all, and keeps an approval queue that an
// answer settles. Every request is kept (`sent`).

import type {
  Automation,
  AutomationPreview,
  AutomationRun,
  AutomationSpec,
  AutomationTrigger,
  AutomationView,
  QueuedApproval,
} from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { TransportError } from '../transport';

const invalid = (what: string, message: string) => new TransportError('invalid_input', `invalid ${what}: ${message}`, 400);

/** Fire times the fake previews every schedule with. */
export const FAKE_FIRES = [
  '2026-12-04T08:00:00+01:00',
  '2026-12-07T08:00:00+01:00',
  '2026-12-08T08:00:00+01:00',
  '2026-12-09T08:00:00+01:00',
  '2026-12-10T08:00:00+01:00',
];

/** The fake engine's check of a spec (a few of the engine's rules). */
export function checkSpec(spec: AutomationSpec): void {
  if (spec.prompt.trim() === '') throw invalid('prompt', 'it is empty');
  if (spec.concurrency < 1 || spec.concurrency > 4) throw invalid('concurrency', `${spec.concurrency} is outside 1–4`);
  const t = spec.trigger;
  if (t.kind === 'watch') {
    if (t.folders.length === 0) throw invalid('folders', 'a watch rule needs a folder');
    if (t.events.length === 0) throw invalid('events', 'no event kind is chosen');
  } else {
    if (!/^every /.test(t.cron) && t.cron.trim().split(/\s+/).length !== 5) throw invalid('cron', `"${t.cron}" is not a cron expression`);
    if (t.time_zone !== undefined && !t.time_zone.includes('/')) {
      throw invalid('time_zone', `"${t.time_zone}" is not an IANA time zone (such as Europe/Berlin)`);
    }
  }
}

export function previewOf(spec: AutomationSpec): AutomationPreview {
  checkSpec(spec);
  const t = spec.trigger;
  if (t.kind === 'schedule') {
    return { cron: t.cron, time_zone: t.time_zone ?? 'Europe/Berlin', next_fires: FAKE_FIRES, folders: [], missing_folders: [] };
  }
  const folders = t.folders.map((f) => f.replace(/^~/, '/home/me'));
  // Like the engine, absent optional fields come as null.
  return nulls<AutomationPreview>({ cron: null, time_zone: null, next_fires: [], folders, missing_folders: folders.filter((f) => f.includes('missing')) });
}

/**
 * A value with nulls where the wire type has optional fields: the engine serialises an absent
 * `Option` as null (`#[ts(optional)]` without `skip_serializing_if`), so the page must read
 * both.
 */
export function nulls<T>(value: { [K in keyof T]: T[K] | null }): T {
  return value as T;
}

export function automation(n: number, spec: AutomationSpec, change: Partial<Automation> = {}): Automation {
  return nulls<Automation>({
    id: `a-${n}`,
    name: `automation ${n}`,
    enabled: true,
    spec,
    state: 'active',
    state_reason: null,
    last_fire: null,
    created_at: '2026-12-01T09:00:00Z',
    updated_at: '2026-12-01T09:00:00Z',
    ...change,
  });
}

export function watchSpec(folders = ['~/Inbox']): AutomationSpec {
  return nulls<AutomationSpec>({
    trigger: { kind: 'watch', folders, recursive: true, include: ['*.pdf'], exclude: [], events: ['created'], settle_ms: 1000, include_hidden: false },
    prompt: 'Summarise {{path}}',
    tools: null,
    task: null,
    allow: [],
    concurrency: 1,
    max_runs_per_hour: 2000,
    max_runs_per_file_per_hour: 10,
  });
}

export function scheduleSpec(cron = '0 8 * * 1-5', time_zone?: string): AutomationSpec {
  return nulls<AutomationSpec>({
    trigger: { kind: 'schedule', cron, time_zone: time_zone ?? null, missed: 'run_once' } as unknown as AutomationTrigger,
    prompt: 'Brief me',
    tools: null,
    task: null,
    allow: [],
    concurrency: 1,
    max_runs_per_hour: 2000,
    max_runs_per_file_per_hour: 10,
  });
}

export function run(n: number, automationId: string, change: Partial<AutomationRun> = {}): AutomationRun {
  return nulls<AutomationRun>({
    id: `r-${automationId}-${n}`,
    seq: n,
    automation_id: automationId,
    status: 'done',
    cause: 'file',
    event: 'created',
    path: `/home/me/Inbox/file${n}.pdf`,
    old_path: null,
    fire_time: null,
    reason: null,
    chain: [],
    session: `automation · run ${n}`,
    turn_id: `t-${automationId}-${n}`,
    attempts: 1,
    created_at: '2026-12-02T10:00:00Z',
    started_at: '2026-12-02T10:00:01Z',
    finished_at: '2026-12-02T10:00:09Z',
    ...change,
  });
}

export function question(id: string, change: Partial<QueuedApproval> = {}): QueuedApproval {
  return nulls<QueuedApproval>({
    id,
    run_id: 'r-a-1-1',
    automation_id: 'a-1',
    automation: 'automation 1',
    turn_id: 't-a-1-1',
    call_id: `c-${id}`,
    tool: 'shell',
    risk: 'exec',
    detail: '$ rm -rf ~/Inbox/old\n(cwd: /home/me)',
    reason: 'shell is an exec tool',
    suggested_pattern: null,
    status: 'pending',
    created_at: '2026-12-03T07:00:00Z',
    expires_at: '2026-12-04T07:00:00Z',
    answered_at: null,
    ...change,
  });
}

export function automationsEngine(automations: Automation[] = [], runs: AutomationRun[] = [], queue: QueuedApproval[] = []) {
  let all = [...automations];
  let allRuns = [...runs];
  let questions = [...queue];
  let nextId = 100;
  const find = (idOrName: string) => {
    const a = all.find((x) => x.id === idOrName || x.name === idOrName);
    if (!a) throw new TransportError('not_found', `no automation ${idOrName}`, 404);
    return a;
  };
  const view = (a: Automation): AutomationView => {
    const mine = allRuns.filter((r) => r.automation_id === a.id);
    const count = (s: AutomationRun['status']) => mine.filter((r) => r.status === s).length;
    return {
      automation: a,
      next_fires: a.spec.trigger.kind === 'schedule' && a.enabled ? FAKE_FIRES.slice(0, 5) : [],
      runs: {
        queued: count('queued'),
        running: count('running'),
        waiting_for_approval: count('waiting_for_approval'),
        done: count('done'),
        failed: count('failed'),
        skipped: count('skipped'),
      },
    };
  };
  const change = (id: string, c: Partial<Automation>) => {
    const a = { ...find(id), ...c, updated_at: '2026-12-03T10:00:00Z' };
    all = all.map((x) => (x.id === a.id ? a : x));
    return a;
  };
  const engine = new FakeEngine({
    automations: () => [...all].sort((a, b) => a.name.localeCompare(b.name)).map(view),
    automation: ({ automation: id }) => view(find(id)),
    add_automation: ({ name, spec, enabled }) => {
      if (all.some((a) => a.name === name)) throw new TransportError('conflict', `an automation named "${name}" exists`, 409);
      checkSpec(spec);
      const a = automation(nextId++, spec, { name, enabled: enabled ?? true, state: enabled === false ? 'paused' : 'active' });
      all = [...all, a];
      return view(a);
    },
    edit_automation: ({ automation: id, name, spec }) => {
      if (spec) checkSpec(spec);
      return view(change(id, { ...(name !== undefined ? { name } : {}), ...(spec ? { spec } : {}) }));
    },
    remove_automation: ({ automation: id }) => {
      const a = find(id);
      all = all.filter((x) => x.id !== a.id);
      allRuns = allRuns.filter((r) => r.automation_id !== a.id);
      return a;
    },
    set_automation_enabled: ({ automation: id, enabled }) => view(change(id, { enabled, state: enabled ? 'active' : 'paused' })),
    set_all_automations_enabled: ({ enabled }) => {
      const changing = all.filter((a) => a.enabled !== enabled);
      all = all.map((a) => ({ ...a, enabled, state: enabled ? 'active' : 'paused' }));
      return changing.length;
    },
    run_automation: ({ automation: id }) => {
      const a = find(id);
      const seq = Math.max(0, ...allRuns.filter((r) => r.automation_id === a.id).map((r) => Number(r.seq))) + 1;
      const r = run(
        seq,
        a.id,
        nulls<Partial<AutomationRun>>({
          status: 'queued', cause: 'manual', event: null, path: null, old_path: null, fire_time: null, reason: null, session: null,
          turn_id: null, started_at: null, finished_at: null, created_at: '2026-12-03T10:00:00Z',
        }),
      );
      allRuns = [r, ...allRuns];
      return r;
    },
    automation_runs: ({ automation: id, limit = 100 }) => {
      const a = find(id);
      return allRuns
        .filter((r) => r.automation_id === a.id)
        .sort((x, y) => Number(y.seq) - Number(x.seq))
        .slice(0, limit);
    },
    preview_automation: ({ spec }) => previewOf(spec),
    approval_queue: ({ all: everything }) => (everything ? [...questions] : questions.filter((q) => q.status === 'pending')),
    answer_approval: ({ request_id, answer }) => {
      const q = questions.find((x) => x.id === request_id && x.status === 'pending');
      if (!q) throw new TransportError('not_found', `no pending question ${request_id}`, 404);
      questions = questions.map((x) =>
        x.id === request_id ? { ...x, status: answer === 'deny' ? 'denied' : 'allowed', answered_at: '2026-12-03T10:00:00Z' } : x,
      );
      return null;
    },
  });
  return Object.assign(engine, {
    automations: () => all,
    runs: () => allRuns,
    questions: () => questions,
    /** The requests of one operation, in order. */
    sent: (op: string) => engine.requests.filter((r) => r.op === op).map((r) => r.request),
  });
}
