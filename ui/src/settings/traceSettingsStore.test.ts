// The trace settings store without a page: the form starts from the settings in force, the
// days must be a whole number before anything is sent, a save shows what the engine kept, and
// the engine's refusal is kept as its text.

import { describe, expect, it } from 'vitest';
import { TraceSettingsStore, daysValid, parseDays } from './traceSettingsStore';
import { traceSettingsTransport } from './testFakes';

describe('parseDays', () => {
  it('takes a whole number of days, 0 included, and nothing else', () => {
    expect(parseDays('30')).toBe(30);
    expect(parseDays(' 7 ')).toBe(7);
    expect(parseDays('0')).toBe(0);
    for (const bad of ['', ' ', '-1', '1.5', '3e2', 'ten', '7 days', '0x10']) expect(parseDays(bad)).toBeNull();
  });
});

describe('TraceSettingsStore', () => {
  it('starts from the settings in force and saves capture off with new days', async () => {
    const engine = traceSettingsTransport({ capture: true, retention_days: 30, notice_rate: 0.3 });
    const store = new TraceSettingsStore(engine);
    await store.load();
    expect(store.getState()).toMatchObject({ capture: true, days: '30', settings: { capture: true, retention_days: 30 } });
    store.setCapture(false);
    store.setDays(' 14 ');
    await store.save();
    expect(engine.sent).toEqual([{ capture: false, retention_days: 14, notice_rate: 0.3 }]);
    expect(store.getState()).toMatchObject({ capture: false, days: '14', saved: true, failure: null, busy: false });
    expect(engine.settings()).toEqual({ capture: false, retention_days: 14, notice_rate: 0.3 });
  });

  it('shows the notice share in percent and saves it as a rate; nothing is sent for a bad one', async () => {
    const engine = traceSettingsTransport({ capture: true, retention_days: 30, notice_rate: 0.25 });
    const store = new TraceSettingsStore(engine);
    await store.load();
    expect(store.getState().notice).toBe('25');
    for (const bad of ['101', '-1', '0.5', 'half', '']) {
      store.setNotice(bad);
      await store.save();
    }
    expect(engine.sent).toEqual([]);
    store.setNotice(' 0 ');
    await store.save();
    expect(engine.sent).toEqual([{ capture: true, retention_days: 30, notice_rate: 0 }]);
    expect(store.getState()).toMatchObject({ notice: '0', saved: true });
  });

  it('sends nothing while the days are not a whole number', async () => {
    const engine = traceSettingsTransport();
    const store = new TraceSettingsStore(engine);
    await store.load();
    store.setDays('-3');
    expect(daysValid(store.getState())).toBe(false);
    await store.save();
    store.setDays('two weeks');
    await store.save();
    expect(engine.sent).toEqual([]);
  });

  it('keeps the engine\'s refusal as text and the form as typed', async () => {
    const engine = traceSettingsTransport();
    const store = new TraceSettingsStore(engine);
    await store.load();
    store.setDays('5000');
    await store.save();
    expect(store.getState()).toMatchObject({ failure: 'invalid retention_days: at most 3650 days', saved: false, days: '5000', busy: false });
    expect(engine.settings()).toEqual({ capture: true, retention_days: 30, notice_rate: 0.3 });
    store.setDays('3650');
    await store.save();
    expect(store.getState()).toMatchObject({ failure: null, saved: true });
  });
});
