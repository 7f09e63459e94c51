// The fading chart's geometry: the engine's points land on the right x (time) and y
// (importance), the threshold line at its importance, uses and the expiry on the time axis,
// the curve split at now into past and projected, and no points or one point handled.

import { describe, expect, it } from 'vitest';
import type { Fading } from '../generated/engine';
import { type ChartBox, type ChartPoint, fadingChart, polyline } from './fadingChart';

// A plot area of 100 × 50 from (10, 5): x = 10 + 100·(t − start)/(end − start), y = 5 + 50·(1 − v/top).
const BOX: ChartBox = { width: 115, height: 65, left: 10, right: 5, top: 5, bottom: 10 };
/** Points rounded to a millionth, to compare with exact values. */
const r = (ps: ChartPoint[]) => ps.map((p) => ({ x: Number(p.x.toFixed(6)), y: Number(p.y.toFixed(6)) }));
const day = (d: number) => new Date(Date.UTC(2026, 10, 1 + d)).toISOString();

function fading(change: Partial<Fading> = {}): Fading {
  return {
    memory_id: 'm-1',
    now: day(2),
    pinned: false,
    importance: 0.8,
    half_life_days: 2,
    effective_now: 0.4,
    archive_below: 0.1,
    last_touch: day(0),
    valid_until: null,
    archives_at: day(6),
    archive_reason: 'faded',
    points: [0, 2, 4, 6, 8, 10].map((d) => ({ at: day(d), effective: 0.8 / 2 ** (d / 2) })),
    uses: [],
    ...change,
  };
}

describe('fadingChart', () => {
  it('maps the engine\'s points to x by time and y by importance, split at now', () => {
    const c = fadingChart(fading(), BOX);
    expect(c.start).toBe(Date.parse(day(0)));
    expect(c.end).toBe(Date.parse(day(10)));
    expect(c.top).toBe(1);
    // Past: the first point, then now (the engine's effective_now).
    expect(r(c.past)).toEqual([{ x: 10, y: 15 }, { x: 30, y: 35 }]);
    // Projected: from now through the points after it.
    expect(r(c.projected)[0]).toEqual({ x: 30, y: 35 });
    expect(r(c.projected).map((p) => p.x)).toEqual([30, 50, 70, 90, 110]);
    expect(c.projected[1]?.y).toBeCloseTo(5 + 50 * (1 - 0.2));
    expect(c.projected.at(-1)?.y).toBeCloseTo(5 + 50 * (1 - 0.025));
    expect(c.now).toEqual({ x: 30, at: day(2) });
    expect(polyline(c.past)).toBe('10,15 30,35');
  });

  it('draws the threshold at its importance', () => {
    expect(fadingChart(fading(), BOX).thresholdY).toBeCloseTo(5 + 50 * 0.9);
    expect(fadingChart(fading({ archive_below: 0 }), BOX).thresholdY).toBe(55);
  });

  it('places uses on the time axis, widening it back to an earlier use', () => {
    const c = fadingChart(fading({ uses: [day(-10), day(0), day(1)] }), BOX);
    expect(c.start).toBe(Date.parse(day(-10)));
    expect(c.uses).toEqual([{ x: 10, at: day(-10) }, { x: 60, at: day(0) }, { x: 65, at: day(1) }]);
    expect(c.past[0]?.x).toBe(60);
  });

  it('marks the expiry on the time axis, at the edge when it falls after the chart', () => {
    expect(fadingChart(fading({ valid_until: day(5) }), BOX).expiry).toEqual({ x: 60, at: day(5), beyond: false });
    expect(fadingChart(fading({ valid_until: '2099-01-01' }), BOX).expiry).toEqual({ x: 110, at: '2099-01-01', beyond: true });
    expect(fadingChart(fading(), BOX).expiry).toBeNull();
  });

  it('raises the importance axis to fit a curve above 1', () => {
    const c = fadingChart(fading({ points: [{ at: day(0), effective: 2 }, { at: day(4), effective: 1 }], effective_now: 1.5 }), BOX);
    expect(c.top).toBe(2);
    expect(r(c.past)[0]).toEqual({ x: 10, y: 5 });
    expect(c.now.x).toBe(60);
    expect(r(c.projected).at(-1)).toEqual({ x: 110, y: 30 });
  });

  it('draws no curve for no points, with now in the middle', () => {
    const c = fadingChart(fading({ points: [] }), BOX);
    expect(c.past).toEqual([]);
    expect(c.projected).toEqual([]);
    expect(c.now.x).toBe(60);
    expect(c.thresholdY).toBeCloseTo(50);
  });

  it('puts a single point at now in the middle, with nothing projected', () => {
    const c = fadingChart(fading({ points: [{ at: day(2), effective: 0.5 }], effective_now: 0.5 }), BOX);
    expect(r(c.past)).toEqual([{ x: 60, y: 30 }]);
    expect(c.projected).toEqual([]);
    expect(c.uses).toEqual([]);
  });

  it('skips times it cannot read', () => {
    const c = fadingChart(fading({ uses: ['not a time'], points: [{ at: 'later', effective: 0.3 }, { at: day(4), effective: 0.2 }] }), BOX);
    expect(c.uses).toEqual([]);
    expect(r(c.past)).toEqual([{ x: 10, y: 35 }]);
    expect(r(c.projected)).toEqual([{ x: 10, y: 35 }, { x: 110, y: 45 }]);
  });
});
