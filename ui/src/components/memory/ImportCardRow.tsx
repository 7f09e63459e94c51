// One card of an import from another assistant, under review: its text (editable in place),
// the words of the pasted text it was read from when they differ, its project, slot and end
// date, what keeping it would do to the memories already there (in plain words, with the
// judge's reason), and Keep / Drop / Edit.

import { useId } from 'react';
import type { ImportClash, ImportClashKind } from '../../generated/engine';
import { type MessageKey, useT } from '../../i18n';
import { type Decision, type ReviewCard, evidenceShown, isEdited } from '../../memory/assistantImport';

/** How each kind of clash reads, with the memory there as `{content}`. */
const CLASH_TEXT: Record<ImportClashKind, MessageKey> = {
  duplicate: 'memory.assistantImport.clash.duplicate',
  replaces: 'memory.assistantImport.clash.replaces',
  loses_to: 'memory.assistantImport.clash.loses_to',
  review: 'memory.assistantImport.clash.review',
};

interface Props {
  card: ReviewCard;
  busy: boolean;
  onDecide: (decision: Decision) => void;
  onStartEdit: () => void;
  onEditText: (text: string) => void;
  onSaveEdit: () => void;
  onCancelEdit: () => void;
}

function Clash({ clash }: { clash: ImportClash }) {
  const t = useT();
  return (
    <li data-testid="import-clash" data-kind={clash.kind}>
      <span>{t(CLASH_TEXT[clash.kind], { content: clash.memory.content })}</span>
      {clash.explanation && <span className="muted"> {t('memory.assistantImport.why', { explanation: clash.explanation })}</span>}
    </li>
  );
}

export function ImportCardRow({ card, busy, onDecide, onStartEdit, onEditText, onSaveEdit, onCancelEdit }: Props) {
  const t = useT();
  const contentId = useId();
  const { card: read, clashes } = card.candidate;
  const evidence = evidenceShown(read);
  const meta = [
    evidence && t('memory.assistantImport.from', { evidence }),
    read.project && t('memory.scope.project', { name: read.project }),
    read.slot,
    read.valid_until && t('memory.assistantImport.until', { date: read.valid_until }),
  ].filter((m): m is string => !!m);
  const decisionButton = (decision: Decision, label: string) => (
    <button
      type="button"
      data-testid={`import-card-${decision}`}
      aria-pressed={card.decision === decision}
      aria-describedby={card.editing === null ? contentId : undefined}
      disabled={busy}
      onClick={() => onDecide(decision)}
    >
      {label}
    </button>
  );

  return (
    <li className={`import-card decision-${card.decision}`} data-testid="import-card" data-decision={card.decision}>
      {card.editing === null ? (
        <p id={contentId} className="import-card-content" data-testid="import-card-content">{card.content}</p>
      ) : (
        <form
          className="import-card-edit"
          onSubmit={(e) => {
            e.preventDefault();
            onSaveEdit();
          }}
        >
          <input
            aria-label={t('memory.assistantImport.editLabel')}
            data-testid="import-card-edit-input"
            value={card.editing}
            autoFocus
            onChange={(e) => onEditText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.stopPropagation();
                onCancelEdit();
              }
            }}
          />
          <button type="submit" className="primary" data-testid="import-card-edit-save" disabled={card.editing.trim() === ''}>
            {t('memory.assistantImport.save')}
          </button>
          <button type="button" data-testid="import-card-edit-cancel" onClick={onCancelEdit}>{t('memory.assistantImport.cancelEdit')}</button>
        </form>
      )}
      {meta.length > 0 && <p className="import-card-meta muted">{meta.join(' · ')}</p>}
      {isEdited(card) && <p className="import-card-meta muted" data-testid="import-card-edited">{t('memory.assistantImport.edited')}</p>}
      {clashes.length > 0 ? (
        <ul className="import-clashes">{clashes.map((c) => <Clash key={c.memory.id} clash={c} />)}</ul>
      ) : (
        <p className="import-card-meta muted">{t('memory.assistantImport.new')}</p>
      )}
      <div className="import-card-actions">
        {decisionButton('keep', t('memory.assistantImport.keep'))}
        {card.editing === null && (
          <button type="button" data-testid="import-card-edit" aria-describedby={contentId} disabled={busy} onClick={onStartEdit}>
            {t('memory.assistantImport.edit')}
          </button>
        )}
        {decisionButton('drop', t('memory.assistantImport.drop'))}
      </div>
    </li>
  );
}
