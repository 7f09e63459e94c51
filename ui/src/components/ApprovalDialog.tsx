// The modal approval question: tool, risk, reason, the exact action, the explanation as it
// streams in, a countdown, and the four answers. Esc puts it aside without answering (the
// question keeps waiting, and is denied when its time is up); `ApprovalWaiting` brings it back.

import { useEffect, useRef, useState } from 'react';
import { useT } from '../i18n';
import type { ApprovalAnswer } from '../generated/engine';
import type { PendingApproval } from '../turnStore';

interface Props {
  approval: PendingApproval;
  onAnswer: (requestId: string, answer: ApprovalAnswer) => void;
  /** Esc: put the question aside, unanswered. */
  onSetAside: () => void;
}

/** The question `approval` unless it was set aside; what sets it aside and brings it back. */
export function useSetAside(approval: PendingApproval | null) {
  const [aside, setAside] = useState<string | null>(null);
  return {
    shown: approval !== null && approval.requestId !== aside,
    waiting: approval !== null && approval.requestId === aside,
    setAside: () => setAside(approval?.requestId ?? null),
    bringBack: () => setAside(null),
  };
}

/** A question set aside: says it waits, and shows it again. */
export function ApprovalWaiting({ onShow }: { onShow: () => void }) {
  const t = useT();
  return (
    <button type="button" className="approval-waiting" data-testid="approval-waiting" onClick={onShow}>
      {t('approval.waiting')}
    </button>
  );
}

export function ApprovalDialog({ approval, onAnswer, onSetAside }: Props) {
  const t = useT();
  const [left, setLeft] = useState(approval.timeoutSecs);
  const deny = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    deny.current?.focus();
    const started = Date.now();
    const timer = window.setInterval(() => {
      setLeft(Math.max(0, approval.timeoutSecs - Math.floor((Date.now() - started) / 1000)));
    }, 1000);
    return () => window.clearInterval(timer);
  }, [approval.requestId, approval.timeoutSecs]);
  const answer = (a: ApprovalAnswer) => () => onAnswer(approval.requestId, a);
  return (
    <div
      className="overlay"
      onKeyDown={(e) => {
        if (e.key !== 'Escape' || e.nativeEvent.isComposing) return;
        e.preventDefault();
        e.stopPropagation();
        onSetAside();
      }}
    >
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="approval-title">
        <h2 id="approval-title">{t('approval.title')}</h2>
        <dl>
          <dt>{t('approval.tool')}</dt>
          <dd className="approval-tool">{approval.tool}</dd>
          <dt>{t('approval.risk')}</dt>
          <dd>
            <span className={`risk risk-${approval.risk}`}>{approval.risk}</span>
          </dd>
          <dt>{t('approval.reason')}</dt>
          <dd>{approval.reason}</dd>
        </dl>
        <div className="label">{t('approval.detail')}</div>
        <pre className="approval-detail">{approval.detail}</pre>
        <div className="label">{t('approval.explanation')}</div>
        <p className="approval-explanation">{approval.explanation || t('approval.explaining')}</p>
        <p className="timeout">{t('approval.timeout', { secs: left })}</p>
        <div className="buttons">
          <button type="button" className="primary" onClick={answer('allow_once')}>
            {t('approval.allowOnce')}
          </button>
          <button type="button" onClick={answer('allow_session')}>
            {t('approval.allowSession')}
          </button>
          <button type="button" onClick={answer('allow_always')}>
            {t('approval.allowAlways')}
          </button>
          <button type="button" className="danger" ref={deny} onClick={answer('deny')}>
            {t('approval.deny')}
          </button>
        </div>
      </div>
    </div>
  );
}
