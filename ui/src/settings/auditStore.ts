// The approval audit log as the settings show it: the most recent gate decisions.

import type { AuditEntry } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** How many decisions the panel shows (a choice of the page, not an engine default). */
export const AUDIT_LIMIT = 20;

export interface AuditState {
  /** Newest first. */
  entries: AuditEntry[] | undefined;
  loadError: string | null;
}

export class AuditStore extends SettingsStore<AuditState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ entries: undefined, loadError: null });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      this.set({ entries: await this.transport.call('approvals', { limit: AUDIT_LIMIT }), loadError: null });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }
}
