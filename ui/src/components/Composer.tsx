// The message box: Enter sends, Shift+Enter breaks the line; Stop while a turn runs; the
// Research toggle asks for a cited report instead of a quick answer, and says so above the
// box when no web search service works, with the way to set one up.

import { useState, type FormEvent, type KeyboardEvent } from 'react';
import { useT } from '../i18n';

interface Props {
  running: boolean;
  canStop: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
  /** Whether the next message asks for research; the toggle is offered when given. */
  research?: boolean;
  onResearch?: (on: boolean) => void;
  /**
   * Why research cannot run now (the engine's reason, possibly empty), shown while the
   * toggle is on; null when it can.
   */
  researchBlocked?: string | null;
  /** Opens the web search settings; offered with `researchBlocked`. */
  onSetUpSearch?: () => void;
}

export function Composer({ running, canStop, onSend, onStop, research, onResearch, researchBlocked, onSetUpSearch }: Props) {
  const t = useT();
  const [text, setText] = useState('');
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    if (running || text.trim() === '') return;
    onSend(text);
    setText('');
  };
  const key = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
  };
  const blocked = research === true && researchBlocked != null;
  return (
    <>
      {blocked && (
        <p className="notice warn research-hint" role="status" data-testid="research-hint">
          <span>
            {t('chat.researchNeedsSearch')}
            {researchBlocked ? ` ${researchBlocked}` : ''}
          </span>
          {onSetUpSearch && (
            <button type="button" data-testid="research-set-up-search" onClick={onSetUpSearch}>
              {t('chat.researchOpenSettings')}
            </button>
          )}
        </p>
      )}
      <form className="composer" onSubmit={submit}>
        <textarea
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={key}
          placeholder={t('chat.placeholder')}
          rows={3}
          aria-label={t('chat.placeholder')}
        />
        {onResearch && (
          <button
            type="button"
            className={research ? 'research-toggle on' : 'research-toggle'}
            data-testid="research-toggle"
            aria-pressed={research === true}
            title={t('chat.researchHelp')}
            onClick={() => onResearch(!research)}
          >
            {t('chat.research')}
          </button>
        )}
        {running ? (
          <button type="button" className="stop danger" onClick={onStop} disabled={!canStop}>
            {t('chat.stop')}
          </button>
        ) : (
          <button type="submit" className="send primary" disabled={text.trim() === ''}>
            {t('chat.send')}
          </button>
        )}
      </form>
    </>
  );
}
