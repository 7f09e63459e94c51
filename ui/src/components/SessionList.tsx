// The sidebar: a "new session" button, a search box and the sessions, most recent first
// (automation runs only on request, or when one is open): those in no project first, then a
// group per project (its name as a heading, and "New chat" to start one in it). Each session
// (`SessionRow`) has Rename (inline), Move to project (inline: "No project" or a project; the
// session then shows in its new group), Delete (confirmed inline, asking what becomes of what the
// assistant learned in that conversation: kept, forgotten (Undo on the memory page brings
// them back) or deleted with it for good) and Forget memories (confirmed inline: forgets every
// memory learned in that conversation, as one change that Undo on the memory page brings
// back) actions.

import { useId, useState } from 'react';
import { useT } from '../i18n';
import type { LearnedMemories, SessionDeleted, SessionSummary } from '../generated/engine';
import { type Mode, SessionRow } from './SessionRow';

interface Props {
  sessions: SessionSummary[];
  selected: string | null;
  disabled: boolean;
  onSelect: (name: string) => void;
  onNew: () => void;
  /** Renames a session; rejects with a readable error (shown next to the session). */
  onRename: (name: string, newName: string) => Promise<void>;
  /**
   * Moves a session into a project (by name), or out of any (null); rejects with a readable
   * error (shown next to the session). Without it, no "Move to project" action.
   */
  onMove?: (name: string, project: string | null) => Promise<void>;
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
  /** The projects' names, in the order their groups show (each has a group, even empty). */
  projects?: readonly string[];
  /** The project the selected conversation, not in the list yet, is being started in. */
  newProject?: string | null;
  /** Starts a new conversation in a project (its group's "New chat"). */
  onNewInProject?: (project: string) => void;
}

/** The sessions of one project (`null`: of none), in the list's order. */
export interface SessionGroup {
  project: string | null;
  sessions: SessionSummary[];
}

/**
 * The sessions in no project first, then one group per project: the `projects` in their
 * order, then any other project a session names (the list and the projects read at
 * different moments), by name.
 */
export function groupSessions(sessions: SessionSummary[], projects: readonly string[]): SessionGroup[] {
  const loose: SessionSummary[] = [];
  const byProject = new Map<string, SessionSummary[]>();
  for (const s of sessions) {
    if (s.project) byProject.set(s.project, [...(byProject.get(s.project) ?? []), s]);
    else loose.push(s);
  }
  const others = [...byProject.keys()].filter((p) => !projects.includes(p)).sort();
  return [
    { project: null, sessions: loose },
    ...[...projects, ...others].map((project) => ({ project, sessions: byProject.get(project) ?? [] })),
  ];
}

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

export function SessionList({
  sessions,
  selected,
  disabled,
  onSelect,
  onNew,
  onRename,
  onMove,
  onDelete,
  onForgetMemories,
  projects = [],
  newProject = null,
  onNewInProject,
}: Props) {
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
  const listed = selected !== null && !sessions.some((s) => s.name === selected);
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

  const confirmMove = async (name: string, project: string | null) => {
    if (!onMove) return;
    setBusy(true);
    try {
      await onMove(name, project);
      start(null);
    } catch (e) {
      setMode(null);
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

  const groups = groupSessions(shown, projects);
  const loose = groups.find((g) => g.project === null)?.sessions ?? [];
  const grouped = groups.filter((g): g is SessionGroup & { project: string } => g.project !== null);
  // The new conversation shows in its project's group when it has one.
  const untitledIn = newProject !== null && grouped.some((g) => g.project === newProject) ? newProject : null;
  const untitled = (
    <li>
      <button type="button" className="session current" disabled>
        <span className="session-title">{t('sessions.untitled')}</span>
        <span className="session-meta">{selected}</span>
      </button>
    </li>
  );
  const row = (s: SessionSummary) => (
    <SessionRow
      key={s.id}
      session={s}
      current={s.name === selected}
      disabled={disabled}
      busy={busy}
      mode={mode?.name === s.name ? mode : null}
      error={error?.name === s.name ? error.message : null}
      forgotten={forgotten?.name === s.name ? forgotten.count : null}
      questionId={`${ids}-question-${s.id}`}
      projects={onMove ? projects : null}
      onSelect={onSelect}
      onMode={start}
      onRenameText={(value) => setMode({ kind: 'rename', name: s.name, value })}
      onSaveRename={(name, value) => void saveRename(name, value)}
      onConfirmMove={(name, project) => void confirmMove(name, project)}
      onConfirmDelete={(name, label, memories) => void confirmDelete(name, label, memories)}
      onConfirmForget={(name) => void confirmForget(name)}
    />
  );

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
        {listed && untitledIn === null && untitled}
        {loose.map(row)}
      </ul>
      {shown.length === 0 && !listed && query.trim() === '' && <p className="muted">{t('sessions.empty')}</p>}
      {shown.length === 0 && query.trim() !== '' && <p className="muted">{t('sessions.noMatch')}</p>}
      {grouped.map((g, i) => {
        const here = listed && untitledIn === g.project;
        // While searching, a project without a match stays out of the way.
        if (query.trim() !== '' && g.sessions.length === 0 && !here) return null;
        const heading = `${ids}-project-${i}`;
        return (
          <div key={g.project} className="session-group" role="group" aria-labelledby={heading} data-project={g.project}>
            <div className="session-group-head">
              <h3 id={heading}>{g.project}</h3>
              {onNewInProject && (
                <button
                  type="button"
                  className="session-group-new"
                  data-testid="session-group-new"
                  aria-label={t('sessions.newInProject', { name: g.project })}
                  title={t('sessions.newInProject', { name: g.project })}
                  disabled={disabled}
                  onClick={() => onNewInProject(g.project)}
                >
                  {t('sessions.newHere')}
                </button>
              )}
            </div>
            <ul>
              {here && untitled}
              {g.sessions.map(row)}
            </ul>
            {g.sessions.length === 0 && !here && <p className="muted session-group-empty">{t('sessions.projectEmpty')}</p>}
          </div>
        );
      })}
      {runs > 0 && (
        <button type="button" className="link session-runs" data-testid="session-runs-toggle" onClick={() => setShowRuns((v) => !v)}>
          {t(showRuns ? 'sessions.hideRuns' : 'sessions.showRuns', { count: runs })}
        </button>
      )}
    </nav>
  );
}
