// "Edit into one" for a conflict: the two texts in one field to rewrite as a single memory,
// and which of the two keeps it (the other is replaced). Sent as memory_resolve with keep and
// merged.

import type { Conflict } from '../../generated/engine';
import { useT } from '../../i18n';
import type { MergeDraft } from '../../memory/memoryStore';

interface Props {
  conflict: Conflict;
  draft: MergeDraft;
  busy: boolean;
  onEdit: (change: Partial<Pick<MergeDraft, 'keep' | 'text'>>) => void;
  onSubmit: () => void;
  onCancel: () => void;
}

export function MergeForm({ conflict: c, draft, busy, onEdit, onSubmit, onCancel }: Props) {
  const t = useT();
  const choice = (label: string, id: string, testId: string) => (
    <label className="check">
      <input
        type="radio"
        name={`merge-keep-${c.id}`}
        data-testid={testId}
        checked={draft.keep === id}
        onChange={() => onEdit({ keep: id })}
      />
      {label}
    </label>
  );
  return (
    <form
      className="conflict-merge"
      data-testid="conflict-merge-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <label className="conflict-merge-text">
        <span>{t('conflicts.merge.text')}</span>
        <textarea data-testid="conflict-merge-text" rows={3} value={draft.text} onChange={(e) => onEdit({ text: e.target.value })} />
      </label>
      <fieldset className="conflict-merge-keep">
        <legend>{t('conflicts.merge.keep')}</legend>
        {choice(t('conflicts.merge.keepA'), c.memory_a, 'conflict-merge-keep-a')}
        {choice(t('conflicts.merge.keepB'), c.memory_b, 'conflict-merge-keep-b')}
      </fieldset>
      <div className="buttons">
        <button type="submit" className="primary" data-testid="conflict-merge-save" disabled={busy || draft.text.trim() === ''}>
          {t('conflicts.merge.save')}
        </button>
        <button type="button" data-testid="conflict-merge-cancel" onClick={onCancel}>{t('conflicts.merge.cancel')}</button>
      </div>
    </form>
  );
}
