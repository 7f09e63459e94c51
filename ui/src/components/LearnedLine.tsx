// "Memory updated" under an answer: what the turn taught memory, each memory with Undo (the
// change that made it is reverted, and what it replaced is back) and Open (the memory page
// at that memory); "Remembering…" while the turn's memory extraction still runs.

import { useT } from '../i18n';
import type { LearnedInTurn } from '../generated/engine';

interface Props {
  learned: LearnedInTurn[];
  /** The extraction still runs. */
  remembering?: boolean;
  onUndo?: (item: LearnedInTurn) => void;
  onOpen?: (memoryId: string) => void;
}

export function LearnedLine({ learned, remembering, onUndo, onOpen }: Props) {
  const t = useT();
  if (learned.length === 0) {
    return remembering ? (
      <p className="learned muted" role="status" data-testid="memory-remembering">
        {t('chat.remembering')}
      </p>
    ) : null;
  }
  return (
    <div className="learned" role="status" data-testid="memory-updated">
      <span className="learned-title">{t('chat.learned')}</span>
      <ul>
        {learned.map((item) => (
          <li key={item.change_id} data-testid="memory-learned" data-memory={item.memory.id}>
            <span className="learned-text">
              {item.replaced ? t('chat.learnedReplaced', { old: item.replaced, new: item.memory.content }) : item.memory.content}
            </span>
            {onUndo && (
              <button type="button" className="link" data-testid="memory-learned-undo" onClick={() => onUndo(item)}>
                {t('chat.learnedUndo')}
              </button>
            )}
            {onOpen && (
              <button type="button" className="link" data-testid="memory-learned-open" onClick={() => onOpen(item.memory.id)}>
                {t('chat.learnedOpen')}
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
