// The review of an import from another assistant: how many cards the text gave, one row per
// card (`ImportCardRow`), what the engine left out and why, and "Import N memories" (the kept
// ones; nothing is written before) or Cancel, which discards the cards and goes back to the text.

import { useEffect, useRef } from 'react';
import { useT } from '../../i18n';
import type { Decision, ReviewCard } from '../../memory/assistantImport';
import { ImportCardRow } from './ImportCardRow';

interface Props {
  cards: readonly ReviewCard[];
  dropped: readonly string[];
  writing: boolean;
  kept: number;
  canImport: boolean;
  onDecide: (index: number, decision: Decision) => void;
  onStartEdit: (index: number) => void;
  onEditText: (index: number, text: string) => void;
  onSaveEdit: (index: number) => void;
  onCancelEdit: (index: number) => void;
  onImport: () => void;
  onCancel: () => void;
}

export function ImportReview({ cards, dropped, writing, kept, canImport, onImport, onCancel, ...on }: Props) {
  const t = useT();
  // The text the focus was in is gone: the count of cards takes it, so reading goes on from there.
  const heading = useRef<HTMLParagraphElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const editOpen = cards.some((c) => c.editing !== null);
  return (
    <div className="assistant-import-review">
      <p ref={heading} tabIndex={-1} data-testid="assistant-import-count">
        {cards.length > 0 ? t('memory.assistantImport.cardsRead', { count: cards.length }) : t('memory.assistantImport.noCards')}
      </p>
      {cards.length > 0 && (
        <ol className="import-cards" aria-label={t('memory.assistantImport.cards')}>
          {cards.map((card, i) => (
            <ImportCardRow
              key={i}
              card={card}
              busy={writing}
              onDecide={(d) => on.onDecide(i, d)}
              onStartEdit={() => on.onStartEdit(i)}
              onEditText={(text) => on.onEditText(i, text)}
              onSaveEdit={() => on.onSaveEdit(i)}
              onCancelEdit={() => on.onCancelEdit(i)}
            />
          ))}
        </ol>
      )}
      {dropped.length > 0 && (
        <div className="import-dropped" data-testid="assistant-import-dropped">
          <h3>{t('memory.assistantImport.leftOut')}</h3>
          <ul>{dropped.map((d, i) => <li key={i}>{d}</li>)}</ul>
        </div>
      )}
      {editOpen && <p className="help">{t('memory.assistantImport.editOpen')}</p>}
      <div className="buttons">
        <button type="button" className="primary" data-testid="assistant-import-submit" disabled={!canImport} onClick={onImport}>
          {writing ? t('memory.assistantImport.importing') : t('memory.assistantImport.import', { count: kept })}
        </button>
        <button type="button" data-testid="assistant-import-cancel" title={t('memory.assistantImport.cancelHelp')} disabled={writing} onClick={onCancel}>
          {t('memory.assistantImport.cancel')}
        </button>
      </div>
    </div>
  );
}
