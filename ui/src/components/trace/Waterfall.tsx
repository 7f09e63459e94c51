// A turn's spans as a waterfall: one row per span, indented under its parent, with a bar on
// the turn's time axis coloured by kind (the legend says which colour is which). Degraded
// spans carry their reason, failed ones are red, work after the turn ended sits past the
// turn's end line; a click selects the span.

import { useMemo } from 'react';
import type { SpanKind, SpanRecord } from '../../generated/engine';
import { useT } from '../../i18n';
import { layout, type WaterfallRow } from '../../trace/waterfall';
import { formatMs } from './format';

export const SPAN_KINDS: readonly SpanKind[] = ['stage', 'model', 'tool', 'approval', 'memory_read', 'memory_write', 'background'];

interface Props {
  spans: SpanRecord[];
  /** Epoch ms running spans extend to (a live turn); without it, to the latest known end. */
  now?: number;
  selected: string | null;
  onSelect: (spanId: string) => void;
}

const pct = (x: number) => `${(x * 100).toFixed(3)}%`;

/**
 * Where a bar's duration goes: after the bar while there is room, else before it, else (a bar
 * that fills the axis) inside it.
 */
function place(r: WaterfallRow): 'after' | 'before' | 'inside' {
  if (r.offset + r.width <= 0.85) return 'after';
  return r.offset >= 0.15 ? 'before' : 'inside';
}

function labelStyle(r: WaterfallRow): React.CSSProperties {
  const where = place(r);
  if (where === 'after') return { left: pct(r.offset + r.width) };
  if (where === 'before') return { right: pct(1 - r.offset) };
  return { left: pct(r.offset) };
}

/** The degradation reasons as words: `retry,fallback_model` → `retry, fallback model`. */
export function reasons(reason: string | null): string {
  return (reason ?? '')
    .split(',')
    .map((r) => r.trim().replace(/_/g, ' '))
    .filter(Boolean)
    .join(', ');
}

export function Legend() {
  const t = useT();
  return (
    <ul className="waterfall-legend" aria-label={t('trace.legend')} data-testid="waterfall-legend">
      {SPAN_KINDS.map((k) => (
        <li key={k}>
          <span className={`swatch kind-${k}`} aria-hidden="true" />
          {t(`trace.kind.${k}`)}
        </li>
      ))}
      <li>
        <span className="swatch degraded" aria-hidden="true" />
        {t('trace.legend.degraded')}
      </li>
      <li>
        <span className="swatch status-error" aria-hidden="true" />
        {t('trace.legend.error')}
      </li>
      <li>
        <span className="swatch after-turn" aria-hidden="true" />
        {t('trace.legend.afterTurn')}
      </li>
    </ul>
  );
}

export function Waterfall({ spans, now, selected, onSelect }: Props) {
  const t = useT();
  const w = useMemo(() => layout(spans, now === undefined ? {} : { now }), [spans, now]);
  return (
    <section className="waterfall" data-testid="waterfall" aria-label={t('trace.waterfall')}>
      <div className="waterfall-axis" aria-hidden="true">
        <span className="span-label" />
        <span className="waterfall-track">
          {w.ticks.map((tick) => (
            <span key={tick.ms} className={tick.offset > 0.92 ? 'tick end' : 'tick'} style={{ left: pct(tick.offset) }}>
              {formatMs(tick.ms)}
            </span>
          ))}
        </span>
      </div>
      <ol className="waterfall-rows">
        {w.rows.map((r) => {
          const s = r.span;
          const kind = s.kind ?? 'stage';
          const classes = ['span-row', `kind-${kind}`, `status-${s.status}`];
          if (s.degraded) classes.push('degraded');
          if (r.afterTurn) classes.push('after-turn');
          if (s.id === selected) classes.push('selected');
          const duration = r.open ? t('trace.span.stillRunning') : formatMs(s.duration_ms ?? 0);
          return (
            <li key={s.id}>
              <button
                type="button"
                className={classes.join(' ')}
                data-testid="span-row"
                data-span-id={s.id}
                data-kind={kind}
                data-status={s.status}
                aria-pressed={s.id === selected}
                title={`${s.name} · ${t(`trace.kind.${kind}`)} · ${duration}${r.orphan ? ` · ${t('trace.orphan')}` : ''}`}
                onClick={() => onSelect(s.id)}
              >
                <span className="span-label" style={{ paddingLeft: `${r.depth * 0.9 + 0.3}rem` }}>
                  <span className="span-name">{s.name}</span>
                  {s.degraded && (
                    <span className="span-degraded" data-testid="span-degraded">
                      ⚠ {reasons(s.degraded_reason) || t('trace.legend.degraded')}
                    </span>
                  )}
                  {r.orphan && <span className="span-orphan" title={t('trace.orphan')}>?</span>}
                </span>
                <span className="waterfall-track">
                  {w.turnEnd !== null && <span className="turn-end" style={{ left: pct(w.turnEnd) }} />}
                  <span className={`span-bar${r.open ? ' open' : ''}`} style={{ left: pct(r.offset), width: pct(r.width) }} />
                  <span className={`span-time${place(r) === 'inside' ? ' inside' : ''}`} style={labelStyle(r)}>
                    {duration}
                  </span>
                </span>
              </button>
            </li>
          );
        })}
      </ol>
      <Legend />
    </section>
  );
}
