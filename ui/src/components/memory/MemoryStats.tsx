// The store at a glance (memory_stats): how many memories are active, the open conflicts, what
// the next sweep will archive (expired, faded) and when the last one ran; opened, the counts
// by tier and status. The store reads it again after every change.

import type { MemoryStats as Stats } from '../../generated/engine';
import { useT } from '../../i18n';
import { STATUSES, TIERS } from '../../memory/memoryStore';
import { when } from './format';

interface Props {
  stats: Stats | undefined;
  error: string | null;
}

export function MemoryStats({ stats, error }: Props) {
  const t = useT();
  if (error) return <p className="turn-error memory-stats" role="alert" data-testid="memory-stats-error">{t('memory.stats.failed', { message: error })}</p>;
  if (!stats) return <p className="muted memory-stats">{t('settings.loading')}</p>;
  const count = (tier: string, status: string) =>
    stats.counts.find((c) => c.tier === tier && c.status === status)?.count ?? 0;
  const total = stats.counts.reduce((n, c) => n + c.count, 0);
  const active = stats.counts.filter((c) => c.status === 'active').reduce((n, c) => n + c.count, 0);
  return (
    <details className="memory-stats" data-testid="memory-stats">
      <summary>
        <span data-testid="memory-stats-total">{t('memory.stats.total', { active, total, count: total })}</span>
        <span data-testid="memory-stats-conflicts">{t('memory.stats.conflicts', { count: stats.open_conflicts })}</span>
        <span data-testid="memory-stats-sweep">{t('memory.stats.nextSweep', { expired: stats.will_expire, faded: stats.will_fade })}</span>
        <span className="muted" data-testid="memory-stats-last-sweep">
          {stats.last_sweep ? t('memory.stats.lastSweep', { time: when(stats.last_sweep) }) : t('memory.stats.neverSwept')}
        </span>
      </summary>
      <table className="settings-table memory-stats-table" data-testid="memory-stats-table">
        <thead>
          <tr>
            <th>{t('memory.filter.tier')}</th>
            {STATUSES.map((s) => <th key={s}>{t(`memory.status.${s}`)}</th>)}
          </tr>
        </thead>
        <tbody>
          {TIERS.map((tier) => (
            <tr key={tier} data-tier={tier}>
              <th scope="row">{t(`memory.tier.${tier}`)}</th>
              {STATUSES.map((s) => <td key={s} data-status={s}>{count(tier, s)}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
