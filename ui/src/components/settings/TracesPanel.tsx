// Trace capture and retention: whether each model call's exact request and response are kept
// (for the Traces page), and for how many days. State and calls live in `TraceSettingsStore`.

import { useT } from '../../i18n';
import type { SettingsTransport } from '../../settings/store';
import { TraceSettingsStore, daysValid, noticeValid } from '../../settings/traceSettingsStore';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

export function TracesPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new TraceSettingsStore(transport));
  const { settings, capture, days, notice, busy, failure, saved } = state;
  const valid = daysValid(state);
  const noticeOk = noticeValid(state);
  return (
    <section className="panel traces-panel" aria-labelledby="traces-settings-heading">
      <h2 id="traces-settings-heading">{t('traceSettings.heading')}</h2>
      <p className="help">{t('traceSettings.help')}</p>
      <LoadState loaded={settings !== undefined} error={state.loadError} />
      {settings && (
        <form
          className="field-grid"
          onSubmit={(e) => {
            e.preventDefault();
            void store.save();
          }}
        >
          <label className="check">
            <input
              type="checkbox"
              data-testid="trace-capture"
              checked={capture}
              onChange={(e) => store.setCapture(e.target.checked)}
            />
            {t('traceSettings.capture')}
          </label>
          <label className="field">
            <span>{t('traceSettings.days')}</span>
            <input
              data-testid="trace-retention"
              inputMode="numeric"
              value={days}
              aria-invalid={!valid}
              onChange={(e) => store.setDays(e.target.value)}
            />
            <small>{t('traceSettings.daysHelp')}</small>
          </label>
          {!valid && (
            <p className="turn-error wide" data-testid="trace-retention-invalid" role="alert">
              {t('traceSettings.daysInvalid')}
            </p>
          )}
          <label className="field">
            <span>{t('traceSettings.notice')}</span>
            <input
              data-testid="trace-notice"
              inputMode="numeric"
              value={notice}
              aria-invalid={!noticeOk}
              onChange={(e) => store.setNotice(e.target.value)}
            />
            <small>{t('traceSettings.noticeHelp')}</small>
          </label>
          {!noticeOk && (
            <p className="turn-error wide" data-testid="trace-notice-invalid" role="alert">
              {t('traceSettings.noticeInvalid')}
            </p>
          )}
          <div className="wide buttons">
            <button type="submit" className="primary" data-testid="trace-settings-save" disabled={busy || !valid || !noticeOk}>
              {t('traceSettings.save')}
            </button>
          </div>
        </form>
      )}
      {saved && <p className="saved" data-testid="trace-settings-saved" role="status">{t('traceSettings.saved')}</p>}
      {failure && (
        <p className="turn-error" data-testid="trace-settings-error" role="alert">{t('traceSettings.failed', { message: failure })}</p>
      )}
    </section>
  );
}
