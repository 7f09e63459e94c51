// The MCP servers: the configured list with each one's live state (env and header names,
// never their values), and an editor; every change sends the whole list, which the engine
// saves and applies at once. State, calls and the polling while servers start live in
// `McpStore`.

import type { McpServerConfig, McpServerStatus } from '../../generated/engine';
import { useT } from '../../i18n';
import { commandLine } from '../../mcpForm';
import { type McpFailure, McpStore, isHttp } from '../../settings/mcpStore';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from './LoadState';
import { McpServerForm } from './McpServerForm';
import { useSettingsStore } from './useSettingsStore';

function McpStateCell({ status }: { status: McpServerStatus | undefined }) {
  const t = useT();
  if (!status) return <span className="muted">{t('mcp.state.unknown')}</span>;
  return (
    <>
      <span className={`state state-${status.state}`}>{t(`mcp.state.${status.state}`)}</span>
      {status.restarts > 0 && <span className="muted"> · {t('mcp.restarted', { count: status.restarts })}</span>}
      {status.error && <div className="error-text">{status.error}</div>}
    </>
  );
}

/** One configured server: how it runs, with env and header names but never their values. */
function McpRunsCell({ config }: { config: McpServerConfig }) {
  const t = useT();
  const env = Object.keys(config.env);
  const headers = Object.keys(config.headers);
  return (
    <>
      <span className="badge mcp-kind">{isHttp(config) ? t('mcp.kind.http') : t('mcp.kind.stdio')}</span>{' '}
      <code className="mcp-target">{isHttp(config) ? config.url : commandLine(config)}</code>
      {env.length > 0 && <div className="mcp-secret-names">{t('mcp.envKeys', { keys: env.join(', ') })}</div>}
      {headers.length > 0 && (
        <div className="mcp-secret-names">{t('mcp.headerNames', { names: headers.join(', ') })}</div>
      )}
    </>
  );
}

export function McpPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new McpStore(transport));
  const { configs, states, editing, busy, saved, failure } = state;
  const failureText = (f: McpFailure) => ('problem' in f ? t(f.problem.key, f.problem.vars) : f.message);

  return (
    <section className="panel mcp-panel" aria-labelledby="mcp-heading">
      <div className="panel-head">
        <h2 id="mcp-heading">{t('mcp.heading')}</h2>
        <div className="form-actions">
          <button type="button" className="refresh-mcp" onClick={() => void store.refresh()}>
            {t('mcp.refresh')}
          </button>
          <button
            type="button"
            data-testid="mcp-add"
            disabled={configs === undefined || busy}
            onClick={() => store.openNew()}
          >
            {t('mcp.add')}
          </button>
        </div>
      </div>
      <p className="help">{t('mcp.hint')}</p>
      <LoadState loaded={configs !== undefined} error={state.configError ?? state.statesError} />
      {configs && configs.length === 0 && <p className="muted mcp-empty">{t('mcp.empty')}</p>}
      {configs && configs.length > 0 && (
        <table className="settings-table mcp-servers">
          <thead>
            <tr>
              <th>{t('mcp.name')}</th>
              <th>{t('mcp.runs')}</th>
              <th>{t('mcp.state')}</th>
              <th>{t('mcp.tools')}</th>
              <th>{t('mcp.enabled')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {configs.map((c) => {
              const status = states?.find((s) => s.name === c.name);
              return (
                <tr key={c.name} data-server={c.name} className={c.enabled ? undefined : 'off'}>
                  <td><code>{c.name}</code></td>
                  <td className="mcp-runs"><McpRunsCell config={c} /></td>
                  <td><McpStateCell status={status} /></td>
                  <td>{status ? status.tools : ''}</td>
                  <td>
                    <input
                      type="checkbox"
                      data-testid="mcp-toggle"
                      checked={c.enabled}
                      disabled={busy}
                      aria-label={t('mcp.toggleLabel', { name: c.name })}
                      onChange={() => void store.toggle(c.name)}
                    />
                  </td>
                  <td className="row-actions">
                    <button
                      type="button"
                      data-testid="mcp-edit"
                      aria-label={t('mcp.editLabel', { name: c.name })}
                      disabled={busy}
                      onClick={() => store.openEdit(c.name)}
                    >
                      {t('mcp.edit')}
                    </button>
                    <button
                      type="button"
                      className="danger"
                      data-testid="mcp-remove"
                      aria-label={t('mcp.removeLabel', { name: c.name })}
                      disabled={busy}
                      onClick={() => void store.remove(c.name)}
                    >
                      {t('mcp.remove')}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {editing && (
        <McpServerForm
          key={editing.original === null ? 'new' : `edit:${editing.original}`}
          editing={editing}
          busy={busy}
          onChange={(patch) => store.change(patch)}
          onSubmit={(e) => {
            e.preventDefault();
            void store.submit();
          }}
          onCancel={() => store.cancel()}
        />
      )}
      {saved && (
        <p className="saved" data-testid="mcp-saved" role="status">
          {t('mcp.saved')}
        </p>
      )}
      {failure && (
        <p className="turn-error" data-testid="mcp-error" role="alert">
          {t('mcp.failed', { message: failureText(failure) })}
        </p>
      )}
    </section>
  );
}
