// The confirmation before deleting for good: how many, that it cannot be undone (unlike
// Forget), and for "delete all" the phrase to type before the button is enabled. Cancel has
// the focus (Escape cancels too), so a stray Enter deletes nothing.

import { useT } from '../../i18n';
import { DELETE_ALL_PHRASE, type PendingDelete } from '../../memory/memoryStore';

interface Props {
  pending: PendingDelete;
  canConfirm: boolean;
  busy: boolean;
  error: string | null;
  onType: (text: string) => void;
  onConfirm: () => void;
  onCancel: () => void;
}

export function DeleteDialog({ pending, canConfirm, busy, error, onType, onConfirm, onCancel }: Props) {
  const t = useT();
  return (
    <div
      className="overlay"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel();
      }}
    >
      <div className="dialog memory-confirm" role="dialog" aria-modal="true" aria-labelledby="memory-confirm-title" data-testid="memory-confirm">
        <h2 id="memory-confirm-title">{t('memory.confirm.title')}</h2>
        <p>{pending.kind === 'ids' ? t('memory.confirm.ids', { count: pending.ids.length }) : t('memory.confirm.all')}</p>
        {pending.kind === 'all' && (
          <label className="memory-confirm-type">
            <span>{t('memory.confirm.type', { phrase: DELETE_ALL_PHRASE })}</span>
            <input
              data-testid="memory-confirm-input"
              value={pending.typed}
              autoComplete="off"
              autoFocus
              onChange={(e) => onType(e.target.value)}
            />
          </label>
        )}
        {error && <p className="turn-error" role="alert">{t('memory.failed', { message: error })}</p>}
        <div className="buttons">
          <button type="button" className="danger primary-danger" data-testid="memory-confirm-delete" disabled={busy || !canConfirm} onClick={onConfirm}>
            {t('memory.confirm.delete')}
          </button>
          <button type="button" data-testid="memory-confirm-cancel" autoFocus={pending.kind === 'ids'} onClick={onCancel}>{t('memory.confirm.cancel')}</button>
        </div>
      </div>
    </div>
  );
}
