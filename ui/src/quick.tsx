// Entry point of the quick-ask window (`quick.html`): its own store, running quick-ask turns
// in a session of its own, and the panel.

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createTransport, initialLocale } from './boot';
import { ChatStore, quickSessionName } from './chatStore';
import { QuickAsk } from './components/QuickAsk';
import { applyTheme, loadTheme } from './theme';
import './styles.css';

applyTheme(loadTheme());
void createTransport().then(({ transport }) => {
  const store = new ChatStore(transport, undefined, { quick: true, sessionName: quickSessionName });
  const root = document.getElementById('root');
  if (root) {
    createRoot(root).render(
      <StrictMode>
        <QuickAsk store={store} desktop={transport.desktop} locale={initialLocale()} />
      </StrictMode>,
    );
  }
});
