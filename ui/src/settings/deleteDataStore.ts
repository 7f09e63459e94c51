// "Delete all my data" (`delete_all_data`): the confirmation phrase as typed, the deletion,
// and what the engine removed or its refusal (a wrong phrase, or busy while a turn runs).
// Nothing to load: the section starts with an empty field.

import type { DataDeleted } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** What `delete_all_data` requires, typed by the person (trimmed; the engine checks it too). */
export const DELETE_ALL_DATA_PHRASE = 'delete all my data';

export interface DeleteDataState {
  /** The confirmation as typed. */
  typed: string;
  busy: boolean;
  /** What the last deletion removed. */
  deleted: DataDeleted | null;
  /** The engine's refusal of the last deletion. */
  failure: string | null;
}

/** Whether the deletion may go: the phrase typed exactly (ignoring surrounding spaces), and not already running. */
export function canDelete(s: DeleteDataState): boolean {
  return !s.busy && s.typed.trim() === DELETE_ALL_DATA_PHRASE;
}

export class DeleteDataStore extends SettingsStore<DeleteDataState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ typed: '', busy: false, deleted: null, failure: null });
    this.transport = transport;
  }

  async load(): Promise<void> {}

  /** Keeps the typed confirmation; a shown result or refusal becomes stale. */
  type(typed: string): void {
    this.set({ typed, deleted: null, failure: null });
  }

  /**
   * Deletes all the person's data once the phrase is typed; resolves with what was removed
   * (the field emptied), or null when nothing was sent or the engine refused (the field kept).
   */
  async deleteAll(): Promise<DataDeleted | null> {
    if (!canDelete(this.getState())) return null;
    this.set({ busy: true, deleted: null, failure: null });
    try {
      const deleted = await this.transport.call('delete_all_data', { confirm: DELETE_ALL_DATA_PHRASE });
      this.set({ deleted, typed: '' });
      return deleted;
    } catch (e) {
      this.set({ failure: describe(e) });
      return null;
    } finally {
      this.set({ busy: false });
    }
  }
}
