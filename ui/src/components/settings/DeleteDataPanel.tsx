// The danger zone at the bottom of the settings: "Delete all my data" — what goes and what
// stays, the phrase to type before the button is enabled, then what the engine removed (or
// its refusal in its words, e.g. while a turn runs). State and the call live in
// `DeleteDataStore`; `onDeleted` lets the page drop what it still shows of the deleted data.

import type { DataDeleted } from '../../generated/engine';
import { useT } from '../../i18n';
import { DELETE_ALL_DATA_PHRASE, DeleteDataStore, canDelete } from '../../settings/deleteDataStore';
import type { SettingsTransport } from '../../settings/store';
import { useSettingsStore } from './useSettingsStore';

interface Props {
  transport: SettingsTransport;
  /** Called once the engine has deleted the data. */
  onDeleted?: (deleted: DataDeleted) => void;
}

export function DeleteDataPanel({ transport, onDeleted }: Props) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new DeleteDataStore(transport));
  const { typed, busy, deleted, failure } = state;
  return (
    <section className="panel danger-zone delete-data-panel" aria-labelledby="delete-data-heading">
      <h2 id="delete-data-heading">{t('deleteData.heading')}</h2>
      <p className="help" id="delete-data-help">{t('deleteData.help')}</p>
      <form
        className="delete-data-form"
        onSubmit={(e) => {
          e.preventDefault();
          void store.deleteAll().then((d) => {
            if (d) onDeleted?.(d);
          });
        }}
      >
        <label htmlFor="delete-data-confirm">
          <span>{t('deleteData.type', { phrase: DELETE_ALL_DATA_PHRASE })}</span>
          <input
            id="delete-data-confirm"
            data-testid="delete-all-data-confirm"
            value={typed}
            autoComplete="off"
            spellCheck={false}
            readOnly={busy}
            aria-describedby="delete-data-help"
            onChange={(e) => store.type(e.target.value)}
          />
        </label>
        <button type="submit" className="danger" data-testid="delete-all-data" disabled={!canDelete(state)}>
          {busy ? t('deleteData.deleting') : t('deleteData.delete')}
        </button>
      </form>
      {deleted && (
        <p className="saved" data-testid="delete-all-data-result" role="status">
          {t('deleteData.deleted', { sessions: deleted.sessions, memories: deleted.memories, rows: deleted.rows })}
          {deleted.user_notes && ` ${t('deleteData.userNotes')}`}
        </p>
      )}
      {failure && (
        <p className="turn-error" data-testid="delete-all-data-error" role="alert">
          {t('deleteData.failed', { message: failure })}
        </p>
      )}
    </section>
  );
}
