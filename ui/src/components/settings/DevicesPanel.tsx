// Devices that reach `echod serve` with tokens of their own: each with its state and when it
// was last seen, Revoke, a form that makes a one-time pairing code, and the recent sign-ins
// (what happened at the server's door, and from where). State and calls live in
// `DevicesStore`.

import type { FormEvent } from 'react';
import { useT } from '../../i18n';
import { DevicesStore } from '../../settings/devicesStore';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

function when(time: string | null): string {
  return time ? new Date(time).toLocaleString() : '—';
}

export function DevicesPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new DevicesStore(transport));
  const { devices, events, loadError, name, pairing, formError, busy } = state;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void store.pair();
  };
  return (
    <section className="panel devices-panel" aria-labelledby="devices-heading">
      <h2 id="devices-heading">{t('devices.heading')}</h2>
      <p className="help">{t('devices.help')}</p>
      <LoadState loaded={devices !== undefined} error={loadError} />
      {devices && devices.length === 0 && <p className="muted">{t('devices.empty')}</p>}
      {devices && devices.length > 0 && (
        <table className="settings-table devices">
          <thead>
            <tr>
              <th>{t('devices.name')}</th>
              <th>{t('devices.state')}</th>
              <th>{t('devices.lastSeen')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {devices.map((d) => (
              <tr key={d.id} data-device-id={d.id}>
                <td>{d.name}</td>
                <td>{t(`devices.state.${d.state}`)}</td>
                <td>{when(d.last_seen_at)}</td>
                <td>
                  {d.state !== 'revoked' && (
                    <button type="button" className="danger revoke-device" disabled={busy} onClick={() => void store.revoke(d.id)}>
                      {t('devices.revoke')}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="device-pair" onSubmit={submit}>
        <label>
          {t('devices.newName')}
          <input value={name} onChange={(e) => store.editName(e.target.value)} placeholder={t('devices.namePlaceholder')} />
        </label>
        <button type="submit" disabled={busy}>
          {t('devices.pair')}
        </button>
      </form>
      {pairing && (
        <p className="notice device-code" role="status">
          {t('devices.code', { name: pairing.device.name })} <code data-testid="device-code">{pairing.code}</code>{' '}
          {t('devices.codeHelp', { until: when(pairing.device.code_expires_at) })}
        </p>
      )}
      {formError && (
        <p className="error" role="alert">
          {formError}
        </p>
      )}
      {events && events.length > 0 && (
        <>
          <h3 id="sign-ins-heading">{t('devices.signIns')}</h3>
          <table className="settings-table sign-ins" aria-labelledby="sign-ins-heading">
            <thead>
              <tr>
                <th>{t('devices.signIns.when')}</th>
                <th>{t('devices.signIns.what')}</th>
                <th>{t('devices.name')}</th>
                <th>{t('devices.signIns.from')}</th>
              </tr>
            </thead>
            <tbody>
              {events.map((e) => (
                <tr key={e.id} data-kind={e.kind}>
                  <td>{when(e.at)}</td>
                  <td>{t(`devices.event.${e.kind}`)}</td>
                  <td>{e.device_name ?? '—'}</td>
                  <td>{e.peer ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
