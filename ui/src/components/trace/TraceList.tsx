// The turns, newest first: when, which session, the start of the message, how it ended, how
// long it took, tokens in and out, where it came from, and markers for degraded turns and
// turns that asked for approval. A row opens the turn's trace.

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
          <th scope="col">{t('trace.col.time')}</th>
          <th scope="col">{t('trace.col.session')}</th>
          <th scope="col">{t('trace.col.input')}</th>
          <th scope="col">{t('trace.col.status')}</th>
          <th scope="col">{t('trace.col.duration')}</th>
          <th scope="col">{t('trace.col.tokens')}</th>
          <th scope="col">{t('trace.col.entry')}</th>
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
              <td className="trace-time">
                <time dateTime={turn.created_at}>{when(turn.created_at)}</time>
              </td>
              <td className="trace-session">{turn.session_name}</td>
              <td className="trace-input">
                <button type="button" className="trace-open" title={turn.input} onClick={(e) => {
                  e.stopPropagation();
                  onOpen(turn.id);
                }}>
                  {excerpt(turn.input) || '—'}
                </button>
                {turn.degraded && <span className="badge warn" data-testid="trace-degraded">{t('trace.degradedMark')}</span>}
                {turn.approvals > 0 && (
                  <span className="badge approvals" data-testid="trace-approvals">{t('trace.approvalsMark', { count: turn.approvals })}</span>
                )}
              </td>
              <td>
                <span className={`trace-status status-${turn.status}`}>{t(`trace.status.${turn.status}`)}</span>
              </td>
              <td className="num" data-testid="trace-duration">{duration === null ? '—' : formatMs(duration)}</td>
              <td className="num">{count(turn.input_tokens)} / {count(turn.output_tokens)}</td>
              <td>{t(`trace.entry.${turn.entry_point}`)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
