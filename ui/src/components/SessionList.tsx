// The sidebar: a "new session" button, a search box and the sessions, most recent first
// (automation runs only on request, or when one is open),
// each with Rename (inline), Delete (confirmed inline, asking what becomes of what the
// assistant learned in that conversation: kept, forgotten (Undo on the memory page brings
// them back) or deleted with it for good) and Forget memories (confirmed inline: forgets every
// memory learned in that conversation, as one change that Undo on the memory page brings
// back) actions.

import { useId, useState } from 'react';
import { useT } from '../i18n';
import type { LearnedMemories, SessionDeleted, SessionSummary } from '../generated/engine';

interface Props {
  sessions: SessionSummary[];
  selected: string | null;
  disabled: boolean;
  onSelect: (name: string) => void;
  onNew: () => void;
  /** Renames a session; rejects with a readable error (shown next to the session). */
  onRename: (name: string, newName: string) => Promise<void>;
  /**
   * Deletes a session, keeping, forgetting or deleting the memories learned in it; resolves
   * with the engine's answer (how many memories went with it), rejects with a readable error
   * (shown next to the session).
   */
  onDelete: (name: string, memories: LearnedMemories) => Promise<SessionDeleted>;
  /**
   * Forgets every memory learned in a session (reversibly); resolves with how many were
   * forgotten, rejects with a readable error (shown next to the session).
   */
  onForgetMemories: (name: string) => Promise<number>;
}

/** What one row is doing besides being listed. */
type Mode =
  | { kind: 'rename'; name: string; value: string }
  | { kind: 'confirmDelete'; name: string }
  | { kind: 'confirmForget'; name: string };

