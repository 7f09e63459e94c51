// The waterfall layout on real shapes of traces: a turn with nested stages and calls, the
// extraction job that ends after the turn, a turn still running, a span whose parent was never
// written, zero and missing durations, and a child whose clock put it before its turn.

import { describe, expect, it } from 'vitest';
import { span, toolTurnSpans } from './testFakes';
import { layout, tickStep } from './waterfall';

const names = (w: ReturnType<typeof layout>) => w.rows.map((r) => `${'  '.repeat(r.depth)}${r.span.id}`);

describe('waterfall layout', () => {
  it('puts children under their parent, depth-first and by start time', () => {
    // Stored in start order by the engine, but shuffled here: the layout must not rely on it.
    const spans = toolTurnSpans();
    const shuffled = [spans[5], spans[2], spans[11], spans[0], spans[9], spans[3], spans[1], spans[7], spans[4], spans[10], spans[6], spans[8]].map((s) => s!);
    const w = layout(shuffled);
    expect(names(w)).toEqual([
      'root',
      '  ctx',
      '    recall',
      '  inf1',
      '    call1',
      '  tools1',
      '    appr',
      '    tool',
      '  inf2',
      '    call2',
      '  resp',
      '  bg',
    ]);
    expect(w.rows.every((r) => !r.orphan && !r.clipped)).toBe(true);
  });

  it('spans the axis from the turn start to the latest end, background work included', () => {
    const w = layout(toolTurnSpans());
    // The extraction job starts at 2500 and runs 700 ms: the axis ends at 3200, after the turn.
    expect(w.totalMs).toBe(3200);
    expect(w.turnEnd).toBeCloseTo(2400 / 3200);
    const byId = Object.fromEntries(w.rows.map((r) => [r.span.id, r]));
    expect(byId.root?.offset).toBe(0);
    expect(byId.root?.width).toBeCloseTo(2400 / 3200);
    expect(byId.call1?.offset).toBeCloseTo(55 / 3200);
    expect(byId.call1?.width).toBeCloseTo(840 / 3200);
    expect(byId.bg?.afterTurn).toBe(true);
    expect(byId.bg?.offset).toBeCloseTo(2500 / 3200);
    expect((byId.bg?.offset ?? 0) + (byId.bg?.width ?? 0)).toBeCloseTo(1);
    expect(byId.resp?.afterTurn).toBe(false);
    expect(w.ticks.map((t) => t.ms)).toEqual([0, 1000, 2000, 3000]);
    expect(w.ticks[1]?.offset).toBeCloseTo(1000 / 3200);
  });

  it('extends a running turn to now, or to the latest known end without a clock', () => {
    const spans = [
      span('root', null, 0, null),
      span('ctx', 'root', 0, 30),
      span('inf1', 'root', 40, null),
      span('call1', 'inf1', 45, null, { level: 'call', kind: 'model' }),
    ];
    const live = layout(spans, { now: Date.parse('2026-11-05T10:00:01.000Z') });
    expect(live.totalMs).toBe(1000);
    expect(live.turnEnd).toBeNull();
    const call = live.rows.find((r) => r.span.id === 'call1');
    expect(call?.open).toBe(true);
    expect(call?.endMs).toBe(1000);
    expect((call?.offset ?? 0) + (call?.width ?? 0)).toBeCloseTo(1);

    // A turn whose process died keeps its spans "running" for ever: without `now` the bars
    // stop at the last thing known to have happened (ctx ended at 30, call1 started at 45).
    const dead = layout(spans);
    expect(dead.totalMs).toBe(45);
    expect(dead.rows.find((r) => r.span.id === 'inf1')?.endMs).toBe(45);
  });

  it('shows a span whose parent is missing at the top level, flagged, with its children', () => {
    const w = layout([
      span('root', null, 0, 100),
      span('lost', 'gone', 20, 30),
      span('child', 'lost', 25, 10, { level: 'call' }),
      span('ctx', 'root', 5, 10),
    ]);
    expect(names(w)).toEqual(['root', '  ctx', 'lost', '  child']);
    expect(w.rows.find((r) => r.span.id === 'lost')?.orphan).toBe(true);
    expect(w.rows.find((r) => r.span.id === 'child')?.orphan).toBe(false);
  });

  it('gives zero-length and unfinished-but-not-running spans the minimum width, inside the axis', () => {
    const w = layout(
      [
        span('root', null, 0, 1000),
        span('instant', 'root', 500, 0),
        span('cancelled', 'root', 1000, null, { status: 'cancelled' }),
      ],
      { minWidth: 0.01 },
    );
    const instant = w.rows.find((r) => r.span.id === 'instant');
    expect(instant?.width).toBe(0.01);
    expect(instant?.offset).toBeCloseTo(0.5);
    const cancelled = w.rows.find((r) => r.span.id === 'cancelled');
    expect(cancelled?.open).toBe(false);
    expect(cancelled?.width).toBe(0.01);
    expect(cancelled?.offset).toBeCloseTo(0.99);
  });

  it('draws a span that starts before its turn from the axis start', () => {
    const w = layout([span('root', null, 100, 1000), span('early', 'root', 40, 200)]);
    const early = w.rows.find((r) => r.span.id === 'early');
    expect(early?.clipped).toBe(true);
    expect(early?.offset).toBe(0);
    expect(early?.width).toBeCloseTo(140 / 1000);
    expect(early?.startMs).toBe(-60);
  });

  it('copes with no spans, an unreadable start and a cycle of parents', () => {
    expect(layout([]).rows).toEqual([]);
    const w = layout([
      span('root', null, 0, 100),
      span('bad', 'root', 0, 10, { started_at: 'yesterday' }),
      span('a', 'b', 10, 10),
      span('b', 'a', 20, 10),
    ]);
    expect(w.rows.map((r) => r.span.id).sort()).toEqual(['a', 'b', 'bad', 'root']);
    expect(w.rows.find((r) => r.span.id === 'bad')?.offset).toBe(0);
    expect(w.rows.every((r) => r.offset >= 0 && r.offset + r.width <= 1 + 1e-9)).toBe(true);
  });

  it('picks round tick steps', () => {
    expect(tickStep(3200, 5)).toBe(1000);
    expect(tickStep(45, 5)).toBe(10);
    expect(tickStep(1, 5)).toBe(1);
    expect(tickStep(70_000, 5)).toBe(20_000);
  });
});
