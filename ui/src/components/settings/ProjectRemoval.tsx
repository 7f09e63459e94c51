// Removing a project asks first, inline under its row: its conversations stay (in no
// project), and, when it has memories, the person chooses whether they become global
// memories or are deleted for good (the only choice that cannot be undone looks dangerous);
// Cancel has the focus and Esc cancels. The engine's refusal is shown here, in its words.

import type { Project, ProjectMemories } from '../../generated/engine';
import { useT } from '../../i18n';

interface Props {
  project: Project;
  busy: boolean;
  failure: string | null;
  /** Removes it; `memories` is given exactly when it has memories. */
  onRemove: (memories?: ProjectMemories) => void;
  onCancel: () => void;
}

export function ProjectRemoval({ project, busy, failure, onRemove, onCancel }: Props) {
  const t = useT();
  const question = `project-remove-question-${project.id}`;
  const hasMemories = project.memories > 0;
  return (
    <div
      className="project-remove"
      role="group"
      aria-labelledby={question}
      data-testid="project-remove-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      <p id={question}>
        {hasMemories
          ? t('projects.removeWithMemories', { name: project.name, count: project.memories })
          : t('projects.removeConfirm', { name: project.name })}
      </p>
      <div className="form-actions">
        {hasMemories ? (
          <>
            <button type="button" data-testid="project-remove-global" disabled={busy} onClick={() => onRemove('global')}>
              {t('projects.removeGlobal')}
            </button>
            <button type="button" className="danger" data-testid="project-remove-delete" disabled={busy} onClick={() => onRemove('delete')}>
              {t('projects.removeDelete')}
            </button>
          </>
        ) : (
          <button type="button" className="danger" data-testid="project-remove-yes" disabled={busy} onClick={() => onRemove()}>
            {t('projects.removeYes')}
          </button>
        )}
        <button type="button" data-testid="project-remove-cancel" autoFocus disabled={busy} onClick={onCancel}>
          {t('projects.cancel')}
        </button>
      </div>
      {failure && (
        <p className="turn-error" data-testid="project-error" role="alert">
          {t('projects.removeFailed', { message: failure })}
        </p>
      )}
    </div>
  );
}
