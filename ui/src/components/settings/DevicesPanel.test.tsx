// @vitest-environment jsdom
// The devices section in jsdom against an in-memory engine: the devices with their state and
// a Revoke button for those not revoked, and the recent sign-ins with what happened, to which
// device and from where, in the page's language.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { AccessEvent, Device } from '../../generated/engine';
import { FakeEngine } from '../../testing/fakeEngine';
import { cleanup, flush, mount } from './testing';
import { DevicesPanel } from './DevicesPanel';

afterEach(cleanup);

const phone: Device = {
  id: 'd1',
  name: 'phone',
  state: 'paired',
  created_at: '2026-12-07T10:00:00.000Z',
  code_expires_at: null,
  paired_at: '2026-12-07T10:01:00.000Z',
  last_seen_at: '2026-12-07T10:05:00.000Z',
  revoked_at: null,
};

const events: AccessEvent[] = [
  { id: 'e3', kind: 'wrong_code', device_id: null, device_name: null, peer: '192.0.2.7:5123', at: '2026-12-07T10:03:00.000Z' },
  { id: 'e2', kind: 'paired', device_id: 'd1', device_name: 'phone', peer: '192.0.2.8:4100', at: '2026-12-07T10:01:00.000Z' },
  { id: 'e1', kind: 'pairing_started', device_id: 'd1', device_name: 'phone', peer: null, at: '2026-12-07T10:00:00.000Z' },
];

const engine = () => new FakeEngine({ list_devices: () => [phone], list_access_events: () => events });

const rows = (root: ParentNode, table: string) =>
  [...root.querySelectorAll(`table.${table} tbody tr`)].map((tr) =>
    [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
  );

describe('DevicesPanel', () => {
  it('lists the devices and the recent sign-ins, newest first, with where each came from', async () => {
    const { container, root } = mount(<DevicesPanel transport={engine()} />);
    await flush();
    expect(rows(container, 'devices').map((r) => r.slice(0, 2))).toEqual([['phone', 'Paired']]);
    expect(container.querySelector('.revoke-device')?.textContent).toBe('Revoke');
    expect(container.querySelector('#sign-ins-heading')?.textContent).toBe('Recent sign-ins');
    expect(rows(container, 'sign-ins').map((r) => r.slice(1))).toEqual([
      ['Wrong pairing code', '—', '192.0.2.7:5123'],
      ['Device paired', 'phone', '192.0.2.8:4100'],
      ['Pairing code made', 'phone', '—'],
    ]);
    act(() => root.unmount());
  });

  it('says each sign-in in Chinese too', async () => {
    const { container, root } = mount(<DevicesPanel transport={engine()} />, 'zh-CN');
    await flush();
    expect(container.querySelector('#sign-ins-heading')?.textContent).toBe('最近登录');
    expect(rows(container, 'sign-ins').map((r) => r[1])).toEqual(['配对码错误', '设备已配对', '生成了配对码']);
    act(() => root.unmount());
  });

  it('shows no sign-ins table before anything happened at the door', async () => {
    const quiet = new FakeEngine({ list_devices: () => [], list_access_events: () => [] });
    const { container, root } = mount(<DevicesPanel transport={quiet} />);
    await flush();
    expect(container.querySelector('table.sign-ins')).toBeNull();
    expect(container.textContent).toContain('No devices yet.');
    act(() => root.unmount());
  });
});
