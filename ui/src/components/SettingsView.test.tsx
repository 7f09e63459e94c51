// @vitest-environment jsdom
// The settings view lays out the panels: the desktop panel only in the desktop app, the
// standing instructions always, the provider the engine chose at start said first, and
// "Delete all my data" last, set apart. Each panel's own behaviour is tested beside it (settings/).

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrapTransport, desktopBridge, fakeTransport, keychainView, providerTransport } from '../settings/testFakes';
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
  it('says first which provider the engine chose at start, with the built-in model offered', async () => {
    const notice = 'No model provider is configured and no Ollama server answers: using the built-in model SmolLM2-135M-Instruct.Q4_1.gguf.';
    const engine = new FakeEngine({ ...fakeTransport().handlers, ...providerTransport({ view: { ...keychainView, notice } }).handlers });
    const { container, root } = mount(<SettingsView transport={engine} session={null} />);
    await flush();
    const first = container.querySelector('.settings > .panel');
    expect(first?.querySelector('[data-testid="provider-start-notice"]')?.textContent).toContain(notice);
    const kinds = [...(first?.querySelectorAll<HTMLOptionElement>('[data-testid="provider-kind"] option') ?? [])];
    expect(kinds.map((o) => o.textContent)).toContain('Built-in (local)');
    act(() => root.unmount());
  });

  it('puts "Delete all my data" last, as the danger zone', async () => {
    const engine = new FakeEngine({ ...fakeTransport().handlers, ...providerTransport().handlers });
    const { container, root } = mount(<SettingsView transport={engine} session={null} />);
    await flush();
    const last = container.querySelector('.settings > .panel:last-child');
    expect(last?.classList.contains('danger-zone')).toBe(true);
    expect(last?.querySelector('h2')?.textContent).toBe('Delete all my data');
    expect(last?.querySelector('[data-testid="delete-all-data"]')).not.toBeNull();
    act(() => root.unmount());
  });
});
