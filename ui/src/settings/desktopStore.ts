// The desktop app's quick-ask shortcut: the one in force and whether the system took it (the
// app reports both), the one being typed, and the last refusal. All calls to the desktop
// bridge for this are made here.

import type { ShortcutStatus } from '../generated/engine';
import type { DesktopBridge } from '../transport';
import { SettingsStore, describe } from './store';

export type ShortcutBridge = Pick<DesktopBridge, 'quickShortcut' | 'setQuickShortcut'>;

export interface ShortcutState {
  /** The shortcut in force, as the app last reported it. */
  status: ShortcutStatus | undefined;
  loadError: string | null;
  /** The shortcut as typed, started from the one in force. */
  value: string;
  busy: boolean;
  failure: string | null;
}

/** Whether Apply can be pressed: nothing running and something typed. */
export function canApply(s: ShortcutState): boolean {
  return !s.busy && s.value.trim() !== '';
}

export class ShortcutStore extends SettingsStore<ShortcutState> {
  private readonly desktop: ShortcutBridge;

  constructor(desktop: ShortcutBridge) {
    super({ status: undefined, loadError: null, value: '', busy: false, failure: null });
    this.desktop = desktop;
  }

  async load(): Promise<void> {
    try {
      const status = await this.desktop.quickShortcut();
      const first = this.getState().status === undefined;
      this.set({ status, loadError: null, ...(first ? { value: status.shortcut } : {}) });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  setValue(value: string): void {
    this.set({ value });
  }

  /** Asks the app to register the typed shortcut; shows its refusal. */
  async apply(): Promise<void> {
    this.set({ busy: true });
    try {
      this.set({ status: await this.desktop.setQuickShortcut(this.getState().value.trim()), failure: null });
    } catch (e) {
      this.set({ failure: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }
}
