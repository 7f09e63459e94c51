// The project add/edit form: its name, standing instructions for its conversations, and its
// workspace folders (one absolute path a line; the engine checks that each exists), with the
// engine's refusal shown under it, in its words.

import { useT } from '../../i18n';
import type { ProjectDraft } from '../../settings/projectsStore';

interface Props {
  /** The project being edited (its name now), or null for a new one. */
  original: string | null;
  draft: ProjectDraft;
  busy: boolean;
  failure: string | null;
  onChange: (patch: Partial<ProjectDraft>) => void;
  onSubmit: () => void;
  onCancel: () => void;
}

export function ProjectForm({ original, draft, busy, failure, onChange, onSubmit, onCancel }: Props) {
  const t = useT();
  return (
    <form
      className="project-form"
      data-testid="project-form"
      aria-labelledby="project-form-heading"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <h3 id="project-form-heading">{original === null ? t('projects.formAdd') : t('projects.formEdit', { name: original })}</h3>
      <div className="field-grid">
        <label>
          <span>{t('projects.name')}</span>
          <input
            data-testid="project-name"
            value={draft.name}
            autoFocus
            autoComplete="off"
            required
            onChange={(e) => onChange({ name: e.target.value })}
          />
        </label>
        <div className="field wide">
          <label>
            <span>{t('projects.instructions')}</span>
            <textarea
              data-testid="project-instructions"
              value={draft.instructions}
              rows={4}
              aria-describedby="project-instructions-help"
              onChange={(e) => onChange({ instructions: e.target.value })}
            />
          </label>
          <small id="project-instructions-help">{t('projects.instructionsHelp')}</small>
        </div>
        <div className="field wide">
          <label>
            <span>{t('projects.folders')}</span>
            <textarea
              data-testid="project-folders"
              value={draft.folders}
              rows={3}
              spellCheck={false}
              placeholder="/home/me/code/site"
              aria-describedby="project-folders-help"
              onChange={(e) => onChange({ folders: e.target.value })}
            />
          </label>
          <small id="project-folders-help">{t('projects.foldersHelp')}</small>
        </div>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" data-testid="project-save" disabled={busy || draft.name.trim() === ''}>
          {original === null ? t('projects.create') : t('projects.save')}
        </button>
        <button type="button" data-testid="project-cancel" disabled={busy} onClick={onCancel}>
          {t('projects.cancel')}
        </button>
      </div>
      {failure && (
        <p className="turn-error" data-testid="project-error" role="alert">
          {t('projects.failed', { message: failure })}
        </p>
      )}
    </form>
  );
}
