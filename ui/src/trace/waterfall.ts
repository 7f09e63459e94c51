// The trace page's waterfall as numbers, no React: a turn's spans in depth-first order
// (children under their parent, by start time) with where each bar starts and how wide it is
// as fractions of the turn's time axis, plus the axis ticks. The axis runs from the turn
// span's start to the latest end of anything in the trace (background jobs end after the
// turn). Stored data can be odd — a span whose parent was never written, a duration that is
// missing or zero, a clock that put a child before its turn — and none of it may break the
// picture, so each of those has a defined place here.

import type { SpanRecord } from '../generated/engine';

/** One bar of the waterfall. */
export interface WaterfallRow {
  span: SpanRecord;
  /** Nesting level: 0 for the turn span (and for spans whose parent is missing). */
  depth: number;
  /** Where the bar starts, 0..1 of the axis. */
  offset: number;
  /** How wide the bar is, 0..1 of the axis (at least the minimum width). */
  width: number;
  /** Start and end in ms after the axis start (as stored; the bar may be widened). */
  startMs: number;
  endMs: number;
  /** Still running: its end is "now" or the latest known end, not a stored duration. */
  open: boolean;
  /** Its parent is not in the trace. */
  orphan: boolean;
  /** It started after the turn span ended (post-turn background work). */
  afterTurn: boolean;
  /** It started before the axis (clock skew) and is drawn from the axis start. */
  clipped: boolean;
}

export interface AxisTick {
  /** ms after the axis start. */
  ms: number;
  /** 0..1 of the axis. */
  offset: number;
}

export interface Waterfall {
  rows: WaterfallRow[];
  /** The axis start as epoch ms (the turn span's start), or null for an empty trace. */
  startedAt: number | null;
  /** The axis length in ms (at least 1). */
  totalMs: number;
  /** Where the turn span ends, 0..1 of the axis; null when it has no end yet. */
  turnEnd: number | null;
  ticks: AxisTick[];
}

export interface LayoutOptions {
  /** Epoch ms that running spans extend to; without it they extend to the latest known end. */
  now?: number;
  /** The narrowest bar, as a fraction of the axis (default 0.005). */
  minWidth?: number;
  /** About how many ticks the axis gets (default 5). */
  ticks?: number;
}

const DEFAULT_MIN_WIDTH = 0.005;

function parseTime(at: string): number | null {
  const t = Date.parse(at);
  return Number.isNaN(t) ? null : t;
}

/** The turn span: the `turn`-level span without a parent, else the earliest parentless one. */
function findRoot(spans: readonly SpanRecord[], starts: Map<string, number>): SpanRecord | undefined {
  const turn = spans.find((s) => s.level === 'turn' && s.parent_id === null);
  if (turn) return turn;
  const parentless = spans.filter((s) => s.parent_id === null);
  const pool = parentless.length > 0 ? parentless : spans;
  return [...pool].sort((a, b) => (starts.get(a.id) ?? 0) - (starts.get(b.id) ?? 0))[0];
}

/** Tick spacing: 1, 2 or 5 times a power of ten, giving at most about `count` intervals. */
export function tickStep(totalMs: number, count: number): number {
  const raw = totalMs / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  for (const m of [1, 2, 5, 10]) {
    if (m * power >= raw) return Math.max(1, m * power);
  }
  return Math.max(1, 10 * power);
}

