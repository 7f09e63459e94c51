// The devices store without a page: pairing (the code shown once, the name cleared, the list
// and the sign-in log read again), revoking, and the engine's refusal kept for the form.

import { describe, expect, it } from 'vitest';
import type { AccessEvent, Device } from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { DevicesStore } from './devicesStore';

function device(id: string, name: string, state: Device['state']): Device {
  return {
    id,
    name,
    state,
    created_at: '2026-12-07T10:00:00.000Z',
    code_expires_at: state === 'waiting' ? '2026-12-07T10:10:00.000Z' : null,
    paired_at: state === 'waiting' ? null : '2026-12-07T10:01:00.000Z',
    last_seen_at: null,
    revoked_at: state === 'revoked' ? '2026-12-07T11:00:00.000Z' : null,
  };
}

describe('DevicesStore', () => {
  it('makes a pairing code for the typed name, shows it once and revokes a device', async () => {
    const devices: Device[] = [];
    const asked: unknown[] = [];
    const log: AccessEvent[] = [];
    const logged = (kind: AccessEvent['kind'], d: Device) =>
      log.unshift({ id: `e${log.length}`, kind, device_id: d.id, device_name: d.name, peer: null, at: d.created_at });
    const logLimits: unknown[] = [];
    const store = new DevicesStore(
      new FakeEngine({
        list_devices: () => [...devices],
        list_access_events: ({ limit }) => {
          logLimits.push(limit);
          return [...log];
        },
        pair_device: (request) => {
          asked.push(request);
          const made = device(`d${devices.length + 1}`, request.name ?? 'device', 'waiting');
          devices.push(made);
          logged('pairing_started', made);
          return { device: made, code: 'ABCDE-FGHJK' };
        },
        revoke_device: ({ id }) => {
          const i = devices.findIndex((d) => d.id === id);
          if (i < 0) throw new Error(`device not found: ${id}`);
          devices[i] = { ...(devices[i] as Device), state: 'revoked' };
          logged('revoked', devices[i] as Device);
          return devices[i] as Device;
        },
      }),
    );
    await store.load();
    expect(store.getState().devices).toEqual([]);
    store.editName('  phone ');
    await store.pair();
    store.editName(' ');
    await store.pair();
    expect(asked).toEqual([{ name: 'phone' }, {}]);
    expect(store.getState()).toMatchObject({ name: '', formError: null, busy: false });
    expect(store.getState().pairing?.code).toBe('ABCDE-FGHJK');
    expect(store.getState().devices?.map((d) => d.name)).toEqual(['phone', 'device']);

    // Revoking the device whose code is shown takes the code away too.
    await store.revoke('d2');
    expect(store.getState().pairing).toBeNull();
    expect(store.getState().devices?.map((d) => d.state)).toEqual(['waiting', 'revoked']);
    // The sign-in log is read with the list, newest first, as the engine keeps it.
    expect(store.getState().events?.map((e) => `${e.kind} ${e.device_name}`)).toEqual([
      'revoked device',
      'pairing_started device',
      'pairing_started phone',
    ]);
    expect(new Set(logLimits)).toEqual(new Set([20]));
    await store.revoke('gone');
    expect(store.getState().formError).toBe('device not found: gone');
  });
});
