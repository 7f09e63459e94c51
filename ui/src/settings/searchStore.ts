// The web search service's settings (`[search]`, the key in the keychain): the view the engine
// reports (the service in force, where its key comes from, whether it works), the form as
// typed, and the last test, save or failure. Every call to the engine for this domain is made
// here, including the chat's question "can research run?".

import type { SearchKind, SearchTestReport, SearchUpdate, SearchView } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** The search form as typed: the key never prefilled. */
export interface SearchForm {
  kind: SearchKind;
  url: string;
  maxResults: string;
  apiKey: string;
}

export function formFrom(view: SearchView): SearchForm {
  return { kind: view.kind, url: view.url ?? '', maxResults: String(view.max_results), apiKey: '' };
}

/** The results per search as typed (1–20), or null when it is not such a number. */
export function parseMaxResults(typed: string): number | null {
  const s = typed.trim();
  if (!/^\d{1,2}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 20 ? n : null;
}

/**
 * The body of a save or test: the URL and key only when typed, the key's removal only when
 * asked for (all optional on the wire).
 */
export function searchUpdate(form: SearchForm, clearKey = false): SearchUpdate | null {
  const max = parseMaxResults(form.maxResults);
  if (max === null) return null;
  const url = form.url.trim();
  const key = form.apiKey.trim();
  return {
    kind: form.kind,
    max_results: max,
    ...(url !== '' ? { url } : {}),
    ...(key !== '' ? { api_key: key } : {}),
    ...(clearKey ? { clear_api_key: true } : {}),
  };
}

/** A finished test, or the transport's failure to run one. */
export type SearchTestOutcome = SearchTestReport | { ok: false; message: string; results: 0; latency_ms?: undefined };

export interface SearchState {
  /** What the engine last reported (loaded, or returned by a save). */
  view: SearchView | undefined;
  loadError: string | null;
  /** The form, started from the first view; null until it loaded. */
  form: SearchForm | null;
  busy: 'test' | 'save' | null;
  tested: SearchTestOutcome | null;
  notice: 'saved' | 'keyRemoved' | null;
  saveError: string | null;
}

export class SearchStore extends SettingsStore<SearchState> {
  private readonly transport: SettingsTransport;

  constructor(transport: SettingsTransport) {
    super({ view: undefined, loadError: null, form: null, busy: null, tested: null, notice: null, saveError: null });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      const view = await this.transport.call('search', {});
      this.set({ view, loadError: null, form: formFrom(view) });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  edit(change: Partial<SearchForm>): void {
    const form = this.getState().form;
    if (!form) return;
    this.set({ form: { ...form, ...change }, tested: null, notice: null, saveError: null });
  }

  /** Sends one search with the form's settings; nothing is saved. */
  async test(): Promise<void> {
    const form = this.getState().form;
    const update = form && searchUpdate(form);
    if (!update) return;
    this.set({ busy: 'test', tested: null });
    try {
      this.set({ tested: await this.transport.call('test_search', update) });
    } catch (e) {
      this.set({ tested: { ok: false, message: describe(e), results: 0 } });
    } finally {
      this.set({ busy: null });
    }
  }

  /** Saves the form (the typed key goes to the keychain); the next turn uses it. */
  async save(): Promise<void> {
    await this.send(false);
  }

  /** Removes the service's saved key. */
  async clearKey(): Promise<void> {
    await this.send(true);
  }

  private async send(clearKey: boolean): Promise<void> {
    const form = this.getState().form;
    const update = form && searchUpdate(clearKey ? { ...form, apiKey: '' } : form, clearKey);
    if (!update) return;
    this.set({ busy: 'save', notice: null, saveError: null });
    try {
      const view = await this.transport.call('update_search', update);
      this.set({ view, form: formFrom(view), notice: clearKey ? 'keyRemoved' : 'saved' });
    } catch (e) {
      this.set({ saveError: describe(e) });
    } finally {
      this.set({ busy: null });
    }
  }
}

/**
 * Why research cannot run now: null when a search service works, else the engine's reason
 * (empty when it names no service). A failure to ask counts as "it can" (the turn then says
 * why it cannot).
 */
export async function researchBlocker(transport: SettingsTransport): Promise<string | null> {
  try {
    const view = await transport.call('search', {});
    return view.available ? null : (view.problem ?? '');
  } catch {
    return null;
  }
}
