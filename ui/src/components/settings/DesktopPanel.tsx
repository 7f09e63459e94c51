// The desktop app's quick-ask shortcut: the one in force, whether the system took it, and a
// field to change it. Shown in the desktop app only. State and calls live in `ShortcutStore`.

import type { ShortcutStatus } from '../../generated/engine';
import { useT } from '../../i18n';
import { type ShortcutBridge, type ShortcutState, ShortcutStore, canApply } from '../../settings/desktopStore';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

function ShortcutEditor({ store, state, status }: { store: ShortcutStore; state: ShortcutState; status: ShortcutStatus }) {
  const t = useT();
  return (
    <form
      className="shortcut-form"
      onSubmit={(e) => {
        e.preventDefault();
        void store.apply();
      }}
    >
      <label>
        <span>{t('desktop.shortcut')}</span>
        <input
          data-testid="shortcut-input"
          value={state.value}
          spellCheck={false}
          onChange={(e) => store.setValue(e.target.value)}
        />
      </label>
      <button type="submit" className="primary" data-testid="shortcut-apply" disabled={!canApply(state)}>
        {t('desktop.apply')}
      </button>
      <p
        className={status.registered ? 'shortcut-status ok' : 'shortcut-status failed'}
        data-testid="shortcut-status"
        data-registered={status.registered}
      >
        {status.registered
          ? t('desktop.registered', { shortcut: status.shortcut })
          : status.error
            ? t('desktop.notRegisteredBecause', { error: status.error })
            : t('desktop.notRegistered')}
      </p>
      {state.failure && (
        <p className="turn-error" data-testid="shortcut-error" role="alert">
          {t('desktop.failed', { message: state.failure })}
        </p>
      )}
    </form>
  );
}

export function DesktopPanel({ desktop }: { desktop: ShortcutBridge }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new ShortcutStore(desktop));
  const { status } = state;
  return (
    <section className="panel desktop-panel" aria-labelledby="desktop-heading">
      <h2 id="desktop-heading">{t('desktop.heading')}</h2>
      <p className="help">{t('desktop.help')}</p>
      <LoadState loaded={status !== undefined} error={state.loadError} />
      {status && <ShortcutEditor store={store} state={state} status={status} />}
    </section>
  );
}
