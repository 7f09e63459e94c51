// "Waiting for your yes (N)" on the memory page: every proposal that "ask before remembering"
// left waiting, from any conversation, newest first, each with when it was found and Keep /
// Discard (the buttons name the memory and wait while their call runs). Shown only when
// something waits, or when reading the list failed.

import { useId } from 'react';
import type { MemoryProposal } from '../../generated/engine';
import { useT } from '../../i18n';
import { when } from './format';

interface Props {
  proposals: MemoryProposal[] | undefined;
  error: string | null;
  /** The proposals (by id) whose Keep or Discard is on its way. */
  pending: readonly string[];
  onKeep: (p: MemoryProposal) => void;
  onDiscard: (p: MemoryProposal) => void;
}

export function WaitingProposals({ proposals, error, pending, onKeep, onDiscard }: Props) {
  const t = useT();
  const heading = useId();
  if (error) {
    return (
      <p className="banner error" role="alert" data-testid="memory-waiting-load-error">
        {t('memory.waiting.loadFailed', { message: error })}
      </p>
    );
  }
  if (!proposals || proposals.length === 0) return null;
  return (
    <div className="memory-waiting" role="group" aria-labelledby={heading} data-testid="memory-waiting">
      <h3 id={heading}>{t('memory.waiting.heading', { count: proposals.length })}</h3>
      <ul>
        {proposals.map((p) => {
          const busy = pending.includes(p.id);
          return (
            <li key={p.id} data-testid="memory-waiting-item" data-proposal={p.id}>
              <span className="memory-waiting-content">{p.content}</span>
              <span className="muted memory-waiting-when">{t('memory.waiting.found', { when: when(p.created_at) })}</span>
              <button
                type="button"
                data-testid="memory-waiting-keep"
                aria-label={t('memory.waiting.keepLabel', { content: p.content })}
                disabled={busy}
                onClick={() => onKeep(p)}
              >
                {t('memory.waiting.keep')}
              </button>
              <button
                type="button"
                data-testid="memory-waiting-discard"
                aria-label={t('memory.waiting.discardLabel', { content: p.content })}
                disabled={busy}
                onClick={() => onDiscard(p)}
              >
                {t('memory.waiting.discard')}
              </button>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
