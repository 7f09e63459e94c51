// Web search: the service behind the `web_search` tool and research (none, a SearXNG
// instance, Brave Search or Tavily), its address, results per search and key; test and save.
// Whether it works now, or why not, is said above the form. State and calls live in
// `SearchStore`.

import { useT } from '../../i18n';
import type { SearchKind, SearchView } from '../../generated/engine';
import { SearchStore, type SearchState, parseMaxResults } from '../../settings/searchStore';
import type { SettingsTransport } from '../../settings/store';
import { oneOf } from '../../settings/store';
import { KeySourceNote } from './KeySourceNote';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

const keyed = (kind: SearchKind) => kind === 'brave' || kind === 'tavily';

/** Whether search works now, or why not. */
function SearchStateNote({ view }: { view: SearchView }) {
  const t = useT();
  if (view.available) {
    return (
      <p className="help" data-testid="search-state" data-available="true">
        {t('search.available', { url: view.service_url ?? '' })}
      </p>
    );
  }
  return (
    <p className="notice warn" data-testid="search-state" data-available="false">
      {view.problem ? t('search.unavailable', { problem: view.problem }) : t('search.off')}
    </p>
  );
}

function SearchForm({ store, state, view }: { store: SearchStore; state: SearchState; view: SearchView }) {
  const t = useT();
  const { form, busy, tested, notice, saveError } = state;
  if (!form) return null;
  const locked = view.env_overrides.length > 0;
  const maxOk = parseMaxResults(form.maxResults) !== null;
  const needsUrl = form.kind === 'searxng';
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void store.save();
      }}
    >
      <fieldset className="field-grid" disabled={locked}>
        <label>
          <span>{t('search.kind')}</span>
          <select
            data-testid="search-kind"
            value={form.kind}
            onChange={(e) => store.edit({ kind: oneOf(view.kinds, e.target.value) ?? form.kind })}
          >
            {view.kinds.map((kind) => (
              <option key={kind} value={kind}>
                {t(`search.kind.${kind}`)}
              </option>
            ))}
          </select>
        </label>
        {form.kind !== 'none' && (
          <label>
            <span>{needsUrl ? t('search.url') : t('search.proxyUrl')}</span>
            <input
              data-testid="search-url"
              type="url"
              value={form.url}
              required={needsUrl}
              placeholder={needsUrl ? 'http://127.0.0.1:8888/' : t('search.proxyPlaceholder')}
              onChange={(e) => store.edit({ url: e.target.value })}
            />
          </label>
        )}
        {form.kind !== 'none' && (
          <label>
            <span>{t('search.maxResults')}</span>
            <input
              data-testid="search-max-results"
              inputMode="numeric"
              value={form.maxResults}
              aria-invalid={!maxOk}
              onChange={(e) => store.edit({ maxResults: e.target.value })}
            />
          </label>
        )}
        {keyed(form.kind) && (
          <label>
            <span>{t('search.apiKey')}</span>
            <input
              data-testid="search-api-key"
              type="password"
              autoComplete="off"
              value={form.apiKey}
              placeholder={t('provider.apiKeyPlaceholder')}
              onChange={(e) => store.edit({ apiKey: e.target.value })}
            />
          </label>
        )}
      </fieldset>
      {keyed(form.kind) && (
        <KeySourceNote
          testId="search-key-source"
          keySource={view.key_source}
          keychain={view.keychain}
          keychainAvailable={view.keychain_available}
        />
      )}
      {!maxOk && (
        <p className="turn-error" data-testid="search-max-invalid" role="alert">
          {t('search.maxInvalid')}
        </p>
      )}
      <div className="form-actions">
        <button
          type="button"
          data-testid="search-test"
          disabled={locked || busy !== null || !maxOk || form.kind === 'none'}
          onClick={() => void store.test()}
        >
          {busy === 'test' ? t('search.testing') : t('search.test')}
        </button>
        <button type="submit" className="primary" data-testid="search-save" disabled={locked || busy !== null || !maxOk}>
          {t('search.save')}
        </button>
        {view.key_source === 'keychain' && !locked && (
          <button
            type="button"
            className="danger"
            data-testid="search-clear-key"
            disabled={busy !== null}
            onClick={() => void store.clearKey()}
          >
            {t('provider.clearKey')}
          </button>
        )}
      </div>
      {tested && (
        <p
          className={tested.ok ? 'test-result ok' : 'test-result failed'}
          data-testid="search-test-result"
          data-ok={tested.ok}
          role={tested.ok ? 'status' : 'alert'}
        >
          {tested.ok ? t('search.testOk', { message: tested.message }) : t('search.testFailed', { message: tested.message })}
        </p>
      )}
      {notice && (
        <p className="saved" data-testid="search-saved" role="status">
          {notice === 'saved' ? t('search.saved') : t('provider.keyRemoved')}
        </p>
      )}
      {saveError && (
        <p className="turn-error" data-testid="search-error" role="alert">
          {t('search.failed', { message: saveError })}
        </p>
      )}
    </form>
  );
}

export function SearchPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new SearchStore(transport));
  const { view } = state;
  return (
    <section className="panel search-panel" aria-labelledby="search-heading" id="settings-search">
      <h2 id="search-heading">{t('search.heading')}</h2>
      <p className="help">{t('search.help')}</p>
      <LoadState loaded={view !== undefined} error={state.loadError} />
      {view && <SearchStateNote view={view} />}
      {view && view.env_overrides.length > 0 && (
        <p className="notice warn env-overrides" data-testid="search-env">
          {t('search.envOverrides', { names: view.env_overrides.join(', ') })}
        </p>
      )}
      {view && <SearchForm store={store} state={state} view={view} />}
    </section>
  );
}
