// How the open memory fades: the engine's curve of its effective importance (memory_fading),
// solid up to now and dashed from now on, the threshold below which the sweep archives it,
// the times it was used in prompts (ticks on the time axis), now, and its expiry. The
// geometry is `fadingChart`; this only draws it and says the same in words.

import type { Fading } from '../../generated/engine';
import { useT } from '../../i18n';
import { CHART_BOX, fadingChart, polyline } from '../../memory/fadingChart';
import { percent, when } from './format';

const day = (ms: number) => new Date(ms).toLocaleDateString();

export function FadingChart({ fading: f }: { fading: Fading }) {
  const t = useT();
  const c = fadingChart(f);
  const box = CHART_BOX;
  const bottom = box.height - box.bottom;
  const right = box.width - box.right;
  const summary = f.archives_at
    ? t(f.archive_reason === 'expired' ? 'memory.fading.expires' : 'memory.fading.fades', { time: when(f.archives_at) })
    : f.pinned
      ? t('memory.fading.pinned')
      : t('memory.fading.stays');
  return (
    <figure className="fading" data-testid="memory-fading">
      <svg
        viewBox={`0 0 ${box.width} ${box.height}`}
        role="img"
        aria-labelledby="fading-caption"
        data-testid="fading-chart"
      >
        <line className="fading-axis" x1={box.left} y1={bottom} x2={right} y2={bottom} />
        <line className="fading-axis" x1={box.left} y1={box.top} x2={box.left} y2={bottom} />
        <text className="fading-label" x={box.left - 3} y={box.top + 4} textAnchor="end">{percent(c.top)}</text>
        <text className="fading-label" x={box.left - 3} y={bottom} textAnchor="end">0</text>
        <text className="fading-label" x={box.left} y={box.height - 3}>{day(c.start)}</text>
        <text className="fading-label" x={right} y={box.height - 3} textAnchor="end">{day(c.end)}</text>
        <line className="fading-threshold" data-testid="fading-threshold" x1={box.left} y1={c.thresholdY} x2={right} y2={c.thresholdY}>
          <title>{t('memory.fading.threshold', { value: percent(f.archive_below) })}</title>
        </line>
        {c.past.length > 0 && <polyline className="fading-past" data-testid="fading-past" points={polyline(c.past)} />}
        {c.projected.length > 0 && <polyline className="fading-projected" data-testid="fading-projected" points={polyline(c.projected)} />}
        {c.uses.map((u, i) => (
          <line key={`${u.at} ${i}`} className="fading-use" data-testid="fading-use" x1={u.x} y1={bottom} x2={u.x} y2={bottom - 6}>
            <title>{t('memory.fading.used', { time: when(u.at) })}</title>
          </line>
        ))}
        <line className="fading-now" data-testid="fading-now" x1={c.now.x} y1={box.top} x2={c.now.x} y2={bottom}>
          <title>{t('memory.fading.now', { value: percent(f.effective_now) })}</title>
        </line>
        <text className="fading-label" x={c.now.x + 2} y={box.top + 4}>{t('memory.fading.nowLabel')}</text>
        {c.expiry && (
          <g className="fading-expiry" data-testid="fading-expiry" data-beyond={c.expiry.beyond}>
            <line x1={c.expiry.x} y1={box.top} x2={c.expiry.x} y2={bottom} />
            <path d={`M ${c.expiry.x - 4} ${box.top} L ${c.expiry.x + 4} ${box.top} L ${c.expiry.x} ${box.top + 6} Z`} />
            <title>{t('memory.fading.expiry', { time: when(c.expiry.at) })}</title>
          </g>
        )}
      </svg>
      <figcaption id="fading-caption">
        <span className="fading-legend">
          <span className="swatch past" />{t('memory.fading.legendPast')}
          <span className="swatch projected" />{t('memory.fading.legendProjected')}
          <span className="swatch threshold" />{t('memory.fading.legendThreshold', { value: percent(f.archive_below) })}
          <span className="swatch use" />{t('memory.fading.legendUses', { count: f.uses.length })}
        </span>
        <span data-testid="fading-summary">{summary}</span>
      </figcaption>
    </figure>
  );
}
