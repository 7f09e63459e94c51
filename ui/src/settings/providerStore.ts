// The model provider's settings: the view the engine reports (settings in force, where the
// key comes from), the form as typed, a local Ollama when one answers, and the last test,
// save or failure. Every call to the engine for this domain is made here.

import type { ConnectionReport, OllamaInfo, ProviderKind, ProviderSettings, ProviderView } from '../settingsTypes';
import { providerUpdate } from '../settingsTypes';
import { type Transport, TransportError } from '../transport';
import { SettingsStore, describe } from './store';

export type ProviderTransport = Pick<Transport, 'provider' | 'updateProvider' | 'testProvider' | 'detectOllama'>;

/** The provider kinds, in the order the select offers them (the variants of `ProviderKind`). */
export const PROVIDER_KINDS: readonly ProviderKind[] = ['openai', 'anthropic', 'ollama'];

/**
 * Each kind's usual base URL: a copy of the engine's `ProviderKind::default_base_url`
 * (echo-core `config.rs`), which no engine operation reports yet. Only this file holds it;
 * components ask `usualBaseUrl`.
 */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderKind, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  ollama: 'http://127.0.0.1:11434/v1',
};

/** The provider form as typed: fallbacks comma-separated, the key never prefilled. */
export interface ProviderForm {
  kind: ProviderKind;
  baseUrl: string;
  model: string;
  fallbacks: string;
  apiKey: string;
}

export function formFrom(s: ProviderSettings): ProviderForm {
  return { kind: s.kind, baseUrl: s.base_url, model: s.model, fallbacks: s.fallback_models.join(', '), apiKey: '' };
}

/** The settings the form stands for: trimmed, empty fallbacks dropped. */
export function settingsFrom(f: ProviderForm): ProviderSettings {
  return {
    kind: f.kind,
    base_url: f.baseUrl.trim(),
    model: f.model.trim(),
    fallback_models: f.fallbacks
      .split(',')
      .map((m) => m.trim())
      .filter((m) => m !== ''),
  };
}

/** A finished connection test, or the transport's failure to run one. */
export type TestOutcome = ConnectionReport | { ok: false; code: string; message: string; latency_ms?: undefined };

export interface ProviderState {
  /** What the engine last reported (loaded, or returned by a save). */
  view: ProviderView | undefined;
  loadError: string | null;
  /** The form, started from the first view; null until it loaded. */
  form: ProviderForm | null;
  /** The kind was changed by hand (the kind's usual address is then offered). */
  kindChanged: boolean;
  /** A local Ollama that answered, or null. */
  ollama: OllamaInfo | null;
  busy: 'test' | 'save' | null;
  tested: TestOutcome | null;
  notice: 'saved' | 'keyRemoved' | null;
  saveError: string | null;
}

/** Whether the form points at the detected Ollama. */
export function usingOllama(s: Pick<ProviderState, 'form' | 'ollama'>): boolean {
  return s.ollama !== null && s.form !== null && s.form.kind === 'ollama' && s.form.baseUrl.trim() === s.ollama.base_url;
}

/**
 * The models to choose from when the form points at the detected Ollama (the typed one
 * first when Ollama does not have it), or null for a free text field.
 */
export function modelChoices(s: Pick<ProviderState, 'form' | 'ollama'>): string[] | null {
  const { form, ollama } = s;
  if (!form || !ollama || !usingOllama(s) || ollama.models.length === 0) return null;
  return ollama.models.includes(form.model) || form.model === '' ? ollama.models : [form.model, ...ollama.models];
}

/** The usual base URL of the form's kind (the address field's placeholder), or '' before it loaded. */
export function usualBaseUrl(s: Pick<ProviderState, 'form'>): string {
  return s.form ? DEFAULT_BASE_URLS[s.form.kind] : '';
}

/** Whether to offer the kind's usual address: the kind was changed and the address is another. */
export function offersDefaultUrl(s: Pick<ProviderState, 'form' | 'kindChanged'>): boolean {
  return s.kindChanged && s.form !== null && s.form.baseUrl.trim() !== usualBaseUrl(s);
}