/** The sessions whose name or title contains `query` (case-insensitive). */
export function filterSessions(sessions: SessionSummary[], query: string): SessionSummary[] {
  const q = query.trim().toLowerCase();
  if (q === '') return sessions;
  return sessions.filter(
    (s) => s.name.toLowerCase().includes(q) || (s.title ?? '').toLowerCase().includes(q),
  );
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function SessionList({ sessions, selected, disabled, onSelect, onNew, onRename, onDelete, onForgetMemories }: Props) {
  const t = useT();
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<Mode | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ name: string; message: string } | null>(null);
  /** How many memories the last "forget memories" took away, and from which session. */
  const [forgotten, setForgotten] = useState<{ name: string; count: number } | null>(null);
  /**
   * The last delete that forgot or deleted memories: the session (as it was shown) and how
   * many memories went. Said above the list, since the session's row is gone.
   */
  const [deleted, setDeleted] = useState<{ label: string; memories: LearnedMemories; count: number } | null>(null);
  const ids = useId();
  const [showRuns, setShowRuns] = useState(false);
  const listed = selected && !sessions.some((s) => s.name === selected);
  // Automation runs each have a session; they stay out of the way (the Automations page
  // lists them) unless asked for, or one of them is open.
  const runs = sessions.filter((s) => s.automation && s.name !== selected).length;
  const shown = filterSessions(
    showRuns ? sessions : sessions.filter((s) => !s.automation || s.name === selected),
    query,
  );

  const start = (next: Mode | null) => {
    setMode(next);
    setError(null);
    setForgotten(null);
    setDeleted(null);
  };

  const saveRename = async (name: string, value: string) => {
    const newName = value.trim();
    if (newName === '' || newName === name) {
      start(null);
      return;
    }
    setBusy(true);
    try {
      await onRename(name, newName);
      start(null);
    } catch (e) {
      setError({ name, message: describe(e) });
    } finally {
      setBusy(false);
    }
  };

  const confirmDelete = async (name: string, label: string, memories: LearnedMemories) => {
    setBusy(true);
    try {
      const answer = await onDelete(name, memories);
      start(null);
      if (memories !== 'keep') setDeleted({ label, memories, count: answer.memories });
    } catch (e) {
      setMode(null);
      setError({ name, message: describe(e) });
    } finally {
      setBusy(false);
    }
  };

  const confirmForget = async (name: string) => {
    setBusy(true);
    try {
      const count = await onForgetMemories(name);
      start(null);
      setForgotten({ name, count });
    } catch (e) {
      setMode(null);
      setError({ name, message: describe(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <nav className="sessions">
      <h2>{t('sessions.heading')}</h2>
      <button type="button" className="new-session" onClick={onNew} disabled={disabled}>
        {t('sessions.new')}
      </button>
      <input
        type="search"
        className="session-search"
        value={query}
        placeholder={t('sessions.search')}
        aria-label={t('sessions.search')}
        onChange={(e) => setQuery(e.target.value)}
      />
      {deleted && (
        <p className="session-notice session-deleted-notice" role="status" data-testid="session-delete-notice">
          {deleted.count === 0
            ? t('sessions.deletedNoMemories', { name: deleted.label })
            : t(deleted.memories === 'forget' ? 'sessions.deletedForgotten' : 'sessions.deletedPurged', {
                name: deleted.label,
                count: deleted.count,
              })}
        </p>
      )}
      <ul>
        {listed && (
          <li>
            <button type="button" className="session current" disabled>
              <span className="session-title">{t('sessions.untitled')}</span>
              <span className="session-meta">{selected}</span>
            </button>
          </li>
        )}
        {shown.map((s) => {
          const renaming = mode?.kind === 'rename' && mode.name === s.name ? mode : null;
          const confirming = mode?.kind === 'confirmDelete' && mode.name === s.name;
          const forgetting = mode?.kind === 'confirmForget' && mode.name === s.name;
          const rowError = error?.name === s.name ? error.message : null;
          const rowForgotten = forgotten?.name === s.name ? forgotten.count : null;
          const label = s.title || s.name;
          const question = `${ids}-delete-${s.id}`;
          return (
            <li key={s.id} className="session-row" data-row={s.name}>
              {renaming ? (
                <input
                  className="session-rename"
                  autoFocus
                  value={renaming.value}
                  disabled={busy}
                  aria-label={t('sessions.renameLabel', { name: s.name })}
                  onChange={(e) => setMode({ ...renaming, value: e.target.value })}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') {
                      e.preventDefault();
                      void saveRename(s.name, renaming.value);
                    } else if (e.key === 'Escape') {
                      e.preventDefault();
                      start(null);
                    }
                  }}
                />
              ) : (
                <button
                  type="button"
                  className={s.name === selected ? 'session current' : 'session'}
                  data-session={s.name}
                  disabled={disabled && s.name !== selected}
                  onClick={() => onSelect(s.name)}
                >
                  <span className="session-title">{label}</span>
                  <span className="session-meta">{t('sessions.messages', { count: s.message_count })}</span>
                </button>
              )}
              {confirming ? (
                <div
                  className="session-actions session-confirm session-delete-confirm"
                  role="group"
                  aria-labelledby={question}
                  onKeyDown={(e) => {
                    if (e.key === 'Escape' && !busy) {
                      e.preventDefault();
                      start(null);
                    }
                  }}
                >
                  <span id={question}>{t('sessions.deleteConfirm')}</span>
                  <button
                    type="button"
                    className="session-delete-keep"
                    data-testid="session-delete-keep"
                    title={t('sessions.deleteKeepHelp')}
                    disabled={busy}
                    onClick={() => void confirmDelete(s.name, label, 'keep')}
                  >
                    {t('sessions.deleteKeep')}
                  </button>
                  <button
                    type="button"
                    className="session-delete-forget"
                    data-testid="session-delete-forget"
                    title={t('sessions.deleteForgetHelp')}
                    disabled={busy}
                    onClick={() => void confirmDelete(s.name, label, 'forget')}
                  >
                    {t('sessions.deleteForget')}
                  </button>
                  <button
                    type="button"
                    className="session-delete-purge danger"
                    data-testid="session-delete-purge"
                    title={t('sessions.deletePurgeHelp')}
                    disabled={busy}
                    onClick={() => void confirmDelete(s.name, label, 'delete')}
                  >
                    {t('sessions.deletePurge')}
                  </button>
                  <button
                    type="button"
                    className="session-delete-no"
                    data-testid="session-delete-no"
                    autoFocus
                    disabled={busy}
                    onClick={() => start(null)}
                  >
                    {t('sessions.cancel')}
                  </button>
                </div>
              ) : forgetting ? (
                <div className="session-actions session-forget-confirm" role="group" aria-label={t('sessions.forgetMemories')}>
                  <span>{t('sessions.forgetConfirm')}</span>
                  <button
                    type="button"
                    className="session-forget-yes danger"
                    data-testid="session-forget-memories-yes"
                    disabled={busy}
                    onClick={() => void confirmForget(s.name)}
                  >
                    {t('sessions.forgetYes')}
                  </button>
                  <button
                    type="button"
                    className="session-forget-no"
                    data-testid="session-forget-memories-no"
                    disabled={busy}
                    onClick={() => start(null)}
                  >
                    {t('sessions.no')}
                  </button>
                </div>
              ) : (
                !renaming && (
                  <div className="session-actions">
                    <button
                      type="button"
                      className="session-rename-button"
                      disabled={disabled || busy}
                      onClick={() => start({ kind: 'rename', name: s.name, value: s.name })}
                    >
                      {t('sessions.rename')}
                    </button>
                    <button
                      type="button"
                      className="session-delete-button"
                      disabled={disabled || busy}
                      onClick={() => start({ kind: 'confirmDelete', name: s.name })}
                    >
                      {t('sessions.delete')}
                    </button>
                    <button
                      type="button"
                      className="session-forget-button"
                      data-testid="session-forget-memories"
                      title={t('sessions.forgetMemoriesHelp')}
                      disabled={disabled || busy}
                      onClick={() => start({ kind: 'confirmForget', name: s.name })}
                    >
                      {t('sessions.forgetMemories')}
                    </button>
                  </div>
                )
              )}
              {rowForgotten !== null && (
                <p className="session-notice" role="status" data-testid="session-forget-memories-notice">
                  {t('sessions.forgotten', { count: rowForgotten })}
                </p>
              )}
              {rowError && (
                <p className="session-error" role="alert">
                  {rowError}
                </p>
              )}
            </li>
          );
        })}
      </ul>
      {shown.length === 0 && !listed && query.trim() === '' && <p className="muted">{t('sessions.empty')}</p>}
      {shown.length === 0 && query.trim() !== '' && <p className="muted">{t('sessions.noMatch')}</p>}
      {runs > 0 && (
        <button type="button" className="link session-runs" data-testid="session-runs-toggle" onClick={() => setShowRuns((v) => !v)}>
          {t(showRuns ? 'sessions.hideRuns' : 'sessions.showRuns', { count: runs })}
        </button>
      )}
    </nav>
  );
}
