// The approval audit log: the most recent gate decisions, newest first.

import { useT } from '../../i18n';
import { AuditStore } from '../../settings/auditStore';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

export function AuditPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [{ entries, loadError }] = useSettingsStore(() => new AuditStore(transport));
  return (
    <section className="panel audit-panel" aria-labelledby="audit-heading">
      <h2 id="audit-heading">{t('audit.heading')}</h2>
      <LoadState loaded={entries !== undefined} error={loadError} />
      {entries && entries.length === 0 && <p className="muted">{t('audit.empty')}</p>}
      {entries && entries.length > 0 && (
        <table className="settings-table">
          <thead>
            <tr>
              <th>{t('audit.time')}</th>
              <th>{t('audit.tool')}</th>
              <th>{t('audit.decision')}</th>
              <th>{t('audit.decidedBy')}</th>
              <th>{t('audit.reason')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((a) => (
              <tr key={a.id}>
                <td><time dateTime={a.created_at}>{new Date(a.created_at).toLocaleString()}</time></td>
                <td><code>{a.tool}</code></td>
                <td><span className={`decision decision-${a.decision}`}>{a.decision}</span></td>
                <td>{a.decided_by}</td>
                <td>{a.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