export class ProviderStore extends SettingsStore<ProviderState> {
  private readonly transport: ProviderTransport;

  constructor(transport: ProviderTransport) {
    super({
      view: undefined,
      loadError: null,
      form: null,
      kindChanged: false,
      ollama: null,
      busy: null,
      tested: null,
      notice: null,
      saveError: null,
    });
    this.transport = transport;
  }

  /** Loads the settings in force, then looks for a local Ollama. */
  async load(): Promise<void> {
    try {
      const view = await this.transport.provider();
      this.set({ view, loadError: null, form: this.getState().form ?? formFrom(view.settings) });
    } catch (e) {
      this.set({ loadError: describe(e) });
      return;
    }
    try {
      this.set({ ollama: await this.transport.detectOllama() });
    } catch {
      // Detection is a convenience: no offer when it fails.
    }
  }

  /** Any edit makes the last test result and "saved" stale. */
  edit(change: Partial<ProviderForm>): void {
    const { form } = this.getState();
    if (!form) return;
    this.set({ form: { ...form, ...change }, tested: null, notice: null });
  }

  /**
   * Switches the kind. An empty address or another kind's usual one is replaced by the new
   * kind's; a custom one is kept and the new kind's usual address offered instead.
   */
  changeKind(kind: ProviderKind): void {
    const { form } = this.getState();
    if (!form) return;
    const url = form.baseUrl.trim();
    const replace = url === '' || Object.values(DEFAULT_BASE_URLS).includes(url);
    this.edit({ kind, ...(replace ? { baseUrl: DEFAULT_BASE_URLS[kind] } : {}) });
    this.set({ kindChanged: true });
  }

  /** Puts the kind's usual address in the form. */
  useDefaultUrl(): void {
    if (this.getState().form) this.edit({ baseUrl: usualBaseUrl(this.getState()) });
  }

  /** Points the form at the detected Ollama, keeping the model when Ollama has it. */
  adoptOllama(): void {
    const { form, ollama } = this.getState();
    if (!form || !ollama) return;
    this.edit({
      kind: 'ollama',
      baseUrl: ollama.base_url,
      model: ollama.models.includes(form.model.trim()) ? form.model : (ollama.models[0] ?? form.model),
    });
    this.set({ kindChanged: false });
  }

  /** Tries the form's settings (and typed key) without saving anything. */
  async test(): Promise<void> {
    const { form } = this.getState();
    if (!form) return;
    this.set({ busy: 'test', tested: null });
    try {
      this.set({ tested: await this.transport.testProvider(providerUpdate(settingsFrom(form), form.apiKey)) });
    } catch (e) {
      this.set({ tested: { ok: false, code: e instanceof TransportError ? e.code : 'error', message: describe(e) } });
    } finally {
      this.set({ busy: null });
    }
  }

  /** Saves the form (and the typed key, which is then cleared from it). */
  async save(): Promise<void> {
    const { form } = this.getState();
    if (!form) return;
    this.set({ busy: 'save', notice: null });
    try {
      const view = await this.transport.updateProvider(providerUpdate(settingsFrom(form), form.apiKey));
      const now = this.getState().form;
      this.set({ view, form: now && { ...now, apiKey: '' }, saveError: null, notice: 'saved' });
    } catch (e) {
      this.set({ saveError: describe(e) });
    } finally {
      this.set({ busy: null });
    }
  }

  /** Removes the saved key of the settings in force. */
  async clearKey(): Promise<void> {
    const { view } = this.getState();
    if (!view) return;
    this.set({ busy: 'save', notice: null });
    try {
      this.set({
        view: await this.transport.updateProvider(providerUpdate(view.settings, '', true)),
        saveError: null,
        notice: 'keyRemoved',
      });
    } catch (e) {
      this.set({ saveError: describe(e) });
    } finally {
      this.set({ busy: null });
    }
  }
}
