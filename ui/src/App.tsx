// The page: header (Chat/Memory/Traces/Automations/Settings — Memory with the number of
// conflicts to review, Automations with the number of questions in the approval queue —
// theme, language), session list (grouped by project), chat (with its project) and composer, the memory page, the trace page, the
// automations page or the settings view, approval dialog. Pages open each other through `Navigation` (a turn's
// trace, a memory) and the chat store (a conversation, at a message). In the desktop app it
// also opens the sessions quick ask hands over.

import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { ApprovalQueue } from './automations/approvalQueue';
import { type ChatStore, isNewChat, pendingApproval, regenerateTarget, sessionProject } from './chatStore';
import { I18nContext, LOCALE_KEY, LOCALES, type Locale, translator } from './i18n';
import { ConflictBadge } from './memory/conflictBadge';
import { Navigation, type View } from './navigation';
import { applyTheme, nextTheme, type ThemeChoice } from './theme';
import { ApprovalDialog, ApprovalWaiting, useSetAside } from './components/ApprovalDialog';
import { AutomationsView } from './components/automations/AutomationsView';
import { ChatView } from './components/ChatView';
import { DegradationNotice } from './components/trace/DegradationNotice';
import { Composer } from './components/Composer';
import { ProjectLabel, ProjectSelect } from './components/ProjectChoice';
import { TemporaryChatBar } from './components/TemporaryChatBar';
import { MemoryView } from './components/memory/MemoryView';
import { SessionList } from './components/SessionList';
import { SettingsView } from './components/SettingsView';
import { TraceView } from './components/trace/TraceView';
import { researchBlocker } from './settings/searchStore';
import type { Transport } from './transport';

interface Props {
  store: ChatStore;
  transport: Transport;
  initialLocale: Locale;
  initialTheme: ThemeChoice;
  hasToken: boolean;
  /** Why pairing with `echod serve` failed, when it did (the server's one line). */
  pairingError?: string;
}

