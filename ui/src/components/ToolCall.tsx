// One tool call inline in an answer: name, state, duration; arguments and result on demand.

import { useT } from '../i18n';
import type { ToolCallView } from '../turnStore';

export function ToolCall({ tool }: { tool: ToolCallView }) {
  const t = useT();
  const state =
    tool.ok === undefined ? (tool.result === undefined ? t('tool.running') : '') : tool.ok ? t('tool.ok') : t('tool.failed');
  const cls = tool.ok === false ? 'tool failed' : 'tool';
  return (
    <details className={cls} data-tool={tool.name}>
      <summary>
        <span className="tool-name">{t('tool.call', { name: tool.name })}</span>
        {state && <span className="tool-state">{state}</span>}
        {tool.durationMs !== undefined && (
          <span className="tool-duration">{t('tool.duration', { ms: tool.durationMs })}</span>
        )}
      </summary>
      {tool.decision && (
        <p className="tool-decision">
          {t('tool.decision', { decision: tool.decision.decision, decidedBy: tool.decision.decidedBy })}
        </p>
      )}
      <div className="tool-label">{t('tool.arguments')}</div>
      <pre>{tool.args}</pre>
      {tool.result !== undefined && (
        <>
          <div className="tool-label">{t('tool.result')}</div>
          <pre>{tool.result}</pre>
        </>
      )}
    </details>
  );
}
