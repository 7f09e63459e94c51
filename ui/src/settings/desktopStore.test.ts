// The shortcut store without a page: it starts the field from the shortcut in force, applies
// the trimmed text, and keeps the app's refusal apart from the status.

import { describe, expect, it } from 'vitest';
import { ShortcutStore, canApply } from './desktopStore';
import { desktopBridge } from './testFakes';

describe('ShortcutStore', () => {
  it('starts from the shortcut in force, applies a new one and keeps a refusal apart', async () => {
    const desktop = desktopBridge('Alt+Space');
    const store = new ShortcutStore(desktop);
    expect(canApply(store.getState())).toBe(false);
    await store.load();
    expect(store.getState().value).toBe('CommandOrControl+Shift+Space');
    expect(store.getState().status?.registered).toBe(true);

    store.setValue(' Alt+Space ');
    await store.apply();
    expect(desktop.set).toEqual(['Alt+Space']);
    expect(store.getState().failure).toBe('Alt+Space is taken by another application');
    expect(store.getState().status?.shortcut).toBe('CommandOrControl+Shift+Space');

    store.setValue('Control+Alt+E');
    await store.apply();
    expect(store.getState()).toMatchObject({ failure: null, busy: false, status: { shortcut: 'Control+Alt+E', registered: true } });
    store.setValue('  ');
    expect(canApply(store.getState())).toBe(false);
  });

  it('keeps the typed text when the status is read again', async () => {
    const store = new ShortcutStore(desktopBridge('x'));
    await store.load();
    store.setValue('Alt+Q');
    await store.load();
    expect(store.getState().value).toBe('Alt+Q');
  });
});
