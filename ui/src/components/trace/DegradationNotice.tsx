// The app's notice when too many of the last day's turns fell back: the share `[trace]
// notice_rate` names (0: never), counted by the engine's `trace_stats` after each turn, with
// the most common fallback and a way to the trace page. Dismissed, it stays away until the
// page is loaded again.

import { useEffect, useState } from 'react';
import type { DegradationStats } from '../../generated/engine';
import { useT } from '../../i18n';
import type { SettingsTransport } from '../../settings/store';

/** Fewer turns than this in a day say too little for a notice. */
export const NOTICE_MIN_TURNS = 5;

interface Props {
  transport: SettingsTransport;
  /** Counted again when this changes (a turn ended). */
  refresh: unknown;
  onOpenTraces: () => void;
}

export function DegradationNotice({ transport, refresh, onOpenTraces }: Props) {
  const t = useT();
  const [day, setDay] = useState<DegradationStats | null>(null);
  const [dismissed, setDismissed] = useState(false);
  useEffect(() => {
    let live = true;
    const since = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();
    void Promise.all([transport.call('trace_settings', {}), transport.call('trace_stats', { since })])
      .then(([settings, stats]) => {
        if (!live) return;
        const over = settings.notice_rate > 0 && stats.turns >= NOTICE_MIN_TURNS && stats.rate >= settings.notice_rate;
        setDay(over ? stats : null);
      })
      .catch(() => {
        // No counts, no notice: the pages that need the engine say when it is away.
      });
    return () => {
      live = false;
    };
  }, [transport, refresh]);
  if (!day || dismissed) return null;
  const top = day.by_reason[0];
  return (
    <div className="banner notice" role="status" data-testid="degradation-notice">
      <span>
        {t('trace.notice', { rate: `${Math.round(day.rate * 100)}%`, turns: day.turns, reason: top?.reason ?? '?' })}
      </span>
      <button type="button" onClick={onOpenTraces}>
        {t('trace.noticeOpen')}
      </button>
      <button type="button" onClick={() => setDismissed(true)}>
        {t('error.dismiss')}
      </button>
    </div>
  );
}
