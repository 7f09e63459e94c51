// Trace capture and retention (`[trace]` in config.toml): whether each model call's request and
// response are kept, for how many days, and from which share of a day's turns falling back
// the app says so. The form starts from the settings in force; Save sends them through
// `update_trace_settings` and shows what the engine kept, or its refusal.

import type { TraceSettings } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** The days as typed, as a whole number of days (0 or more), or null when it is not one. */
export function parseDays(typed: string): number | null {
  const s = typed.trim();
  return /^\d{1,9}$/.test(s) ? Number(s) : null;
}

/** The notice's share as typed, in percent (0–100, whole), as a rate 0–1, or null. */
export function parsePercent(typed: string): number | null {
  const s = typed.trim();
  if (!/^\d{1,3}$/.test(s) || Number(s) > 100) return null;
  return Number(s) / 100;
}

export interface TraceSettingsState {
  /** The settings in force, as the engine last answered. */
  settings: TraceSettings | undefined;
  loadError: string | null;
  /** The form as set. */
  capture: boolean;
  days: string;
  /** The fallback notice's share, in percent as typed. */
  notice: string;
  busy: boolean;
  /** The engine's refusal of the last save. */
  failure: string | null;
  /** The last save went through. */
  saved: boolean;
}

/** Whether the days field holds a whole number (the engine checks the upper limit). */
export function daysValid(s: TraceSettingsState): boolean {
  return parseDays(s.days) !== null;
}

/** Whether the notice field holds a whole percentage. */
export function noticeValid(s: TraceSettingsState): boolean {
  return parsePercent(s.notice) !== null;
}

const percentOf = (rate: number) => String(Math.round(rate * 100));

export class TraceSettingsStore extends SettingsStore<TraceSettingsState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ settings: undefined, loadError: null, capture: true, days: '', notice: '', busy: false, failure: null, saved: false });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      const settings = await this.transport.call('trace_settings', {});
      this.set({
        settings,
        loadError: null,
        capture: settings.capture,
        days: String(settings.retention_days),
        notice: percentOf(settings.notice_rate),
      });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  setCapture(capture: boolean): void {
    this.set({ capture, saved: false });
  }

  setDays(days: string): void {
    this.set({ days, saved: false });
  }

  setNotice(notice: string): void {
    this.set({ notice, saved: false });
  }

  /** Saves the form; nothing is sent while the days are not a whole number. */
  async save(): Promise<void> {
    const { capture, days, notice } = this.getState();
    const retention_days = parseDays(days);
    const notice_rate = parsePercent(notice);
    if (retention_days === null || notice_rate === null) return;
    this.set({ busy: true, saved: false });
    try {
      const settings = await this.transport.call('update_trace_settings', { capture, retention_days, notice_rate });
      this.set({
        settings,
        capture: settings.capture,
        days: String(settings.retention_days),
        notice: percentOf(settings.notice_rate),
        failure: null,
        saved: true,
      });
    } catch (e) {
      this.set({ failure: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }
}
