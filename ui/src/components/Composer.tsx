// The message box: Enter sends, Shift+Enter breaks the line; Stop while a turn runs; the
// Research toggle asks for a cited report instead of a quick answer.

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
}

export function Composer({ running, canStop, onSend, onStop, research, onResearch }: Props) {
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
  return (
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
  );
}
