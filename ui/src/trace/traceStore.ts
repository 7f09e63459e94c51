// The trace page's state: the turns (filtered on the server), the open turn's trace, the
// selected span, the model calls read so far (only when their span is selected: a captured
// request can be large), and exporting a turn as a replay case. While the open turn runs, or
// its background jobs are still going shortly after it ended, the trace is read again every
// second. No React here; components read it through `useSyncExternalStore`.

import type { ListTraces, ModelCall, SpanRecord, Trace, TurnRecord, TurnStatus } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from '../settings/store';
import { TransportError } from '../transport';

/** Turns asked for at a time. */
export const LIST_SIZE = 100;

/** How often a live trace is read again (ms). */
export const POLL_MS = 1000;

/** How long after a turn ended its still-running spans (background jobs) are followed (ms). */
export const FOLLOW_AFTER_MS = 60_000;

export const TURN_STATUSES: readonly TurnStatus[] = ['accepted', 'running', 'completed', 'failed', 'interrupted'];
export const TRI = ['any', 'yes', 'no'] as const;
export type Tri = (typeof TRI)[number];

/** The filters bar as set; empty means "any". `since`/`until` are `datetime-local` values. */
export interface TraceFilters {
  session: string;
  status: TurnStatus | '';
  degraded: Tri;
  model: string;
  approvals: Tri;
  since: string;
  until: string;
}

export const DEFAULT_FILTERS: TraceFilters = { session: '', status: '', degraded: 'any', model: '', approvals: 'any', since: '', until: '' };

