// The automations page's state: every automation with its state and run counts (read again
// every few seconds while the page is open), the selected one's run history, the editor (a
// form from a template or a stored automation, with the engine's live preview of what it
// would do, debounced while typing), and the actions: switch on and off, pause or resume all,
// run now, remove after confirmation. No React here; components read it through
// `useSyncExternalStore` (see `components/settings/useSettingsStore.ts`).

import type { AutomationPreview, AutomationRun, AutomationView } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from '../settings/store';
import {
  type AutomationForm,
  type FormProblem,
  type TemplateId,
  buildSpec,
  checkName,
  formFromAutomation,
  templateForm,
} from './form';

/** How often the list and the open run history are read again while the page is open (ms). */
export const POLL_MS = 3000;
/** How long typing must pause before the preview is asked for (ms). */
export const PREVIEW_DELAY_MS = 300;
/** Runs asked for at first, and how many more "Show more" adds. */
export const RUNS_PAGE = 50;

/** The editor: a new automation or a stored one's changes, its preview and what saving said. */
export interface Editor {
  /** The stored automation's id, or null for a new one. */
  id: string | null;
  form: AutomationForm;
  /** The engine's preview of the form's spec, once read. */
  preview: AutomationPreview | null;
  /** The engine's refusal of the spec (names the field), or a field the form cannot read. */
  previewError: string | null;
  problem: FormProblem | null;
  previewing: boolean;
  saving: boolean;
  /** Why the engine refused to save. */
  saveError: string | null;
}

/** Something done that the page says once (a run queued, all paused). */
export type Notice =
  | { kind: 'queued'; name: string; seq: number }
  | { kind: 'allPaused'; count: number }
  | { kind: 'allResumed'; count: number }
  | { kind: 'removed'; name: string }
  | { kind: 'saved'; name: string };

export interface AutomationsState {
  /** Every automation, by name; undefined until read. */
  list: AutomationView[] | undefined;
  loadError: string | null;
  /** The automation whose runs show. */
  selected: string | null;
  /** Its runs, newest first; undefined until read. */
  runs: AutomationRun[] | undefined;
  runsError: string | null;
  /** How many runs are asked for. */
  runsLimit: number;
  editor: Editor | null;
  /** An automation waiting for "Remove" to be confirmed. */
  confirmRemove: string | null;
  busy: boolean;
  actionError: string | null;
  notice: Notice | null;
}

export class AutomationStore extends SettingsStore<AutomationsState> {
  private readonly transport: SettingsTransport;
  private poller: ReturnType<typeof setInterval> | null = null;
  private previewTimer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by every preview request and every new form, so an older answer is dropped. */
  private previewGeneration = 0;
  /** Bumped when the selection changes, so runs of another automation are dropped. */
  private runsGeneration = 0;

  constructor(transport: SettingsTransport) {
    super({
      list: undefined,
      loadError: null,
      selected: null,
      runs: undefined,
      runsError: null,
      runsLimit: RUNS_PAGE,
      editor: null,
      confirmRemove: null,
      busy: false,
      actionError: null,
      notice: null,
    });
    this.transport = transport;
  }

  /** Reads the list (and the open runs) now and every `POLL_MS` until `dispose`. */
  async load(): Promise<void> {
    this.stopPolling();
    this.poller = setInterval(() => {
      if (typeof document !== 'undefined' && document.hidden) return;
      void this.refresh();
    }, POLL_MS);
    await this.refresh();
  }

  /** Reads the list and the selected automation's runs. */
  async refresh(): Promise<void> {
    await Promise.all([this.reloadList(), this.reloadRuns()]);
  }

