// "Ask before remembering" on the memory page: the setting (`[memory] ask_before_remembering`)
// as the engine has it, saved at once when switched (the switch shows the engine's answer,
// never a value it refused), and every proposal waiting for the person's Keep (written
// through the memory write path) or Discard (nothing written), newest first. No React here.

import type { MemoryProposal, MemorySettings } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from '../settings/store';
import { TransportError } from '../transport';

/** A decision on a proposal: Keep or Discard. */
export type Decision = 'kept' | 'discarded';

export interface AskFirstState {
  /** The setting in force, as the engine last answered; undefined until read. */
  settings: MemorySettings | undefined;
  loadError: string | null;
  /** The value being saved, while the engine answers; null otherwise. */
  saving: boolean | null;
  /** The last save went through (the switch shows what it saved). */
  saved: boolean;
  /** The engine's refusal of the last save. */
  saveError: string | null;
  /** The proposals waiting, newest first; undefined until read. */
  proposals: MemoryProposal[] | undefined;
  proposalsError: string | null;
  /** The proposals (by id) whose Keep or Discard is on its way. */
  pending: string[];
  /** The last decision that went through. */
  done: Decision | null;
  /** The last one that failed: which, the engine's code (`not_found`: decided elsewhere), its message. */
  decideError: { decision: Decision; code: string; message: string } | null;
}

/** Whether the switch is on: the value being saved, else the one in force. */
export function asking(s: AskFirstState): boolean {
  return s.saving ?? s.settings?.ask_before_remembering ?? false;
}

export class AskFirstStore extends SettingsStore<AskFirstState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({
      settings: undefined,
      loadError: null,
      saving: null,
      saved: false,
      saveError: null,
      proposals: undefined,
      proposalsError: null,
      pending: [],
      done: null,
      decideError: null,
    });
    this.transport = transport;
  }

  async load(): Promise<void> {
    await Promise.all([this.loadSettings(), this.loadProposals()]);
  }

  private async loadSettings(): Promise<void> {
    try {
      this.set({ settings: await this.transport.call('memory_settings', {}), loadError: null });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  /** Reads the waiting proposals again (the chat may have decided some, or added some). */
  async loadProposals(): Promise<void> {
    try {
      this.set({ proposals: await this.transport.call('memory_proposals', {}), proposalsError: null });
    } catch (e) {
      this.set({ proposalsError: describe(e) });
    }
  }

  /** Saves the setting; the switch follows the engine's answer, or goes back on a refusal. */
  async setAsking(on: boolean): Promise<void> {
    if (this.getState().saving !== null) return;
    this.set({ saving: on, saved: false, saveError: null });
    try {
      const settings = await this.transport.call('update_memory_settings', { ask_before_remembering: on });
      this.set({ settings, saved: true });
    } catch (e) {
      this.set({ saveError: describe(e) });
    } finally {
      this.set({ saving: null });
    }
  }

  /** Keeps a proposal (written to memory); resolves true when it was. */
  keep(p: MemoryProposal): Promise<boolean> {
    return this.decide(p, 'kept', () => this.transport.call('memory_keep_proposal', { id: p.id }));
  }

  /** Discards a proposal: nothing of it is written. Resolves true when it went through. */
  discard(p: MemoryProposal): Promise<boolean> {
    return this.decide(p, 'discarded', () => this.transport.call('memory_discard_proposal', { id: p.id }));
  }

  /**
   * Runs one decision: the proposal's buttons wait, then it leaves the list; on a failure the
   * list is read again (a proposal decided elsewhere is gone) and the failure is said.
   */
  private async decide(p: MemoryProposal, decision: Decision, call: () => Promise<unknown>): Promise<boolean> {
    if (this.getState().pending.includes(p.id)) return false;
    this.set({ pending: [...this.getState().pending, p.id], done: null, decideError: null });
    const settle = (change: Partial<AskFirstState>) =>
      this.set({ pending: this.getState().pending.filter((id) => id !== p.id), ...change });
    try {
      await call();
    } catch (e) {
      settle({ decideError: { decision, code: e instanceof TransportError ? e.code : 'network', message: describe(e) } });
      await this.loadProposals();
      return false;
    }
    settle({ done: decision, proposals: this.getState().proposals?.filter((x) => x.id !== p.id) });
    return true;
  }
}
