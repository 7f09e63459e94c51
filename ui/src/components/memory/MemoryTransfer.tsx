// Export and import: every memory as the engine's versioned JSON Lines file, downloaded, and
// such a file read back in. The engine writes nothing from a file with a bad line and names
// the line; the outcome (or that message) shows here.

import type { ImportReport } from '../../generated/engine';
import { useT } from '../../i18n';

interface Props {
  busy: boolean;
  exported: { fileName: string; count: number } | null;
  imported: ImportReport | null;
  error: string | null;
  onExport: () => void;
  /** The chosen file's text. */
  onImport: (text: string) => void;
  onDismiss: () => void;
}

export function MemoryTransfer({ busy, exported, imported, error, onExport, onImport, onDismiss }: Props) {
  const t = useT();
  const outcome = error
    ? { kind: 'error', text: t('memory.transfer.failed', { message: error }) }
    : imported
      ? {
          kind: 'notice',
          text: [
            t('memory.transfer.imported', {
              created: imported.created,
              duplicates: imported.duplicates,
              skipped: imported.skipped_inactive,
            }),
            imported.outside_projects > 0 ? t('memory.transfer.outsideProjects', { count: imported.outside_projects }) : '',
            imported.outside_sessions > 0 ? t('memory.transfer.outsideSessions', { count: imported.outside_sessions }) : '',
          ]
            .filter(Boolean)
            .join(' '),
        }
      : exported
        ? { kind: 'notice', text: t('memory.transfer.exported', { count: exported.count, file: exported.fileName }) }
        : null;
  return (
    <div className="memory-transfer">
      <button type="button" data-testid="memory-export" title={t('memory.transfer.exportHelp')} disabled={busy} onClick={onExport}>
        {t('memory.transfer.export')}
      </button>
      <label className={`button${busy ? ' disabled' : ''}`} title={t('memory.transfer.importHelp')}>
        {t('memory.transfer.import')}
        <input
          type="file"
          accept=".jsonl,application/x-ndjson,application/json,text/plain"
          data-testid="memory-import"
          disabled={busy}
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) void file.text().then(onImport);
          }}
        />
      </label>
      {outcome && (
        <p
          className={outcome.kind === 'error' ? 'turn-error memory-transfer-outcome' : 'memory-transfer-outcome'}
          role={outcome.kind === 'error' ? 'alert' : 'status'}
          data-testid="memory-transfer-outcome"
        >
          <span>{outcome.text}</span>
          <button type="button" className="link" onClick={onDismiss}>{t('error.dismiss')}</button>
        </p>
      )}
    </div>
  );
}
