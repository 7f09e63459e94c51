// @vitest-environment jsdom
// The temporary chat's bar: the toggle and "Use what I remember" before the first message,
// the notice while one is open, and nothing in a kept conversation that has begun.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { TemporaryChat } from '../generated/engine';
import { cleanup, mount } from './settings/testing';
import { TemporaryChatBar } from './TemporaryChatBar';

const byTestId = (root: ParentNode, id: string) => root.querySelector(`[data-testid="${id}"]`) as HTMLElement | null;

afterEach(cleanup);

describe('TemporaryChatBar', () => {
  it('turns a new conversation temporary, lets it read memory, and says so', () => {
    const chosen: (TemporaryChat | null)[] = [];
    const { container, root } = mount(<TemporaryChatBar temporary={null} canChange onChange={(k) => chosen.push(k)} />);
    const toggle = byTestId(container, 'temporary-toggle');
    expect(toggle?.getAttribute('aria-pressed')).toBe('false');
    expect(byTestId(container, 'temporary-recall')).toBeNull();
    expect(byTestId(container, 'temporary-notice')).toBeNull();
    act(() => toggle?.click());
    expect(chosen).toEqual(['sealed']);

    act(() => root.render(<TemporaryChatBar temporary="sealed" canChange onChange={(k) => chosen.push(k)} />));
    expect(byTestId(container, 'temporary-toggle')?.getAttribute('aria-pressed')).toBe('true');
    expect(byTestId(container, 'temporary-notice')?.textContent).toContain('nothing is remembered');
    const recall = byTestId(container, 'temporary-recall') as HTMLInputElement;
    expect(recall.checked).toBe(false);
    act(() => recall.click());
    expect(chosen).toEqual(['sealed', 'recall']);
  });

  it('keeps only the notice once a message is sent, and shows nothing for a kept conversation', () => {
    const { container, root } = mount(<TemporaryChatBar temporary="recall" canChange={false} onChange={() => {}} />);
    expect(byTestId(container, 'temporary-toggle')).toBeNull();
    expect(byTestId(container, 'temporary-recall')).toBeNull();
    expect(byTestId(container, 'temporary-notice')?.textContent).toContain('remembers about you');
    act(() => root.render(<TemporaryChatBar temporary={null} canChange={false} onChange={() => {}} />));
    expect(container.textContent).toBe('');
  });
});