  async reloadList(): Promise<void> {
    try {
      const list = await this.transport.call('automations', {});
      const { selected } = this.getState();
      // The first automation's runs show until another is picked; a removed one's go.
      const keep = selected !== null && list.some((v) => v.automation.id === selected);
      const next = keep ? selected : (list[0]?.automation.id ?? null);
      this.set({ list, loadError: null });
      if (next !== selected) this.select(next);
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  async reloadRuns(): Promise<void> {
    const { selected, runsLimit } = this.getState();
    if (selected === null) return;
    const generation = this.runsGeneration;
    try {
      const runs = await this.transport.call('automation_runs', { automation: selected, limit: runsLimit });
      if (generation === this.runsGeneration) this.set({ runs, runsError: null });
    } catch (e) {
      if (generation === this.runsGeneration) this.set({ runsError: describe(e) });
    }
  }

  /** Shows an automation's runs (null: none). */
  select(id: string | null): void {
    if (id === this.getState().selected) return;
    this.runsGeneration += 1;
    this.set({ selected: id, runs: undefined, runsError: null, runsLimit: RUNS_PAGE });
    void this.reloadRuns();
  }

  /** Asks for more of the selected automation's runs. */
  async showMoreRuns(): Promise<void> {
    this.set({ runsLimit: this.getState().runsLimit + RUNS_PAGE });
    await this.reloadRuns();
  }

  // The editor.

  /** Opens the editor on a template's form. */
  startNew(template: TemplateId): void {
    this.openEditor(null, templateForm(template));
  }

  /** Opens the editor on a stored automation. */
  startEdit(id: string): void {
    const view = this.getState().list?.find((v) => v.automation.id === id);
    if (view) this.openEditor(id, formFromAutomation(view.automation));
  }

  private openEditor(id: string | null, form: AutomationForm): void {
    this.set({
      editor: { id, form, preview: null, previewError: null, problem: null, previewing: false, saving: false, saveError: null },
      notice: null,
    });
    this.schedulePreview(0);
  }

  /** Changes the form as typed; the preview follows once typing pauses. */
  editForm(change: Partial<AutomationForm>): void {
    const editor = this.getState().editor;
    if (!editor) return;
    this.set({ editor: { ...editor, form: { ...editor.form, ...change }, saveError: null } });
    this.schedulePreview(PREVIEW_DELAY_MS);
  }

  /** Replaces the whole form (a helper such as `toggleEvent` made it). */
  replaceForm(form: AutomationForm): void {
    this.editForm(form);
  }

  cancelEdit(): void {
    this.clearPreviewTimer();
    this.previewGeneration += 1;
    this.set({ editor: null });
  }

  private schedulePreview(delay: number): void {
    this.clearPreviewTimer();
    this.previewTimer = setTimeout(() => {
      this.previewTimer = null;
      void this.preview();
    }, delay);
  }

  private clearPreviewTimer(): void {
    if (this.previewTimer !== null) clearTimeout(this.previewTimer);
    this.previewTimer = null;
  }

  /** Asks the engine what the form's spec would do (or says which field cannot be read). */
  async preview(): Promise<void> {
    const editor = this.getState().editor;
    if (!editor) return;
    const generation = ++this.previewGeneration;
    const built = buildSpec(editor.form);
    if (!built.ok) {
      this.patchEditor({ problem: built.problem, preview: null, previewError: null, previewing: false });
      return;
    }
    this.patchEditor({ problem: null, previewing: true });
    try {
      const preview = await this.transport.call('preview_automation', { spec: built.spec });
      if (generation === this.previewGeneration) this.patchEditor({ preview, previewError: null, previewing: false });
    } catch (e) {
      if (generation === this.previewGeneration) this.patchEditor({ preview: null, previewError: describe(e), previewing: false });
    }
  }

  private patchEditor(change: Partial<Editor>): void {
    const editor = this.getState().editor;
    if (editor) this.set({ editor: { ...editor, ...change } });
  }

  /** Saves the form: adds a new automation or changes the stored one; the editor closes. */
  async save(): Promise<void> {
    const editor = this.getState().editor;
    if (!editor || editor.saving) return;
    const built = buildSpec(editor.form);
    const problem = checkName(editor.form) ?? (built.ok ? null : built.problem);
    if (problem || !built.ok) {
      this.patchEditor({ problem });
      return;
    }
    const name = editor.form.name.trim();
    this.patchEditor({ saving: true, saveError: null, problem: null });
    try {
      let saved: AutomationView;
      if (editor.id === null) {
        saved = await this.transport.call('add_automation', { name, spec: built.spec, enabled: true });
      } else {
        const before = this.getState().list?.find((v) => v.automation.id === editor.id)?.automation.name;
        saved = await this.transport.call('edit_automation', {
          automation: editor.id,
          ...(before !== name ? { name } : {}),
          spec: built.spec,
        });
      }
      this.clearPreviewTimer();
      this.previewGeneration += 1;
      this.set({ editor: null, notice: { kind: 'saved', name: saved.automation.name } });
      this.replaceView(saved);
      this.select(saved.automation.id);
      await this.reloadList();
    } catch (e) {
      this.patchEditor({ saving: false, saveError: describe(e) });
    }
  }

  // Actions on the list.

  private replaceView(view: AutomationView): void {
    const list = this.getState().list ?? [];
    const found = list.some((v) => v.automation.id === view.automation.id);
    this.set({ list: found ? list.map((v) => (v.automation.id === view.automation.id ? view : v)) : [...list, view] });
  }

  private async act(work: () => Promise<void>): Promise<void> {
    this.set({ busy: true, actionError: null, notice: null });
    try {
      await work();
    } catch (e) {
      this.set({ actionError: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }

  /** Switches one automation on (resume) or off (pause). */
  setEnabled(id: string, enabled: boolean): Promise<void> {
    return this.act(async () => {
      this.replaceView(await this.transport.call('set_automation_enabled', { automation: id, enabled }));
    });
  }

  /** Pauses or resumes every automation. */
  setAllEnabled(enabled: boolean): Promise<void> {
    return this.act(async () => {
      const count = Number(await this.transport.call('set_all_automations_enabled', { enabled }));
      await this.reloadList();
      this.set({ notice: { kind: enabled ? 'allResumed' : 'allPaused', count } });
    });
  }

  /** Queues a run now and shows the automation's runs. */
  runNow(id: string): Promise<void> {
    return this.act(async () => {
      const run = await this.transport.call('run_automation', { automation: id });
      const name = this.getState().list?.find((v) => v.automation.id === id)?.automation.name ?? id;
      this.set({ notice: { kind: 'queued', name, seq: Number(run.seq) } });
      if (this.getState().selected === id) {
        this.set({ runs: [run, ...(this.getState().runs ?? []).filter((r) => r.id !== run.id)] });
      } else {
        this.select(id);
      }
      await this.reloadList();
    });
  }

  /** Asks to confirm removing an automation. */
  requestRemove(id: string): void {
    this.set({ confirmRemove: id });
  }

  cancelRemove(): void {
    this.set({ confirmRemove: null });
  }

  /** Removes the automation waiting for confirmation, with its run history. */
  confirmRemoval(): Promise<void> {
    const id = this.getState().confirmRemove;
    if (id === null) return Promise.resolve();
    return this.act(async () => {
      const removed = await this.transport.call('remove_automation', { automation: id });
      const list = (this.getState().list ?? []).filter((v) => v.automation.id !== id);
      this.set({ confirmRemove: null, list, notice: { kind: 'removed', name: removed.name } });
      if (this.getState().editor?.id === id) this.cancelEdit();
      if (this.getState().selected === id) this.select(list[0]?.automation.id ?? null);
      await this.reloadList();
    });
  }

  dismiss(): void {
    this.set({ actionError: null, notice: null });
  }

  private stopPolling(): void {
    if (this.poller !== null) clearInterval(this.poller);
    this.poller = null;
  }

  dispose(): void {
    this.stopPolling();
    this.clearPreviewTimer();
  }
}
