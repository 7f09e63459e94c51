// Projects: the list the engine keeps (with each one's conversation and memory counts), the
// form that adds one or edits one (name, standing instructions, folders one a line), and the
// removal, which asks first, and, for a project with memories, what becomes of them (global
// memories, or deleted for good): nothing is removed without that answer. Every change reads
// the list again, so it shows what the engine kept.

import type { AddProject, EditProject, Project, ProjectMemories, ProjectRemoved } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** The form as typed. */
export interface ProjectDraft {
  name: string;
  instructions: string;
  /** One absolute folder path a line. */
  folders: string;
}

export const EMPTY_PROJECT: ProjectDraft = { name: '', instructions: '', folders: '' };

/** The folders typed one a line: trimmed, blank lines dropped. */
export function folderList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** A project as the form shows it. */
export function draftOf(p: Project): ProjectDraft {
  return { name: p.name, instructions: p.instructions ?? '', folders: p.folders.join('\n') };
}

/** The request that adds the typed project: instructions and folders only when given. */
export function addRequest(d: ProjectDraft): AddProject {
  const instructions = d.instructions.trim();
  const folders = folderList(d.folders);
  return {
    name: d.name.trim(),
    ...(instructions ? { instructions } : {}),
    ...(folders.length > 0 ? { folders } : {}),
  };
}

/**
 * The request that turns `p` into the typed project: only what changed (instructions "" for
 * none, the whole folder list when it changed).
 */
export function editRequest(p: Project, d: ProjectDraft): EditProject {
  const name = d.name.trim();
  const instructions = d.instructions.trim();
  const folders = folderList(d.folders);
  const sameFolders = folders.length === p.folders.length && folders.every((f, i) => f === p.folders[i]);
  return {
    name: p.name,
    ...(name !== p.name ? { new_name: name } : {}),
    ...(instructions !== (p.instructions ?? '') ? { instructions } : {}),
    ...(sameFolders ? {} : { folders }),
  };
}

/** What the last change did, said under the list. */
export type ProjectNotice =
  | { kind: 'added' | 'saved'; name: string }
  | { kind: 'removed'; removed: ProjectRemoved };

export interface ProjectsState {
  projects: Project[] | undefined;
  loadError: string | null;
  /** The form open: a new project (`original` null) or the one named `original`. */
  editing: { original: string | null; draft: ProjectDraft } | null;
  /** The project whose removal waits for the person's answer. */
  removing: string | null;
  busy: boolean;
  /** The engine's refusal of the last add, edit or remove, in its words. */
  failure: string | null;
  notice: ProjectNotice | null;
}

export class ProjectsStore extends SettingsStore<ProjectsState> {
  private readonly transport: SettingsTransport;
  /** Told after every change the engine took (the sidebar and the chat read projects too). */
  private readonly onChanged: () => void;

  constructor(transport: SettingsTransport, onChanged: () => void = () => {}) {
    super({ projects: undefined, loadError: null, editing: null, removing: null, busy: false, failure: null, notice: null });
    this.transport = transport;
    this.onChanged = onChanged;
  }

  async load(): Promise<void> {
    try {
      this.set({ projects: await this.transport.call('list_projects', {}), loadError: null });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  /** Opens the form for a new project. */
  openNew(): void {
    this.set({ editing: { original: null, draft: EMPTY_PROJECT }, removing: null, failure: null, notice: null });
  }

  /** Opens the form on a project. */
  openEdit(name: string): void {
    const p = this.getState().projects?.find((x) => x.name === name);
    if (p) this.set({ editing: { original: name, draft: draftOf(p) }, removing: null, failure: null, notice: null });
  }

  change(patch: Partial<ProjectDraft>): void {
    const { editing } = this.getState();
    if (editing) this.set({ editing: { ...editing, draft: { ...editing.draft, ...patch } } });
  }

  cancel(): void {
    this.set({ editing: null, failure: null });
  }

  /** Adds or saves the typed project; the form stays open, with the engine's words, on a refusal. */
  async submit(): Promise<void> {
    const { editing, projects } = this.getState();
    if (!editing) return;
    const original = editing.original === null ? undefined : projects?.find((p) => p.name === editing.original);
    await this.run(async () => {
      const saved = original
        ? await this.transport.call('edit_project', editRequest(original, editing.draft))
        : await this.transport.call('add_project', addRequest(editing.draft));
      this.set({ editing: null, notice: { kind: original ? 'saved' : 'added', name: saved.name } });
    });
  }

  /** Asks before removing a project; nothing is sent yet. */
  requestRemove(name: string): void {
    this.set({ removing: name, editing: null, failure: null, notice: null });
  }

  cancelRemove(): void {
    this.set({ removing: null, failure: null });
  }

  /**
   * Removes the project waiting for confirmation; `memories` says what becomes of its
   * memories, and is required when it has any (nothing is sent without it).
   */
  async remove(memories?: ProjectMemories): Promise<void> {
    const { removing, projects } = this.getState();
    const project = projects?.find((p) => p.name === removing);
    if (!project || (project.memories > 0 && memories === undefined)) return;
    await this.run(async () => {
      const removed = await this.transport.call('remove_project', {
        name: project.name,
        ...(project.memories > 0 ? { memories } : {}),
      });
      this.set({ removing: null, notice: { kind: 'removed', removed } });
    });
  }

  dismissNotice(): void {
    this.set({ notice: null });
  }

  /**
   * Runs one change, then reads the list again either way (a refusal may come from counts
   * that changed since); tells `onChanged` when the engine took it.
   */
  private async run(change: () => Promise<void>): Promise<void> {
    this.set({ busy: true, failure: null, notice: null });
    let done = false;
    try {
      await change();
      done = true;
    } catch (e) {
      this.set({ failure: describe(e) });
    } finally {
      this.set({ busy: false });
    }
    await this.load();
    if (done) this.onChanged();
  }
}
