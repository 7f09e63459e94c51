// The standing instructions (the bootstrap files AGENTS.md, SOUL.md, USER.md, TOOLS.md, as
// the engine lists them): which file is open, unsaved text per file, the restore
// confirmation, and the last save or restore of a file (or its failure).

import type { BootstrapFile } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** The last save or restore of a file, or its failure. */
export type BootstrapStatus =
  | { name: string; kind: 'saved' | 'restored' }
  | { name: string; kind: 'saveFailed' | 'restoreFailed'; message: string };

export interface BootstrapState {
  /** In the engine's order. */
  files: BootstrapFile[] | undefined;
  loadError: string | null;
  /** The open file's name; null (or a name not listed) opens the first. */
  selected: string | null;
  /** Unsaved text by file name. */
  drafts: Record<string, string>;
  busy: boolean;
  /** "Restore default" asked for its confirmation. */
  confirming: boolean;
  status: BootstrapStatus | null;
}

/** `record` without `key`. */
function without(record: Record<string, string>, key: string): Record<string, string> {
  const rest = { ...record };
  delete rest[key];
  return rest;
}

/** The open file. */
export function currentFile(s: BootstrapState): BootstrapFile | undefined {
  return s.files?.find((f) => f.name === s.selected) ?? s.files?.[0];
}

/** A file's text as shown: its draft, else what the engine has. */
export function textOf(s: BootstrapState, f: BootstrapFile): string {
  return s.drafts[f.name] ?? f.content;
}

/** Whether a file has unsaved text that differs from the engine's. */
export function isDirty(s: BootstrapState, f: BootstrapFile): boolean {
  return f.name in s.drafts && s.drafts[f.name] !== f.content;
}

/** The status to show: only the open file's. */
export function shownStatus(s: BootstrapState): BootstrapStatus | null {
  const file = currentFile(s);
  return s.status && file && s.status.name === file.name ? s.status : null;
}

/** The file an arrow key moves to from the tab at `index` (wrapping), if any. */
export function neighbour(files: readonly BootstrapFile[], index: number, key: string): BootstrapFile | undefined {
  if (key !== 'ArrowRight' && key !== 'ArrowLeft') return undefined;
  return files[(index + (key === 'ArrowRight' ? 1 : files.length - 1)) % files.length];
}

export class BootstrapStore extends SettingsStore<BootstrapState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ files: undefined, loadError: null, selected: null, drafts: {}, busy: false, confirming: false, status: null });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      this.set({ files: await this.transport.call('bootstrap_files', {}), loadError: null });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  /** Opens a file; drafts are kept, the confirmation and status go. */
  select(name: string): void {
    if (name === currentFile(this.getState())?.name) return;
    this.set({ selected: name, confirming: false, status: null });
  }

  /** Keeps typed text as the file's draft; a shown "saved" or "restored" becomes stale. */
  edit(name: string, text: string): void {
    const { drafts, status } = this.getState();
    this.set({
      drafts: { ...drafts, [name]: text },
      status: status && (status.kind === 'saved' || status.kind === 'restored') ? null : status,
    });
  }

  /** Drops a file's draft. */
  discard(name: string): void {
    this.set({ drafts: without(this.getState().drafts, name), status: null });
  }

  askRestore(): void {
    this.set({ confirming: true, status: null });
  }

  cancelRestore(): void {
    this.set({ confirming: false });
  }

  /** Saves the file's text as shown. */
  save(name: string): Promise<void> {
    const file = this.getState().files?.find((f) => f.name === name);
    return this.store(name, file ? textOf(this.getState(), file) : (this.getState().drafts[name] ?? ''));
  }

  /** Removes the user's copy: the engine's default comes back. */
  restore(name: string): Promise<void> {
    return this.store(name, null);
  }

  /** Saves `content` (or restores the default for `null`) and shows the file as it now is. */
  private async store(name: string, content: string | null): Promise<void> {
    this.set({ busy: true, status: null });
    try {
      const saved = await this.transport.call('save_bootstrap_file', { name, content });
      const { files, drafts } = this.getState();
      this.set({
        files: files?.map((f) => (f.name === saved.name ? saved : f)),
        // A restore drops the draft; a save drops it unless it changed meanwhile.
        drafts: content === null || drafts[name] === content ? without(drafts, name) : drafts,
        status: { name, kind: content === null ? 'restored' : 'saved' },
      });
    } catch (e) {
      this.set({ status: { name, kind: content === null ? 'restoreFailed' : 'saveFailed', message: describe(e) } });
    } finally {
      this.set({ busy: false, confirming: false });
    }
  }
}
