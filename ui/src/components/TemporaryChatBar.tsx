// A temporary chat: offered before a conversation's first message (a toggle, then "Use what
// I remember" once it is on), and marked while it is open (a notice saying what it keeps:
// nothing once it is left, and nothing is learned from it).

import type { TemporaryChat } from '../generated/engine';
import { useT } from '../i18n';

interface Props {
  temporary: TemporaryChat | null;
  /** Whether it can still change: no message has been sent yet. */
  canChange: boolean;
  onChange: (temporary: TemporaryChat | null) => void;
}

export function TemporaryChatBar({ temporary, canChange, onChange }: Props) {
  const t = useT();
  if (temporary === null && !canChange) return null;
  return (
    <div className="temporary-bar">
      {canChange && (
        <button
          type="button"
          className={temporary ? 'temporary-toggle on' : 'temporary-toggle'}
          data-testid="temporary-toggle"
          aria-pressed={temporary !== null}
          title={t('chat.temporaryHelp')}
          onClick={() => onChange(temporary ? null : 'sealed')}
        >
          {t('chat.temporary')}
        </button>
      )}
      {canChange && temporary && (
        <label className="temporary-recall">
          <input
            type="checkbox"
            data-testid="temporary-recall"
            checked={temporary === 'recall'}
            onChange={(e) => onChange(e.target.checked ? 'recall' : 'sealed')}
          />
          {t('chat.temporaryRecall')}
        </label>
      )}
      {temporary && (
        <p className="notice temporary-notice" role="status" data-testid="temporary-notice">
          {t('chat.temporaryOn')}
          {temporary === 'recall' ? ` ${t('chat.temporaryRecallOn')}` : ''}
        </p>
      )}
    </div>
  );
}
