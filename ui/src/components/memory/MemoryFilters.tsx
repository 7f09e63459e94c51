// The filters bar: whose memories (all, the global ones, or one project's), tier, status, text
// (applied a moment after typing stops), in a conflict or not, and the order. Every change starts the list over from its first page. The text can
// also be searched by meaning (the engine's recall) instead.

import { useEffect, useState } from 'react';
import type { Project } from '../../generated/engine';
import { useT } from '../../i18n';
import {
  CONFLICT_FILTERS,
  EXPIRING,
  EXPIRING_DAYS,
  type MemoryFilters as Filters,
  SORTS,
  STATUS_FILTERS,
  STATUSES,
  TIERS,
  projectFilter,
  scopeFilter,
} from '../../memory/memoryStore';
import { oneOf } from '../../settings/store';

/** How long typing must pause before the text filter is applied (ms). */
const TEXT_DELAY = 300;

interface Props {
  filters: Filters;
  onChange: (change: Partial<Filters>) => void;
  /** Searches the typed text by meaning instead of filtering by it. */
  onSearch: (text: string) => void;
  /** The projects, each a choice of whose memories to list. */
  projects: readonly Project[];
}

export function MemoryFilters({ filters, onChange, onSearch, projects }: Props) {
  const t = useT();
  const [text, setText] = useState(filters.text);
  useEffect(() => {
    if (text === filters.text) return;
    const timer = setTimeout(() => onChange({ text }), TEXT_DELAY);
    return () => clearTimeout(timer);
  }, [text, filters.text, onChange]);

  return (
    <form
      className="memory-filters"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (text !== filters.text) onChange({ text });
      }}
    >
      <label>
        <span>{t('memory.filter.text')}</span>
        <input
          name="text"
          type="search"
          value={text}
          placeholder={t('memory.filter.textPlaceholder')}
          onChange={(e) => setText(e.target.value)}
        />
      </label>
      <button type="button" data-testid="memory-search" disabled={text.trim() === ''} title={t('memory.search.help')} onClick={() => onSearch(text)}>
        {t('memory.search.run')}
      </button>
      <label>
        <span>{t('memory.filter.scope')}</span>
        <select
          name="scope"
          data-testid="memory-scope-filter"
          value={filters.scope}
          onChange={(e) => onChange({ scope: scopeFilter(e.target.value) })}
        >
          <option value="">{t('memory.filter.allScopes')}</option>
          <option value="global">{t('memory.scope.global')}</option>
          {projects.map((p) => (
            <option key={p.id} value={projectFilter(p.name)}>{p.name}</option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('memory.filter.tier')}</span>
        <select name="tier" value={filters.tier} onChange={(e) => onChange({ tier: oneOf(TIERS, e.target.value) ?? '' })}>
          <option value="">{t('memory.filter.any')}</option>
          {TIERS.map((x) => <option key={x} value={x}>{t(`memory.tier.${x}`)}</option>)}
        </select>
      </label>
      <label>
        <span>{t('memory.filter.status')}</span>
        <select name="status" value={filters.status} onChange={(e) => onChange({ status: oneOf(STATUS_FILTERS, e.target.value) ?? '' })}>
          <option value="">{t('memory.filter.anyStatus')}</option>
          {STATUSES.map((x) => <option key={x} value={x}>{t(`memory.status.${x}`)}</option>)}
          <option value={EXPIRING}>{t('memory.filter.expiring', { days: EXPIRING_DAYS })}</option>
        </select>
      </label>
      <label>
        <span>{t('memory.filter.conflict')}</span>
        <select
          name="in_conflict"
          value={filters.inConflict}
          onChange={(e) => onChange({ inConflict: oneOf(CONFLICT_FILTERS, e.target.value) ?? 'any' })}
        >
          {CONFLICT_FILTERS.map((x) => <option key={x} value={x}>{t(`memory.conflict.${x}`)}</option>)}
        </select>
      </label>
      <label>
        <span>{t('memory.filter.sort')}</span>
        <select
          name="sort"
          value={filters.sort}
          onChange={(e) => {
            const sort = oneOf(SORTS, e.target.value);
            if (sort) onChange({ sort });
          }}
        >
          {SORTS.map((x) => <option key={x} value={x}>{t(`memory.sort.${x}`)}</option>)}
        </select>
      </label>
    </form>
  );
}
