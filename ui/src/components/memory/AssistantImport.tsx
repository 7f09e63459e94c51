// "Import from another assistant…" on the memory page: the button, the dialog it opens (paste
// and Read, then the review of the cards; Escape or Close leaves it and writes nothing), the
// engine's message when reading or writing fails, and once the kept cards are written, what
// the import did. State and calls live in `AssistantImportStore`; `onImported` reads the
// memory list again.

import { useEffect, useId, useRef } from 'react';
import type { Project } from '../../generated/engine';
import { type MessageKey, type Translate, useT } from '../../i18n';
import { AssistantImportStore, type ImportSummary } from '../../memory/assistantImport';
import type { SettingsTransport } from '../../settings/store';
import { useSettingsStore } from '../settings/useSettingsStore';
import { ImportPasteForm } from './ImportPasteForm';
import { ImportReview } from './ImportReview';

/** The parts of the summary, in the order they are told. */
const PARTS: [keyof ImportSummary, MessageKey][] = [
  ['created', 'memory.assistantImport.summary.created'],
  ['known', 'memory.assistantImport.summary.known'],
  ['replaced', 'memory.assistantImport.summary.replaced'],
  ['lost', 'memory.assistantImport.summary.lost'],
  ['review', 'memory.assistantImport.summary.review'],
  ['judgeFailures', 'memory.assistantImport.summary.judgeFailed'],
];

/** What an import did, in one line ("Imported 3 memories …: 2 new, 1 replaced an older memory."). */
export function summaryText(t: Translate, s: ImportSummary): string {
  const parts = PARTS.filter(([k]) => s[k] > 0).map(([k, key]) => t(key, { count: s[k] }));
  return t('memory.assistantImport.summary', { count: s.total, parts: parts.join(t('memory.assistantImport.summary.join')) });
}

interface Props {
  transport: SettingsTransport;
  /** The projects cards about a project's work can go to. */
  projects: readonly Project[];
  /** Called after a write (to read the memories again). */
  onImported: () => void;
}

export function AssistantImport({ transport, projects, onImported }: Props) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new AssistantImportStore(transport));
  const titleId = useId();
  const entry = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  const { open, review, error, summary, writing } = state;
  // Back to the button that opened the dialog once it closes.
  useEffect(() => {
    if (wasOpen.current && !open) entry.current?.focus();
    wasOpen.current = open;
  }, [open]);
  const importKept = async () => {
    if (!store.canImport()) return;
    // Read the memories again even after a failure: a write cut short may have kept some.
    await store.importKept();
    onImported();
  };

  return (
    <div className="memory-assistant-import">
      <button
        ref={entry}
        type="button"
        data-testid="assistant-import-open"
        title={t('memory.assistantImport.openHelp')}
        onClick={() => store.openDialog()}
      >
        {t('memory.assistantImport.open')}
      </button>
      {summary && (
        <p className="memory-transfer-outcome" role="status" data-testid="assistant-import-summary">
          <span>{summaryText(t, summary)}</span>
          <button type="button" className="link" onClick={() => store.dismissSummary()}>{t('error.dismiss')}</button>
        </p>
      )}
      {open && (
        <div
          className="overlay"
          onKeyDown={(e) => {
            if (e.key === 'Escape' && !writing) store.close();
          }}
        >
          <div className="dialog assistant-import" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="assistant-import">
            <h2 id={titleId}>{t('memory.assistantImport.title')}</h2>
            {review === null ? (
              <ImportPasteForm
                text={state.text}
                project={state.project}
                projects={projects}
                reading={state.reading}
                canRead={store.canRead()}
                onText={(text) => store.setText(text)}
                onProject={(project) => store.setProject(project)}
                onRead={() => void store.read()}
                onClose={() => store.close()}
              />
            ) : (
              <ImportReview
                cards={review}
                dropped={state.dropped}
                writing={writing}
                kept={store.keptCount()}
                canImport={store.canImport()}
                onDecide={(i, d) => store.decide(i, d)}
                onStartEdit={(i) => store.startEdit(i)}
                onEditText={(i, text) => store.editText(i, text)}
                onSaveEdit={(i) => store.saveEdit(i)}
                onCancelEdit={(i) => store.cancelEdit(i)}
                onImport={() => void importKept()}
                onCancel={() => store.discardReview()}
              />
            )}
            {error && (
              <p className="turn-error" role="alert" data-testid="assistant-import-error">
                {review === null
                  ? t('memory.assistantImport.readFailed', { message: error })
                  : t('memory.assistantImport.writeFailed', { message: error })}
              </p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
