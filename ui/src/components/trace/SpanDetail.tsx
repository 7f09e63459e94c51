// The selected span: what every span has (name, kind, status, when, how long, model and
// tokens, degradation, error), then what its kind adds — a model call's captured request and
// response, a tool call's arguments and result, an approval's question and who decided, the
// memories a recall read or extraction wrote (links to the memory page) — and any other
// recorded field as a key/value table.

import { useEffect, useRef } from 'react';
import type { SpanRecord } from '../../generated/engine';
import { type MessageKey, useT } from '../../i18n';
import type { CallState } from '../../trace/traceStore';
import { clock, count, formatMs, prettyJson, show, strings, text, num } from './format';
import { ModelCallPane } from './ModelCallPane';
import { reasons } from './Waterfall';

/** The attributes each kind's pane shows itself; the rest go to the table. */
const SHOWN: Record<string, readonly string[]> = {
  model: ['captured'],
  tool: ['arguments', 'result', 'risk', 'error_kind'],
  approval: ['tool', 'question', 'reason', 'decision', 'decided_by', 'rule_id', 'wait_ms'],
  memory_read: ['memory_ids'],
  memory_write: ['memory_ids'],
};

type Facts = [MessageKey, React.ReactNode][];

function FactList({ facts, testId }: { facts: Facts; testId?: string }) {
  const t = useT();
  return (
    <dl className="span-facts" data-testid={testId}>
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{t(label)}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function ToolPane({ attrs }: { attrs: Record<string, unknown> }) {
  const t = useT();
  const args = text(attrs, 'arguments');
  const result = text(attrs, 'result');
  const facts: Facts = [];
  const risk = text(attrs, 'risk');
  const errorKind = text(attrs, 'error_kind');
  if (risk) facts.push(['trace.tool.risk', risk]);
  if (errorKind) facts.push(['trace.tool.errorKind', errorKind]);
  return (
    <div className="span-kind-pane" data-testid="tool-pane">
      {facts.length > 0 && <FactList facts={facts} />}
      <h4>{t('trace.tool.arguments')}</h4>
      <pre data-testid="tool-arguments">{args === undefined ? show(attrs.arguments) : prettyJson(args)}</pre>
      <h4>{t('trace.tool.result')}</h4>
      <pre data-testid="tool-result">{result ?? show(attrs.result)}</pre>
    </div>
  );
}

/** The question asked (the exact action), why, what was decided, by whom, and how long it waited. */
function ApprovalPane({ attrs, durationMs }: { attrs: Record<string, unknown>; durationMs: number | null }) {
  const t = useT();
  const facts: Facts = [];
  const add = (label: MessageKey, value: string | undefined) => {
    if (value !== undefined && value !== '') facts.push([label, value]);
  };
  add('trace.approval.tool', text(attrs, 'tool'));
  add('trace.approval.reason', text(attrs, 'reason'));
  add('trace.approval.decision', text(attrs, 'decision'));
  add('trace.approval.decidedBy', text(attrs, 'decided_by'));
  add('trace.approval.rule', text(attrs, 'rule_id'));
  // The wait is the span itself unless the engine recorded it apart.
  const wait = num(attrs, 'wait_ms') ?? durationMs ?? undefined;
  if (wait !== undefined) add('trace.approval.wait', formatMs(wait));
  const question = text(attrs, 'question');
  return (
    <div className="span-kind-pane" data-testid="approval-pane">
      {question && (
        <>
          <h4>{t('trace.approval.question')}</h4>
          <pre data-testid="approval-question">{question}</pre>
        </>
      )}
      <FactList facts={facts} />
    </div>
  );
}

function MemoryPane({ attrs, onOpenMemory }: { attrs: Record<string, unknown>; onOpenMemory?: (id: string) => void }) {
  const t = useT();
  const ids = strings(attrs, 'memory_ids');
  return (
    <div className="span-kind-pane" data-testid="memory-pane">
      <h4>{t('trace.memory.ids', { count: ids.length })}</h4>
      {ids.length === 0 && <p className="muted">{t('trace.memory.none')}</p>}
      <ul className="span-memories">
        {ids.map((id) => (
          <li key={id}>
            {onOpenMemory ? (
              <button type="button" className="link" data-testid="span-memory-link" data-memory-id={id} onClick={() => onOpenMemory(id)}>
                {id}
              </button>
            ) : (
              <code>{id}</code>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

interface Props {
  span: SpanRecord;
  /** When the turn started (epoch ms), for "+1.2 s after the turn started". */
  turnStart: number | null;
  call: CallState | undefined;
  onRetryCall: () => void;
  onOpenMemory?: (memoryId: string) => void;
}

export function SpanDetail({ span: s, turnStart, call, onRetryCall, onOpenMemory }: Props) {
  const t = useT();
  const kind = s.kind ?? 'stage';
  const attrs = s.attrs ?? {};
  const started = Date.parse(s.started_at);
  const facts: Facts = [
    ['trace.span.name', <code key="n">{s.name}</code>],
    ['trace.span.kind', `${t(`trace.kind.${kind}`)} · ${s.level}`],
    ['trace.span.status', t(`trace.spanStatus.${s.status}`)],
    [
      'trace.span.started',
      <>
        {clock(s.started_at)}
        {turnStart !== null && !Number.isNaN(started) && (
          <span className="muted"> ({t('trace.span.offset', { time: formatMs(started - turnStart) })})</span>
        )}
      </>,
    ],
    ['trace.span.duration', <span key="d" data-testid="span-duration">{s.duration_ms === null ? t('trace.span.stillRunning') : formatMs(s.duration_ms)}</span>],
  ];
  if (s.model) facts.push(['trace.span.model', s.model]);
  if (s.tokens_in !== null || s.tokens_out !== null) facts.push(['trace.span.tokens', `${count(s.tokens_in)} / ${count(s.tokens_out)}`]);
  if (s.degraded) facts.push(['trace.span.degraded', <span key="g" className="span-degraded">{reasons(s.degraded_reason) || '—'}</span>]);
  const shown = SHOWN[kind] ?? [];
  const rest = Object.entries(attrs).filter(([k]) => !shown.includes(k));
  // The detail sits below the waterfall: bring it into view when a span is picked.
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    section.current?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
  }, [s.id]);

  return (
    <section ref={section} className={`span-detail kind-${kind}`} data-testid="span-detail" data-span-id={s.id} data-kind={kind}>
      <h3>{t('trace.span.heading')}</h3>
      <FactList facts={facts} />
      {s.error && <p className="turn-error" data-testid="span-error">{t('trace.span.error')}: {s.error}</p>}
      {kind === 'model' && <ModelCallPane state={attrs.captured === false ? undefined : call} onRetry={onRetryCall} />}
      {kind === 'tool' && <ToolPane attrs={attrs} />}
      {kind === 'approval' && <ApprovalPane attrs={attrs} durationMs={s.duration_ms} />}
      {(kind === 'memory_read' || kind === 'memory_write') && <MemoryPane attrs={attrs} onOpenMemory={onOpenMemory} />}
      {rest.length > 0 && (
        <>
          <h4>{t('trace.span.attrs')}</h4>
          <table className="span-attrs" data-testid="span-attrs">
            <tbody>
              {rest.map(([k, v]) => (
                <tr key={k}>
                  <th scope="row"><code>{k}</code></th>
                  <td><pre>{show(v)}</pre></td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
