// One memory in full: its content (editable in place), where it came from and how sure the
// assistant is, how it fades (half-life), the chain of versions both ways (links), its history
// with Undo for the last change, and the actions: Pin/Unpin, Forget (the engine's `deleted`
// status: a tombstone kept with its history, out of prompts and search), Restore (of a
// forgotten, archived or superseded memory), Delete (for good).

import type { Memory, MemoryDetail as Detail } from '../../generated/engine';
import { useT } from '../../i18n';
import { percent, when } from './format';

interface Props {
  detail: Detail;
  /** The content being edited, or null. */
  editing: string | null;
  busy: boolean;
  onStartEdit: () => void;
  onEditText: (text: string) => void;
  onSaveEdit: () => void;
  onCancelEdit: () => void;
  onPin: (pinned: boolean) => void;
  onForget: () => void;
  onRestore: () => void;
  onUndo: () => void;
  onDelete: () => void;
  onFollow: (id: string) => void;
  onClose: () => void;
}

function ChainLink({ memory, onFollow }: { memory: Memory; onFollow: (id: string) => void }) {
  return (
    <button type="button" className="link memory-link" data-testid="memory-link" onClick={() => onFollow(memory.id)}>
      {memory.content}
    </button>
  );
}

export function MemoryDetail({ detail: d, editing, busy, ...on }: Props) {
  const t = useT();
  const none = t('memory.detail.none');
  const openConflicts = d.conflicts.filter((c) => c.status === 'open').length;
  const facts: [string, React.ReactNode][] = [
    [t('memory.detail.status'), t(`memory.status.${d.status}`)],
    [t('memory.detail.tier'), t(`memory.tier.${d.tier}`)],
    [t('memory.detail.slot'), d.slot ? <code>{d.slot}</code> : none],
    [t('memory.detail.subject'), d.subject],
    [t('memory.detail.source'), t(`memory.source.${d.source}`)],
    [t('memory.detail.confidence'), percent(d.confidence)],
    [t('memory.detail.pinned'), d.pinned ? t('memory.detail.yes') : t('memory.detail.no')],
    [t('memory.detail.validUntil'), d.valid_until ? when(d.valid_until) : none],
    [t('memory.detail.created'), when(d.created_at)],
    [t('memory.detail.lastUsed'), d.last_accessed ? when(d.last_accessed) : t('memory.detail.never')],
    [t('memory.detail.useCount'), String(d.access_count)],
    [t('memory.detail.halfLife'), t('memory.detail.days', { days: Math.round(d.stability * 10) / 10 })],
    [t('memory.detail.kind'), d.kind],
    [t('memory.detail.importance'), `${percent(d.effective_importance)} (${percent(d.importance)})`],
  ];
  if (d.evidence) facts.push([t('memory.detail.evidence'), <q key="e">{d.evidence}</q>]);

  return (
    <section className="memory-detail" data-testid="memory-detail" data-memory-id={d.id} aria-labelledby="memory-detail-heading">
      <div className="panel-head">
        <h2 id="memory-detail-heading">{t('memory.detail.heading')}</h2>
        <button type="button" onClick={on.onClose}>{t('memory.detail.close')}</button>
      </div>
      {editing === null ? (
        <p className="memory-detail-content" data-testid="memory-detail-content">{d.content}</p>
      ) : (
        <form
          className="memory-edit"
          onSubmit={(e) => {
            e.preventDefault();
            on.onSaveEdit();
          }}
        >
          <textarea
            aria-label={t('memory.edit.label')}
            data-testid="memory-edit-input"
            value={editing}
            rows={3}
            onChange={(e) => on.onEditText(e.target.value)}
          />
          <div className="buttons">
            <button type="submit" className="primary" data-testid="memory-edit-save" disabled={busy || editing.trim() === ''}>
              {t('memory.edit.save')}
            </button>
            <button type="button" onClick={on.onCancelEdit}>{t('memory.edit.cancel')}</button>
          </div>
        </form>
      )}
      <div className="memory-actions">
        {editing === null && (
          <button type="button" data-testid="memory-edit" disabled={busy} onClick={on.onStartEdit}>{t('memory.edit')}</button>
        )}
        <button type="button" data-testid="memory-pin" disabled={busy} onClick={() => on.onPin(!d.pinned)}>
          {d.pinned ? t('memory.unpin') : t('memory.pin')}
        </button>
        {d.status !== 'active' && (
          <button type="button" data-testid="memory-restore" disabled={busy} onClick={on.onRestore}>{t('memory.restore')}</button>
        )}
        {d.status !== 'deleted' && (
          <button type="button" data-testid="memory-forget" title={t('memory.forgetHelp')} disabled={busy} onClick={on.onForget}>
            {t('memory.forget')}
          </button>
        )}
        <button type="button" className="danger" data-testid="memory-delete" disabled={busy} onClick={on.onDelete}>
          {t('memory.delete')}
        </button>
      </div>
      <dl className="memory-facts">
        {facts.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {d.superseded_by_memory && (
        <p className="memory-chain">
          <span className="muted">{t('memory.detail.supersededBy')}: </span>
          <ChainLink memory={d.superseded_by_memory} onFollow={on.onFollow} />
        </p>
      )}
      {d.supersedes.length > 0 && (
        <div className="memory-chain">
          <span className="muted">{t('memory.detail.supersedes')}:</span>
          <ul>
            {d.supersedes.map((m) => (
              <li key={m.id}><ChainLink memory={m} onFollow={on.onFollow} /></li>
            ))}
          </ul>
        </div>
      )}
      {openConflicts > 0 && <p className="turn-error warn">{t('memory.detail.conflicts', { count: openConflicts })}</p>}
      <h3>{t('memory.detail.history')}</h3>
      <ol className="memory-history" data-testid="memory-history">
        {d.history.map((h, i) => (
          <li key={String(h.id)}>
            <span>{t('memory.detail.historyEntry', { action: t(`memory.action.${h.action}`), actor: t(`memory.actor.${h.actor}`) })}</span>
            <time className="muted" dateTime={h.at}>{when(h.at)}</time>
            {h.reason && <span className="muted">{h.reason}</span>}
            {i === d.history.length - 1 && (
              <button type="button" data-testid="memory-undo" title={t('memory.detail.undoHelp')} disabled={busy} onClick={on.onUndo}>
                {t('memory.detail.undo')}
              </button>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
