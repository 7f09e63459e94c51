// "Memory updated" under an answer: what the turn taught memory, each memory with Undo (the
// change that made it is reverted, and what it replaced is back) and Open (the memory page
// at that memory); "Remembering…" while the turn's memory extraction still runs. With "ask
// before remembering" on, what the turn found waits there instead ("Remember this?", with
// Keep and Discard, `ProposalList`); the line says what a decision did (read out, as the line
// is a live region) or why it failed, and keeps the keyboard in it when a decided item leaves.

import { type MessageKey, useT } from '../i18n';
import type { LearnedInTurn, MemoryProposal } from '../generated/engine';
import type { ProposalDecisions } from '../turnStore';
import { ProposalList } from './ProposalList';
import { useKeepFocus } from './useKeepFocus';

interface Props {
  learned: LearnedInTurn[];
  /** The extraction still runs. */
  remembering?: boolean;
  onUndo?: (item: LearnedInTurn) => void;
  onOpen?: (memoryId: string) => void;
  /** What the turn found, waiting for Keep or Discard. */
  proposals?: MemoryProposal[];
  decisions?: ProposalDecisions;
  onKeep?: (proposal: MemoryProposal) => void;
  onDiscard?: (proposal: MemoryProposal) => void;
}

const DONE: Record<'kept' | 'discarded', MessageKey> = { kept: 'chat.proposalKept', discarded: 'chat.proposalDiscarded' };
const FAILED: Record<'kept' | 'discarded', MessageKey> = { kept: 'chat.proposalKeepFailed', discarded: 'chat.proposalDiscardFailed' };

export function LearnedLine({ learned, remembering, onUndo, onOpen, proposals = [], decisions, onKeep, onDiscard }: Props) {
  const t = useT();
  const { part, pressed } = useKeepFocus<HTMLDivElement>(decisions, (decisions?.pending.length ?? 0) > 0);
  const done = decisions?.done ?? null;
  const error = decisions?.error ?? null;
  if (learned.length === 0 && proposals.length === 0 && !done && !error) {
    return remembering ? (
      <p className="learned muted" role="status" data-testid="memory-remembering">
        {t('chat.remembering')}
      </p>
    ) : null;
  }
  return (
    <div className="learned-line" ref={part} tabIndex={-1}>
      <div className="learned" role="status" data-testid="memory-updated">
        {learned.length > 0 && (
          <div className="learned-group">
            <span className="learned-title">{t('chat.learned')}</span>
            <ul>
              {learned.map((item) => (
                <li key={item.change_id} data-testid="memory-learned" data-memory={item.memory.id}>
                  <span className="learned-text">
                    {item.replaced ? t('chat.learnedReplaced', { old: item.replaced, new: item.memory.content }) : item.memory.content}
                  </span>
                  {onUndo && (
                    <button
                      type="button"
                      className="link"
                      data-testid="memory-learned-undo"
                      aria-label={t('chat.learnedUndoLabel', { content: item.memory.content })}
                      onClick={() => onUndo(item)}
                    >
                      {t('chat.learnedUndo')}
                    </button>
                  )}
                  {onOpen && (
                    <button
                      type="button"
                      className="link"
                      data-testid="memory-learned-open"
                      aria-label={t('chat.learnedOpenLabel', { content: item.memory.content })}
                      onClick={() => onOpen(item.memory.id)}
                    >
                      {t('chat.learnedOpen')}
                    </button>
                  )}
                </li>
              ))}
            </ul>
          </div>
        )}
        {proposals.length > 0 && (
          <ProposalList
            proposals={proposals}
            pending={decisions?.pending ?? []}
            onKeep={
              onKeep &&
              ((p) => {
                pressed();
                onKeep(p);
              })
            }
            onDiscard={
              onDiscard &&
              ((p) => {
                pressed();
                onDiscard(p);
              })
            }
          />
        )}
        {done && (
          <p className="learned-done" data-testid="memory-proposal-done" data-done={done}>
            {t(DONE[done])}
          </p>
        )}
      </div>
      {error && (
        <p className="turn-error" role="alert" data-testid="memory-proposal-error">
          {error.code === 'not_found' ? t('chat.proposalGone') : t(FAILED[error.decision], { message: error.message })}
        </p>
      )}
    </div>
  );
}
