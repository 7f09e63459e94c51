// The approval rules: the list (tool, pattern, decision, scope), removing one, and a form to
// add one. State and calls live in `RulesStore`.

import { useT } from '../../i18n';
import { DECISIONS, RulesStore, SCOPES } from '../../settings/rulesStore';
import { type SettingsTransport, oneOf } from '../../settings/store';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

interface RulesProps {
  transport: SettingsTransport;
  /** The selected chat session, offered for session rules. */
  session: string | null;
}

export function RulesPanel({ transport, session }: RulesProps) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new RulesStore(transport, session));
  const { rules, loadError, draft, formError, busy } = state;

  return (
    <section className="panel rules-panel" aria-labelledby="rules-heading">
      <h2 id="rules-heading">{t('rules.heading')}</h2>
      <p className="help">{t('rules.help')}</p>
      <LoadState loaded={rules !== undefined} error={loadError} />
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
            {rules.map((r) => (
              <tr key={r.id} data-rule-id={r.id}>
                <td><code>{r.tool}</code></td>
                <td>{r.pattern === null ? <span className="muted">{t('rules.any')}</span> : <code>{r.pattern}</code>}</td>
                <td><span className={`decision decision-${r.decision}`}>{t(`rules.decision.${r.decision}`)}</span></td>
                <td>
                  {r.scope === 'session'
                    ? t('rules.inSession', { name: r.session_id ?? '?' })
                    : t(`rules.scope.${r.scope}`)}
                </td>
                <td><code className="muted">{r.id}</code></td>
                <td>
                  <button type="button" className="danger remove-rule" onClick={() => void store.remove(r.id)}>
                    {t('rules.remove')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        className="rule-form"
        onSubmit={(e) => {
          e.preventDefault();
          void store.add();
        }}
      >
        <label>
          <span>{t('rules.tool')}</span>
          <input
            name="tool"
            value={draft.tool}
            required
            placeholder="shell"
            onChange={(e) => store.editDraft({ tool: e.target.value })}
          />
        </label>
        <label>
          <span>{t('rules.pattern')}</span>
          <input
            name="pattern"
            value={draft.pattern}
            placeholder={t('rules.patternPlaceholder')}
            onChange={(e) => store.editDraft({ pattern: e.target.value })}
          />
        </label>
        <label>
          <span>{t('rules.decision')}</span>
          <select
            name="decision"
            value={draft.decision}
            onChange={(e) => {
              const decision = oneOf(DECISIONS, e.target.value);
              if (decision) store.editDraft({ decision });
            }}
          >
            {DECISIONS.map((d) => (
              <option key={d} value={d}>{t(`rules.decision.${d}`)}</option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('rules.scope')}</span>
          <select
            name="scope"
            value={draft.scope}
            onChange={(e) => {
              const scope = oneOf(SCOPES, e.target.value);
              if (scope) store.editDraft({ scope });
            }}
          >
            {SCOPES.map((s) => (
              <option key={s} value={s}>{t(`rules.scope.${s}`)}</option>
            ))}
          </select>
        </label>
        {draft.scope === 'session' && (
          <label>
            <span>{t('rules.session')}</span>
            <input name="session" value={draft.session} onChange={(e) => store.editDraft({ session: e.target.value })} />
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
