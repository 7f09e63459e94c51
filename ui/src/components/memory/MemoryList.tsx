// The memories as a virtual list: only the rows near the viewport are in the page, so a very
// long list stays smooth; the next page is asked for when the window nears the end of what is
// loaded. Each row has a checkbox (bulk deletion), says where the memory belongs (global, its
// project, one conversation), marks one imported from another assistant, and opens its detail
// when clicked.

import { observeElementRect, useVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef } from 'react';
import type { Memory, Project } from '../../generated/engine';
import { useT } from '../../i18n';
import { placeOf } from '../../memory/place';
import { SourceBadge } from './SourceBadge';
import { placeLabel } from './format';

/** How many rows before the end of the loaded ones the next page is asked for. */
const PREFETCH = 20;
const ROW_HEIGHT = 58;

/** The scroll element's size; one not laid out (jsdom, a hidden view) stands in with the window's. */
function observeRect(instance: Virtualizer<HTMLDivElement, Element>, cb: (rect: { width: number; height: number }) => void) {
  return observeElementRect(instance, (rect) => cb(rect.height > 0 ? rect : { width: rect.width, height: window.innerHeight }));
}

interface Props {
  items: Memory[];
  /** Rows past the loaded ones match (false before the first page: the store loads it). */
  hasMore: boolean;
  loading: boolean;
  selected: readonly string[];
  openId: string | null;
  onLoadMore: () => void;
  onToggle: (id: string) => void;
  onOpen: (id: string) => void;
  /** The projects, to name a memory's. */
  projects: readonly Project[];
}

export function MemoryList({ items, hasMore, loading, selected, openId, onLoadMore, onToggle, onOpen, projects }: Props) {
  const t = useT();
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
    getItemKey: (index) => items[index]?.id ?? index,
    observeElementRect: observeRect,
  });
  const rows = virtualizer.getVirtualItems();
  const lastShown = rows.at(-1)?.index ?? -1;

  useEffect(() => {
    if (hasMore && !loading && lastShown >= items.length - PREFETCH) onLoadMore();
  }, [hasMore, loading, lastShown, items.length, onLoadMore]);

  const chosen = new Set(selected);
  return (
    <div className="memory-list" ref={scroller} data-testid="memory-list">
      <div className="memory-rows" style={{ height: virtualizer.getTotalSize() }}>
        {rows.map((row) => {
          const m = items[row.index];
          if (!m) return null;
          return (
            <div
              key={row.key}
              className={`memory-row${m.id === openId ? ' current' : ''} status-${m.status}`}
              data-testid="memory-row"
              data-memory-id={m.id}
              style={{ transform: `translateY(${row.start}px)`, height: row.size }}
            >
              <input
                type="checkbox"
                checked={chosen.has(m.id)}
                aria-label={t('memory.select', { content: m.content })}
                onChange={() => onToggle(m.id)}
              />
              <button type="button" className="memory-open" onClick={() => onOpen(m.id)}>
                <span className="memory-content">{m.content}</span>
                <span className="memory-meta">
                  {t(`memory.tier.${m.tier}`)} · {t(`memory.status.${m.status}`)} ·{' '}
                  <span className="memory-place" data-testid="memory-place">{placeLabel(t, placeOf(m.scope, projects))}</span>
                  {m.slot && <> · <code>{m.slot}</code></>}
                  {m.pinned && <span className="badge pinned">{t('memory.pinnedBadge')}</span>}
                  <SourceBadge memory={m} />
                </span>
              </button>
            </div>
          );
        })}
      </div>
      {loading && <p className="muted memory-note">{t('memory.loadingMore')}</p>}
    </div>
  );
}
