// The approval queue of unattended runs, at the top of the automations page while it is not
// empty: each pending question with its automation, tool, risk, the exact action, why it
// asks and when it expires, answered with Allow once, Allow for this automation, or Deny.

import type { QueuedApproval } from '../../generated/engine';
import { useT } from '../../i18n';
import type { QueueAnswer } from '../../automations/approvalQueue';
import { when } from '../../automations/summary';

interface Props {
  pending: QueuedApproval[];
  answering: string | null;
  error: string | null;
  answerError: string | null;
  onAnswer: (requestId: string, answer: QueueAnswer) => void;
  onDismissError: () => void;
  onOpenTrace?: (turnId: string) => void;
}

export function ApprovalQueuePanel({ pending, answering, error, answerError, onAnswer, onDismissError, onOpenTrace }: Props) {
  const t = useT();
  if (pending.length === 0 && !answerError && !error) return null;
  return (
    <section className="approval-queue" aria-labelledby="approval-queue-heading" data-testid="approval-queue">
      <h3 id="approval-queue-heading">{t('automations.queue.heading', { count: pending.length })}</h3>
      <p className="help">{t('automations.queue.help')}</p>
      {error && pending.length === 0 && (
        <p className="banner error" role="alert">{t('automations.queue.loadFailed', { message: error })}</p>
      )}
      {answerError && (
        <div className="banner error" role="alert" data-testid="approval-queue-error">
          <span>{t('automations.queue.failed', { message: answerError })}</span>
          <button type="button" onClick={onDismissError}>{t('error.dismiss')}</button>
        </div>
      )}
      {pending.map((q) => (
        <article key={q.id} className="queued-approval" data-testid="queued-approval" data-request-id={q.id}>
          <div className="queued-approval-head">
            <strong className="queued-automation">{q.automation}</strong>
            <span className="muted">{t('automations.queue.asked', { time: when(q.created_at) })}</span>
            <span className="queued-expires" data-testid="queued-expires">{t('automations.queue.expires', { time: when(q.expires_at) })}</span>
            {onOpenTrace && (
              <button type="button" className="link" onClick={() => onOpenTrace(q.turn_id)}>{t('automations.queue.openTrace')}</button>
            )}
          </div>
          <dl className="queued-facts">
            <dt>{t('automations.queue.tool')}</dt>
            <dd className="queued-tool">{q.tool}</dd>
            <dt>{t('automations.queue.risk')}</dt>
            <dd>
              <span className={`risk risk-${q.risk}`}>{q.risk}</span>
            </dd>
            <dt>{t('automations.queue.reason')}</dt>
            <dd>{q.reason}</dd>
          </dl>
          <div className="label">{t('automations.queue.detail')}</div>
          <pre className="approval-detail" data-testid="queued-detail">{q.detail}</pre>
          {q.suggested_pattern && <p className="muted queued-suggested">{t('automations.queue.suggested', { pattern: q.suggested_pattern })}</p>}
          <div className="buttons">
            <button type="button" className="primary" data-testid="queue-allow-once" disabled={answering !== null} onClick={() => onAnswer(q.id, 'allow_once')}>
              {t('automations.queue.allowOnce')}
            </button>
            <button
              type="button"
              data-testid="queue-allow-automation"
              title={t('automations.queue.allowAutomationHelp')}
              disabled={answering !== null}
              onClick={() => onAnswer(q.id, 'allow_automation')}
            >
              {t('automations.queue.allowAutomation')}
            </button>
            <button type="button" className="danger" data-testid="queue-deny" disabled={answering !== null} onClick={() => onAnswer(q.id, 'deny')}>
              {t('automations.queue.deny')}
            </button>
          </div>
        </article>
      ))}
    </section>
  );
}
