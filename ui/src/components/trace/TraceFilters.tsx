// The trace list's filters: session (by name, the known ones offered), status, degraded,
// model, whether approvals were asked, and a time range. Typed fields apply a moment after
// typing stops; every change asks the engine again.

import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useT } from '../../i18n';
import { oneOf } from '../../settings/store';
import { TRI, TURN_STATUSES, type TraceFilters as Filters } from '../../trace/traceStore';

/** How long typing must pause before a typed filter is applied (ms). */
const TEXT_DELAY = 300;

interface Props {
  filters: Filters;
  /** Session names to offer. */
  sessions: readonly string[];
  onChange: (change: Partial<Filters>) => void;
  onReset: () => void;
  onRefresh: () => void;
}

/** A text field applied after a pause (or on Enter). */
function useTyped(value: string, apply: (v: string) => void): [string, (v: string) => void] {
  const [typed, setTyped] = useState(value);
  const [last, setLast] = useState(value);
  const applyLatest = useRef(apply);
  useLayoutEffect(() => {
    applyLatest.current = apply;
  });
  if (value !== last) {
    // Changed from outside (reset): show the new value.
    setLast(value);
    setTyped(value);
  }
  useEffect(() => {
    if (typed === value) return;
    const timer = setTimeout(() => applyLatest.current(typed), TEXT_DELAY);
    return () => clearTimeout(timer);
  }, [typed, value]);
  return [typed, setTyped];
}

export function TraceFilters({ filters, sessions, onChange, onReset, onRefresh }: Props) {
  const t = useT();
  const [session, setSession] = useTyped(filters.session, (v) => onChange({ session: v }));
  const [model, setModel] = useTyped(filters.model, (v) => onChange({ model: v }));
  const tri = (name: 'degraded' | 'approvals', label: string) => (
    <label>
      <span>{label}</span>
      <select name={name} value={filters[name]} onChange={(e) => onChange({ [name]: oneOf(TRI, e.target.value) ?? 'any' })}>
        {TRI.map((x) => <option key={x} value={x}>{t(`trace.filter.${x}`)}</option>)}
      </select>
    </label>
  );

  return (
    <form
      className="trace-filters"
      role="search"
      data-testid="trace-filters"
      onSubmit={(e) => {
        e.preventDefault();
        onChange({ session, model });
      }}
    >
      <label>
        <span>{t('trace.filter.session')}</span>
        <input name="session" list="trace-sessions" value={session} onChange={(e) => setSession(e.target.value)} />
        <datalist id="trace-sessions">
          {sessions.map((s) => <option key={s} value={s} />)}
        </datalist>
      </label>
      <label>
        <span>{t('trace.filter.status')}</span>
        <select name="status" value={filters.status} onChange={(e) => onChange({ status: oneOf(TURN_STATUSES, e.target.value) ?? '' })}>
          <option value="">{t('trace.filter.any')}</option>
          {TURN_STATUSES.map((x) => <option key={x} value={x}>{t(`trace.status.${x}`)}</option>)}
        </select>
      </label>
      {tri('degraded', t('trace.filter.degraded'))}
      <label>
        <span>{t('trace.filter.model')}</span>
        <input name="model" value={model} onChange={(e) => setModel(e.target.value)} />
      </label>
      {tri('approvals', t('trace.filter.approvals'))}
      <label>
        <span>{t('trace.filter.since')}</span>
        <input name="since" type="datetime-local" value={filters.since} onChange={(e) => onChange({ since: e.target.value })} />
      </label>
      <label>
        <span>{t('trace.filter.until')}</span>
        <input name="until" type="datetime-local" value={filters.until} onChange={(e) => onChange({ until: e.target.value })} />
      </label>
      <button type="button" onClick={onReset}>{t('trace.filter.reset')}</button>
      <button type="button" data-testid="trace-refresh" onClick={onRefresh}>{t('trace.refresh')}</button>
    </form>
  );
}