export function App({ store, transport, initialLocale, initialTheme, hasToken, pairingError }: Props) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const [locale, setLocale] = useState<Locale>(initialLocale);
  const [theme, setTheme] = useState<ThemeChoice>(initialTheme);
  // The composer's Research toggle: stays on for the next messages until switched off.
  const [research, setResearch] = useState(false);
  const [nav] = useState(() => new Navigation());
  const route = useSyncExternalStore(nav.subscribe, nav.getState);
  const view = route.view;
  const setView = (v: View) => nav.show(v);
  // With the toggle on, whether a web search service works: asked again each time the chat
  // shows (coming back from Settings, say).
  const [researchBlocked, setResearchBlocked] = useState<string | null>(null);
  useEffect(() => {
    if (!research || view !== 'chat') return;
    let live = true;
    void researchBlocker(transport).then((blocked) => {
      if (live) setResearchBlocked(blocked);
    });
    return () => {
      live = false;
    };
  }, [research, view, transport]);
  // What answers still ask to remember may have been decided on the memory page meanwhile.
  useEffect(() => {
    if (view === 'chat') void store.refreshProposals();
  }, [view, store]);
  const [badge] = useState(() => new ConflictBadge(transport));
  const conflicts = useSyncExternalStore(badge.subscribe, badge.getState).open;
  useEffect(() => {
    void badge.load();
    return () => badge.dispose();
  }, [badge]);
  // Questions of unattended runs: read every few seconds while the app is open.
  const [approvalQueue] = useState(() => new ApprovalQueue(transport));
  const queued = useSyncExternalStore(approvalQueue.subscribe, approvalQueue.getState).pending.length;
  useEffect(() => {
    void approvalQueue.load();
    return () => approvalQueue.dispose();
  }, [approvalQueue]);
  // Extraction after a turn can open conflicts: read the count again when a turn ends.
  const running = state.running !== null;
  const wasRunning = useRef(running);
  useEffect(() => {
    if (wasRunning.current && !running) badge.refreshAfterTurn();
    wasRunning.current = running;
  }, [running, badge]);
  // The line on which provider the engine chose at start (the built-in model, when nothing
  // was configured and no Ollama answered) and how to switch: shown where a conversation
  // starts, as Settings shows it. Without it the chat just has no such line.
  const [startNote, setStartNote] = useState<string | null>(null);
  useEffect(() => {
    transport.call('provider', {}).then(
      (view) => setStartNote(view.notice),
      () => setStartNote(null),
    );
  }, [transport]);
  const openChat = (session: string, messageId: string | null = null) => {
    nav.show('chat');
    void store.openAt(session, messageId);
  };
  const t = useMemo(() => translator(locale), [locale]);
  useEffect(() => applyTheme(theme), [theme]);
  useEffect(() => {
    document.documentElement.lang = locale;
    window.localStorage.setItem(LOCALE_KEY, locale);
  }, [locale]);
  useEffect(
    () =>
      transport.desktop?.onOpenSession((name) => {
        nav.show('chat');
        void store.open(name);
      }),
    [transport, store, nav],
  );
  // Closing the page leaves a temporary chat (the engine also deletes it when it closes).
  useEffect(() => {
    const leave = () => store.leaveTemporary();
    window.addEventListener('pagehide', leave);
    return () => window.removeEventListener('pagehide', leave);
  }, [store]);
  const approval = pendingApproval(state);
  const question = useSetAside(approval);
  const idle = state.running === null;
  // A new conversation's options (temporary, project) can change until its first message.
  const beforeFirst = idle && !state.loadingHistory && state.messages.length === 0;
  const themeLabel = { system: t('theme.system'), light: t('theme.light'), dark: t('theme.dark') }[theme];

  return (
    <I18nContext.Provider value={t}>
      <div className="app" data-view={view}>
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
                {conflicts > 0 && (
                  <span className="nav-badge" data-testid="nav-conflicts-badge" title={t('nav.conflictsBadge', { count: conflicts })}>
                    {conflicts}
                  </span>
                )}
              </button>
              <button
                type="button"
                className="nav-traces"
                aria-pressed={view === 'traces'}
                onClick={() => setView('traces')}
              >
                {t('nav.traces')}
              </button>
              <button
                type="button"
                className="nav-automations"
                aria-pressed={view === 'automations'}
                onClick={() => setView('automations')}
              >
                {t('nav.automations')}
                {queued > 0 && (
                  <span className="nav-badge" data-testid="nav-approvals-badge" title={t('nav.approvalsBadge', { count: queued })}>
                    {queued}
                  </span>
                )}
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
              aria-label={`${themeLabel} (${t('theme.toggle')})`}
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
          onMove={(name, project) => store.move(name, project)}
          onDelete={(name, memories) => store.remove(name, memories)}
          onForgetMemories={(name) => store.forgetMemories(name)}
          projects={state.projects.map((p) => p.name)}
          newProject={state.project}
          onNewInProject={(project) => {
            setView('chat');
            store.newSession(new Date(), project);
          }}
        />
        <main className="main">
          {!hasToken && (
            <p className="banner error">
              {pairingError ? t('error.pairingFailed', { message: pairingError }) : t('error.noToken')}
            </p>
          )}
          {state.error && (
            <div className="banner error" role="alert">
              <span>{state.error}</span>
              <button type="button" onClick={() => store.dismissError()}>
                {t('error.dismiss')}
              </button>
            </div>
          )}
          {hasToken && (
            <DegradationNotice transport={transport} refresh={state.running === null} onOpenTraces={() => setView('traces')} />
          )}
          {view === 'chat' && state.highlight && state.highlight.key === null && (
            <div className="banner notice" role="status" data-testid="chat-source-missing">
              <span>{t('chat.sourceMissing')}</span>
              <button type="button" onClick={() => store.clearHighlight()}>
                {t('error.dismiss')}
              </button>
            </div>
          )}
          {view === 'settings' ? (
            <SettingsView
              transport={transport}
              session={state.selected}
              onDataDeleted={() => {
                // Every conversation is gone: leave the open one and read the (empty) list again,
                // and the conflict count. The other pages read afresh when they are opened.
                store.clear();
                void store.refreshSessions();
                void badge.refresh();
              }}
              onProjectsChanged={() => {
                // Removing or renaming a project changes the sidebar's groups and the select.
                void store.refreshProjects();
                void store.refreshSessions();
              }}
            />
          ) : view === 'memory' ? (
            <MemoryView
              transport={transport}
              badge={badge}
              memoryId={route.memoryId}
              onOpenChat={openChat}
              onOpenTrace={(turnId) => nav.openTrace(turnId)}
            />
          ) : view === 'automations' ? (
            <AutomationsView
              transport={transport}
              queue={approvalQueue}
              onOpenChat={(session) => openChat(session)}
              onOpenTrace={(turnId) => nav.openTrace(turnId)}
            />
          ) : view === 'traces' ? (
            <TraceView
              transport={transport}
              turnId={route.turnId}
              sessions={state.sessions.map((s) => s.name)}
              onOpenChat={(session) => openChat(session)}
              onOpenMemory={(id) => nav.openMemory(id)}
            />
          ) : (
            <>
              <ProjectLabel project={sessionProject(state)} />
              <ChatView
                messages={state.messages}
                loading={state.loadingHistory}
                startNote={startNote}
                onRegenerate={regenerateTarget(state) ? () => void store.regenerate() : undefined}
                onEdit={idle ? (key, text) => void store.editAndResend(key, text) : undefined}
                onShowTrace={(turnId) => nav.openTrace(turnId)}
                onStop={state.running?.turnId !== undefined ? () => void store.stop() : undefined}
                onFollowUp={idle ? (question) => void store.send(question) : undefined}
                onUndoLearned={(key, item) => void store.undoLearned(key, item)}
                onOpenMemory={(id) => nav.openMemory(id)}
                onKeepProposal={(key, proposal) => void store.keepProposal(key, proposal)}
                onDiscardProposal={(key, proposal) => void store.discardProposal(key, proposal)}
                highlight={state.highlight?.key ?? null}
                onHighlightSeen={() => store.clearHighlight()}
              />
              <div className="new-chat-options">
                <ProjectSelect
                  projects={state.projects}
                  project={state.project}
                  canChange={beforeFirst && isNewChat(state)}
                  onChange={(project) => store.setProject(project)}
                />
                <TemporaryChatBar
                  temporary={state.temporary}
                  canChange={beforeFirst}
                  onChange={(kind) => store.setTemporary(kind)}
                />
              </div>
              <Composer
                running={state.running !== null}
                canStop={state.running?.turnId !== undefined}
                onSend={(text) => void store.send(text, research)}
                onStop={() => void store.stop()}
                research={research}
                onResearch={setResearch}
                researchBlocked={research ? researchBlocked : null}
                onSetUpSearch={() => setView('settings')}
              />
            </>
          )}
        </main>
        {approval && question.shown && (
          <ApprovalDialog
            approval={approval}
            onAnswer={(id, a) => void store.answer(id, a)}
            onSetAside={question.setAside}
          />
        )}
        {question.waiting && <ApprovalWaiting onShow={question.bringBack} />}
      </div>
    </I18nContext.Provider>
  );
}