/** A local `datetime-local` value as RFC 3339 (UTC), or undefined when blank or not a time. */
export function toRfc3339(local: string): string | undefined {
  if (!local.trim()) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** The `traces` request for the filters: only what is set. */
export function listRequest(f: TraceFilters, limit = LIST_SIZE): ListTraces {
  const since = toRfc3339(f.since);
  const until = toRfc3339(f.until);
  return {
    limit,
    ...(f.session.trim() ? { session: f.session.trim() } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.degraded === 'any' ? {} : { degraded: f.degraded === 'yes' }),
    ...(f.model.trim() ? { model: f.model.trim() } : {}),
    ...(f.approvals === 'any' ? {} : { has_approvals: f.approvals === 'yes' }),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  };
}

/** A model call as read: on its way, read, not captured (settings or retention), or failed. */
export type CallState =
  | { state: 'loading' }
  | { state: 'ok'; call: ModelCall }
  | { state: 'missing' }
  | { state: 'error'; message: string };

/**
 * Whether a span is a model call whose request and response may have been captured (the
 * engine stores `attrs` as `null` for calls recorded without any).
 */
export function mayHaveCapture(span: SpanRecord): boolean {
  return span.kind === 'model' && (span.attrs ?? {}).captured !== false;
}

/** Whether the trace is still changing: the turn runs, or spans run shortly after it ended. */
export function isLive(trace: Trace, now: number): boolean {
  const { status, finished_at } = trace.turn;
  if (status === 'running' || status === 'accepted') return true;
  if (!trace.spans.some((s) => s.status === 'running')) return false;
  const ended = finished_at ? Date.parse(finished_at) : Number.NaN;
  return !Number.isNaN(ended) && now - ended < FOLLOW_AFTER_MS;
}

/** Saves `blob` as a file called `name` (the browser's download). */
export type Download = (name: string, blob: Blob) => void;

/** The browser's download through an object URL and a temporary link. */
export const browserDownload: Download = (name, blob) => {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
};

export interface TraceState {
  filters: TraceFilters;
  /** The listed turns, newest first; undefined before the first answer. */
  turns: TurnRecord[] | undefined;
  loading: boolean;
  listError: string | null;
  /** The open turn's id, and its trace once read. */
  openId: string | null;
  trace: Trace | null;
  traceError: string | null;
  /** The selected span's id. */
  selected: string | null;
  /** Model calls read so far, by span id. */
  calls: Record<string, CallState>;
  /** The file name of the last export, or why it failed. */
  exported: string | null;
  exportError: string | null;
  exporting: boolean;
}

export interface TraceStoreOptions {
  download?: Download;
  /** The clock (tests). */
  now?: () => number;
}

export class TraceStore extends SettingsStore<TraceState> {
  private readonly transport: SettingsTransport;
  private readonly download: Download;
  private readonly now: () => number;
  private listGeneration = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** False once disposed: an answer arriving later starts no more polling. */
  private active = true;

  constructor(transport: SettingsTransport, options: TraceStoreOptions = {}) {
    super({
      filters: DEFAULT_FILTERS,
      turns: undefined,
      loading: false,
      listError: null,
      openId: null,
      trace: null,
      traceError: null,
      selected: null,
      calls: {},
      exported: null,
      exportError: null,
      exporting: false,
    });
    this.transport = transport;
    this.download = options.download ?? browserDownload;
    this.now = options.now ?? (() => Date.now());
  }

  /** The list (and the open turn again, when one is open). */
  async load(): Promise<void> {
    this.active = true;
    await Promise.all([this.list(), this.getState().openId ? this.refreshTrace() : Promise.resolve()]);
  }

  /** Reads the turns matching the filters; an answer for older filters is dropped. */
  async list(): Promise<void> {
    const generation = ++this.listGeneration;
    this.set({ loading: true });
    try {
      const turns = await this.transport.call('traces', listRequest(this.getState().filters));
      if (generation === this.listGeneration) this.set({ turns, listError: null });
    } catch (e) {
      if (generation === this.listGeneration) this.set({ listError: describe(e) });
    } finally {
      if (generation === this.listGeneration) this.set({ loading: false });
    }
  }

  async setFilters(change: Partial<TraceFilters>): Promise<void> {
    this.set({ filters: { ...this.getState().filters, ...change } });
    await this.list();
  }

  async resetFilters(): Promise<void> {
    await this.setFilters(DEFAULT_FILTERS);
  }

  /** Opens a turn: reads its trace; the span selection and the read calls start over. */
  async open(turnId: string): Promise<void> {
    if (this.getState().openId === turnId && this.getState().trace) return;
    this.stopPolling();
    this.set({ openId: turnId, trace: null, traceError: null, selected: null, calls: {}, exported: null, exportError: null });
    await this.refreshTrace();
  }

  close(): void {
    this.stopPolling();
    this.set({ openId: null, trace: null, traceError: null, selected: null, calls: {} });
  }

  /** Reads the open trace again; keeps reading it every second while it is live. */
  async refreshTrace(): Promise<void> {
    const id = this.getState().openId;
    if (id === null) return;
    try {
      const trace = await this.transport.call('trace', { turn_id: id });
      if (this.getState().openId !== id) return;
      this.set({ trace, traceError: null });
      this.stopPolling();
      if (this.active && isLive(trace, this.now())) this.timer = setTimeout(() => void this.refreshTrace(), POLL_MS);
    } catch (e) {
      if (this.getState().openId === id) this.set({ traceError: describe(e) });
    }
  }

  /** The open trace's span with this id. */
  span(id: string | null): SpanRecord | undefined {
    return id === null ? undefined : this.getState().trace?.spans.find((s) => s.id === id);
  }

  /** Selects a span; a model call's request and response are read the first time. */
  async select(spanId: string | null): Promise<void> {
    this.set({ selected: spanId });
    const span = this.span(spanId);
    if (span && mayHaveCapture(span) && !(span.id in this.getState().calls)) await this.loadCall(span.id);
  }

  /** Reads (again) the captured request and response of a model call. */
  async loadCall(spanId: string): Promise<void> {
    const turnId = this.getState().openId;
    if (turnId === null) return;
    const put = (state: CallState) => {
      if (this.getState().openId === turnId) this.set({ calls: { ...this.getState().calls, [spanId]: state } });
    };
    put({ state: 'loading' });
    try {
      put({ state: 'ok', call: await this.transport.call('trace_call', { turn_id: turnId, span_id: spanId }) });
    } catch (e) {
      put(e instanceof TransportError && e.code === 'not_found' ? { state: 'missing' } : { state: 'error', message: describe(e) });
    }
  }

  /** Downloads the open turn as a replay case, `<turn_id>.case.json`. */
  async exportCase(): Promise<void> {
    const turnId = this.getState().openId;
    if (turnId === null) return;
    this.set({ exporting: true, exported: null, exportError: null });
    try {
      const replay = await this.transport.call('trace_case', { turn_id: turnId });
      const name = `${turnId}.case.json`;
      this.download(name, new Blob([`${JSON.stringify(replay, null, 2)}\n`], { type: 'application/json' }));
      this.set({ exported: name });
    } catch (e) {
      this.set({ exportError: describe(e) });
    } finally {
      this.set({ exporting: false });
    }
  }

  dismissExport(): void {
    this.set({ exported: null, exportError: null });
  }

  private stopPolling(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.active = false;
    this.stopPolling();
  }
}
