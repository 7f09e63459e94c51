// @vitest-environment jsdom
// The app's fallback notice: shown when the last day's share of turns that fell back reaches
// `[trace] notice_rate` (with enough turns to mean something), naming the commonest
// fallback; Open traces and Dismiss; never with the setting at 0.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { DegradationStats, TraceSettings } from '../../generated/engine';
import { FakeEngine } from '../../testing/fakeEngine';
import { byTestId, cleanup, flush, mount } from '../settings/testing';
import { DegradationNotice, NOTICE_MIN_TURNS } from './DegradationNotice';

afterEach(cleanup);

function engine(noticeRate: number, turns: number, rate: number) {
  const settings: TraceSettings = { capture: true, retention_days: 30, notice_rate: noticeRate };
  const stats = (since: string): DegradationStats => ({
    since,
    turns,
    degraded_turns: Math.round(turns * rate),
    rate,
    by_reason: [
      { reason: 'partial_report', turns: 3, rate: 0.3 },
      { reason: 'retry', turns: 1, rate: 0.1 },
    ],
  });
  return new FakeEngine({ trace_settings: () => settings, trace_stats: ({ since }) => stats(since ?? '') });
}

describe('DegradationNotice', () => {
  it('says so when the share reaches the setting, and opens the traces or goes away', async () => {
    let opened = 0;
    const { container, root } = mount(<DegradationNotice transport={engine(0.3, 10, 0.4)} refresh={1} onOpenTraces={() => opened++} />);
    await flush();
    const notice = byTestId<HTMLElement>(container, 'degradation-notice');
    expect(notice?.querySelector('span')?.textContent).toBe('40% of the last day’s 10 turns fell back (most often: partial_report).');
    const [open, dismiss] = [...(notice?.querySelectorAll('button') ?? [])];
    act(() => open?.click());
    expect(opened).toBe(1);
    act(() => dismiss?.click());
    expect(byTestId(container, 'degradation-notice')).toBeNull();
    act(() => root.unmount());
  });

  it('stays away under the setting, with too few turns, or with the setting at 0', async () => {
    for (const [rate, turns, share] of [
      [0.3, 10, 0.2],
      [0.3, NOTICE_MIN_TURNS - 1, 1],
      [0, 10, 1],
    ] as const) {
      const { container, root } = mount(<DegradationNotice transport={engine(rate, turns, share)} refresh={1} onOpenTraces={() => {}} />);
      await flush();
      expect(byTestId(container, 'degradation-notice')).toBeNull();
      act(() => root.unmount());
    }
  });
});
