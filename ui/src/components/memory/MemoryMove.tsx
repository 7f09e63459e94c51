// "Move to…" on an open memory: the global memories or any project other than where it is
// now; one change, which Undo in its history brings back.

import { useState } from 'react';
import type { Project } from '../../generated/engine';
import { useT } from '../../i18n';
import { type ScopeFilter, filteredProject, projectFilter, scopeFilter } from '../../memory/memoryStore';
import type { Place } from '../../memory/place';

interface Props {
  /** Where it is now (not offered). */
  place: Place;
  projects: readonly Project[];
  busy: boolean;
  /** Moves it into the project named so, or to the global memories (null). */
  onMove: (project: string | null) => void;
}

export function MemoryMove({ place, projects, busy, onMove }: Props) {
  const t = useT();
  const [target, setTarget] = useState<ScopeFilter>('');
  const here = place.kind === 'project' ? place.project?.id : undefined;
  const others = projects.filter((p) => p.id !== here);
  if (place.kind === 'global' && others.length === 0) return null;
  return (
    <form
      className="memory-move"
      title={t('memory.move.help')}
      onSubmit={(e) => {
        e.preventDefault();
        if (target !== '') onMove(target === 'global' ? null : (filteredProject(target) ?? null));
      }}
    >
      <label>
        <span>{t('memory.move.label')}</span>
        <select data-testid="memory-move-select" value={target} disabled={busy} onChange={(e) => setTarget(scopeFilter(e.target.value))}>
          <option value="">{t('memory.move.choose')}</option>
          {place.kind !== 'global' && <option value="global">{t('memory.scope.global')}</option>}
          {others.map((p) => (
            <option key={p.id} value={projectFilter(p.name)}>{p.name}</option>
          ))}
        </select>
      </label>
      <button type="submit" data-testid="memory-move" disabled={busy || target === ''}>
        {t('memory.move.run')}
      </button>
    </form>
  );
}
