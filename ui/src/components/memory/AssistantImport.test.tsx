// @vitest-environment jsdom
// "Import from another assistant" on the memory page in jsdom against an in-memory engine: the
// dialog reads the pasted text (for the chosen project) while showing that it is busy, the
// review spells out each card's clashes with the judge's reason and what it was read from,
// Keep / Edit / Drop change what "Import N memories" writes (only the kept cards, as edited),
// the dialog closes on a summary counted from the engine's effects, the list shows the new
// memories marked as imported (and the detail names the source), the engine's refusal shows
// as an alert, and Escape or Cancel leave without writing anything.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ImportPreview } from '../../generated/engine';
import { importCard, importClash, memoryEngine, project } from '../../memory/testFakes';
import { TransportError } from '../../transport';
import { byTestId, cleanup, fill, flush, mount } from '../settings/testing';
import { MemoryView } from './MemoryView';

afterEach(cleanup);

const all = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const click = async (el: Element | null | undefined) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};

const PASTED = '- Prefers short answers\n- Lives in Lisbon\n- Has a dog named Biscuit\n- Memory number 0\n- Works nights\n- Likes jazz';

/** The engine with two memories and a project, reading the pasted text into six cards. */
function engineWithPreview() {
  const engine = memoryEngine(2, [], [project(1, 'Kitchen')]);
  const [first, second] = engine.memories();
  const preview: ImportPreview = {
    cards: [
      { card: importCard('Prefers short answers', { content: 'Prefers short answers.', slot: 'answer_style' }), clashes: [] },
      { card: importCard('Lives in Lisbon', { content: 'The user lives in Lisbon.' }), clashes: [importClash('replaces', second!, 'One home city at a time.')] },
      { card: importCard('Has a dog named Biscuit', { project: 'Kitchen' }), clashes: [] },
      { card: importCard('Memory number 0'), clashes: [importClash('duplicate', first!, 'The same fact.')] },
      { card: importCard('Works nights'), clashes: [importClash('loses_to', first!, 'The memory there is newer.')] },
      { card: importCard('Likes jazz'), clashes: [importClash('review', second!, 'Neither is clearly newer.')] },
    ],
    dropped: ['"Speaks Klingon": the words it quotes are not in the text'],
  };
  engine.handlers.memory_import_preview = () => preview;
  return engine;
}

async function openAndPaste(container: HTMLElement) {
  await click(byTestId(container, 'assistant-import-open'));
  act(() => fill(byTestId<HTMLTextAreaElement>(container, 'assistant-import-text') as HTMLTextAreaElement, PASTED));
}

