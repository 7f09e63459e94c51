// The settings view: approval rules (list, add, remove), the MCP servers' status and the
// recent gate decisions. Each panel loads its own data through the transport.

import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { type MessageKey, useT } from '../i18n';
import type { AuditEntry, McpServerStatus, Rule, RuleDecision, RuleScope } from '../settingsTypes';
import type { Transport } from '../transport';

type SettingsTransport = Pick<Transport, 'listRules' | 'addRule' | 'removeRule' | 'mcpServers' | 'approvals'>;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Loads `load()` on mount and on `reload()`; keeps the last value or the error. */
function useLoaded<T>(load: () => Promise<T>) {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setValue(await load());
      setError(null);
    } catch (e) {
      setError(message(e));
    }
  }, [load]);
  useEffect(() => {
    let live = true;
    load().then(
      (v) => live && (setValue(v), setError(null)),
      (e: unknown) => live && setError(message(e)),
    );
    return () => {
      live = false;
    };
  }, [load]);
  return { value, error, reload };
}

function LoadState({ loaded, error }: { loaded: boolean; error: string | null }) {
  const t = useT();
  if (error) return <p className="banner error" role="alert">{t('settings.loadFailed', { message: error })}</p>;
  if (!loaded) return <p className="muted">{t('settings.loading')}</p>;
  return null;
}

const DECISIONS: RuleDecision[] = ['allow', 'ask', 'deny'];
const SCOPES: RuleScope[] = ['always', 'session'];

interface RulesProps {
  transport: SettingsTransport;
  /** The selected chat session, offered for session rules. */
  session: string | null;
}

