// @vitest-environment jsdom
// The desktop panel in jsdom against an in-memory desktop bridge: it shows the quick-ask
// shortcut, applies a new one and shows the app's refusal.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { desktopBridge } from '../../settings/testFakes';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { DesktopPanel } from './DesktopPanel';

afterEach(cleanup);

describe('DesktopPanel', () => {
  it('shows the quick-ask shortcut, applies a new one and shows a refusal', async () => {
    const desktop = desktopBridge('Alt+Space');
    const { container, root } = mount(<DesktopPanel desktop={desktop} />);
    await flush();
    const input = byTestId<HTMLInputElement>(container, 'shortcut-input') as HTMLInputElement;
    expect(input.value).toBe('CommandOrControl+Shift+Space');
    expect(byTestId(container, 'shortcut-status')?.textContent).toBe('Registered: CommandOrControl+Shift+Space opens quick ask.');
    act(() => fill(input, 'Alt+Space'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'shortcut-apply')?.click());
    await flush();
    expect(byTestId(container, 'shortcut-error')?.textContent).toBe('Not applied: Alt+Space is taken by another application');
    act(() => fill(input, 'Control+Alt+E'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'shortcut-apply')?.click());
    await flush();
    expect(desktop.set).toEqual(['Alt+Space', 'Control+Alt+E']);
    expect(byTestId(container, 'shortcut-status')?.textContent).toBe('Registered: Control+Alt+E opens quick ask.');
    expect(byTestId(container, 'shortcut-error')).toBeNull();
    act(() => root.unmount());
  });
});
