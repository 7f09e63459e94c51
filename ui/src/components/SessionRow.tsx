// One conversation in the sidebar: the button that opens it (or its name being edited), its
// Rename, Move to project, Delete and Forget memories actions, the inline choice of a project
// ("No project" and every project, the current one marked and not offered) and confirmations
// of the last two, and what the last action on it said (how many memories were forgotten, or
// the engine's refusal). The list (`SessionList`) owns which row is doing what; a row only
// shows it.

import type { LearnedMemories, SessionSummary } from '../generated/engine';
import { useT } from '../i18n';

/** What one row is doing besides being listed. */
export type Mode =
  | { kind: 'rename'; name: string; value: string }
  | { kind: 'move'; name: string }
  | { kind: 'confirmDelete'; name: string }
  | { kind: 'confirmForget'; name: string };

interface Props {
  session: SessionSummary;
  current: boolean;
  /** A turn runs: only the current row opens, and no action is offered. */
  disabled: boolean;
  /** An action is on its way. */
  busy: boolean;
  /** What the list says this row is doing (only this row's mode, or null). */
  mode: Mode | null;
  /** The engine's refusal of the last action on this row. */
  error: string | null;
  /** How many memories the last "forget memories" on this row forgot. */
  forgotten: number | null;
  /** Where the delete or move question's label lives (unique in the page). */
  questionId: string;
  /** The projects' names it can be moved among; null: no "Move to project" action. */
  projects: readonly string[] | null;
  onSelect: (name: string) => void;
  /** Starts (or, with null, ends) what the row is doing. */
  onMode: (mode: Mode | null) => void;
  /** The new name as typed. */
  onRenameText: (value: string) => void;
  onSaveRename: (name: string, value: string) => void;
  /** Moves it into the project named so, or out of any (null). */
  onConfirmMove: (name: string, project: string | null) => void;
  onConfirmDelete: (name: string, label: string, memories: LearnedMemories) => void;
  onConfirmForget: (name: string) => void;
}

function DeleteConfirm({ busy, questionId, onCancel, onConfirm }: {
  busy: boolean;
  questionId: string;
  onCancel: () => void;
  onConfirm: (memories: LearnedMemories) => void;
}) {
  const t = useT();
  const choice = (memories: LearnedMemories, testId: string, className: string, label: string, help: string) => (
    <button
      type="button"
      className={className}
      data-testid={testId}
      title={help}
      disabled={busy}
      onClick={() => onConfirm(memories)}
    >
      {label}
    </button>
  );
  return (
    <div
      className="session-actions session-confirm session-delete-confirm"
      role="group"
      aria-labelledby={questionId}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      <span id={questionId}>{t('sessions.deleteConfirm')}</span>
      {choice('keep', 'session-delete-keep', 'session-delete-keep', t('sessions.deleteKeep'), t('sessions.deleteKeepHelp'))}
      {choice('forget', 'session-delete-forget', 'session-delete-forget', t('sessions.deleteForget'), t('sessions.deleteForgetHelp'))}
      {choice('delete', 'session-delete-purge', 'session-delete-purge danger', t('sessions.deletePurge'), t('sessions.deletePurgeHelp'))}
      <button type="button" className="session-delete-no" data-testid="session-delete-no" autoFocus disabled={busy} onClick={onCancel}>
        {t('sessions.cancel')}
      </button>
    </div>
  );
}

/**
 * Where to move a conversation: "No project" and every project (plus its own, should the
 * list not know it), its current place marked and disabled; Cancel (or Esc) keeps it.
 */
function MoveChoice({ label, current, projects, busy, questionId, onCancel, onMove }: {
  label: string;
  /** Its project, or null for none. */
  current: string | null;
  projects: readonly string[];
  busy: boolean;
  questionId: string;
  onCancel: () => void;
  onMove: (project: string | null) => void;
}) {
  const t = useT();
  const places = current !== null && !projects.includes(current) ? [...projects, current] : projects;
  const choice = (project: string | null, text: string) => {
    const here = project === current;
    return (
      <button
        key={project ?? ''}
        type="button"
        className={here ? 'session-move-choice current' : 'session-move-choice'}
        data-testid="session-move-choice"
        data-project={project ?? ''}
        aria-current={here ? 'true' : undefined}
        disabled={busy || here}
        onClick={() => onMove(project)}
      >
        {here ? t('sessions.moveCurrent', { name: text }) : text}
      </button>
    );
  };
  return (
    <div
      className="session-actions session-move"
      role="group"
      aria-labelledby={questionId}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      <span id={questionId}>{t('sessions.moveQuestion', { name: label })}</span>
      {choice(null, t('sessions.moveNone'))}
      {places.map((p) => choice(p, p))}
      <button type="button" className="session-move-no" data-testid="session-move-no" autoFocus disabled={busy} onClick={onCancel}>
        {t('sessions.cancel')}
      </button>
    </div>
  );
}

