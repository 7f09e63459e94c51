// The mark on a memory's row when it came from another assistant (source `imported`), so the
// person can tell those apart in the list and in search results; the detail names every source.

import type { Memory } from '../../generated/engine';
import { useT } from '../../i18n';

export function SourceBadge({ memory }: { memory: Pick<Memory, 'source'> }) {
  const t = useT();
  if (memory.source !== 'imported') return null;
  return (
    <span className="badge imported" data-testid="memory-source-imported" title={t('memory.source.imported')}>
      {t('memory.source.imported')}
    </span>
  );
}
