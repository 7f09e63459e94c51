// Devices that reach `echod serve` with tokens of their own: the list the engine keeps, the
// name typed for the next pairing, the code just made (shown once), revoking one, and the
// sign-in log (pairings, wrong codes, revocations, from where). Each change reads the list
// and the log again, so both show what the engine kept.

import type { AccessEvent, Device, DevicePairing } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** How many sign-in log entries the panel shows. */
export const LOG_SHOWN = 20;

export interface DevicesState {
  devices: Device[] | undefined;
  /** The newest sign-in log entries, newest first. */
  events: AccessEvent[] | undefined;
  loadError: string | null;
  /** The name for the next pairing, as typed. */
  name: string;
  /** The pairing just made: its code is shown this once. */
  pairing: DevicePairing | null;
  /** The engine's refusal of the last pairing or revocation. */
  formError: string | null;
  busy: boolean;
}

export class DevicesStore extends SettingsStore<DevicesState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ devices: undefined, events: undefined, loadError: null, name: '', pairing: null, formError: null, busy: false });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      const [devices, events] = await Promise.all([
        this.transport.call('list_devices', {}),
        this.transport.call('list_access_events', { limit: LOG_SHOWN }),
      ]);
      this.set({ devices, events, loadError: null });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  editName(name: string): void {
    this.set({ name });
  }

  /** Makes a pairing code for a device called as typed (the engine's default when empty). */
  async pair(): Promise<void> {
    const name = this.getState().name.trim();
    await this.change(async () => {
      const pairing = await this.transport.call('pair_device', name ? { name } : {});
      this.set({ pairing, name: '' });
    });
  }

  /** Revokes a device: its token opens nothing from now on. */
  async revoke(id: string): Promise<void> {
    await this.change(async () => {
      await this.transport.call('revoke_device', { id });
      const pairing = this.getState().pairing;
      if (pairing?.device.id === id) this.set({ pairing: null });
    });
  }

  private async change(act: () => Promise<void>): Promise<void> {
    this.set({ busy: true });
    try {
      await act();
      this.set({ formError: null });
      await this.load();
    } catch (e) {
      this.set({ formError: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }
}
