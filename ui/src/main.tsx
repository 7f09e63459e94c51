// Entry point: builds the transport and the store, then mounts the app.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { ChatStore } from './chatStore';
import { type Locale, LOCALES, pickLocale } from './i18n';
import { loadTheme } from './theme';
import { HttpTransport, takeToken } from './transport';
import './styles.css';

const token = takeToken(window.location, window.sessionStorage, window.history);
const transport = new HttpTransport(window.location.origin, token);
const store = new ChatStore(transport, window.localStorage);
const saved = window.localStorage.getItem('echo-desk-locale');
const locale: Locale = saved && saved in LOCALES ? (saved as Locale) : pickLocale(navigator.languages);

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App store={store} transport={transport} initialLocale={locale} initialTheme={loadTheme()} hasToken={token !== undefined} />
    </StrictMode>,
  );
}
void store.init();
