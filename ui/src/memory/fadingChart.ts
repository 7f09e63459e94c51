// The fading chart's geometry: the engine's curve of a memory's effective importance (`memory_fading`,
// computed by the engine's own formula, past and projected) mapped to SVG coordinates. Nothing
// here computes importance; it only places the engine's points, its threshold, the times the
// memory was used, "now" and the expiry on the chart.

import type { Fading } from '../generated/engine';

/** The drawing area inside the SVG (its viewBox is `0 0 width height`). */
export interface ChartBox {
  width: number;
  height: number;
  /** Room for the axes' labels. */
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export const CHART_BOX: ChartBox = { width: 320, height: 120, left: 30, right: 8, top: 8, bottom: 18 };

/** A point of the curve on the chart. */
export interface ChartPoint {
  x: number;
  y: number;
}

/** A time marked on the time axis. */
export interface TimeMark {
  x: number;
  at: string;
}

export interface FadingChart {
  /** The curve up to now (solid) and from now on (projected, dashed), as SVG polyline points. */
  past: ChartPoint[];
  projected: ChartPoint[];
  /** Where the sweep archives it. */
  thresholdY: number;
  /** Uses in prompts, on the time axis. */
  uses: TimeMark[];
  now: TimeMark;
  /** The expiry, when set; `beyond` when it falls after the chart's end (drawn at its edge). */
  expiry: (TimeMark & { beyond: boolean }) | null;
  /** The time axis's ends (ms), for its labels. */
  start: number;
  end: number;
  /** The importance axis's top (0 is the bottom). */
  top: number;
}

/** `polyline` points text. */
export function polyline(points: ChartPoint[]): string {
  return points.map((p) => `${round(p.x)},${round(p.y)}`).join(' ');
}

const round = (n: number) => Math.round(n * 10) / 10;

const ms = (at: string | null | undefined): number | null => {
  if (!at) return null;
  const t = Date.parse(at);
  return Number.isNaN(t) ? null : t;
};

/**
 * Places the engine's fading curve on `box`. The time axis runs from the earliest of the
 * curve, the uses, now and a past expiry to the latest of the curve and now (an expiry past
 * that is drawn at the edge and marked `beyond`); with no width at all (one point at now) everything sits in the
 * middle. The importance axis runs from 0 to the largest of 1, the curve and the threshold.
 */
export function fadingChart(f: Fading, box: ChartBox = CHART_BOX): FadingChart {
  const now = ms(f.now) ?? 0;
  const curve = f.points.flatMap((p) => {
    const at = ms(p.at);
    return at === null ? [] : [{ at, effective: p.effective }];
  });
  const uses = f.uses.flatMap((u) => {
    const at = ms(u);
    return at === null ? [] : [{ at, raw: u }];
  });
  const expiryAt = f.valid_until === null ? null : ms(f.valid_until);
  const times = [now, ...curve.map((p) => p.at)];
  const start = Math.min(...times, ...uses.map((u) => u.at), ...(expiryAt === null ? [] : [expiryAt]));
  const end = Math.max(...times);
  const top = Math.max(1, f.archive_below, ...curve.map((p) => p.effective));

  const plotW = box.width - box.left - box.right;
  const plotH = box.height - box.top - box.bottom;
  const x = (at: number) => (end > start ? box.left + ((at - start) / (end - start)) * plotW : box.left + plotW / 2);
  const y = (v: number) => box.top + (1 - Math.max(0, v) / top) * plotH;
  const at = (p: { at: number; effective: number }): ChartPoint => ({ x: x(p.at), y: y(p.effective) });

  // The curve splits at now, which both halves share (the engine's own value for now).
  const nowPoint = { x: x(now), y: y(f.effective_now) };
  const before = curve.filter((p) => p.at < now).map(at);
  const after = curve.filter((p) => p.at > now).map(at);
  const past = curve.length === 0 ? [] : [...before, nowPoint];
  const projected = curve.length === 0 || after.length === 0 ? [] : [nowPoint, ...after];

  const expiry =
    expiryAt === null || f.valid_until === null
      ? null
      : { x: x(Math.min(expiryAt, end)), at: f.valid_until, beyond: expiryAt > end };

  return {
    past,
    projected,
    thresholdY: y(f.archive_below),
    uses: uses.map((u) => ({ x: x(u.at), at: u.raw })),
    now: { x: nowPoint.x, at: f.now },
    expiry,
    start,
    end,
    top,
  };
}