export function RulesPanel({ transport, session }: RulesProps) {
  const t = useT();
  const load = useCallback(() => transport.listRules(), [transport]);
  const { value: rules, error, reload } = useLoaded(load);
  const [tool, setTool] = useState('');
  const [pattern, setPattern] = useState('');
  const [decision, setDecision] = useState<RuleDecision>('allow');
  const [scope, setScope] = useState<RuleScope>('always');
  const [sessionName, setSessionName] = useState(session ?? '');
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await transport.addRule({
        tool: tool.trim(),
        ...(pattern.trim() ? { pattern: pattern.trim() } : {}),
        decision,
        scope,
        ...(scope === 'session' && sessionName.trim() ? { session: sessionName.trim() } : {}),
      });
      setFormError(null);
      setTool('');
      setPattern('');
      await reload();
    } catch (err) {
      setFormError(message(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (id: string) => {
    try {
      await transport.removeRule(id);
      setFormError(null);
    } catch (err) {
      setFormError(message(err));
    }
    await reload();
  };

  return (
    <section className="panel rules-panel" aria-labelledby="rules-heading">
      <h2 id="rules-heading">{t('rules.heading')}</h2>
      <p className="help">{t('rules.help')}</p>
      <LoadState loaded={rules !== undefined} error={error} />
      {rules && rules.length === 0 && <p className="muted rules-empty">{t('rules.empty')}</p>}
      {rules && rules.length > 0 && (
        <table className="settings-table rules">
          <thead>
            <tr>
              <th>{t('rules.tool')}</th>
              <th>{t('rules.pattern')}</th>
              <th>{t('rules.decision')}</th>
              <th>{t('rules.scope')}</th>
              <th>{t('rules.id')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rules.map((r: Rule) => (
              <tr key={r.id} data-rule-id={r.id}>
                <td><code>{r.tool}</code></td>
                <td>{r.pattern === null ? <span className="muted">{t('rules.any')}</span> : <code>{r.pattern}</code>}</td>
                <td><span className={`decision decision-${r.decision}`}>{t(`rules.decision.${r.decision}` as MessageKey)}</span></td>
                <td>
                  {r.scope === 'session'
                    ? t('rules.inSession', { name: r.session_id ?? '?' })
                    : t(`rules.scope.${r.scope}` as MessageKey)}
                </td>
                <td><code className="muted">{r.id}</code></td>
                <td>
                  <button type="button" className="danger remove-rule" onClick={() => void remove(r.id)}>
                    {t('rules.remove')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="rule-form" onSubmit={(e) => void submit(e)}>
        <label>
          <span>{t('rules.tool')}</span>
          <input name="tool" value={tool} required placeholder="shell" onChange={(e) => setTool(e.target.value)} />
        </label>
        <label>
          <span>{t('rules.pattern')}</span>
          <input
            name="pattern"
            value={pattern}
            placeholder={t('rules.patternPlaceholder')}
            onChange={(e) => setPattern(e.target.value)}
          />
        </label>
        <label>
          <span>{t('rules.decision')}</span>
          <select name="decision" value={decision} onChange={(e) => setDecision(e.target.value as RuleDecision)}>
            {DECISIONS.map((d) => (
              <option key={d} value={d}>{t(`rules.decision.${d}` as MessageKey)}</option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('rules.scope')}</span>
          <select name="scope" value={scope} onChange={(e) => setScope(e.target.value as RuleScope)}>
            {SCOPES.map((s) => (
              <option key={s} value={s}>{t(`rules.scope.${s}` as MessageKey)}</option>
            ))}
          </select>
        </label>
        {scope === 'session' && (
          <label>
            <span>{t('rules.session')}</span>
            <input name="session" value={sessionName} onChange={(e) => setSessionName(e.target.value)} />
          </label>
        )}
        <button type="submit" className="primary add-rule" disabled={busy}>
          {t('rules.add')}
        </button>
      </form>
      {formError && <p className="turn-error rule-error" role="alert">{t('rules.failed', { message: formError })}</p>}
    </section>
  );
}

export function McpPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const load = useCallback(() => transport.mcpServers(), [transport]);
  const { value: servers, error, reload } = useLoaded(load);
  return (
    <section className="panel mcp-panel" aria-labelledby="mcp-heading">
      <div className="panel-head">
        <h2 id="mcp-heading">{t('mcp.heading')}</h2>
        <button type="button" className="refresh-mcp" onClick={() => void reload()}>
          {t('mcp.refresh')}
        </button>
      </div>
      <p className="help">{t('mcp.hint')}</p>
      <LoadState loaded={servers !== undefined} error={error} />
      {servers && servers.length === 0 && <p className="muted mcp-empty">{t('mcp.empty')}</p>}
      {servers && servers.length > 0 && (
        <table className="settings-table">
          <thead>
            <tr>
              <th>{t('mcp.name')}</th>
              <th>{t('mcp.transport')}</th>
              <th>{t('mcp.state')}</th>
              <th>{t('mcp.tools')}</th>
              <th>{t('mcp.restarts')}</th>
              <th>{t('mcp.error')}</th>
            </tr>
          </thead>
          <tbody>
            {servers.map((s: McpServerStatus) => (
              <tr key={s.name} data-server={s.name}>
                <td><code>{s.name}</code></td>
                <td>{s.transport}</td>
                <td><span className={`state state-${s.state}`}>{s.state}</span></td>
                <td>{s.tools}</td>
                <td>{s.restarts}</td>
                <td className="error-text">{s.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function RecentApprovals({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const load = useCallback(() => transport.approvals(20), [transport]);
  const { value: entries, error } = useLoaded(load);
  return (
    <section className="panel audit-panel" aria-labelledby="audit-heading">
      <h2 id="audit-heading">{t('audit.heading')}</h2>
      <LoadState loaded={entries !== undefined} error={error} />
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
            {entries.map((a: AuditEntry) => (
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

interface Props {
  transport: SettingsTransport;
  session: string | null;
}

export function SettingsView({ transport, session }: Props) {
  return (
    <div className="settings">
      <RulesPanel transport={transport} session={session} />
      <McpPanel transport={transport} />
      <RecentApprovals transport={transport} />
    </div>
  );
}
