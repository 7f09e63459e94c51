// What both pages (the main window and quick ask) start from: the transport for where they
// run — Tauri IPC inside the desktop app, `echod serve` over HTTP in a browser — and the
// saved locale.

import { Channel, invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import { type Locale, LOCALE_KEY, LOCALES, pickLocale } from './i18n';
import { TauriTransport } from './tauriTransport';
import { HttpTransport, takeToken, type Transport } from './transport';

/** Whether the page runs inside the desktop app. */
export function inTauri(): boolean {
  return '__TAURI_INTERNALS__' in window;
}

/** The transport, and whether it has what it needs to reach the engine (the HTTP token). */
export function createTransport(): { transport: Transport; hasToken: boolean } {
  if (inTauri()) return { transport: new TauriTransport({ invoke, Channel, listen }), hasToken: true };
  const token = takeToken(window.location, window.sessionStorage, window.history);
  return { transport: new HttpTransport(window.location.origin, token), hasToken: token !== undefined };
}

/** The saved locale, or the browser's best. */
export function initialLocale(): Locale {
  const saved = window.localStorage.getItem(LOCALE_KEY);
  return saved && saved in LOCALES ? (saved as Locale) : pickLocale(navigator.languages);
}
