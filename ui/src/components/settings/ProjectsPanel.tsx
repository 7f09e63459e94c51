// Projects: the list (name, standing instructions, folders, how many conversations and
// memories each has), Add project and Edit (`ProjectForm`), and Remove, which asks first
// (`ProjectRemoval`). State and calls live in `ProjectsStore`; `onChanged` tells the page,
// whose sidebar and chat show projects too.

import type { Project } from '../../generated/engine';
import { useT } from '../../i18n';
import { type ProjectNotice, ProjectsStore } from '../../settings/projectsStore';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from './LoadState';
import { ProjectForm } from './ProjectForm';
import { ProjectRemoval } from './ProjectRemoval';
import { useSettingsStore } from './useSettingsStore';

interface Props {
  transport: SettingsTransport;
  /** Called after every change the engine took. */
  onChanged?: () => void;
}

const COLUMNS = 6;

function NoticeText({ notice }: { notice: ProjectNotice }) {
  const t = useT();
  if (notice.kind !== 'removed') return <>{t(notice.kind === 'added' ? 'projects.added' : 'projects.saved', { name: notice.name })}</>;
  const { project, moved, deleted } = notice.removed;
  if (moved > 0) return <>{t('projects.removedMoved', { name: project.name, count: moved })}</>;
  if (deleted > 0) return <>{t('projects.removedDeleted', { name: project.name, count: deleted })}</>;
  return <>{t('projects.removed', { name: project.name })}</>;
}

function ProjectCells({ project: p }: { project: Project }) {
  const t = useT();
  return (
    <>
      <td><strong>{p.name}</strong></td>
      <td className="project-instructions">
        {p.instructions ? <span title={p.instructions}>{p.instructions}</span> : <span className="muted">{t('projects.none')}</span>}
      </td>
      <td>
        {p.folders.length === 0 ? (
          <span className="muted">{t('projects.defaultFolders')}</span>
        ) : (
          p.folders.map((f) => <div key={f}><code>{f}</code></div>)
        )}
      </td>
      <td data-testid="project-sessions">{p.sessions}</td>
      <td data-testid="project-memories">{p.memories}</td>
    </>
  );
}

export function ProjectsPanel({ transport, onChanged }: Props) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new ProjectsStore(transport, onChanged));
  const { projects, loadError, editing, removing, busy, failure, notice } = state;
  // A refusal is shown where it happened: in the form, in the removal question, else here.
  const elsewhere = failure !== null && editing === null && removing === null;

  return (
    <section className="panel projects-panel" aria-labelledby="projects-heading">
      <div className="panel-head">
        <h2 id="projects-heading">{t('projects.heading')}</h2>
        <button type="button" data-testid="project-add" disabled={projects === undefined || busy} onClick={() => store.openNew()}>
          {t('projects.add')}
        </button>
      </div>
      <p className="help">{t('projects.help')}</p>
      <LoadState loaded={projects !== undefined} error={loadError} />
      {projects && projects.length === 0 && <p className="muted projects-empty">{t('projects.empty')}</p>}
      {projects && projects.length > 0 && (
        <table className="settings-table projects">
          <thead>
            <tr>
              <th>{t('projects.name')}</th>
              <th>{t('projects.instructions')}</th>
              <th>{t('projects.folders')}</th>
              <th>{t('projects.sessions')}</th>
              <th>{t('projects.memories')}</th>
              <th><span className="sr-only">{t('projects.actions')}</span></th>
            </tr>
          </thead>
          <tbody>
            {projects.flatMap((p) => [
              <tr key={p.id} data-project={p.name}>
                <ProjectCells project={p} />
                <td className="row-actions">
                  <button
                    type="button"
                    data-testid="project-edit"
                    aria-label={t('projects.editLabel', { name: p.name })}
                    disabled={busy}
                    onClick={() => store.openEdit(p.name)}
                  >
                    {t('projects.edit')}
                  </button>
                  <button
                    type="button"
                    className="danger"
                    data-testid="project-remove"
                    aria-label={t('projects.removeLabel', { name: p.name })}
                    disabled={busy}
                    onClick={() => store.requestRemove(p.name)}
                  >
                    {t('projects.remove')}
                  </button>
                </td>
              </tr>,
              ...(removing === p.name
                ? [
                    <tr key={`${p.id}-remove`} className="project-remove-row">
                      <td colSpan={COLUMNS}>
                        <ProjectRemoval
                          project={p}
                          busy={busy}
                          failure={failure}
                          onRemove={(memories) => void store.remove(memories)}
                          onCancel={() => store.cancelRemove()}
                        />
                      </td>
                    </tr>,
                  ]
                : []),
            ])}
          </tbody>
        </table>
      )}
      {editing && (
        <ProjectForm
          key={editing.original ?? 'new'}
          original={editing.original}
          draft={editing.draft}
          busy={busy}
          failure={failure}
          onChange={(patch) => store.change(patch)}
          onSubmit={() => void store.submit()}
          onCancel={() => store.cancel()}
        />
      )}
      {notice && (
        <p className="saved" data-testid="project-notice" role="status">
          <NoticeText notice={notice} />
        </p>
      )}
      {elsewhere && (
        <p className="turn-error" data-testid="project-error" role="alert">
          {t('projects.failed', { message: failure })}
        </p>
      )}
    </section>
  );
}
