// The import from another assistant against an in-memory engine: a card is kept by default
// unless it would change a memory there (a duplicate does not count), the pasted text and the
// chosen project are what is read, edits are taken trimmed (a blank one is not) and block the
// import while open, only the kept cards are written (with their edited text and everything
// else the engine read), the summary is counted from the engine's effects, the engine's
// refusals are shown, and a reading that comes back after the dialog closed is dropped.

import { describe, expect, it } from 'vitest';
import type { ImportPreview, MemoryImportCards, WriteOutcome } from '../generated/engine';
import { TransportError } from '../transport';
import { AssistantImportStore, defaultDecision, evidenceShown, keptCards, summarize } from './assistantImport';
import { importCard, importClash, memory, memoryEngine, project } from './testFakes';

const LYON = memory(1, { content: 'Lives in Lyon.', slot: 'home_city' });

/** Three cards: a new one, one replacing Lyon, one already known. */
const PREVIEW: ImportPreview = {
  cards: [
    { card: importCard('Prefers short answers', { content: 'Prefers short answers.', slot: 'answer_style', value: 'short' }), clashes: [] },
    { card: importCard('Lives in Lisbon', { content: 'Lives in Lisbon.', slot: 'home_city', value: 'Lisbon' }), clashes: [importClash('replaces', LYON, 'One home city at a time.')] },
    { card: importCard('Plays the cello'), clashes: [importClash('duplicate', memory(2, { content: 'Plays the cello' }), 'The same.')] },
  ],
  dropped: ['"Speaks Klingon": the words it quotes are not in the text'],
};

function scripted(preview: ImportPreview = PREVIEW) {
  const engine = memoryEngine(2, [], [project(1, 'Kitchen')]);
  engine.handlers.memory_import_preview = () => preview;
  const store = new AssistantImportStore(engine);
  return { engine, store };
}

const decisions = (store: AssistantImportStore) => store.getState().review?.map((c) => c.decision);

describe('defaultDecision', () => {
  it('keeps a card that changes nothing there, and drops one that would', () => {
    expect(defaultDecision([])).toBe('keep');
    expect(defaultDecision([importClash('duplicate', LYON)])).toBe('keep');
    expect(defaultDecision([importClash('replaces', LYON)])).toBe('drop');
    expect(defaultDecision([importClash('loses_to', LYON)])).toBe('drop');
    expect(defaultDecision([importClash('review', LYON)])).toBe('drop');
    expect(defaultDecision([importClash('duplicate', LYON), importClash('review', LYON)])).toBe('drop');
  });
});

describe('AssistantImportStore reading', () => {
  it('reads the pasted text, for the chosen project, into cards with their default decisions', async () => {
    const { engine, store } = scripted();
    store.openDialog();
    expect(store.canRead()).toBe(false);
    store.setText('  \n ');
    expect(store.canRead()).toBe(false);
    store.setText('- Lives in Lisbon\n- Prefers short answers\n- Plays the cello');
    store.setProject('Kitchen');
    expect(store.canRead()).toBe(true);
    const reading = store.read();
    expect(store.getState().reading).toBe(true);
    expect(store.canRead()).toBe(false);
    await reading;
    expect(engine.sent('memory_import_preview')).toEqual([{ text: '- Lives in Lisbon\n- Prefers short answers\n- Plays the cello', project: 'Kitchen' }]);
    expect(store.getState()).toMatchObject({ reading: false, error: null, dropped: PREVIEW.dropped });
    expect(decisions(store)).toEqual(['keep', 'drop', 'keep']);
    expect(store.keptCount()).toBe(2);
    // Nothing is written by reading.
    expect(engine.sent('memory_import_cards')).toEqual([]);
  });

  it('sends no project when none is chosen', async () => {
    const { engine, store } = scripted();
    store.openDialog();
    store.setText('Lives in Lisbon');
    await store.read();
    expect(engine.sent('memory_import_preview')).toEqual([{ text: 'Lives in Lisbon' }]);
  });

  it('shows the engine\'s message when the model fails, and no review', async () => {
    const { engine, store } = scripted();
    engine.handlers.memory_import_preview = () => Promise.reject(new TransportError('model_call', 'reading the pasted memories: the model answered 500', 502));
    store.openDialog();
    store.setText('Lives in Lisbon');
    await store.read();
    expect(store.getState()).toMatchObject({ review: null, reading: false, error: 'reading the pasted memories: the model answered 500' });
    // The text stays, to try again.
    expect(store.getState().text).toBe('Lives in Lisbon');
  });

  it('drops a reading that comes back after the dialog closed', async () => {
    const { engine, store } = scripted();
    let answer: (p: ImportPreview) => void = () => {};
    engine.handlers.memory_import_preview = () => new Promise<ImportPreview>((r) => (answer = r));
    store.openDialog();
    store.setText('Lives in Lisbon');
    const reading = store.read();
    store.close();
    answer(PREVIEW);
    await reading;
    expect(store.getState()).toMatchObject({ open: false, review: null, reading: false, text: '' });
  });
});