/** Lays the spans of one trace out as waterfall rows. */
export function layout(spans: readonly SpanRecord[], options: LayoutOptions = {}): Waterfall {
  const minWidth = options.minWidth ?? DEFAULT_MIN_WIDTH;
  if (spans.length === 0) return { rows: [], startedAt: null, totalMs: 1, turnEnd: null, ticks: [{ ms: 0, offset: 0 }] };

  // Start times; a span with an unreadable start stands at the earliest readable one.
  const parsed = spans.map((s) => parseTime(s.started_at));
  const readable = parsed.filter((t): t is number => t !== null);
  const fallback = readable.length > 0 ? Math.min(...readable) : 0;
  const starts = new Map(spans.map((s, i) => [s.id, parsed[i] ?? fallback]));
  const startOf = (s: SpanRecord) => starts.get(s.id) ?? fallback;
  const closed = (s: SpanRecord) => s.duration_ms !== null && Number.isFinite(s.duration_ms);
  const knownEnd = (s: SpanRecord) => startOf(s) + (closed(s) ? Math.max(0, s.duration_ms as number) : 0);

  const root = findRoot(spans, starts) as SpanRecord;
  const axisStart = startOf(root);
  const latestKnown = Math.max(...spans.map(knownEnd));
  const isOpen = (s: SpanRecord) => !closed(s) && s.status === 'running';
  const openEnd = options.now !== undefined ? Math.max(options.now, latestKnown) : latestKnown;
  const endOf = (s: SpanRecord) => (isOpen(s) ? Math.max(startOf(s), openEnd) : knownEnd(s));
  const axisEnd = Math.max(axisStart, ...spans.map(endOf));
  const totalMs = Math.max(1, axisEnd - axisStart);
  const turnEnd = isOpen(root) || !closed(root) ? null : (knownEnd(root) - axisStart) / totalMs;

  // Children by parent, each list by start time (ties keep the stored order).
  const ids = new Set(spans.map((s) => s.id));
  const order = new Map(spans.map((s, i) => [s.id, i]));
  const byStart = (a: SpanRecord, b: SpanRecord) => startOf(a) - startOf(b) || (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0);
  const children = new Map<string, SpanRecord[]>();
  const tops: SpanRecord[] = [];
  for (const s of spans) {
    if (s === root) continue;
    if (s.parent_id !== null && ids.has(s.parent_id) && s.parent_id !== s.id) {
      const list = children.get(s.parent_id) ?? [];
      list.push(s);
      children.set(s.parent_id, list);
    } else {
      tops.push(s);
    }
  }
  for (const list of children.values()) list.sort(byStart);
  tops.sort(byStart);

  const rows: WaterfallRow[] = [];
  const seen = new Set<string>();
  const rootEnd = closed(root) ? knownEnd(root) : Number.POSITIVE_INFINITY;
  const visit = (s: SpanRecord, depth: number, orphan: boolean) => {
    if (seen.has(s.id)) return;
    seen.add(s.id);
    const start = startOf(s);
    const end = endOf(s);
    const clipped = start < axisStart;
    let offset = (Math.max(start, axisStart) - axisStart) / totalMs;
    let width = (Math.max(end, axisStart) - Math.max(start, axisStart)) / totalMs;
    if (width < minWidth) width = Math.min(minWidth, 1);
    if (offset + width > 1) offset = Math.max(0, 1 - width);
    rows.push({
      span: s,
      depth,
      offset,
      width,
      startMs: start - axisStart,
      endMs: end - axisStart,
      open: isOpen(s),
      orphan,
      afterTurn: s !== root && start >= rootEnd,
      clipped,
    });
    for (const c of children.get(s.id) ?? []) visit(c, depth + 1, false);
  };
  visit(root, 0, false);
  // Parentless spans other than the turn, and spans whose parent is missing, follow the turn's
  // tree at the top level; a cycle's members (never reached from a top) come last.
  for (const s of tops) visit(s, 0, s.parent_id === null || !ids.has(s.parent_id) || s.parent_id === s.id);
  for (const s of [...spans].sort(byStart)) visit(s, 0, true);

  const step = tickStep(totalMs, options.ticks ?? 5);
  const ticks: AxisTick[] = [];
  for (let ms = 0; ms <= totalMs + 1e-9; ms += step) ticks.push({ ms, offset: ms / totalMs });
  return { rows, startedAt: axisStart, totalMs, turnEnd, ticks };
}
