// "Import from another assistant": what the person pasted (ChatGPT's "Manage memories" list,
// Claude's memory export, any list of statements about them), the engine's reading of it into
// memory cards (`memory_import_preview`, which writes nothing) with what keeping each would do
// to the memories already there, the person's decision on each card (keep or drop, the text
// edited), and the write of the kept ones (`memory_import_cards`), summed up from the engine's
// effects. No React here; the dialog reads it through `useSyncExternalStore`.

import type { ImportCandidate, ImportCard, ImportClash, MemoryEffect, WriteOutcome } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from '../settings/store';

/** Keep the card (it is written) or drop it (it is not). */
export type Decision = 'keep' | 'drop';

/** One card under review. */
export interface ReviewCard {
  /** The card and its clashes as the engine read them. */
  candidate: ImportCandidate;
  decision: Decision;
  /** The text it is written with: the engine's, or the person's edit. */
  content: string;
  /** The text being edited, or null. */
  editing: string | null;
}

/** What one import did, counted from the engine's effects; the kinds split the cards. */
export interface ImportSummary {
  /** Cards written. */
  total: number;
  /** New memories that touched none there. */
  created: number;
  /** Already known: the memory there was reinforced, nothing added. */
  known: number;
  /** New memories that superseded an older one. */
  replaced: number;
  /** Stored as outdated: a memory there won. */
  lost: number;
  /** New memories waiting in the conflict review queue with one there. */
  review: number;
  /** Judge calls that failed (the deterministic rule decided instead). */
  judgeFailures: number;
}

export interface AssistantImportState {
  /** The dialog is open. */
  open: boolean;
  /** The pasted text. */
  text: string;
  /** The project (by name) cards about its work go to; '' for none (all global). */
  project: string;
  /** The model is reading the text. */
  reading: boolean;
  /** The kept cards are being written. */
  writing: boolean;
  /** The cards read, once the engine has read the text; null before. */
  review: ReviewCard[] | null;
  /** What the engine left out of the reading, with why. */
  dropped: string[];
  /** The engine's refusal of the last read or write. */
  error: string | null;
  /** What the last import did (shown once the dialog has closed). */
  summary: ImportSummary | null;
}

/**
 * Whether a card is kept unless the person says otherwise: yes when keeping it changes no
 * memory there (a duplicate only reinforces one), no when it replaces one, loses to one or
 * would wait for review with one.
 */
export function defaultDecision(clashes: readonly ImportClash[]): Decision {
  return clashes.every((c) => c.kind === 'duplicate') ? 'keep' : 'drop';
}

/** The cards to write: the kept ones, in order, with the text as edited. */
export function keptCards(review: readonly ReviewCard[]): ImportCard[] {
  return review.filter((c) => c.decision === 'keep').map((c) => ({ ...c.candidate.card, content: c.content.trim() }));
}

/** Whether the person changed the card's text. */
export function isEdited(card: ReviewCard): boolean {
  return card.content.trim() !== card.candidate.card.content.trim();
}

/** What one written card did, from its effects. */
function kindOf(effects: readonly MemoryEffect[]): keyof Omit<ImportSummary, 'total' | 'judgeFailures'> {
  const has = (effect: MemoryEffect['effect']) => effects.some((e) => e.effect === effect);
  if (has('duplicate')) return 'known';
  if (has('lost')) return 'lost';
  if (has('conflict')) return 'review';
  if (has('superseded')) return 'replaced';
  return 'created';
}

/** The import's outcome counted from the engine's answer (one outcome per written card). */
export function summarize(outcomes: readonly WriteOutcome[]): ImportSummary {
  const summary: ImportSummary = { total: outcomes.length, created: 0, known: 0, replaced: 0, lost: 0, review: 0, judgeFailures: 0 };
  for (const o of outcomes) {
    summary[kindOf(o.effects)] += 1;
    summary.judgeFailures += o.judge_failures.length;
  }
  return summary;
}

/** The words a card was read from, when they say more than its text (case and end stop aside). */
export function evidenceShown(card: ImportCard): string | null {
  const plain = (s: string) => s.trim().replace(/[.。!！?？]+$/u, '').toLowerCase();
  return plain(card.evidence) === plain(card.content) ? null : card.evidence.trim();
}