function ForgetConfirm({ busy, onCancel, onConfirm }: { busy: boolean; onCancel: () => void; onConfirm: () => void }) {
  const t = useT();
  return (
    <div className="session-actions session-forget-confirm" role="group" aria-label={t('sessions.forgetMemories')}>
      <span>{t('sessions.forgetConfirm')}</span>
      <button type="button" className="session-forget-yes danger" data-testid="session-forget-memories-yes" disabled={busy} onClick={onConfirm}>
        {t('sessions.forgetYes')}
      </button>
      <button type="button" className="session-forget-no" data-testid="session-forget-memories-no" disabled={busy} onClick={onCancel}>
        {t('sessions.no')}
      </button>
    </div>
  );
}

export function SessionRow({ session: s, current, disabled, busy, mode, error, forgotten, questionId, projects, ...on }: Props) {
  const t = useT();
  const renaming = mode?.kind === 'rename' ? mode : null;
  const label = s.title || s.name;
  // Somewhere to move it to: a project, or out of the one it is in.
  const movable = projects !== null && (projects.length > 0 || Boolean(s.project));
  return (
    <li className="session-row" data-row={s.name}>
      {renaming ? (
        <input
          className="session-rename"
          autoFocus
          value={renaming.value}
          disabled={busy}
          aria-label={t('sessions.renameLabel', { name: s.name })}
          onChange={(e) => on.onRenameText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              on.onSaveRename(s.name, renaming.value);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              on.onMode(null);
            }
          }}
        />
      ) : (
        <button
          type="button"
          className={current ? 'session current' : 'session'}
          data-session={s.name}
          disabled={disabled && !current}
          onClick={() => on.onSelect(s.name)}
        >
          <span className="session-title">{label}</span>
          <span className="session-meta">{t('sessions.messages', { count: s.message_count })}</span>
        </button>
      )}
      {mode?.kind === 'confirmDelete' ? (
        <DeleteConfirm
          busy={busy}
          questionId={questionId}
          onCancel={() => on.onMode(null)}
          onConfirm={(memories) => on.onConfirmDelete(s.name, label, memories)}
        />
      ) : mode?.kind === 'move' ? (
        <MoveChoice
          label={label}
          current={s.project ?? null}
          projects={projects ?? []}
          busy={busy}
          questionId={questionId}
          onCancel={() => on.onMode(null)}
          onMove={(project) => on.onConfirmMove(s.name, project)}
        />
      ) : mode?.kind === 'confirmForget' ? (
        <ForgetConfirm busy={busy} onCancel={() => on.onMode(null)} onConfirm={() => on.onConfirmForget(s.name)} />
      ) : (
        !renaming && (
          <div className="session-actions">
            <button
              type="button"
              className="session-rename-button"
              disabled={disabled || busy}
              onClick={() => on.onMode({ kind: 'rename', name: s.name, value: s.name })}
            >
              {t('sessions.rename')}
            </button>
            {movable && (
              <button
                type="button"
                className="session-move-button"
                data-testid="session-move"
                title={t('sessions.moveHelp')}
                disabled={disabled || busy}
                onClick={() => on.onMode({ kind: 'move', name: s.name })}
              >
                {t('sessions.move')}
              </button>
            )}
            <button
              type="button"
              className="session-delete-button"
              disabled={disabled || busy}
              onClick={() => on.onMode({ kind: 'confirmDelete', name: s.name })}
            >
              {t('sessions.delete')}
            </button>
            <button
              type="button"
              className="session-forget-button"
              data-testid="session-forget-memories"
              title={t('sessions.forgetMemoriesHelp')}
              disabled={disabled || busy}
              onClick={() => on.onMode({ kind: 'confirmForget', name: s.name })}
            >
              {t('sessions.forgetMemories')}
            </button>
          </div>
        )
      )}
      {forgotten !== null && (
        <p className="session-notice" role="status" data-testid="session-forget-memories-notice">
          {t('sessions.forgotten', { count: forgotten })}
        </p>
      )}
      {error && (
        <p className="session-error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
