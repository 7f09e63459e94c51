// A search by meaning's results, best first, with the engine's score (and the mark of a memory
// imported from another assistant); a click opens the memory.
// At most `SEARCH_SIZE` rows, so a plain list.

import type { Recalled } from '../../generated/engine';
import { useT } from '../../i18n';
import { SourceBadge } from './SourceBadge';

interface Props {
  query: string;
  results: Recalled[] | undefined;
  error: string | null;
  openId: string | null;
  onOpen: (id: string) => void;
  onEnd: () => void;
}

export function SearchResults({ query, results, error, openId, onOpen, onEnd }: Props) {
  const t = useT();
  return (
    <div className="memory-search-results" data-testid="memory-search-results">
      <div className="memory-search-head">
        <span>{t('memory.search.heading', { query })}</span>
        <button type="button" data-testid="memory-search-end" onClick={onEnd}>{t('memory.search.end')}</button>
      </div>
      {error && <p className="turn-error" role="alert">{t('memory.failed', { message: error })}</p>}
      {!error && results === undefined && <p className="muted memory-note">{t('memory.detail.loading')}</p>}
      {results && results.length === 0 && !error && <p className="muted memory-note">{t('memory.empty')}</p>}
      <ol>
        {results?.map(({ memory: m, score }) => (
          <li key={m.id} className={`memory-row static${m.id === openId ? ' current' : ''} status-${m.status}`} data-testid="memory-search-row" data-memory-id={m.id}>
            <button type="button" className="memory-open" onClick={() => onOpen(m.id)}>
              <span className="memory-content">{m.content}</span>
              <span className="memory-meta">
                {t(`memory.tier.${m.tier}`)} · {t(`memory.status.${m.status}`)} · {t('memory.search.score', { score: score.toFixed(3) })}
                <SourceBadge memory={m} />
              </span>
            </button>
          </li>
        ))}
      </ol>
    </div>
  );
}
