// @vitest-environment jsdom
// The standing-instructions panel in jsdom against an in-memory engine: it shows the four
// bootstrap files, saves the edited text, keeps unsaved text per file across tabs, restores a
// default (null) after a confirmation and shows the server's refusal.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { TransportError } from '../../transport';
import { BOOTSTRAP_DEFAULTS, bootstrapTransport } from '../../settings/testFakes';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { BootstrapPanel } from './BootstrapPanel';

afterEach(cleanup);

describe('BootstrapPanel', () => {
  const tab = (c: ParentNode, name: string) => c.querySelector(`[data-testid="bootstrap-tab"][data-file="${name}"]`) as HTMLButtonElement;
  const text = (c: ParentNode) => byTestId<HTMLTextAreaElement>(c, 'bootstrap-text') as HTMLTextAreaElement;
  const button = (c: ParentNode, id: string) => byTestId<HTMLButtonElement>(c, id) as HTMLButtonElement;

  it('loads the four files and shows the first with its description, badge and path', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    expect(container.querySelector('h2')?.textContent).toBe('Standing instructions');
    expect(container.querySelector('.help')?.textContent).toContain('cannot override the safety rules');
    const tabs = [...container.querySelectorAll('[role="tab"]')];
    expect(tabs.map((t) => t.textContent)).toEqual(['AGENTS.md', 'SOUL.md', 'USER.md', 'TOOLS.md']);
    expect(tabs.map((t) => t.getAttribute('aria-selected'))).toEqual(['true', 'false', 'false', 'false']);
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['AGENTS.md']);
    expect(byTestId(container, 'bootstrap-about')?.textContent).toBe('How the assistant should work for you: habits, steps, what to report.');
    expect(byTestId(container, 'bootstrap-default')?.textContent).toBe('Default');
    expect(byTestId(container, 'bootstrap-path')?.textContent).toBe('Built-in default; saving writes /home/lin/.local/share/echo-desk/AGENTS.md');
    expect(button(container, 'bootstrap-save').disabled).toBe(true);
    expect(button(container, 'bootstrap-restore').disabled).toBe(true);

    await act(async () => tab(container, 'TOOLS.md').click());
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['TOOLS.md']);
    expect(byTestId(container, 'bootstrap-about')?.textContent).toContain('Notes on your machine and tools');
    expect(transport.saved).toEqual([]);
    act(() => root.unmount());
  });

  it('saves the edited text and says so; the default badge goes', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    await act(async () => tab(container, 'USER.md').click());
    const sentence = '<!-- About you. -->\nMy name is Lin and I prefer metric units.\n';
    act(() => fill(text(container), sentence));
    expect(tab(container, 'USER.md').dataset.dirty).toBe('true');
    expect(button(container, 'bootstrap-save').disabled).toBe(false);
    await act(async () => button(container, 'bootstrap-save').click());
    await flush();
    expect(transport.saved).toEqual([['USER.md', sentence]]);
    expect(byTestId(container, 'bootstrap-saved')?.textContent).toBe('USER.md saved. It applies from the next message.');
    expect(byTestId(container, 'bootstrap-error')).toBeNull();
    expect(byTestId(container, 'bootstrap-default')).toBeNull();
    expect(byTestId(container, 'bootstrap-path')?.textContent).toBe('Saved in /home/lin/.local/share/echo-desk/USER.md');
    expect(text(container).value).toBe(sentence);
    expect(tab(container, 'USER.md').dataset.dirty).toBe('false');
    expect(button(container, 'bootstrap-save').disabled).toBe(true);
    expect(button(container, 'bootstrap-restore').disabled).toBe(false);
    // Typing again makes "saved" stale.
    act(() => fill(text(container), `${sentence}More.`));
    expect(byTestId(container, 'bootstrap-saved')).toBeNull();
    act(() => root.unmount());
  });

  it('keeps unsaved text per file across tabs until it is saved or discarded', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    act(() => fill(text(container), 'Work in small steps.'));
    await act(async () => tab(container, 'SOUL.md').click());
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['SOUL.md']);
    act(() => fill(text(container), 'Be brief.'));
    await act(async () => tab(container, 'AGENTS.md').click());
    expect(text(container).value).toBe('Work in small steps.');
    expect(tab(container, 'AGENTS.md').dataset.dirty).toBe('true');
    expect(tab(container, 'SOUL.md').dataset.dirty).toBe('true');
    expect(tab(container, 'SOUL.md').querySelector('.bootstrap-dirty')?.getAttribute('title')).toBe('Unsaved changes');
    expect(tab(container, 'USER.md').dataset.dirty).toBe('false');
    // Discard drops this file's draft only.
    await act(async () => button(container, 'bootstrap-discard').click());
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['AGENTS.md']);
    expect(byTestId(container, 'bootstrap-discard')).toBeNull();
    await act(async () => tab(container, 'SOUL.md').click());
    expect(text(container).value).toBe('Be brief.');
    // Arrow keys move between the tabs.
    await act(async () => tab(container, 'SOUL.md').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true })));
    expect(tab(container, 'USER.md').getAttribute('aria-selected')).toBe('true');
    expect(transport.saved).toEqual([]);
    act(() => root.unmount());
  });

  it('restores the default with null after a confirmation', async () => {
    const transport = bootstrapTransport({ 'USER.md': 'My name is Lin.' });
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    await act(async () => tab(container, 'USER.md').click());
    expect(text(container).value).toBe('My name is Lin.');
    expect(byTestId(container, 'bootstrap-default')).toBeNull();
    await act(async () => button(container, 'bootstrap-restore').click());
    expect(byTestId(container, 'bootstrap-confirm')?.textContent).toContain('Replace your USER.md with the default?');
    await act(async () => button(container, 'bootstrap-restore-no').click());
    expect(byTestId(container, 'bootstrap-confirm')).toBeNull();
    expect(transport.saved).toEqual([]);

    act(() => fill(text(container), 'An unsaved edit.'));
    await act(async () => button(container, 'bootstrap-restore').click());
    await act(async () => button(container, 'bootstrap-restore-yes').click());
    await flush();
    expect(transport.saved).toEqual([['USER.md', null]]);
    expect(text(container).value).toBe(BOOTSTRAP_DEFAULTS['USER.md']);
    expect(byTestId(container, 'bootstrap-default')?.textContent).toBe('Default');
    expect(byTestId(container, 'bootstrap-saved')?.textContent).toBe('USER.md is back to the default.');
    expect(button(container, 'bootstrap-restore').disabled).toBe(true);
    expect(tab(container, 'USER.md').dataset.dirty).toBe('false');
    act(() => root.unmount());
  });

  it('shows the server’s refusal and keeps the text', async () => {
    const transport = bootstrapTransport();
    const { container, root } = mount(<BootstrapPanel transport={transport} />, 'zh-CN');
    await flush();
    expect(container.querySelector('h2')?.textContent).toBe('常驻指令');
    const huge = 'x'.repeat(2000);
    act(() => fill(text(container), huge));
    await act(async () => button(container, 'bootstrap-save').click());
    await flush();
    expect(byTestId(container, 'bootstrap-error')?.textContent).toBe('未保存：AGENTS.md is 2000 bytes; the limit is 262144');
    expect(byTestId(container, 'bootstrap-saved')).toBeNull();
    expect(text(container).value).toBe(huge);
    expect(button(container, 'bootstrap-save').disabled).toBe(false);
    expect(byTestId(container, 'bootstrap-default')?.textContent).toBe('默认');
    act(() => root.unmount());
  });

  it('shows a load failure', async () => {
    const transport = bootstrapTransport();
    transport.handlers.bootstrap_files = () => Promise.reject(new TransportError('io', 'cannot read /x/USER.md: denied'));
    const { container, root } = mount(<BootstrapPanel transport={transport} />);
    await flush();
    expect(container.querySelector('[role="alert"]')?.textContent).toBe('Could not load: cannot read /x/USER.md: denied');
    expect(container.querySelector('[role="tab"]')).toBeNull();
    act(() => root.unmount());
  });
});
