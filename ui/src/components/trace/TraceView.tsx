// The trace page: "why did it say that?". The turns on the left (filtered), the open turn on
// the right — its summary, the waterfall of its spans, and the selected span in detail with,
// for a model call, exactly what was sent and received. Other pages open a turn here
// (`turnId`); the session links back to its conversation and memory ids to the memory page.
// State and calls live in `TraceStore`.

import { useCallback, useEffect } from 'react';
import { useT } from '../../i18n';
import type { SettingsTransport } from '../../settings/store';
import { type Download, type TraceFilters as Filters, TraceStore, isLive } from '../../trace/traceStore';
import { LoadState } from '../settings/LoadState';
import { DegradationRates } from './DegradationRates';
import { SpanDetail } from './SpanDetail';
import { TraceFilters } from './TraceFilters';
import { TraceList } from './TraceList';
import { TurnSummary } from './TurnSummary';
import { useTraceStore } from './useTraceStore';
import { Waterfall } from './Waterfall';

interface Props {
  transport: SettingsTransport;
  /** A turn to open (a chat message's "Show trace"). */
  turnId?: string | null;
  /** Session names the session filter offers. */
  sessions?: readonly string[];
  onOpenChat?: (session: string) => void;
  onOpenMemory?: (memoryId: string) => void;
  /** How an exported case is saved (the browser's download unless a test passes one). */
  download?: Download;
}

export function TraceView({ transport, turnId, sessions = [], onOpenChat, onOpenMemory, download }: Props) {
  const t = useT();
  const [state, store] = useTraceStore(() => new TraceStore(transport, download ? { download } : {}));
  const { turns, listError, openId, trace, traceError, selected } = state;
  const onFilter = useCallback((change: Partial<Filters>) => void store.setFilters(change), [store]);
  useEffect(() => {
    if (turnId) void store.open(turnId);
  }, [turnId, store]);

  const span = trace && selected ? trace.spans.find((s) => s.id === selected) : undefined;
  const now = trace && isLive(trace, Date.now()) ? Date.now() : undefined;
  const rootStart = trace ? Date.parse(trace.spans.find((s) => s.parent_id === null)?.started_at ?? trace.turn.started_at ?? '') : Number.NaN;

  return (
    <div className="traces" data-testid="traces">
      <div className="traces-head">
        <h2>{t('trace.heading')}</h2>
        <p className="help">{t('trace.help')}</p>
      </div>
      <TraceFilters
        filters={state.filters}
        sessions={sessions}
        onChange={onFilter}
        onReset={() => void store.resetFilters()}
        onRefresh={() => void store.load()}
      />
      <div className="traces-body">
        <div className="traces-list-pane">
          {turns !== undefined && <DegradationRates transport={transport} refresh={turns} />}
          {(listError || turns === undefined) && <LoadState loaded={turns !== undefined} error={listError} />}
          {turns?.length === 0 && <p className="muted" data-testid="trace-empty">{t('trace.empty')}</p>}
          {turns && turns.length > 0 && <TraceList turns={turns} openId={openId} onOpen={(id) => void store.open(id)} />}
        </div>
        <div className="traces-trace-pane" data-testid="trace-pane">
          {openId === null && <p className="muted">{t('trace.pickOne')}</p>}
          {openId !== null && traceError && (
            <p className="banner error" role="alert">{t('settings.loadFailed', { message: traceError })}</p>
          )}
          {openId !== null && !trace && !traceError && <p className="muted">{t('trace.loadingTrace')}</p>}
          {trace && (
            <>
              <TurnSummary
                turn={trace.turn}
                exporting={state.exporting}
                exported={state.exported}
                exportError={state.exportError}
                onExport={() => void store.exportCase()}
                onDismissExport={() => store.dismissExport()}
                onOpenChat={onOpenChat}
                onClose={() => store.close()}
              />
              <Waterfall spans={trace.spans} now={now} selected={selected} onSelect={(id) => void store.select(id)} />
              {span ? (
                <SpanDetail
                  key={span.id}
                  span={span}
                  turnStart={Number.isNaN(rootStart) ? null : rootStart}
                  call={state.calls[span.id]}
                  onRetryCall={() => void store.loadCall(span.id)}
                  onOpenMemory={onOpenMemory}
                />
              ) : (
                <p className="muted">{t('trace.span.pick')}</p>
              )}
            </>
          )}
        </div>
      </div>
    </div>
  );
}
