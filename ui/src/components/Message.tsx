// One chat message: the user's text, or an assistant answer with its reasoning, tool calls,
// degradations, error and status.

import { useT } from '../i18n';
import type { AssistantView, ChatMessage } from '../turnStore';
import { Markdown } from './Markdown';
import { ToolCall } from './ToolCall';

function Assistant({ m }: { m: AssistantView }) {
  const t = useT();
  const waiting = m.status === 'running' && m.text === '' && m.tools.length === 0;
  return (
    <article className={`message assistant status-${m.status}`} data-status={m.status}>
      <header className="who">
        {t('chat.assistant')}
        {m.status === 'interrupted' && <span className="badge warn">{t('status.interrupted')}</span>}
        {m.status === 'failed' && <span className="badge error">{t('status.failed')}</span>}
      </header>
      {m.reasoning && (
        <details className="reasoning">
          <summary>{t('chat.reasoning')}</summary>
          <div className="reasoning-text">{m.reasoning}</div>
        </details>
      )}
      {m.tools.map((tool) => (
        <ToolCall key={tool.callId} tool={tool} />
      ))}
      {m.degradations.map((d, i) => (
        <p key={i} className="degraded">
          {t('status.degraded', { detail: d.detail })}
        </p>
      ))}
      {m.text && <Markdown text={m.text} />}
      {waiting && <p className="thinking">{t('chat.thinking')}</p>}
      {m.error && m.status !== 'running' && (
        <p className={m.status === 'interrupted' ? 'turn-error warn' : 'turn-error'} role="alert">
          {t('status.error', { code: m.error.code, message: m.error.message })}
        </p>
      )}
    </article>
  );
}

export function Message({ m }: { m: ChatMessage }) {
  const t = useT();
  if (m.role === 'assistant') return <Assistant m={m} />;
  return (
    <article className="message user">
      <header className="who">{t('chat.you')}</header>
      <div className="user-text">{m.text}</div>
    </article>
  );
}
