// "Remember this?" under an answer (with "ask before remembering" on): what the turn's memory
// work found, waiting for the person, each with Keep (it is written to memory) and Discard
// (nothing of it is). The buttons name the memory they act on, and wait while their call runs.

import { useT } from '../i18n';
import type { MemoryProposal } from '../generated/engine';

interface Props {
  proposals: MemoryProposal[];
  /** The proposals (by id) whose Keep or Discard is on its way. */
  pending: readonly string[];
  onKeep?: (proposal: MemoryProposal) => void;
  onDiscard?: (proposal: MemoryProposal) => void;
}

export function ProposalList({ proposals, pending, onKeep, onDiscard }: Props) {
  const t = useT();
  return (
    <div className="learned-group learned-proposals" data-testid="memory-proposals">
      <span className="learned-title">{t('chat.proposals', { count: proposals.length })}</span>
      <ul>
        {proposals.map((p) => {
          const busy = pending.includes(p.id);
          return (
            <li key={p.id} data-testid="memory-proposal" data-proposal={p.id}>
              <span className="learned-text">{p.content}</span>
              {onKeep && (
                <button
                  type="button"
                  className="proposal-keep"
                  data-testid="memory-proposal-keep"
                  aria-label={t('chat.proposalKeepLabel', { content: p.content })}
                  disabled={busy}
                  onClick={() => onKeep(p)}
                >
                  {t('chat.proposalKeep')}
                </button>
              )}
              {onDiscard && (
                <button
                  type="button"
                  className="proposal-discard"
                  data-testid="memory-proposal-discard"
                  aria-label={t('chat.proposalDiscardLabel', { content: p.content })}
                  disabled={busy}
                  onClick={() => onDiscard(p)}
                >
                  {t('chat.proposalDiscard')}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
