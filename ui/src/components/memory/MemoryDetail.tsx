// One memory in full: its content (editable in place), where it came from and how sure the
// assistant is, how it fades (half-life, and the engine's fading curve as a chart), the chain
// of versions both ways (links), its history with Undo for the last change and "Undo this
// change" for any earlier one, and the actions: Pin/Unpin, Forget (the engine's `deleted`
// status: a tombstone kept with its history, out of prompts and search), Restore (of a
// forgotten, archived or superseded memory), Delete (for good), "Move to…" (the global
// memories or a project), and its expiry: the date it stops applying (`valid_until`), set
// with a date input or cleared. "Show where it was
// learned" opens the conversation at the message it came from, or says it is gone. "Used in N
// answers" lists the turns that had it in their request (the read log), each with its trace.

import { useState } from 'react';
import type { Fading, Memory, MemoryDetail as Detail, Project } from '../../generated/engine';
import { useT } from '../../i18n';
import { placeOf } from '../../memory/place';
import { hasProvenance } from '../../memory/provenance';
import { FadingChart } from './FadingChart';
import { MemoryMove } from './MemoryMove';
import { percent, placeLabel, when } from './format';

/** Looking for where the open memory was learned, or what came of it. */
export type SourceLookup = { state: 'looking' } | { state: 'gone' } | { state: 'error'; message: string };

interface Props {
  detail: Detail;
  /** Its fading curve, once read, or why it could not be. */
  fading: Fading | null;
  fadingError: string | null;
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
  /** Undoes the last change, or the change with this id. */
  onUndo: (change?: string) => void;
  onDelete: () => void;
  /** Sets the expiry to a `YYYY-MM-DD` date, or clears it with null. */
  onSetExpiry: (date: string | null) => void;
  /** The projects, to name its own and to move it to another. */
  projects: readonly Project[];
  /** Moves it into the project named so, or to the global memories (null). */
  onMove: (project: string | null) => void;
  onFollow: (id: string) => void;
  onClose: () => void;
  /** Opens the conversation it was learned in; offered when given and the memory records it. */
  onShowSource?: () => void;
  /** Opens the trace of a turn that read it; offered when given. */
  onOpenTrace?: (turnId: string) => void;
  source?: SourceLookup | null;
}

function ChainLink({ memory, onFollow }: { memory: Memory; onFollow: (id: string) => void }) {
  return (
    <button type="button" className="link memory-link" data-testid="memory-link" onClick={() => onFollow(memory.id)}>
      {memory.content}
    </button>
  );
}

/** The `YYYY-MM-DD` a date input shows for a stored expiry (a date or an RFC 3339 time). */
export function expiryDate(validUntil: string | null): string {
  if (!validUntil) return '';
  const m = /^\d{4}-\d{2}-\d{2}/.exec(validUntil);
  return m ? m[0] : '';
}

