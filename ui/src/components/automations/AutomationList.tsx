// The automations, one card each: name, kind, state (with the reason when it is in error or
// rate limited), what sets it off (folders and globs, or the schedule and its next fire
// time), its runs by status, the on/off switch, Run now, Edit and Remove (confirmed first).
// Clicking a card shows its runs.

import type { AutomationView } from '../../generated/engine';
import { useT } from '../../i18n';
import { describeTrigger, nonZeroCounts, stateTone } from '../../automations/summary';

interface Props {
  list: AutomationView[];
  selected: string | null;
  busy: boolean;
  confirmRemove: string | null;
  onSelect: (id: string) => void;
  onSetEnabled: (id: string, enabled: boolean) => void;
  onRunNow: (id: string) => void;
  onEdit: (id: string) => void;
  onRemove: (id: string) => void;
  onConfirmRemove: () => void;
  onCancelRemove: () => void;
}

export function AutomationList({ list, selected, busy, confirmRemove, ...on }: Props) {
  const t = useT();
  return (
    <ul className="automation-list" data-testid="automation-list">
      {list.map(({ automation: a, next_fires, runs }) => {
        const counts = nonZeroCounts(runs);
        const showReason = (a.state === 'error' || a.state === 'rate_limited') && a.state_reason;
        return (
          <li
            key={a.id}
            className={`automation${a.id === selected ? ' current' : ''}${a.enabled ? '' : ' off'}`}
            data-testid="automation"
            data-automation-id={a.id}
          >
            <div className="automation-head">
              <button type="button" className="automation-name link" onClick={() => on.onSelect(a.id)} title={t('automations.showRuns')}>
                {a.name}
              </button>
              <span className="badge">{t(`automations.kind.${a.spec.trigger.kind}`)}</span>
              <span
                className={`badge tone-${stateTone(a.state)}`}
                data-testid="automation-state"
                title={a.state === 'idle' ? t('automations.stateHelp.idle') : undefined}
              >
                {t(`automations.state.${a.state}`)}
              </span>
              <label className="automation-toggle">
                <input
                  type="checkbox"
                  data-testid="automation-enabled"
                  checked={a.enabled}
                  disabled={busy}
                  aria-label={t('automations.enabledLabel', { name: a.name })}
                  onChange={(e) => on.onSetEnabled(a.id, e.target.checked)}
                />
                <span>{t('automations.enabled')}</span>
              </label>
            </div>
            {showReason && (
              <p className={`automation-reason tone-${stateTone(a.state)}`} data-testid="automation-reason">
                {a.state_reason}
              </p>
            )}
            <p className="automation-trigger" data-testid="automation-trigger">{describeTrigger(a.spec, next_fires, t)}</p>
            <p className="automation-counts muted" data-testid="automation-counts">
              {counts.length === 0
                ? t('automations.count.none')
                : counts.map((c) => t(`automations.count.${c.status}`, { count: c.count })).join(' · ')}
            </p>
            {confirmRemove === a.id ? (
              <div className="buttons automation-confirm" role="group" data-testid="automation-remove-confirm">
                <span>{t('automations.removeConfirm', { name: a.name })}</span>
                <button type="button" className="danger" data-testid="automation-remove-yes" disabled={busy} onClick={on.onConfirmRemove}>
                  {t('automations.removeYes')}
                </button>
                <button type="button" onClick={on.onCancelRemove}>{t('automations.removeNo')}</button>
              </div>
            ) : (
              <div className="buttons automation-actions">
                <button type="button" data-testid="automation-runs" onClick={() => on.onSelect(a.id)}>
                  {t('automations.showRuns')}
                </button>
                <button type="button" data-testid="automation-run-now" disabled={busy} onClick={() => on.onRunNow(a.id)}>
                  {t('automations.runNow')}
                </button>
                <button type="button" data-testid="automation-edit" onClick={() => on.onEdit(a.id)}>
                  {t('automations.edit')}
                </button>
                <button type="button" className="danger" data-testid="automation-remove" disabled={busy} onClick={() => on.onRemove(a.id)}>
                  {t('automations.remove')}
                </button>
              </div>
            )}
          </li>
        );
      })}
    </ul>
  );
}
