// The page: header (Chat/Memory/Settings, theme, language), session list, chat and composer,
// the memory page or the settings view, approval dialog. In the desktop app it also opens the sessions quick ask
// hands over.

import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { type ChatStore, pendingApproval, regenerateTarget } from './chatStore';
import { I18nContext, LOCALE_KEY, LOCALES, type Locale, translator } from './i18n';
import { applyTheme, nextTheme, type ThemeChoice } from './theme';
import { ApprovalDialog } from './components/ApprovalDialog';
import { ChatView } from './components/ChatView';
import { Composer } from './components/Composer';
import { MemoryView } from './components/memory/MemoryView';
import { SessionList } from './components/SessionList';
import { SettingsView } from './components/SettingsView';
import type { Transport } from './transport';

interface Props {
  store: ChatStore;
  transport: Transport;
  initialLocale: Locale;
  initialTheme: ThemeChoice;
  hasToken: boolean;
}

export function App({ store, transport, initialLocale, initialTheme, hasToken }: Props) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const [locale, setLocale] = useState<Locale>(initialLocale);
  const [theme, setTheme] = useState<ThemeChoice>(initialTheme);
  const [view, setView] = useState<'chat' | 'memory' | 'settings'>('chat');
  const t = useMemo(() => translator(locale), [locale]);
  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => {
    document.documentElement.lang = locale;
    window.localStorage.setItem(LOCALE_KEY, locale);
  }, [locale]);
  useEffect(
    () =>
      transport.desktop?.onOpenSession((name) => {
        setView('chat');
        void store.open(name);
      }),
    [transport, store],
  );
  const approval = pendingApproval(state);
  const idle = state.running === null;
  const themeLabel = { system: t('theme.system'), light: t('theme.light'), dark: t('theme.dark') }[theme];

  return (
    <I18nContext.Provider value={t}>
      <div className="app">
        <header className="topbar">
          <h1>{t('app.title')}</h1>
          <div className="controls">
            <div className="view-switch" role="group">
              <button
                type="button"
                className="nav-chat"
                aria-pressed={view === 'chat'}
                onClick={() => setView('chat')}
              >
                {t('nav.chat')}
              </button>
              <button
                type="button"
                className="nav-memory"
                aria-pressed={view === 'memory'}
                onClick={() => setView('memory')}
              >
                {t('nav.memory')}
              </button>
              <button
                type="button"
                className="nav-settings"
                aria-pressed={view === 'settings'}
                onClick={() => setView('settings')}
              >
                {t('nav.settings')}
              </button>
            </div>
            <button
              type="button"
              className="theme-toggle"
              title={t('theme.toggle')}
              aria-label={t('theme.toggle')}
              onClick={() => setTheme(nextTheme(theme))}
            >
              {themeLabel}
            </button>
            <select
              aria-label={t('locale.label')}
              value={locale}
              onChange={(e) => setLocale(e.target.value as Locale)}
            >
              {(Object.keys(LOCALES) as Locale[]).map((l) => (
                <option key={l} value={l}>
                  {LOCALES[l]}
                </option>
              ))}
            </select>
          </div>
        </header>
        <SessionList
          sessions={state.sessions}
          selected={state.selected}
          disabled={state.running !== null}
          onSelect={(name) => {
            setView('chat');
            void store.select(name);
          }}
          onNew={() => {
            setView('chat');
            store.newSession();
          }}
          onRename={(name, newName) => store.rename(name, newName)}
          onDelete={(name) => store.remove(name)}
          onForgetMemories={(name) => store.forgetMemories(name)}
        />
        <main className="main">
          {!hasToken && <p className="banner error">{t('error.noToken')}</p>}
          {state.error && (
            <div className="banner error" role="alert">
              <span>{state.error}</span>
              <button type="button" onClick={() => store.dismissError()}>
                {t('error.dismiss')}
              </button>
            </div>
          )}
          {view === 'settings' ? (
            <SettingsView transport={transport} session={state.selected} />
          ) : view === 'memory' ? (
            <MemoryView transport={transport} />
          ) : (
            <>
              <ChatView
                messages={state.messages}
                loading={state.loadingHistory}
                onRegenerate={regenerateTarget(state) ? () => void store.regenerate() : undefined}
                onEdit={idle ? (key, text) => void store.editAndResend(key, text) : undefined}
              />
              <Composer
                running={state.running !== null}
                canStop={state.running?.turnId !== undefined}
                onSend={(text) => void store.send(text)}
                onStop={() => void store.stop()}
              />
            </>
          )}
        </main>
        {approval && (
          <ApprovalDialog approval={approval} onAnswer={(id, a) => void store.answer(id, a)} />
        )}
      </div>
    </I18nContext.Provider>
  );
}
