// The sidebar: a "new session" button and the sessions, most recent first.

import { useT } from '../i18n';
import type { SessionSummary } from '../events';

interface Props {
  sessions: SessionSummary[];
  selected: string | null;
  disabled: boolean;
  onSelect: (name: string) => void;
  onNew: () => void;
}

export function SessionList({ sessions, selected, disabled, onSelect, onNew }: Props) {
  const t = useT();
  const listed = selected && !sessions.some((s) => s.name === selected);
  return (
    <nav className="sessions">
      <h2>{t('sessions.heading')}</h2>
      <button type="button" className="new-session" onClick={onNew} disabled={disabled}>
        {t('sessions.new')}
      </button>
      <ul>
        {listed && (
          <li>
            <button type="button" className="session current" disabled>
              <span className="session-title">{t('sessions.untitled')}</span>
              <span className="session-meta">{selected}</span>
            </button>
          </li>
        )}
        {sessions.map((s) => (
          <li key={s.id}>
            <button
              type="button"
              className={s.name === selected ? 'session current' : 'session'}
              data-session={s.name}
              disabled={disabled && s.name !== selected}
              onClick={() => onSelect(s.name)}
            >
              <span className="session-title">{s.title || s.name}</span>
              <span className="session-meta">{t('sessions.messages', { count: s.message_count })}</span>
            </button>
          </li>
        ))}
      </ul>
      {sessions.length === 0 && !listed && <p className="muted">{t('sessions.empty')}</p>}
    </nav>
  );
}
