// Entry point of the main window: builds the transport (Tauri IPC in the desktop app, HTTP
// otherwise, after pairing with `echod serve`) and the store, then mounts the app.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { createTransport, initialLocale } from './boot';
import { ChatStore } from './chatStore';
import { loadTheme } from './theme';
import './styles.css';

void createTransport().then(({ transport, hasToken, pairingError }) => {
  const store = new ChatStore(transport, window.localStorage);
  const root = document.getElementById('root');
  if (root) {
    createRoot(root).render(
      <StrictMode>
        <App
          store={store}
          transport={transport}
          initialLocale={initialLocale()}
          initialTheme={loadTheme()}
          hasToken={hasToken}
          pairingError={pairingError}
        />
      </StrictMode>,
    );
  }
  void store.init();
});
