// The standing instructions: one tab per bootstrap file, its text in a monospace box, Save
// and Restore default (confirmed inline). Unsaved text is kept per file while switching tabs
// (the tab is marked) and only dropped by Discard, a save or a restore. State and calls live
// in `BootstrapStore`.

import type { KeyboardEvent } from 'react';
import { type MessageKey, useT } from '../../i18n';
import {
  BootstrapStore,
  currentFile,
  isDirty,
  neighbour,
  shownStatus,
  textOf,
} from '../../settings/bootstrapStore';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from './LoadState';
import { useSettingsStore } from './useSettingsStore';

/** What each bootstrap file is for, by name. */
const BOOTSTRAP_ABOUT: Record<string, MessageKey> = {
  'AGENTS.md': 'bootstrap.about.agents',
  'SOUL.md': 'bootstrap.about.soul',
  'USER.md': 'bootstrap.about.user',
  'TOOLS.md': 'bootstrap.about.tools',
};

export function BootstrapPanel({ transport }: { transport: SettingsTransport }) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new BootstrapStore(transport));
  const { files, busy, confirming } = state;
  const file = currentFile(state);
  const dirty = file ? isDirty(state, file) : false;
  const shown = shownStatus(state);
  const about = file ? BOOTSTRAP_ABOUT[file.name] : undefined;

  /** Arrow keys move between the tabs, and the focus with them. */
  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>, index: number) => {
    if (!files || (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft')) return;
    e.preventDefault();
    const next = neighbour(files, index, e.key);
    if (!next) return;
    store.select(next.name);
    const tabs = e.currentTarget.parentElement?.querySelectorAll<HTMLButtonElement>('[role="tab"]');
    tabs?.[files.indexOf(next)]?.focus();
  };

  return (
    <section className="panel bootstrap-panel" aria-labelledby="bootstrap-heading">
      <h2 id="bootstrap-heading">{t('bootstrap.heading')}</h2>
      <p className="help">{t('bootstrap.help')}</p>
      <LoadState loaded={files !== undefined} error={state.loadError} />
      {files && file && (
        <>
          <div className="bootstrap-tabs" role="tablist" aria-label={t('bootstrap.files')}>
            {files.map((f, i) => (
              <button
                key={f.name}
                type="button"
                role="tab"
                id={`bootstrap-tab-${f.name}`}
                aria-selected={f.name === file.name}
                aria-controls="bootstrap-editor"
                tabIndex={f.name === file.name ? 0 : -1}
                data-testid="bootstrap-tab"
                data-file={f.name}
                data-dirty={isDirty(state, f)}
                onClick={() => store.select(f.name)}
                onKeyDown={(e) => onTabKey(e, i)}
              >
                {f.name}
                {isDirty(state, f) && (
                  <span className="bootstrap-dirty" title={t('bootstrap.unsaved')} aria-label={t('bootstrap.unsaved')}>
                    {' ●'}
                  </span>
                )}
              </button>
            ))}
          </div>
          <div
            className="bootstrap-editor"
            id="bootstrap-editor"
            role="tabpanel"
            aria-labelledby={`bootstrap-tab-${file.name}`}
            data-file={file.name}
          >
            <div className="bootstrap-head">
              <p className="bootstrap-about" data-testid="bootstrap-about">
                {about ? t(about) : null}
              </p>
              {file.is_default && (
                <span className="badge bootstrap-default" data-testid="bootstrap-default">
                  {t('bootstrap.default')}
                </span>
              )}
            </div>
            <textarea
              className="bootstrap-text"
              data-testid="bootstrap-text"
              rows={14}
              spellCheck={false}
              value={textOf(state, file)}
              disabled={busy}
              aria-label={t('bootstrap.textLabel', { name: file.name })}
              aria-describedby="bootstrap-comments"
              onChange={(e) => store.edit(file.name, e.target.value)}
            />
            <p className="bootstrap-note" id="bootstrap-comments">
              {t('bootstrap.comments')}
            </p>
            <p className="bootstrap-path" data-testid="bootstrap-path">
              {file.is_default ? t('bootstrap.pathDefault') : t('bootstrap.pathSaved')} <code>{file.path}</code>
            </p>
            {confirming ? (
              <div className="form-actions bootstrap-confirm" data-testid="bootstrap-confirm">
                <span>{t('bootstrap.restoreConfirm', { name: file.name })}</span>
                <button
                  type="button"
                  className="danger"
                  data-testid="bootstrap-restore-yes"
                  disabled={busy}
                  onClick={() => void store.restore(file.name)}
                >
                  {t('bootstrap.restoreYes')}
                </button>
                <button type="button" data-testid="bootstrap-restore-no" disabled={busy} onClick={() => store.cancelRestore()}>
                  {t('bootstrap.restoreNo')}
                </button>
              </div>
            ) : (
              <div className="form-actions">
                <button
                  type="button"
                  className="primary"
                  data-testid="bootstrap-save"
                  disabled={busy || !dirty}
                  onClick={() => void store.save(file.name)}
                >
                  {busy ? t('bootstrap.saving') : t('bootstrap.save')}
                </button>
                {dirty && (
                  <button type="button" data-testid="bootstrap-discard" disabled={busy} onClick={() => store.discard(file.name)}>
                    {t('bootstrap.discard')}
                  </button>
                )}
                <button
                  type="button"
                  className="danger"
                  data-testid="bootstrap-restore"
                  disabled={busy || file.is_default}
                  onClick={() => store.askRestore()}
                >
                  {t('bootstrap.restore')}
                </button>
              </div>
            )}
            {shown && (shown.kind === 'saved' || shown.kind === 'restored') && (
              <p className="saved" data-testid="bootstrap-saved" role="status">
                {shown.kind === 'saved'
                  ? t('bootstrap.saved', { name: shown.name })
                  : t('bootstrap.restored', { name: shown.name })}
              </p>
            )}
            {shown && (shown.kind === 'saveFailed' || shown.kind === 'restoreFailed') && (
              <p className="turn-error" data-testid="bootstrap-error" role="alert">
                {shown.kind === 'saveFailed'
                  ? t('bootstrap.failed', { message: shown.message })
                  : t('bootstrap.restoreFailed', { message: shown.message })}
              </p>
            )}
          </div>
        </>
      )}
    </section>
  );
}
