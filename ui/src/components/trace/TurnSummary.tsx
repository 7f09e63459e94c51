// The open turn at the top of its trace: the message, its session (a link back to the
// conversation), how it ended, how long it took, tokens, model and where it came from, and
// "Export as case" (a replay case to reproduce it).

import type { TurnRecord } from '../../generated/engine';
import { useT } from '../../i18n';
import { when } from '../memory/format';
import { count, formatMs, turnDurationMs } from './format';

interface Props {
  turn: TurnRecord;
  exporting: boolean;
  exported: string | null;
  exportError: string | null;
  onExport: () => void;
  onDismissExport: () => void;
  onOpenChat?: (session: string) => void;
  onClose: () => void;
}

export function TurnSummary({ turn, exporting, exported, exportError, onExport, onDismissExport, onOpenChat, onClose }: Props) {
  const t = useT();
  const duration = turnDurationMs(turn);
  return (
    <section className="turn-summary" data-testid="turn-summary" data-turn-id={turn.id}>
      <div className="panel-head">
        <p className="turn-input" data-testid="turn-input">{turn.input}</p>
        <div className="buttons">
          <button type="button" data-testid="trace-export" title={t('trace.exportHelp')} disabled={exporting} onClick={onExport}>
            {t('trace.export')}
          </button>
          <button type="button" onClick={onClose}>{t('trace.close')}</button>
        </div>
      </div>
      <p className="turn-meta">
        <span>
          {t('trace.turn.session')}:{' '}
          {onOpenChat ? (
            <button type="button" className="link" data-testid="trace-session" title={t('trace.turn.openChat')} onClick={() => onOpenChat(turn.session_name)}>
              {turn.session_name}
            </button>
          ) : (
            <span data-testid="trace-session">{turn.session_name}</span>
          )}
        </span>
        <span className={`trace-status status-${turn.status}`} data-testid="turn-status">{t(`trace.status.${turn.status}`)}</span>
        <time dateTime={turn.created_at}>{when(turn.created_at)}</time>
        {duration !== null && <span data-testid="turn-duration">{formatMs(duration)}</span>}
        <span>
          {t('trace.col.tokens')}: {count(turn.input_tokens)} / {count(turn.output_tokens)}
        </span>
        {turn.model && <code>{turn.model}</code>}
        <span>{t(`trace.entry.${turn.entry_point}`)}</span>
        {turn.degraded && <span className="badge warn">{t('trace.degradedMark')}</span>}
        {turn.approvals > 0 && <span className="badge approvals">{t('trace.approvalsMark', { count: turn.approvals })}</span>}
      </p>
      {turn.error && (
        <p className="turn-error" role="alert">{t('trace.turn.error', { code: turn.error_code ?? '—', message: turn.error })}</p>
      )}
      {(exported || exportError) && (
        <div className={`banner ${exportError ? 'error' : 'notice'}`} role="status" data-testid="trace-exported">
          <span>{exportError ? t('trace.exportFailed', { message: exportError }) : t('trace.exported', { name: exported ?? '' })}</span>
          <button type="button" onClick={onDismissExport}>{t('error.dismiss')}</button>
        </div>
      )}
    </section>
  );
}
