// What both pages (the main window and quick ask) start from: the transport for where they
// run — Tauri IPC inside the desktop app, `echod serve` over HTTP in a browser — and the
// saved locale.

import { Channel, invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import { type Locale, LOCALE_KEY, LOCALES, pickLocale } from './i18n';
import { TauriTransport } from './tauriTransport';
import { HttpTransport, keptToken, pairPage, type Transport } from './transport';

/** Whether the page runs inside the desktop app. */
export function inTauri(): boolean {
  return '__TAURI_INTERNALS__' in window;
}

/** The transport, whether it has what it needs to reach the engine (the HTTP token), and why
 * pairing failed when it did. */
export async function createTransport(): Promise<{ transport: Transport; hasToken: boolean; pairingError?: string }> {
  if (inTauri()) return { transport: new TauriTransport({ invoke, Channel, listen }), hasToken: true };
  const origin = window.location.origin;
  let token: string | undefined;
  let pairingError: string | undefined;
  const storage = { page: window.sessionStorage, device: window.localStorage };
  try {
    token = await pairPage(window.location, storage, window.history, (code) =>
      new HttpTransport(origin, undefined).pair(code),
    );
  } catch (e) {
    pairingError = e instanceof Error ? e.message : String(e);
    token = keptToken(storage);
  }
  return { transport: new HttpTransport(origin, token), hasToken: token !== undefined, pairingError };
}

/** The saved locale, or the browser's best. */
export function initialLocale(): Locale {
  const saved = window.localStorage.getItem(LOCALE_KEY);
  return saved && saved in LOCALES ? (saved as Locale) : pickLocale(navigator.languages);
}
