// A model call exactly as captured: what was sent (every message by role, the system prompt
// included, the tools offered and the request's parameters) and what came back (text,
// reasoning, tool calls, usage, finish reason) — or why it cannot be shown.

import type { CapturedRequest, CapturedResponse, ToolCall } from '../../generated/engine';
import { useT } from '../../i18n';
import type { CallState } from '../../trace/traceStore';
import { prettyJson, show } from './format';

function ToolCalls({ calls }: { calls: ToolCall[] }) {
  const t = useT();
  if (calls.length === 0) return null;
  return (
    <div className="call-tool-calls">
      <h5>{t('trace.call.toolCalls')}</h5>
      {calls.map((c) => (
        <div key={c.id} className="call-tool-call" data-testid="call-tool-call">
          <code>{c.name}</code> <span className="muted">{c.id}</span>
          <pre>{prettyJson(c.arguments)}</pre>
        </div>
      ))}
    </div>
  );
}

function Request({ request }: { request: CapturedRequest }) {
  const t = useT();
  return (
    <section className="call-request" data-testid="call-request">
      <h4>{t('trace.call.request')}</h4>
      <p className="muted call-params">
        {t('trace.call.params', {
          max: request.max_tokens,
          temperature: request.temperature ?? t('trace.call.defaultTemperature'),
          choice: request.tool_choice,
        })}
      </p>
      <ol className="call-messages">
        {request.messages.map((m, i) => (
          <li key={i} className={`call-message role-${m.role}`} data-testid="call-message" data-role={m.role}>
            <span className="call-role">
              {t(`trace.role.${m.role}`)}
              {m.name && <> · <code>{m.name}</code></>}
              {m.tool_call_id && <> · {t('trace.call.toolCallId', { id: m.tool_call_id })}</>}
            </span>
            {m.content ? <pre className="call-content" tabIndex={0}>{m.content}</pre> : (m.tool_calls ?? []).length === 0 && <p className="muted">{t('trace.call.empty')}</p>}
            <ToolCalls calls={m.tool_calls ?? []} />
          </li>
        ))}
      </ol>
      {request.tools.length > 0 && (
        <details className="call-tools" data-testid="call-tools">
          <summary>{t('trace.call.toolsOffered', { count: request.tools.length })}</summary>
          <ul>
            {request.tools.map((tool) => (
              <li key={tool.name}>
                <code>{tool.name}</code> <span className="muted">{tool.description}</span>
                <pre>{show(tool.parameters)}</pre>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}

function Response({ response, error }: { response: CapturedResponse | null; error: string | null }) {
  const t = useT();
  return (
    <section className="call-response" data-testid="call-response">
      <h4>{t('trace.call.response')}</h4>
      {response === null ? (
        <p className="turn-error">{t('trace.call.noResponse', { error: error ?? '—' })}</p>
      ) : (
        <>
          {error && <p className="turn-error">{error}</p>}
          {response.reasoning && (
            <details className="call-reasoning">
              <summary>{t('trace.call.reasoning')}</summary>
              <pre>{response.reasoning}</pre>
            </details>
          )}
          {response.text ? (
            <pre className="call-content" tabIndex={0} data-testid="call-response-text">{response.text}</pre>
          ) : (
            response.tool_calls.length === 0 && <p className="muted">{t('trace.call.empty')}</p>
          )}
          <ToolCalls calls={response.tool_calls} />
          <p className="muted call-usage">
            {t('trace.call.usage', { in: response.usage.input_tokens, out: response.usage.output_tokens })}
            {response.finish_reason && <> · {t('trace.call.finish', { reason: response.finish_reason })}</>}
          </p>
        </>
      )}
    </section>
  );
}

interface Props {
  /** What was read; undefined when the call was not captured (the span says so). */
  state: CallState | undefined;
  onRetry: () => void;
}

export function ModelCallPane({ state, onRetry }: Props) {
  const t = useT();
  if (state === undefined || state.state === 'missing') {
    return <p className="call-missing muted" data-testid="call-not-captured">{t('trace.call.notCaptured')}</p>;
  }
  if (state.state === 'loading') return <p className="muted">{t('trace.call.loading')}</p>;
  if (state.state === 'error') {
    return (
      <p className="banner error" role="alert">
        <span>{t('trace.call.failed', { message: state.message })}</span>
        <button type="button" onClick={onRetry}>{t('trace.call.retry')}</button>
      </p>
    );
  }
  return (
    <div className="model-call" data-testid="model-call">
      <Request request={state.call.request} />
      <Response response={state.call.response} error={state.call.error} />
    </div>
  );
}
