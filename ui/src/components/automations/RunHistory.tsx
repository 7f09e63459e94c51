// The selected automation's runs, newest first: number, status (coloured), what set it off,
// the file or fire time, the reason, when it was queued, started and finished, and links to
// its conversation and its trace. The engine keeps thousands; the page asks for a few dozen
// and "Show more" asks for more.

import type { AutomationRun, AutomationView } from '../../generated/engine';
import { useT } from '../../i18n';
import { runSubject, runTone, scheduleZone, when } from '../../automations/summary';

interface Props {
  view: AutomationView | undefined;
  runs: AutomationRun[] | undefined;
  error: string | null;
  limit: number;
  /** Automation names by id (a run's chain names the automations that led to it). */
  names: Record<string, string>;
  onShowMore: () => void;
  onOpenChat?: (session: string) => void;
  onOpenTrace?: (turnId: string) => void;
}

export function RunHistory({ view, runs, error, limit, names, onShowMore, onOpenChat, onOpenTrace }: Props) {
  const t = useT();
  if (!view) return <p className="muted">{t('automations.runs.pick')}</p>;
  const zone = scheduleZone(view.automation.spec);
  return (
    <section className="run-history" aria-labelledby="run-history-heading" data-testid="run-history">
      <h3 id="run-history-heading">{t('automations.runs.heading', { name: view.automation.name })}</h3>
      {error && <p className="banner error" role="alert">{t('settings.loadFailed', { message: error })}</p>}
      {!error && runs === undefined && <p className="muted">{t('settings.loading')}</p>}
      {runs && runs.length === 0 && <p className="muted" data-testid="runs-empty">{t('automations.runs.empty')}</p>}
      {runs && runs.length > 0 && (
        <table className="settings-table runs-table">
          <thead>
            <tr>
              <th>{t('automations.runs.col.seq')}</th>
              <th>{t('automations.runs.col.status')}</th>
              <th>{t('automations.runs.col.cause')}</th>
              <th>{t('automations.runs.col.subject')}</th>
              <th>{t('automations.runs.col.reason')}</th>
              <th>{t('automations.runs.col.times')}</th>
              <th>{t('automations.runs.col.links')}</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} data-testid="run" data-run-id={r.id} data-status={r.status}>
                <td>{r.seq}</td>
                <td>
                  <span className={`run-status tone-${runTone(r.status)}`}>{t(`automations.run.${r.status}`)}</span>
                  {Number(r.attempts) > 1 && <div className="muted run-attempts">{t('automations.runs.attempts', { count: Number(r.attempts) })}</div>}
                </td>
                <td>
                  {t(`automations.cause.${r.cause}`)}
                  {r.event && <span className="muted"> · {t(`automations.event.${r.event}`)}</span>}
                </td>
                <td className="run-subject">{runSubject(r, zone)}</td>
                <td className="run-reason">
                  {r.reason}
                  {r.chain.length > 0 && <div className="muted">{t('automations.runs.chain', { chain: r.chain.map((id) => names[id] ?? id).join(' → ') })}</div>}
                </td>
                <td className="run-times">
                  <div>{when(r.created_at)}</div>
                  {r.started_at && <div className="muted">{when(r.started_at)}</div>}
                  {r.finished_at && <div className="muted">{when(r.finished_at)}</div>}
                </td>
                <td className="run-links">
                  {r.session && onOpenChat && (
                    <button type="button" className="link" data-testid="run-open-chat" onClick={() => onOpenChat(r.session ?? '')}>
                      {t('automations.runs.openChat')}
                    </button>
                  )}
                  {r.turn_id && onOpenTrace && (
                    <button type="button" className="link" data-testid="run-open-trace" onClick={() => onOpenTrace(r.turn_id ?? '')}>
                      {t('automations.runs.openTrace')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {runs && runs.length >= limit && (
        <button type="button" data-testid="runs-more" onClick={onShowMore}>{t('automations.runs.more')}</button>
      )}
    </section>
  );
}
