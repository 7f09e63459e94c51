// How the trace page shows durations, counts, excerpts and the loosely typed span fields.

import type { TurnRecord } from '../../generated/engine';

/** A duration: `840 ms`, `2.4 s`, `3 min 5 s`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A turn's run time from `started_at` (or `created_at`) to `finished_at`; null while it runs. */
export function turnDurationMs(turn: Pick<TurnRecord, 'created_at' | 'started_at' | 'finished_at'>): number | null {
  if (!turn.finished_at) return null;
  const start = Date.parse(turn.started_at ?? turn.created_at);
  const end = Date.parse(turn.finished_at);
  return Number.isNaN(start) || Number.isNaN(end) ? null : Math.max(0, end - start);
}

/** Token counts arrive as JSON numbers although the wire type says bigint. */
export function count(n: bigint | number | null | undefined): string {
  return n === null || n === undefined ? '—' : Number(n).toLocaleString();
}

/** The first line of a text, cut to `max` characters. */
export function excerpt(text: string, max = 80): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** JSON text pretty-printed; anything else as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Any JSON value as text: a string as it is, the rest as JSON. */
export function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2) ?? String(value);
}

/** An attribute's value when it is a string (or a number, as text). */
export function text(attrs: Record<string, unknown>, key: string): string | undefined {
  const v = attrs[key];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** An attribute's value when it is a number. */
export function num(attrs: Record<string, unknown>, key: string): number | undefined {
  const v = attrs[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** An attribute's value as a list of strings (ids), whatever arrived. */
export function strings(attrs: Record<string, unknown>, key: string): string[] {
  const v = attrs[key];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' && v ? [v] : [];
}

/** A stored time in the reader's locale, with milliseconds; the text itself when not a time. */
export function clock(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  return `${d.toLocaleString()}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}