describe('AssistantImport', () => {
  it('reads, reviews with clashes spelled out, keeps, edits and drops, imports the kept cards and shows them', async () => {
    const engine = engineWithPreview();
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await click(byTestId(container, 'assistant-import-open'));
    const dialog = byTestId<HTMLElement>(container, 'assistant-import');
    expect(dialog?.getAttribute('role')).toBe('dialog');
    expect(dialog?.textContent).toContain('Manage memories');
    const read = () => byTestId<HTMLButtonElement>(container, 'assistant-import-read') as HTMLButtonElement;
    expect(read().disabled).toBe(true);
    const text = byTestId<HTMLTextAreaElement>(container, 'assistant-import-text') as HTMLTextAreaElement;
    expect(text.closest('label')?.textContent).toContain('Pasted memories');
    expect(document.activeElement).toBe(text);
    act(() => fill(text, PASTED));
    expect(read().disabled).toBe(false);
    const choice = byTestId<HTMLSelectElement>(container, 'assistant-import-project') as HTMLSelectElement;
    expect([...choice.options].map((o) => o.textContent)).toEqual(['None: global memories', 'Kitchen']);
    act(() => fill(choice, 'Kitchen'));
    await click(read());
    expect(engine.sent('memory_import_preview')).toEqual([{ text: PASTED, project: 'Kitchen' }]);
    expect(engine.sent('memory_import_cards')).toEqual([]);

    const cards = () => all(container, 'import-card');
    expect(byTestId(container, 'assistant-import-count')?.textContent).toBe('Read 6 cards. Keep, edit or drop each; nothing is saved until you import.');
    expect(cards().map((c) => c.dataset.decision)).toEqual(['keep', 'drop', 'keep', 'keep', 'drop', 'drop']);
    const clashes = all(container, 'import-clash').map((c) => c.textContent);
    expect(clashes).toEqual([
      'Replaces: Memory number 1 Why: One home city at a time.',
      'Already known: Memory number 0 Why: The same fact.',
      'Loses to: Memory number 0 (it will be kept as outdated) Why: The memory there is newer.',
      'Conflicts with: Memory number 1 (both go to the review queue) Why: Neither is clearly newer.',
    ]);
    expect(cards()[1]?.textContent).toContain('from: “Lives in Lisbon”');
    expect(cards()[0]?.textContent).not.toContain('from:');
    expect(cards()[2]?.textContent).toContain('Project: Kitchen');
    expect(byTestId(container, 'assistant-import-dropped')?.textContent).toBe('Left out:"Speaks Klingon": the words it quotes are not in the text');
    const submit = () => byTestId<HTMLButtonElement>(container, 'assistant-import-submit') as HTMLButtonElement;
    expect(submit().textContent).toBe('Import 3 memories');

    // Edit the first card; the import waits while the edit is open.
    await click(cards()[0]?.querySelector('[data-testid="import-card-edit"]'));
    const input = byTestId<HTMLInputElement>(container, 'import-card-edit-input') as HTMLInputElement;
    expect(input.getAttribute('aria-label')).toBe('The card as a sentence');
    expect(submit().disabled).toBe(true);
    act(() => fill(input, 'Prefers short, direct answers.'));
    await click(byTestId(container, 'import-card-edit-save'));
    expect(byTestId(container, 'import-card-content')?.textContent).toBe('Prefers short, direct answers.');
    expect(byTestId(container, 'import-card-edited')).not.toBeNull();

    // Keep the one that replaces a memory, drop the dog and the duplicate.
    await click(cards()[1]?.querySelector('[data-testid="import-card-keep"]'));
    await click(cards()[2]?.querySelector('[data-testid="import-card-drop"]'));
    await click(cards()[3]?.querySelector('[data-testid="import-card-drop"]'));
    expect(cards()[1]?.querySelector('[data-testid="import-card-keep"]')?.getAttribute('aria-pressed')).toBe('true');
    expect(cards()[2]?.querySelector('[data-testid="import-card-drop"]')?.getAttribute('aria-pressed')).toBe('true');
    expect(submit().textContent).toBe('Import 2 memories');
    expect(submit().disabled).toBe(false);

    await click(submit());
    expect(engine.sent('memory_import_cards')).toEqual([{
      cards: [
        { content: 'Prefers short, direct answers.', evidence: 'Prefers short answers', slot: 'answer_style' },
        { content: 'The user lives in Lisbon.', evidence: 'Lives in Lisbon' },
      ],
    }]);
    expect(byTestId(container, 'assistant-import')).toBeNull();
    expect(document.activeElement).toBe(byTestId(container, 'assistant-import-open'));
    expect(byTestId(container, 'assistant-import-summary')?.textContent).toContain('Imported 2 memories from another assistant: 2 new.');

    // The list is read again: the kept ones are there, marked, the dropped ones are not.
    const rows = all(container, 'memory-row');
    const texts = rows.map((r) => r.querySelector('.memory-content')?.textContent);
    expect(texts).toContain('Prefers short, direct answers.');
    expect(texts).toContain('The user lives in Lisbon.');
    expect(texts).not.toContain('Has a dog named Biscuit');
    const imported = rows.find((r) => r.textContent?.includes('Prefers short, direct answers.'));
    expect(imported?.querySelector('[data-testid="memory-source-imported"]')?.textContent).toBe('imported from another assistant');
    expect(rows.find((r) => r.textContent?.includes('Memory number 0'))?.querySelector('[data-testid="memory-source-imported"]')).toBeNull();
    await click(imported?.querySelector('.memory-open'));
    expect(byTestId(container, 'memory-detail')?.textContent).toContain('imported from another assistant');
    act(() => root.unmount());
  });

  it('counts what the import did from the engine\'s effects', async () => {
    const engine = engineWithPreview();
    engine.handlers.memory_import_cards = ({ cards }) => cards.map((_, i) => ({
      memory: engine.memories()[0]!,
      effects: [
        [{ effect: 'created' as const }, { effect: 'superseded' as const, old: 'm-0001', verdict: 'contradiction' as const }],
        [{ effect: 'duplicate' as const, of: 'm-0000' }],
        [{ effect: 'created' as const }],
      ][i] ?? [],
      judge_failures: [],
    }));
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await openAndPaste(container);
    await click(byTestId(container, 'assistant-import-read'));
    await click(all(container, 'import-card')[1]?.querySelector('[data-testid="import-card-keep"]'));
    await click(all(container, 'import-card')[2]?.querySelector('[data-testid="import-card-drop"]'));
    await click(byTestId(container, 'assistant-import-submit'));
    expect(byTestId(container, 'assistant-import-summary')?.textContent).toContain(
      'Imported 3 memories from another assistant: 1 new, 1 already known, 1 replaced an older memory.',
    );
    act(() => root.unmount());
  });

  it('shows that it is reading, then the engine\'s message when the model fails', async () => {
    const engine = engineWithPreview();
    let fail: (e: Error) => void = () => {};
    engine.handlers.memory_import_preview = () => new Promise((_, reject) => (fail = reject));
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await openAndPaste(container);
    await click(byTestId(container, 'assistant-import-read'));
    const read = byTestId<HTMLButtonElement>(container, 'assistant-import-read') as HTMLButtonElement;
    expect(read.textContent).toBe('Reading…');
    expect(read.disabled).toBe(true);
    expect(byTestId(container, 'assistant-import-reading')?.getAttribute('role')).toBe('status');
    await act(async () => fail(new TransportError('model_call', 'reading the pasted memories: the model is down', 502)));
    await flush();
    const alert = byTestId(container, 'assistant-import-error');
    expect(alert?.getAttribute('role')).toBe('alert');
    expect(alert?.textContent).toBe('Could not read the text: reading the pasted memories: the model is down');
    expect(read.textContent).toBe('Read');
    expect(read.disabled).toBe(false);
    expect(byTestId(container, 'assistant-import-reading')).toBeNull();
    act(() => root.unmount());
  });

  it('shows the engine\'s refusal of the write and keeps the review', async () => {
    const engine = engineWithPreview();
    engine.handlers.memory_import_cards = () => Promise.reject(new TransportError('invalid_input', 'invalid cards: card 1 ("x"): empty', 400));
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await openAndPaste(container);
    await click(byTestId(container, 'assistant-import-read'));
    await click(byTestId(container, 'assistant-import-submit'));
    expect(byTestId(container, 'assistant-import-error')?.textContent).toBe('The import failed: invalid cards: card 1 ("x"): empty');
    expect(all(container, 'import-card')).toHaveLength(6);
    expect(byTestId(container, 'assistant-import-summary')).toBeNull();
    act(() => root.unmount());
  });

  it('leaves without writing: Cancel goes back to the text, Escape closes', async () => {
    const engine = engineWithPreview();
    const { container, root } = mount(<MemoryView transport={engine} />);
    await flush();
    await openAndPaste(container);
    await click(byTestId(container, 'assistant-import-read'));
    await click(byTestId(container, 'assistant-import-cancel'));
    expect(all(container, 'import-card')).toHaveLength(0);
    expect(byTestId<HTMLTextAreaElement>(container, 'assistant-import-text')?.value).toBe(PASTED);
    await act(async () => {
      byTestId(container, 'assistant-import-text')?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(byTestId(container, 'assistant-import')).toBeNull();
    expect(engine.sent('memory_import_cards')).toEqual([]);
    // Opened again, it starts over.
    await click(byTestId(container, 'assistant-import-open'));
    expect(byTestId<HTMLTextAreaElement>(container, 'assistant-import-text')?.value).toBe('');
    act(() => root.unmount());
  });

  it('speaks Chinese', async () => {
    const engine = engineWithPreview();
    const { container, root } = mount(<MemoryView transport={engine} />, 'zh-CN');
    await flush();
    expect(byTestId(container, 'assistant-import-open')?.textContent).toBe('从其他助手导入…');
    await openAndPaste(container);
    await click(byTestId(container, 'assistant-import-read'));
    expect(all(container, 'import-clash')[0]?.textContent).toBe('替换：Memory number 1 原因：One home city at a time.');
    expect(byTestId(container, 'assistant-import-submit')?.textContent).toBe('导入 3 条记忆');
    act(() => root.unmount());
  });
});
