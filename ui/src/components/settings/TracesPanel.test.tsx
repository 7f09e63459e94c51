// @vitest-environment jsdom
// The Traces settings panel in jsdom against an in-memory engine: it shows the settings in
// force, turns capture off with new days and says saved; a days value that is not a whole
// number is pointed out and cannot be saved; the engine's refusal is shown in its words.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { traceSettingsTransport } from '../../settings/testFakes';
import { TransportError } from '../../transport';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { TracesPanel } from './TracesPanel';

afterEach(cleanup);

const click = async (el: Element | null) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};

describe('TracesPanel', () => {
  it('turns capture off with new days and says saved', async () => {
    const engine = traceSettingsTransport({ capture: true, retention_days: 30, notice_rate: 0.3 });
    const { container, root } = mount(<TracesPanel transport={engine} />);
    await flush();
    const capture = byTestId<HTMLInputElement>(container, 'trace-capture') as HTMLInputElement;
    const days = byTestId<HTMLInputElement>(container, 'trace-retention') as HTMLInputElement;
    expect(capture.checked).toBe(true);
    expect(days.value).toBe('30');
    await click(capture);
    act(() => fill(days, '7'));
    await click(byTestId(container, 'trace-settings-save'));
    expect(engine.sent).toEqual([{ capture: false, retention_days: 7, notice_rate: 0.3 }]);
    expect(byTestId(container, 'trace-settings-saved')?.textContent).toBe('Trace settings saved.');
    expect(byTestId<HTMLInputElement>(container, 'trace-capture')?.checked).toBe(false);
    act(() => root.unmount());
  });

  it('points out days that are not a whole number and does not save them', async () => {
    const engine = traceSettingsTransport();
    const { container, root } = mount(<TracesPanel transport={engine} />, 'zh-CN');
    await flush();
    act(() => fill(byTestId<HTMLInputElement>(container, 'trace-retention') as HTMLInputElement, '1.5'));
    expect(byTestId(container, 'trace-retention-invalid')?.textContent).toBe('请输入整数天数，例如 30。');
    expect(byTestId<HTMLButtonElement>(container, 'trace-settings-save')?.disabled).toBe(true);
    await act(async () => (container.querySelector('form') as HTMLFormElement).requestSubmit());
    await flush();
    expect(engine.sent).toEqual([]);
    act(() => root.unmount());
  });

  it('shows the engine\'s refusal in its words', async () => {
    const engine = traceSettingsTransport();
    const { container, root } = mount(<TracesPanel transport={engine} />);
    await flush();
    act(() => fill(byTestId<HTMLInputElement>(container, 'trace-retention') as HTMLInputElement, '9999'));
    await click(byTestId(container, 'trace-settings-save'));
    expect(byTestId(container, 'trace-settings-error')?.textContent).toBe('Not saved: invalid retention_days: at most 3650 days');
    expect(byTestId(container, 'trace-settings-saved')).toBeNull();
    act(() => root.unmount());
  });

  it('shows a load failure', async () => {
    const engine = traceSettingsTransport();
    engine.handlers.trace_settings = () => Promise.reject(new TransportError('store', 'config.toml is unreadable', 500));
    const { container, root } = mount(<TracesPanel transport={engine} />);
    await flush();
    expect(container.querySelector('[role="alert"]')?.textContent).toBe('Could not load: config.toml is unreadable');
    act(() => root.unmount());
  });
});
