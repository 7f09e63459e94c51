// Trace capture and retention (`[trace]` in config.toml): whether each model call's request and
// response are kept, and for how many days. The form starts from the settings in force; Save
// sends both through `update_trace_settings` and shows what the engine kept, or its refusal.

import type { TraceSettings } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** The days as typed, as a whole number of days (0 or more), or null when it is not one. */
export function parseDays(typed: string): number | null {
  const s = typed.trim();
  return /^\d{1,9}$/.test(s) ? Number(s) : null;
}

export interface TraceSettingsState {
  /** The settings in force, as the engine last answered. */
  settings: TraceSettings | undefined;
  loadError: string | null;
  /** The form as set. */
  capture: boolean;
  days: string;
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

export class TraceSettingsStore extends SettingsStore<TraceSettingsState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ settings: undefined, loadError: null, capture: true, days: '', busy: false, failure: null, saved: false });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      const settings = await this.transport.call('trace_settings', {});
      this.set({ settings, loadError: null, capture: settings.capture, days: String(settings.retention_days) });
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

  /** Saves the form; nothing is sent while the days are not a whole number. */
  async save(): Promise<void> {
    const { capture, days } = this.getState();
    const retention_days = parseDays(days);
    if (retention_days === null) return;
    this.set({ busy: true, saved: false });
    try {
      const settings = await this.transport.call('update_trace_settings', { capture, retention_days });
      this.set({ settings, capture: settings.capture, days: String(settings.retention_days), failure: null, saved: true });
    } catch (e) {
      this.set({ failure: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }
}
