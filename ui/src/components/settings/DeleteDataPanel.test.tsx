// @vitest-environment jsdom
// The "Delete all my data" section in jsdom against an in-memory engine: the button waits for
// the exact phrase, one click sends it once, says busy while it runs, then shows what was
// deleted and empties the field; the engine's refusal is shown in its words, the field kept
// and nothing claimed deleted.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataDeleted } from '../../generated/engine';
import { deleteDataTransport } from '../../settings/testFakes';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { DeleteDataPanel } from './DeleteDataPanel';

afterEach(cleanup);

const click = async (el: Element | null) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};

const input = (root: ParentNode) => byTestId<HTMLInputElement>(root, 'delete-all-data-confirm') as HTMLInputElement;
const button = (root: ParentNode) => byTestId<HTMLButtonElement>(root, 'delete-all-data') as HTMLButtonElement;

describe('DeleteDataPanel', () => {
  it('says what goes and what stays, with the field labelled by the phrase to type', async () => {
    const { container, root } = mount(<DeleteDataPanel transport={deleteDataTransport()} />);
    await flush();
    expect(container.querySelector('.delete-data-panel h2')?.textContent).toBe('Delete all my data');
    const help = container.querySelector('#delete-data-help')?.textContent ?? '';
    expect(help).toContain('every conversation');
    expect(help).toContain('every memory');
    expect(help).toContain('USER.md');
    expect(help).toContain('settings, API keys');
    expect(input(container).labels?.[0]?.textContent).toBe('Type "delete all my data" to confirm');
    expect(input(container).getAttribute('aria-describedby')).toBe('delete-data-help');
    act(() => root.unmount());
  });

  it('enables the button only once the exact phrase is typed', async () => {
    const engine = deleteDataTransport();
    const { container, root } = mount(<DeleteDataPanel transport={engine} />);
    await flush();
    expect(button(container).disabled).toBe(true);
    for (const typed of ['delete all my dat', 'Delete all my data', 'delete all memories', 'delete all my data.']) {
      act(() => fill(input(container), typed));
      expect(button(container).disabled).toBe(true);
    }
    await act(async () => (container.querySelector('form') as HTMLFormElement).requestSubmit());
    await flush();
    expect(engine.requests).toEqual([]);
    act(() => fill(input(container), ' delete all my data '));
    expect(button(container).disabled).toBe(false);
    act(() => root.unmount());
  });

  it('sends the phrase once, says busy while it runs, then shows the counts and empties the field', async () => {
    const engine = deleteDataTransport();
    let finish: (d: DataDeleted) => void = () => {};
    engine.answer = () => new Promise((resolve) => (finish = resolve));
    const deleted: DataDeleted[] = [];
    const { container, root } = mount(<DeleteDataPanel transport={engine} onDeleted={(d) => deleted.push(d)} />);
    await flush();
    act(() => fill(input(container), 'delete all my data'));
    await click(button(container));
    expect(button(container).disabled).toBe(true);
    expect(button(container).textContent).toBe('Deleting…');
    await click(button(container));
    await act(async () => finish({ sessions: 3, memories: 12, rows: 57, user_notes: true }));
    await flush();
    expect(engine.sent).toEqual([{ confirm: 'delete all my data' }]);
    expect(byTestId(container, 'delete-all-data-result')?.textContent).toBe(
      'Deleted 3 conversations and 12 memories (57 records in all). USER.md is back to its default.',
    );
    expect(byTestId(container, 'delete-all-data-error')).toBeNull();
    expect(input(container).value).toBe('');
    expect(button(container).disabled).toBe(true);
    expect(button(container).textContent).toBe('Delete all my data');
    expect(deleted).toEqual([{ sessions: 3, memories: 12, rows: 57, user_notes: true }]);
    act(() => root.unmount());
  });

  it('speaks Simplified Chinese, and leaves USER.md out when it was not changed', async () => {
    const engine = deleteDataTransport({ sessions: 1, memories: 0, rows: 4, user_notes: false });
    const { container, root } = mount(<DeleteDataPanel transport={engine} />, 'zh-CN');
    await flush();
    expect(input(container).labels?.[0]?.textContent).toBe('输入"delete all my data"以确认');
    act(() => fill(input(container), 'delete all my data'));
    await click(button(container));
    expect(byTestId(container, 'delete-all-data-result')?.textContent).toBe('已删除 1 个对话和 0 条记忆（共 4 条记录）。');
    act(() => root.unmount());
  });

  it('shows the engine\'s refusal, keeps the field and claims nothing deleted', async () => {
    const engine = deleteDataTransport();
    engine.running = true;
    const deleted: DataDeleted[] = [];
    const { container, root } = mount(<DeleteDataPanel transport={engine} onDeleted={(d) => deleted.push(d)} />);
    await flush();
    act(() => fill(input(container), 'delete all my data'));
    await click(button(container));
    expect(engine.sent).toEqual([{ confirm: 'delete all my data' }]);
    expect(byTestId(container, 'delete-all-data-error')?.textContent).toBe('Could not delete your data: a turn is running; stop it first');
    expect(byTestId(container, 'delete-all-data-result')).toBeNull();
    expect(input(container).value).toBe('delete all my data');
    expect(button(container).disabled).toBe(false);
    expect(deleted).toEqual([]);
    act(() => root.unmount());
  });
});
