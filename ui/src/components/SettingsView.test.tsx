// @vitest-environment jsdom
// The settings view lays out the panels: the desktop panel only in the desktop app, the
// standing instructions always. Each panel's own behaviour is tested beside it (settings/).

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrapTransport, desktopBridge, fakeTransport, providerTransport } from '../settings/testFakes';
import { FakeEngine } from '../testing/fakeEngine';
import { cleanup, flush, mount } from './settings/testing';
import { SettingsView } from './SettingsView';

afterEach(cleanup);

describe('SettingsView', () => {
  it('shows the desktop panel only in the desktop app', async () => {
    const handlers = { ...fakeTransport().handlers, ...providerTransport().handlers };
    const web = mount(<SettingsView transport={new FakeEngine(handlers)} session={null} />);
    await flush();
    expect(web.container.querySelector('.desktop-panel')).toBeNull();
    act(() => web.root.unmount());
    const desktopApp = new FakeEngine(handlers);
    desktopApp.desktop = desktopBridge('x');
    const app = mount(<SettingsView transport={desktopApp} session={null} />);
    await flush();
    expect(app.container.querySelector('.desktop-panel h2')?.textContent).toBe('Desktop');
    act(() => app.root.unmount());
  });

  it('shows the standing instructions', async () => {
    const engine = new FakeEngine({ ...fakeTransport().handlers, ...providerTransport().handlers, ...bootstrapTransport().handlers });
    const { container, root } = mount(<SettingsView transport={engine} session={null} />);
    await flush();
    expect(container.querySelectorAll('.bootstrap-panel [role="tab"]')).toHaveLength(4);
    act(() => root.unmount());
  });
});
