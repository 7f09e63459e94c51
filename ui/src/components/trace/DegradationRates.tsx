// How often turns fell back, over the last day and the last week, each fallback with its own
// share (retries, fallback models, cut requests, skipped research steps, partial reports…):
// the engine's `trace_stats`, shown above the trace list.

import { useEffect, useState } from 'react';
import type { DegradationStats } from '../../generated/engine';
import { useT } from '../../i18n';
import type { SettingsTransport } from '../../settings/store';

const DAY_MS = 24 * 60 * 60 * 1000;

const percent = (rate: number) => `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)}%`;

interface Props {
  transport: SettingsTransport;
  /** Loads again when this changes (the list was refreshed). */
  refresh: unknown;
}

export function DegradationRates({ transport, refresh }: Props) {
  const t = useT();
  const [stats, setStats] = useState<{ day: DegradationStats; week: DegradationStats } | null>(null);
  useEffect(() => {
    let live = true;
    const since = (ms: number) => new Date(Date.now() - ms).toISOString();
    void Promise.all([
      transport.call('trace_stats', { since: since(DAY_MS) }),
      transport.call('trace_stats', { since: since(7 * DAY_MS) }),
    ])
      .then(([day, week]) => {
        if (live) setStats({ day, week });
      })
      .catch(() => {
        // The list shows the engine's errors; the rates just stay away.
      });
    return () => {
      live = false;
    };
  }, [transport, refresh]);
  if (!stats || stats.week.turns === 0) return null;
  const { day, week } = stats;
  return (
    <section className="degradation-rates" data-testid="degradation-rates" aria-label={t('trace.fallbacks')}>
      <p>
        {t('trace.fallbackRates', {
          day: percent(day.rate),
          dayTurns: day.turns,
          week: percent(week.rate),
          weekTurns: week.turns,
        })}
      </p>
      {week.by_reason.length > 0 && (
        <ul className="degradation-reasons">
          {week.by_reason.map((r) => (
            <li key={r.reason} data-testid="degradation-reason" data-reason={r.reason}>
              <code>{r.reason}</code> {percent(r.rate)} ({t('trace.fallbackTurns', { count: r.turns })})
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
