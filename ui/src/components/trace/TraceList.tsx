// The turns, newest first, three compact columns so the list fits beside the open trace: the
// start of the message with the session and time under it (and markers for degraded turns
// and turns that asked for approval), how it ended and how long it took, tokens in and out
// and where it came from. A row opens the turn's trace.

import type { TurnRecord } from '../../generated/engine';
import { useT } from '../../i18n';
import { when } from '../memory/format';
import { count, excerpt, formatMs, turnDurationMs } from './format';

interface Props {
  turns: TurnRecord[];
  openId: string | null;
  onOpen: (turnId: string) => void;
}

export function TraceList({ turns, openId, onOpen }: Props) {
  const t = useT();
  return (
    <table className="trace-list" data-testid="trace-list">
      <thead>
        <tr>
          <th scope="col">{t('trace.col.input')}</th>
          <th scope="col">{t('trace.col.status')}</th>
          <th scope="col" className="num">{t('trace.col.tokens')}</th>
        </tr>
      </thead>
      <tbody>
        {turns.map((turn) => {
          const duration = turnDurationMs(turn);
          return (
            <tr
              key={turn.id}
              className={`trace-row status-${turn.status}${turn.id === openId ? ' current' : ''}`}
              data-testid="trace-row"
              data-turn-id={turn.id}
              onClick={() => onOpen(turn.id)}
            >
              <td className="trace-input">
                <button
                  type="button"
                  className="trace-open"
                  title={turn.input}
                  onClick={(e) => {
                    e.stopPropagation();
                    onOpen(turn.id);
                  }}
                >
                  {excerpt(turn.input, 120) || '—'}
                </button>
                <span className="trace-sub">
                  <span className="trace-session" title={t('trace.col.session')}>{turn.session_name}</span>
                  {' · '}
                  <time dateTime={turn.created_at} title={t('trace.col.time')}>{when(turn.created_at)}</time>
                </span>
                {turn.degraded && <span className="badge warn" data-testid="trace-degraded">{t('trace.degradedMark')}</span>}
                {turn.approvals > 0 && (
                  <span className="badge approvals" data-testid="trace-approvals">{t('trace.approvalsMark', { count: turn.approvals })}</span>
                )}
              </td>
              <td>
                <span className={`trace-status status-${turn.status}`}>{t(`trace.status.${turn.status}`)}</span>
                <span className="trace-sub" data-testid="trace-duration" title={t('trace.col.duration')}>
                  {duration === null ? '—' : formatMs(duration)}
                </span>
              </td>
              <td className="num">
                {count(turn.input_tokens)} / {count(turn.output_tokens)}
                <span className="trace-sub" title={t('trace.col.entry')}>{t(`trace.entry.${turn.entry_point}`)}</span>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