describe('AssistantImportStore review and import', () => {
  async function reviewed() {
    const s = scripted();
    s.store.openDialog();
    s.store.setText('anything');
    await s.store.read();
    return s;
  }

  it('edits a card in place: trimmed, a blank edit not taken, cancel keeps the text', async () => {
    const { store } = await reviewed();
    store.startEdit(0);
    expect(store.getState().review?.[0]?.editing).toBe('Prefers short answers.');
    expect(store.canImport()).toBe(false);
    store.editText(0, '   ');
    store.saveEdit(0);
    expect(store.getState().review?.[0]).toMatchObject({ editing: '   ', content: 'Prefers short answers.' });
    store.cancelEdit(0);
    expect(store.getState().review?.[0]).toMatchObject({ editing: null, content: 'Prefers short answers.' });
    store.startEdit(0);
    store.editText(0, '  Prefers short, direct answers. ');
    store.saveEdit(0);
    expect(store.getState().review?.[0]).toMatchObject({ editing: null, content: 'Prefers short, direct answers.' });
    expect(store.canImport()).toBe(true);
  });

  it('writes only the kept cards, with the edited text and the rest as read, then closes with a summary', async () => {
    const { engine, store } = await reviewed();
    store.decide(1, 'keep');
    store.decide(2, 'drop');
    store.startEdit(0);
    store.editText(0, 'Prefers short, direct answers.');
    store.saveEdit(0);
    expect(store.keptCount()).toBe(2);
    expect(await store.importKept()).toBe(true);
    const sent = engine.sent('memory_import_cards') as MemoryImportCards[];
    expect(sent).toEqual([{
      cards: [
        { content: 'Prefers short, direct answers.', evidence: 'Prefers short answers', slot: 'answer_style', value: 'short' },
        { content: 'Lives in Lisbon.', evidence: 'Lives in Lisbon', slot: 'home_city', value: 'Lisbon' },
      ],
    }]);
    expect(store.getState()).toMatchObject({ open: false, review: null, text: '', writing: false, error: null });
    expect(store.getState().summary).toEqual({ total: 2, created: 2, known: 0, replaced: 0, lost: 0, review: 0, judgeFailures: 0 });
    const imported = engine.memories().filter((m) => m.source === 'imported').map((m) => m.content);
    expect(imported.sort()).toEqual(['Lives in Lisbon.', 'Prefers short, direct answers.']);
  });

  it('imports nothing when every card is dropped', async () => {
    const { engine, store } = await reviewed();
    store.decide(0, 'drop');
    store.decide(2, 'drop');
    expect(store.keptCount()).toBe(0);
    expect(store.canImport()).toBe(false);
    expect(await store.importKept()).toBe(false);
    expect(engine.sent('memory_import_cards')).toEqual([]);
  });

  it('keeps the review and shows the engine\'s message when the write is refused', async () => {
    const { engine, store } = await reviewed();
    engine.handlers.memory_import_cards = () => Promise.reject(new TransportError('not_found', 'no project Kitchen', 404));
    expect(await store.importKept()).toBe(false);
    expect(store.getState()).toMatchObject({ open: true, writing: false, error: 'no project Kitchen', summary: null });
    expect(decisions(store)).toEqual(['keep', 'drop', 'keep']);
  });

  it('discards the review and goes back to the text', async () => {
    const { engine, store } = await reviewed();
    store.discardReview();
    expect(store.getState()).toMatchObject({ open: true, review: null, dropped: [], text: 'anything' });
    expect(engine.sent('memory_import_cards')).toEqual([]);
  });
});

describe('summarize', () => {
  it('counts each written card once, by what it did', () => {
    const m = memory(9);
    const outcome = (effects: WriteOutcome['effects'], judge_failures: string[] = []): WriteOutcome => ({ memory: m, effects, judge_failures });
    expect(summarize([
      outcome([{ effect: 'created' }]),
      outcome([{ effect: 'created' }]),
      outcome([{ effect: 'duplicate', of: 'm-1' }]),
      outcome([{ effect: 'created' }, { effect: 'superseded', old: 'm-2', verdict: 'contradiction' }, { effect: 'superseded', old: 'm-3', verdict: 'update' }]),
      outcome([{ effect: 'lost', winner: 'm-4' }]),
      outcome([{ effect: 'created' }, { effect: 'conflict', conflict_id: 'c-1', with: 'm-5' }], ['m-5: timed out']),
    ])).toEqual({ total: 6, created: 2, known: 1, replaced: 1, lost: 1, review: 1, judgeFailures: 1 });
    expect(summarize([])).toEqual({ total: 0, created: 0, known: 0, replaced: 0, lost: 0, review: 0, judgeFailures: 0 });
  });
});

describe('keptCards and evidenceShown', () => {
  it('sends the kept cards in order with their text trimmed', () => {
    const review = PREVIEW.cards.map((candidate, i) => ({
      candidate,
      decision: i === 1 ? ('drop' as const) : ('keep' as const),
      content: i === 0 ? ' Edited. ' : candidate.card.content,
      editing: null,
    }));
    expect(keptCards(review).map((c) => c.content)).toEqual(['Edited.', 'Plays the cello']);
  });

  it('shows the words read from only when they say more than the text', () => {
    expect(evidenceShown(importCard('Plays the cello'))).toBeNull();
    expect(evidenceShown(importCard('plays the cello', { content: 'Plays the cello.' }))).toBeNull();
    expect(evidenceShown(importCard('Lives in Lisbon', { content: 'The user lives in Lisbon.' }))).toBe('Lives in Lisbon');
  });
});
