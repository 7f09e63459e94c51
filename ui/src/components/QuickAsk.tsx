// The quick-ask panel (the desktop's small always-on-top window): one input, the answer
// streaming below it. Enter sends (follow-ups stay in the panel's session), Enter on an empty
// input hands the conversation to the main window, Esc hides the panel; Stop while a turn
// runs; approvals use the same dialog as the main window. What the answer proposes to
// remember ("ask before remembering") is kept or discarded under it, as in the main window.

import { type KeyboardEvent, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { type ChatStore, pendingApproval } from '../chatStore';
import { I18nContext, type Locale, translator } from '../i18n';
import type { DesktopBridge } from '../transport';
import type { AssistantView, UserView } from '../turnStore';
import { ApprovalDialog, ApprovalWaiting, useSetAside } from './ApprovalDialog';
import { Message } from './Message';

interface Props {
  /** A store made with `{ quick: true, sessionName: quickSessionName }`. */
  store: ChatStore;
  desktop: Pick<DesktopBridge, 'openInMain' | 'dismissQuick'> | undefined;
  locale: Locale;
}

function lastOf<T, S extends T>(items: T[], pick: (item: T) => item is S): S | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as T;
    if (pick(item)) return item;
  }
  return undefined;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function QuickAsk({ store, desktop, locale }: Props) {
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const t = useMemo(() => translator(locale), [locale]);
  const [text, setText] = useState('');
  const [failure, setFailure] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const running = state.running !== null;
  const approval = pendingApproval(state);
  const asked = useSetAside(approval);
  const answer = lastOf(state.messages, (m): m is AssistantView => m.role === 'assistant');
  const question = lastOf(state.messages, (m): m is UserView => m.role === 'user');
  const session = state.selected;
  const canOpen = desktop !== undefined && session !== null && answer !== undefined && !running;

  useEffect(() => {
    document.title = t('quick.title');
  }, [t]);

  // The window is hidden and shown again rather than rebuilt: take the focus back each time.
  useEffect(() => {
    const focus = () => input.current?.focus();
    window.addEventListener('focus', focus);
    return () => window.removeEventListener('focus', focus);
  }, []);

  const attempt = (run: () => Promise<void>) => {
    setFailure(null);
    run().catch((e: unknown) => setFailure(describe(e)));
  };

  const openInMain = () => {
    if (!canOpen || !desktop || !session) return;
    attempt(async () => {
      await desktop.openInMain(session);
      store.clear(); // Handed over: the next question starts a new session.
    });
  };

  const dismiss = () => {
    if (desktop) attempt(() => desktop.dismissQuick());
  };

  // Esc hides the panel from anywhere in it, but not while a question waits for an answer.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== 'Escape' || e.isComposing || approval) return;
      e.preventDefault();
      if (desktop) {
        setFailure(null);
        desktop.dismissQuick().catch((err: unknown) => setFailure(describe(err)));
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [desktop, approval]);

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key !== 'Enter' || e.nativeEvent.isComposing) return;
    e.preventDefault();
    if (text.trim() === '') {
      openInMain();
      return;
    }
    if (running) return;
    const sent = text;
    setText('');
    setFailure(null);
    void store.send(sent);
  };

  const error = failure ?? state.error;

  return (
    <I18nContext.Provider value={t}>
      <div className="quick">
        <div className="quick-bar">
          <input
            ref={input}
            data-testid="quick-input"
            className="quick-input"
            autoFocus
            value={text}
            placeholder={t('quick.placeholder')}
            aria-label={t('quick.title')}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={onKeyDown}
          />
          {running && (
            <button
              type="button"
              className="stop danger"
              data-testid="quick-stop"
              disabled={state.running?.turnId === undefined}
              onClick={() => void store.stop()}
            >
              {t('chat.stop')}
            </button>
          )}
          {!running && desktop && (
            <button type="button" className="quick-close" onClick={dismiss}>
              {t('quick.close')}
            </button>
          )}
        </div>
        {error && (
          <p className="banner error" role="alert">
            {error}
          </p>
        )}
        {answer && (
          <div className="quick-answer" data-testid="quick-answer" aria-live="polite">
            {question && <p className="quick-question">{question.text}</p>}
            <Message
              m={answer}
              onKeepProposal={(p) => void store.keepProposal(answer.key, p)}
              onDiscardProposal={(p) => void store.discardProposal(answer.key, p)}
            />
          </div>
        )}
        {canOpen && (
          <footer className="quick-foot">
            <span className="muted">{t('quick.openHint')}</span>
            <button type="button" data-testid="quick-open" onClick={openInMain}>
              {t('quick.open')}
            </button>
          </footer>
        )}
        {approval && asked.shown && (
          <ApprovalDialog
            approval={approval}
            onAnswer={(id, a) => void store.answer(id, a)}
            onSetAside={asked.setAside}
          />
        )}
        {asked.waiting && <ApprovalWaiting onShow={asked.bringBack} />}
      </div>
    </I18nContext.Provider>
  );
}