const CLOSED: Omit<AssistantImportState, 'summary'> = {
  open: false,
  text: '',
  project: '',
  reading: false,
  writing: false,
  review: null,
  dropped: [],
  error: null,
};

export class AssistantImportStore extends SettingsStore<AssistantImportState> {
  private readonly transport: SettingsTransport;
  /** Bumped when the dialog closes or the review is discarded, so a late reading is dropped. */
  private generation = 0;

  constructor(transport: SettingsTransport) {
    super({ ...CLOSED, summary: null });
    this.transport = transport;
  }

  /** Nothing to read up front: the projects come with the memory page. */
  async load(): Promise<void> {}

  /** Opens the dialog on an empty text (the last summary goes). */
  openDialog(): void {
    this.set({ ...CLOSED, open: true, summary: null });
  }

  /** Closes the dialog and forgets the text and any review; nothing is written. */
  close(): void {
    this.generation += 1;
    this.set({ ...CLOSED });
  }

  setText(text: string): void {
    this.set({ text });
  }

  setProject(project: string): void {
    this.set({ project });
  }

  /** Whether the text can be read now. */
  canRead(): boolean {
    const { text, reading, writing } = this.getState();
    return text.trim() !== '' && !reading && !writing;
  }

  /** Has the engine read the pasted text into cards; nothing is written. */
  async read(): Promise<void> {
    if (!this.canRead()) return;
    const { text, project } = this.getState();
    const generation = ++this.generation;
    this.set({ reading: true, error: null, review: null, dropped: [] });
    try {
      const preview = await this.transport.call('memory_import_preview', project ? { text, project } : { text });
      if (generation !== this.generation) return;
      this.set({
        review: preview.cards.map((candidate) => ({
          candidate,
          decision: defaultDecision(candidate.clashes),
          content: candidate.card.content,
          editing: null,
        })),
        dropped: preview.dropped,
      });
    } catch (e) {
      if (generation === this.generation) this.set({ error: describe(e) });
    } finally {
      if (generation === this.generation) this.set({ reading: false });
    }
  }

  /** Discards the review (nothing is written) and goes back to the text. */
  discardReview(): void {
    this.generation += 1;
    this.set({ review: null, dropped: [], error: null, reading: false });
  }

  private change(index: number, change: (card: ReviewCard) => Partial<ReviewCard>): void {
    const { review } = this.getState();
    if (!review || !review[index]) return;
    this.set({ review: review.map((c, i) => (i === index ? { ...c, ...change(c) } : c)) });
  }

  decide(index: number, decision: Decision): void {
    this.change(index, () => ({ decision }));
  }

  startEdit(index: number): void {
    this.change(index, (c) => ({ editing: c.content }));
  }

  editText(index: number, text: string): void {
    this.change(index, (c) => (c.editing === null ? {} : { editing: text }));
  }

  /** Takes the edited text (not a blank one). */
  saveEdit(index: number): void {
    this.change(index, (c) => (c.editing === null || c.editing.trim() === '' ? {} : { content: c.editing.trim(), editing: null }));
  }

  cancelEdit(index: number): void {
    this.change(index, () => ({ editing: null }));
  }

  /** How many cards would be written. */
  keptCount(): number {
    return this.getState().review?.filter((c) => c.decision === 'keep').length ?? 0;
  }

  /** Whether the kept cards can be written now (some kept, none mid-edit, nothing running). */
  canImport(): boolean {
    const { review, reading, writing } = this.getState();
    return review !== null && !reading && !writing && this.keptCount() > 0 && review.every((c) => c.editing === null);
  }

  /**
   * Writes the kept cards (with their edited text); on success the dialog closes and the
   * summary stays. Whether anything was written (then the memory list is read again).
   */
  async importKept(): Promise<boolean> {
    const { review } = this.getState();
    if (!review || !this.canImport()) return false;
    this.set({ writing: true, error: null });
    try {
      const outcomes = await this.transport.call('memory_import_cards', { cards: keptCards(review) });
      this.generation += 1;
      this.set({ ...CLOSED, summary: summarize(outcomes) });
      return true;
    } catch (e) {
      this.set({ error: describe(e), writing: false });
      return false;
    }
  }

  dismissSummary(): void {
    this.set({ summary: null });
  }
}
