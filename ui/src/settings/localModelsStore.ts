// The built-in model's catalog: the recommended models with what is installed and in use,
// downloads with their progress, and making one (or a GGUF file the person has) the
// provider. A download runs in the engine; while one is unfinished the list is read again
// every half second, until none runs or the page goes away.

import type { DownloadState, LocalModelEntry, LocalModels, ProviderView } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** While a download runs, the list is read this often. */
export const LOCAL_POLL_MS = 500;
/** Polling gives up after this many failed reads in a row (the engine went away). */
export const LOCAL_POLL_FAILURES = 10;

/** The `busy` value while the typed GGUF file is being put to use. */
export const USING_FILE = ':file';

/** Where a catalog model stands, as one row of the list shows it. */
export type LocalModelStatus =
  | { state: 'inUse' }
  | { state: 'downloading'; done: number; total: number | null; percent: number | null }
  | { state: 'installed' }
  | { state: 'failed'; error: string }
  | { state: 'available' };

export interface LocalModelsState {
  /** The catalog as last read. */
  catalog: LocalModels | undefined;
  loadError: string | null;
  /** The action under way: a catalog id being fetched or used, or `USING_FILE`. */
  busy: string | null;
  /** The GGUF path as typed. */
  file: string;
  /** What was just made the provider: a catalog model's name, or the file's path. */
  used: string | null;
  /** Why the last download start or switch was refused. */
  failure: string | null;
}

/** The whole percentage of a download, or null while its size is unknown. */
export function percent(d: Pick<DownloadState, 'done' | 'total'>): number | null {
  if (d.total === null || d.total <= 0) return null;
  return Math.min(100, Math.floor((d.done / d.total) * 100));
}

/** A row's state: in use, downloading, installed, failed (with why) or to download. */
export function modelStatus(m: LocalModelEntry): LocalModelStatus {
  const d = m.download;
  if (m.in_use) return { state: 'inUse' };
  if (d && !d.finished) return { state: 'downloading', done: d.done, total: d.total, percent: percent(d) };
  if (m.path !== null) return { state: 'installed' };
  if (d?.error) return { state: 'failed', error: d.error };
  return { state: 'available' };
}

/** Whether any download of the catalog is unfinished. */
export function downloading(catalog: LocalModels | undefined): boolean {
  return catalog?.models.some((m) => m.download !== null && !m.download.finished) ?? false;
}

/** The GGUF file in force when no catalog model is it (a file the person chose), else null. */
export function customFileInUse(catalog: LocalModels | undefined): string | null {
  if (!catalog?.in_use || catalog.models.some((m) => m.in_use)) return null;
  return catalog.in_use;
}

/** A size for people: whole megabytes below a gigabyte, then gigabytes with one decimal. */
export function formatSize(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${Math.round(bytes / 1e6)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} kB`;
}

export class LocalModelsStore extends SettingsStore<LocalModelsState> {
  private readonly transport: SettingsTransport;
  /** Bumped by every new round of polling and by `dispose`, which ends the one before. */
  private pollRound = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(transport: SettingsTransport) {
    super({ catalog: undefined, loadError: null, busy: null, file: '', used: null, failure: null });
    this.transport = transport;
  }

  /** Reads the catalog, and follows a download already running (started before this page). */
  async load(): Promise<void> {
    await this.refresh();
    if (downloading(this.getState().catalog)) this.poll();
  }

  /** Reads the catalog again; true when it answered. */
  async refresh(): Promise<boolean> {
    try {
      this.set({ catalog: await this.transport.call('local_models', {}), loadError: null });
      return true;
    } catch (e) {
      this.set({ loadError: describe(e) });
      return false;
    }
  }

  /** Stops polling. */
  dispose(): void {
    this.pollRound += 1;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Reads the catalog every `LOCAL_POLL_MS` while a download is unfinished. */
  private poll(): void {
    this.dispose();
    const round = this.pollRound;
    let failures = 0;
    const tick = async () => {
      try {
        const next = await this.transport.call('local_models', {});
        if (round !== this.pollRound) return;
        failures = 0;
        this.set({ catalog: next, loadError: null });
        if (!downloading(next)) return;
      } catch (e) {
        if (round !== this.pollRound) return;
        failures += 1;
        if (failures >= LOCAL_POLL_FAILURES) {
          this.set({ loadError: describe(e) });
          return;
        }
      }
      this.timer = setTimeout(() => void tick(), LOCAL_POLL_MS);
    };
    this.timer = setTimeout(() => void tick(), LOCAL_POLL_MS);
  }

  /** Starts (or, after a failure, resumes) downloading a catalog model, then follows it. */
  async fetch(id: string): Promise<void> {
    if (this.getState().busy !== null) return;
    this.set({ busy: id, failure: null, used: null });
    try {
      await this.transport.call('fetch_local_model', { id });
    } catch (e) {
      this.set({ failure: describe(e), busy: null });
      return;
    }
    await this.refresh();
    this.set({ busy: null });
    if (downloading(this.getState().catalog)) this.poll();
  }

  /** A failed download is tried again; the engine resumes from what is on disk. */
  retry(id: string): Promise<void> {
    return this.fetch(id);
  }

  editFile(file: string): void {
    this.set({ file, failure: null, used: null });
  }

  /**
   * Makes a catalog model (by id) or a GGUF path the provider; the engine saves and applies
   * it. Answers the provider view in force then, or null when it was refused.
   */
  async use(model: string, busy = model): Promise<ProviderView | null> {
    const wanted = model.trim();
    if (wanted === '' || this.getState().busy !== null) return null;
    this.set({ busy, failure: null, used: null });
    try {
      const view = await this.transport.call('use_local_model', { model: wanted });
      const entry = this.getState().catalog?.models.find((m) => m.id === wanted);
      this.set({ used: entry?.name ?? view.settings.model });
      await this.refresh();
      return view;
    } catch (e) {
      this.set({ failure: describe(e) });
      return null;
    } finally {
      this.set({ busy: null });
    }
  }

  /** Makes the typed GGUF file the provider; the field empties when the engine took it. */
  async useFile(): Promise<ProviderView | null> {
    const view = await this.use(this.getState().file, USING_FILE);
    if (view) this.set({ file: '' });
    return view;
  }
}
