// Entry point of the main window: builds the transport (Tauri IPC in the desktop app, HTTP
// otherwise) and the store, then mounts the app.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { createTransport, initialLocale } from './boot';
import { ChatStore } from './chatStore';
import { loadTheme } from './theme';
import './styles.css';

const { transport, hasToken } = createTransport();
const store = new ChatStore(transport, window.localStorage);

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App store={store} transport={transport} initialLocale={initialLocale()} initialTheme={loadTheme()} hasToken={hasToken} />
    </StrictMode>,
  );
}
void store.init();
