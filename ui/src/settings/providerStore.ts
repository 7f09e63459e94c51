// The model provider's settings: the view the engine reports (settings in force, where the
// key comes from), the form as typed, a local Ollama when one answers, and the last test,
// save or failure. Every call to the engine for this domain is made here.

import type {
  ConnectionReport,
  OllamaInfo,
  ProviderKind,
  ProviderKindInfo,
  ProviderSettings,
  ProviderUpdate,
  ProviderView,
} from '../generated/engine';
import { TransportError } from '../transport';
import { SettingsStore, type SettingsTransport, describe } from './store';

/**
 * The body of a provider save or test: the key only when one was typed, its removal only
 * when asked for (both are optional on the wire).
 */
export function providerUpdate(settings: ProviderSettings, apiKey = '', clearKey = false): ProviderUpdate {
  return {
    settings,
    ...(apiKey.trim() !== '' ? { api_key: apiKey.trim() } : {}),
    ...(clearKey ? { clear_api_key: true } : {}),
  };
}

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

/**
 * The settings the form stands for: trimmed, empty fallbacks dropped; the built-in model
 * has no server and no fallbacks.
 */
export function settingsFrom(f: ProviderForm): ProviderSettings {
  const local = f.kind === 'local';
  return {
    kind: f.kind,
    base_url: local ? '' : f.baseUrl.trim(),
    model: f.model.trim(),
    fallback_models: local
      ? []
      : f.fallbacks
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
  /** The engine's line about the provider it chose at start was put away (or is stale). */
  startNoticeDismissed: boolean;
}

/** Whether the form is on the built-in model (no server, key or fallbacks; a GGUF file). */
export function isLocal(s: Pick<ProviderState, 'form'>): boolean {
  return s.form?.kind === 'local';
}

/** The engine's line about the provider it chose at start, while it is to be shown. */
export function startNotice(s: Pick<ProviderState, 'view' | 'startNoticeDismissed'>): string | null {
  return s.startNoticeDismissed ? null : (s.view?.notice ?? null);
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

/**
 * The provider kinds to offer, in the engine's order, each with its usual base URL (the
 * engine reports them with its settings, so the page keeps no copy); none before the
 * settings loaded.
 */
export function providerKinds(s: Pick<ProviderState, 'view'>): readonly ProviderKindInfo[] {
  return s.view?.kinds ?? [];
}

/** The usual base URL of the form's kind (the address field's placeholder), or '' before it loaded. */
export function usualBaseUrl(s: Pick<ProviderState, 'form' | 'view'>): string {
  const kind = s.form?.kind;
  return providerKinds(s).find((k) => k.kind === kind)?.default_base_url ?? '';
}

/** Whether to offer the kind's usual address: the kind was changed and the address is another. */
export function offersDefaultUrl(s: Pick<ProviderState, 'form' | 'view' | 'kindChanged'>): boolean {
  const usual = usualBaseUrl(s);
  return s.kindChanged && s.form !== null && usual !== '' && s.form.baseUrl.trim() !== usual;
}

export class ProviderStore extends SettingsStore<ProviderState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
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
      startNoticeDismissed: false,
    });
    this.transport = transport;
  }

  /** Loads the settings in force, then looks for a local Ollama. */
  async load(): Promise<void> {
    try {
      const view = await this.transport.call('provider', {});
      this.set({ view, loadError: null, form: this.getState().form ?? formFrom(view.settings) });
    } catch (e) {
      this.set({ loadError: describe(e) });
      return;
    }
    try {
      this.set({ ollama: await this.transport.call('detect_ollama', {}) });
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
   * Switches to one of the kinds the engine offers (anything else is ignored). An empty
   * address or another kind's usual one is replaced by the new kind's; a custom one is kept
   * and the new kind's usual address offered instead (the built-in model ignores the
   * address). Into or out of the built-in model, whose model is a file, the model becomes
   * the one in force for that kind, or none.
   */
  changeKind(kind: string): void {
    const { form, view } = this.getState();
    const kinds = providerKinds(this.getState());
    const chosen = kinds.find((k) => k.kind === kind);
    if (!form || !chosen) return;
    const url = form.baseUrl.trim();
    const replace = url === '' || kinds.some((k) => k.default_base_url === url);
    const crossesLocal = chosen.kind !== form.kind && (chosen.kind === 'local' || form.kind === 'local');
    const model = view?.settings.kind === chosen.kind ? view.settings.model : '';
    this.edit({
      kind: chosen.kind,
      ...(replace ? { baseUrl: chosen.default_base_url } : {}),
      ...(crossesLocal ? { model } : {}),
    });
    this.set({ kindChanged: true });
  }

  /**
   * Takes the provider view the engine answered to a change made elsewhere (the built-in
   * model chosen): the form starts again from it, and the start notice is stale.
   */
  applied(view: ProviderView): void {
    this.set({
      view,
      form: formFrom(view.settings),
      kindChanged: false,
      tested: null,
      notice: null,
      saveError: null,
      startNoticeDismissed: true,
    });
  }

  /** Puts the engine's line about the provider it chose at start away. */
  dismissStartNotice(): void {
    this.set({ startNoticeDismissed: true });
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
      this.set({ tested: await this.transport.call('test_provider', providerUpdate(settingsFrom(form), form.apiKey)) });
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
      const view = await this.transport.call('update_provider', providerUpdate(settingsFrom(form), form.apiKey));
      const now = this.getState().form;
      this.set({ view, form: now && { ...now, apiKey: '' }, saveError: null, notice: 'saved', startNoticeDismissed: true });
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
        view: await this.transport.call('update_provider', providerUpdate(view.settings, '', true)),
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