export function MemoryDetail({ detail: d, fading, fadingError, editing, busy, source, projects, ...on }: Props) {
  const t = useT();
  // The date being picked; the view remounts this pane when the stored expiry changes, so it
  // starts from the stored value.
  const [expiry, setExpiry] = useState(() => expiryDate(d.valid_until));
  const none = t('memory.detail.none');
  const openConflicts = d.conflicts.filter((c) => c.status === 'open').length;
  const place = placeOf(d.scope, projects);
  const facts: [string, React.ReactNode][] = [
    [t('memory.detail.place'), <span key="p" data-testid="memory-detail-place">{placeLabel(t, place)}</span>],
    [t('memory.detail.status'), t(`memory.status.${d.status}`)],
    [t('memory.detail.tier'), t(`memory.tier.${d.tier}`)],
    [t('memory.detail.slot'), d.slot ? <code>{d.slot}</code> : none],
    [t('memory.detail.subject'), d.subject],
    [t('memory.detail.source'), t(`memory.source.${d.source}`)],
    [t('memory.detail.confidence'), percent(d.confidence)],
    [t('memory.detail.pinned'), d.pinned ? t('memory.detail.yes') : t('memory.detail.no')],
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
      <MemoryMove place={place} projects={projects} busy={busy} onMove={on.onMove} />
      <form
        className="memory-expiry"
        onSubmit={(e) => {
          e.preventDefault();
          if (expiry) on.onSetExpiry(expiry);
        }}
      >
        <span className="muted">{t('memory.detail.validUntil')}:</span>{' '}
        <span data-testid="memory-expiry-value">{d.valid_until ? expiryDate(d.valid_until) || d.valid_until : t('memory.expiry.none')}</span>
        <input
          type="date"
          data-testid="memory-expiry-input"
          aria-label={t('memory.expiry.input')}
          value={expiry}
          disabled={busy}
          onChange={(e) => setExpiry(e.target.value)}
        />
        <button type="submit" data-testid="memory-expiry-set" disabled={busy || expiry === ''}>
          {t('memory.expiry.set')}
        </button>
        <button
          type="button"
          data-testid="memory-expiry-clear"
          title={t('memory.expiry.clearHelp')}
          disabled={busy || !d.valid_until}
          onClick={() => on.onSetExpiry(null)}
        >
          {t('memory.expiry.clear')}
        </button>
      </form>
      <dl className="memory-facts">
        {facts.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <h3>{t('memory.fading.heading')}</h3>
      {fading && <FadingChart fading={fading} />}
      {!fading && fadingError && (
        <p className="turn-error" role="alert" data-testid="memory-fading-error">{t('memory.fading.failed', { message: fadingError })}</p>
      )}
      {!fading && !fadingError && <p className="muted">{t('memory.detail.loading')}</p>}
      {on.onShowSource && hasProvenance(d) && (
        <p className="memory-provenance">
          <button
            type="button"
            className="link"
            data-testid="memory-provenance"
            title={t('memory.provenanceHelp')}
            disabled={source?.state === 'looking'}
            onClick={on.onShowSource}
          >
            {t('memory.provenance')}
          </button>
          {source?.state === 'gone' && <span className="muted" data-testid="memory-provenance-gone">{t('memory.provenanceGone')}</span>}
          {source?.state === 'error' && (
            <span className="turn-error" role="alert">{t('memory.provenanceFailed', { message: source.message })}</span>
          )}
        </p>
      )}
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
      <h3 title={t('memory.detail.usedInHelp')} data-testid="memory-answers">{t('memory.detail.usedIn', { count: d.answers })}</h3>
      {d.reads.length > 0 && (
        <ol className="memory-reads" data-testid="memory-reads">
          {d.reads.map((r, i) => (
            <li key={`${r.turn_id} ${r.how} ${i}`} data-testid="memory-read" data-turn-id={r.turn_id}>
              <time className="muted" dateTime={r.at}>{when(r.at)}</time>
              <span>{t(`memory.read.${r.how}`)}</span>
              {on.onOpenTrace && (
                <button type="button" className="link" data-testid="memory-read-trace" onClick={() => on.onOpenTrace?.(r.turn_id)}>
                  {t('memory.detail.openTrace')}
                </button>
              )}
            </li>
          ))}
        </ol>
      )}
      <h3>{t('memory.detail.history')}</h3>
      <ol className="memory-history" data-testid="memory-history">
        {d.history.map((h, i) => (
          <li key={String(h.id)}>
            <span>{t('memory.detail.historyEntry', { action: t(`memory.action.${h.action}`), actor: t(`memory.actor.${h.actor}`) })}</span>
            <time className="muted" dateTime={h.at}>{when(h.at)}</time>
            {h.reason && <span className="muted">{h.reason}</span>}
            {i === d.history.length - 1 ? (
              <button type="button" data-testid="memory-undo" title={t('memory.detail.undoHelp')} disabled={busy} onClick={() => on.onUndo()}>
                {t('memory.detail.undo')}
              </button>
            ) : (
              <button
                type="button"
                data-testid="memory-undo-change"
                data-change-id={h.change_id}
                title={t('memory.detail.undoChangeHelp')}
                disabled={busy}
                onClick={() => on.onUndo(h.change_id)}
              >
                {t('memory.detail.undoChange')}
              </button>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
