// The approval queue of unattended runs: questions automations asked while nobody was
// watching, waiting for an answer. One instance for the page (made by `App`): it reads the
// queue every few seconds while the app is open (the number on the Automations button) and
// the automations page shows and answers the questions from it. A failure to read keeps what
// was known (the badge is a hint); the page shows the failure.

import type { ApprovalAnswer, QueuedApproval } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from '../settings/store';
import { pendingOnly } from './summary';

/** How often the queue is read while the app is open (ms). */
export const QUEUE_POLL_MS = 5000;

/** The answers the queue panel offers (the engine takes every `ApprovalAnswer`). */
export type QueueAnswer = Extract<ApprovalAnswer, 'allow_once' | 'allow_automation' | 'deny'>;

export interface ApprovalQueueState {
  /** Pending questions, oldest first; empty until read. */
  pending: QueuedApproval[];
  /** Read at least once. */
  loaded: boolean;
  /** Why the last read failed, or null. */
  error: string | null;
  /** A question being answered. */
  answering: string | null;
  /** Why the last answer failed, or null. */
  answerError: string | null;
}

export class ApprovalQueue extends SettingsStore<ApprovalQueueState> {
  private readonly transport: SettingsTransport;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Bumped by every read and answer, so an older read is dropped. */
  private generation = 0;

  constructor(transport: SettingsTransport) {
    super({ pending: [], loaded: false, error: null, answering: null, answerError: null });
    this.transport = transport;
  }

  /** Reads the queue now and every `QUEUE_POLL_MS` until `dispose`. */
  async load(): Promise<void> {
    this.stop();
    this.timer = setInterval(() => {
      if (typeof document !== 'undefined' && document.hidden) return;
      void this.refresh();
    }, QUEUE_POLL_MS);
    await this.refresh();
  }

  /** Reads the pending questions. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    try {
      const queue = await this.transport.call('approval_queue', { all: false });
      if (generation !== this.generation) return;
      this.set({ pending: pendingOnly(queue), loaded: true, error: null });
    } catch (e) {
      if (generation === this.generation) this.set({ error: describe(e) });
    }
  }

  /** Answers a question, drops it at once, and reads the queue again. */
  async answer(requestId: string, answer: QueueAnswer): Promise<void> {
    this.generation += 1;
    this.set({ answering: requestId, answerError: null });
    try {
      await this.transport.call('answer_approval', { request_id: requestId, answer });
      this.set({ pending: this.getState().pending.filter((q) => q.id !== requestId), answering: null });
    } catch (e) {
      this.set({ answering: null, answerError: describe(e) });
    }
    await this.refresh();
  }

  dismissError(): void {
    this.set({ answerError: null });
  }

  private stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  dispose(): void {
    this.stop();
  }
}
