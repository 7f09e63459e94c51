// The model provider: kind, address, model, fallbacks and key; test the connection and save;
// a local Ollama offered when one runs; for the built-in model, its catalog and a GGUF file
// instead (`LocalModelsSection`). The line about the provider the engine chose at start
// comes first. State and engine calls live in `ProviderStore`.

import type { ProviderView } from '../../generated/engine';
import { useT } from '../../i18n';
import {
  type ProviderState,
  ProviderStore,
  isLocal,
  modelChoices,
  offersDefaultUrl,
  providerKinds,
  startNotice,
  usingOllama,
  usualBaseUrl,
} from '../../settings/providerStore';
import type { SettingsTransport } from '../../settings/store';
import { KeySourceNote } from './KeySourceNote';
import { LoadState } from './LoadState';
import { LocalModelsSection } from './LocalModelsSection';
import { useSettingsStore } from './useSettingsStore';

interface EditorProps {
  store: ProviderStore;
  state: ProviderState;
  view: ProviderView;
}

/** Where the kind is chosen; the rest of the page follows it (and it keeps its place and focus). */
function KindField({ store, state }: { store: ProviderStore; state: ProviderState }) {
  const t = useT();
  return (
    <label>
      <span>{t('provider.kind')}</span>
      <select data-testid="provider-kind" value={state.form?.kind} onChange={(e) => store.changeKind(e.target.value)}>
        {providerKinds(state).map(({ kind }) => (
          <option key={kind} value={kind}>
            {t(`provider.kind.${kind}`)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A model server's form: address, model, fallbacks and key; test and save. */
function ServerForm({ store, state, view }: EditorProps) {
  const t = useT();
  const { form, busy, tested, notice, saveError } = state;
  if (!form) return null;
  const models = modelChoices(state);
  const defaultUrl = usualBaseUrl(state);

  return (
    <form
      className="provider-form"
      onSubmit={(e) => {
        e.preventDefault();
        void store.save();
      }}
    >
      <div className="field-grid">
        <label>
          <span>{t('provider.baseUrl')}</span>
          <input
            data-testid="provider-base-url"
            type="url"
            value={form.baseUrl}
            placeholder={defaultUrl}
            onChange={(e) => store.edit({ baseUrl: e.target.value })}
          />
        </label>
        {offersDefaultUrl(state) && (
          <p className="field-note" data-testid="provider-default-url">
            {t('provider.defaultUrl', { kind: t(`provider.kind.${form.kind}`), url: defaultUrl })}{' '}
            <button type="button" onClick={() => store.useDefaultUrl()}>
              {t('provider.useDefaultUrl')}
            </button>
          </p>
        )}
        <label>
          <span>{t('provider.model')}</span>
          {models ? (
            <select data-testid="provider-model" value={form.model} onChange={(e) => store.edit({ model: e.target.value })}>
              {form.model === '' && <option value="" />}
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          ) : (
            <input data-testid="provider-model" value={form.model} onChange={(e) => store.edit({ model: e.target.value })} />
          )}
        </label>
        <label>
          <span>{t('provider.fallbacks')}</span>
          <input
            data-testid="provider-fallbacks"
            value={form.fallbacks}
            placeholder={t('provider.fallbacksPlaceholder')}
            onChange={(e) => store.edit({ fallbacks: e.target.value })}
          />
        </label>
        <label>
          <span>{t('provider.apiKey')}</span>
          <input
            data-testid="provider-api-key"
            type="password"
            autoComplete="off"
            value={form.apiKey}
            placeholder={t('provider.apiKeyPlaceholder')}
            onChange={(e) => store.edit({ apiKey: e.target.value })}
          />
        </label>
      </div>
      <KeySourceNote
        testId="provider-key-source"
        keySource={view.key_source}
        keychain={view.keychain}
        keychainAvailable={view.keychain_available}
      />
      <div className="form-actions">
        <button type="button" data-testid="provider-test" disabled={busy !== null} onClick={() => void store.test()}>
          {busy === 'test' ? t('provider.testing') : t('provider.test')}
        </button>
        <button type="submit" className="primary" data-testid="provider-save" disabled={busy !== null}>
          {t('provider.save')}
        </button>
        {view.key_source === 'keychain' && (
          <button
            type="button"
            className="danger"
            data-testid="provider-clear-key"
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
          data-testid="provider-test-result"
          data-ok={tested.ok}
          role={tested.ok ? 'status' : 'alert'}
        >
          {tested.ok
            ? t('provider.testOk', { message: tested.message })
            : t('provider.testFailed', { code: tested.code ?? '?', message: tested.message })}
        </p>
      )}
      {notice && (
        <p className="saved" data-testid="provider-saved" role="status">
          {notice === 'saved' ? t('provider.saved') : t('provider.keyRemoved')}
        </p>
      )}
      {saveError && (
        <p className="turn-error" data-testid="provider-error" role="alert">
          {t('provider.failed', { message: saveError })}
        </p>
      )}
    </form>
  );
}

/** The form, started from the loaded settings: a server's, or the built-in model's catalog. */
function ProviderEditor({ store, state, view, transport }: EditorProps & { transport: SettingsTransport }) {
  const t = useT();
  const { form, ollama } = state;
  if (!form) return null;
  return (
    <>
      {ollama && !usingOllama(state) && (
        <div className="notice ollama-offer" data-testid="ollama-offer">
          <span>
            {ollama.models.length === 1 ? t('ollama.offerOne') : t('ollama.offer', { count: ollama.models.length })}
          </span>
          <button type="button" data-testid="ollama-use" onClick={() => store.adoptOllama()}>
            {t('ollama.use')}
          </button>
        </div>
      )}
      {view.env_overrides.length > 0 && (
        <p className="notice warn env-overrides" data-testid="provider-env">
          {t('provider.envOverrides', { names: view.env_overrides.join(', ') })}
        </p>
      )}
      <div className="field-grid">
        <KindField store={store} state={state} />
      </div>
      {isLocal(state) ? (
        <LocalModelsSection transport={transport} onUsed={(v) => store.applied(v)} />
      ) : (
        <ServerForm store={store} state={state} view={view} />
      )}
    </>
  );
}

export function ProviderPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new ProviderStore(transport));
  const { view } = state;
  const notice = startNotice(state);
  return (
    <section className="panel provider-panel" aria-labelledby="provider-heading">
      <h2 id="provider-heading">{t('provider.heading')}</h2>
      <p className="help">{t('provider.help')}</p>
      {notice !== null && (
        <div className="notice start-notice" data-testid="provider-start-notice" role="status">
          <span>{notice}</span>
          <button type="button" onClick={() => store.dismissStartNotice()}>
            {t('provider.dismissNotice')}
          </button>
        </div>
      )}
      <LoadState loaded={view !== undefined} error={state.loadError} />
      {view && <ProviderEditor store={store} state={state} view={view} transport={transport} />}
    </section>
  );
}
