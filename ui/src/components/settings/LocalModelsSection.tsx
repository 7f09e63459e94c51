// The built-in model, shown when the provider kind is "Built-in (local)": the recommended
// models (size, licence, what each is good for) with their state — in use, installed (to
// use), downloading (with progress), failed (to retry) or to download — and a GGUF file the
// person already has. Using one saves and applies it; the provider view the engine answers
// goes to `onUsed`. State, calls and the polling during downloads live in `LocalModelsStore`.

import type { LocalModelEntry, ProviderView } from '../../generated/engine';
import { useT } from '../../i18n';
import {
  LocalModelsStore,
  USING_FILE,
  customFileInUse,
  formatSize,
  modelStatus,
} from '../../settings/localModelsStore';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

interface RowProps {
  model: LocalModelEntry;
  busy: string | null;
  onFetch: (id: string) => void;
  onUse: (id: string) => void;
}

/** A row's last cell: where the model stands and what can be done with it. */
function ModelState({ model, busy, onFetch, onUse }: RowProps) {
  const t = useT();
  const status = modelStatus(model);
  const blocked = busy !== null;
  switch (status.state) {
    case 'inUse':
      return <span className="state state-ready">{t('local.inUse')}</span>;
    case 'installed':
      return (
        <>
          <span className="local-installed">{t('local.installed')}</span>{' '}
          <button
            type="button"
            data-testid="local-use"
            aria-label={t('local.useLabel', { name: model.name })}
            disabled={blocked}
            onClick={() => onUse(model.id)}
          >
            {busy === model.id ? t('local.using') : t('local.use')}
          </button>
        </>
      );
    case 'downloading':
      return (
        <div className="local-progress">
          {status.total !== null ? (
            <progress value={status.done} max={status.total} aria-label={t('local.progressLabel', { name: model.name })} />
          ) : (
            <progress aria-label={t('local.progressLabel', { name: model.name })} />
          )}
          <span data-testid="local-progress-text">
            {status.percent !== null && status.total !== null
              ? t('local.progress', { percent: status.percent, total: formatSize(status.total) })
              : t('local.progressUnknown', { done: formatSize(status.done) })}
          </span>
        </div>
      );
    case 'failed':
      return (
        <>
          <div className="error-text" data-testid="local-download-error" role="alert">
            {t('local.downloadFailed', { message: status.error })}
          </div>
          <button
            type="button"
            data-testid="local-retry"
            aria-label={t('local.retryLabel', { name: model.name })}
            disabled={blocked}
            onClick={() => onFetch(model.id)}
          >
            {busy === model.id ? t('local.starting') : t('local.retry')}
          </button>
        </>
      );
    case 'available':
      return (
        <button
          type="button"
          data-testid="local-download"
          aria-label={t('local.downloadLabel', { name: model.name, size: formatSize(model.size_bytes) })}
          disabled={blocked}
          onClick={() => onFetch(model.id)}
        >
          {busy === model.id ? t('local.starting') : t('local.download')}
        </button>
      );
  }
}

interface Props {
  transport: SettingsTransport;
  /** The provider view in force after a model was put to use. */
  onUsed: (view: ProviderView) => void;
}

export function LocalModelsSection({ transport, onUsed }: Props) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new LocalModelsStore(transport));
  const { catalog, busy, file, used, failure } = state;
  const fileInUse = customFileInUse(catalog);
  const use = (id: string) =>
    void store.use(id).then((view) => {
      if (view) onUsed(view);
    });

  return (
    <section className="local-models" aria-labelledby="local-models-heading" data-testid="local-models">
      <h3 id="local-models-heading">{t('local.heading')}</h3>
      {catalog && <p className="help">{t('local.help', { dir: catalog.dir })}</p>}
      {catalog && (
        <p className="help" data-testid="local-threads">
          {t('local.threads', { threads: catalog.threads })}
        </p>
      )}
      <LoadState loaded={catalog !== undefined} error={state.loadError} />
      {fileInUse && (
        <p className="local-file-in-use" data-testid="local-file-in-use">
          {t('local.fileInUse', { path: fileInUse })}
        </p>
      )}
      {catalog && (
        <table className="settings-table local-models-table">
          <thead>
            <tr>
              <th>{t('local.model')}</th>
              <th>{t('local.size')}</th>
              <th>{t('local.license')}</th>
              <th>{t('local.state')}</th>
            </tr>
          </thead>
          <tbody>
            {catalog.models.map((m) => (
              <tr key={m.id} data-model={m.id} data-state={modelStatus(m).state}>
                <td>
                  <strong>{m.name}</strong>
                  <div className="local-note">{m.note}</div>
                </td>
                <td className="local-size">{formatSize(m.size_bytes)}</td>
                <td>
                  {m.license}
                  <div className="local-checksum" data-checksum={m.checksum}>
                    {t(m.checksum === 'pinned' ? 'local.checksumPinned' : 'local.checksumHost')}
                  </div>
                </td>
                <td className="local-state">
                  <ModelState model={m} busy={busy} onFetch={(id) => void store.fetch(id)} onUse={use} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        className="local-file"
        onSubmit={(e) => {
          e.preventDefault();
          void store.useFile().then((view) => {
            if (view) onUsed(view);
          });
        }}
      >
        <label>
          <span>{t('local.file')}</span>
          <input
            data-testid="local-file"
            value={file}
            placeholder={t('local.filePlaceholder')}
            spellCheck={false}
            autoComplete="off"
            aria-describedby="local-file-help"
            onChange={(e) => store.editFile(e.target.value)}
          />
        </label>
        <button type="submit" data-testid="local-use-file" disabled={busy !== null || file.trim() === ''}>
          {busy === USING_FILE ? t('local.using') : t('local.useFile')}
        </button>
        <p className="field-note" id="local-file-help">
          {t('local.fileHelp')}
        </p>
      </form>
      {used && (
        <p className="saved" data-testid="local-used" role="status">
          {t('local.used', { model: used })}
        </p>
      )}
      {failure && (
        <p className="turn-error" data-testid="local-error" role="alert">
          {t('local.failed', { message: failure })}
        </p>
      )}
    </section>
  );
}
