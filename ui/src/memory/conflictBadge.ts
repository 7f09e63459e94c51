// How many memory conflicts wait for review: the number on the Memory button. One instance
// for the page, shared with the memory page's store, which sets it the moment a conflict is
// settled or the queue is read (no waiting for the next check). After a turn ends it is read
// again at once and a few times shortly after, because memory extraction (which can open
// conflicts) runs once the answer is already there.

import { SettingsStore, type SettingsTransport } from '../settings/store';

/** When the count is read again after a turn ends (ms): extraction runs after the answer. */
export const AFTER_TURN_DELAYS: readonly number[] = [0, 1500, 5000, 15_000];

export interface ConflictBadgeState {
  /** Open conflicts (0 until known, and while the engine cannot be asked). */
  open: number;
}

export class ConflictBadge extends SettingsStore<ConflictBadgeState> {
  private readonly transport: SettingsTransport;
  /** Bumped by every change, so an answer that started before it is dropped. */
  private generation = 0;
  private timers: ReturnType<typeof setTimeout>[] = [];

  constructor(transport: SettingsTransport) {
    super({ open: 0 });
    this.transport = transport;
  }

  async load(): Promise<void> {
    await this.refresh();
  }

  /** Reads the number of open conflicts. A failure leaves the badge as it was. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    try {
      const open = await this.transport.call('memory_conflicts', { all: false });
      const count = open.filter((c) => c.status === 'open').length;
      if (generation === this.generation && count !== this.getState().open) this.set({ open: count });
    } catch {
      // The badge is a hint; the memory page shows the failure.
    }
  }

  /** The count as someone who just read (or changed) the queue knows it. */
  report(open: number): void {
    this.generation += 1;
    if (open !== this.getState().open) this.set({ open });
  }

  /** Reads the count now and again shortly after (a turn has just ended). */
  refreshAfterTurn(): void {
    this.clearTimers();
    this.timers = AFTER_TURN_DELAYS.map((ms) => setTimeout(() => void this.refresh(), ms));
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }

  dispose(): void {
    this.clearTimers();
  }
}
