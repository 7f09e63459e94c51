// A conversation's project: chosen before its first message (a select of "No project" and
// every project, beside the temporary chat toggle), then said near the top of the chat (it
// stays in that project unless moved from the sidebar's "Move to project").

import type { Project } from '../generated/engine';
import { useT } from '../i18n';

interface SelectProps {
  projects: readonly Project[];
  /** The chosen project's name, or null for none. */
  project: string | null;
  /** Whether it can still change: a new conversation before its first message. */
  canChange: boolean;
  onChange: (project: string | null) => void;
}

/** The select under a new conversation; nothing when there are no projects or it is too late. */
export function ProjectSelect({ projects, project, canChange, onChange }: SelectProps) {
  const t = useT();
  if (!canChange || projects.length === 0) return null;
  return (
    <label className="project-select" title={t('chat.projectHelp')}>
      <span>{t('chat.project')}</span>
      <select
        data-testid="project-select"
        value={project ?? ''}
        onChange={(e) => onChange(e.target.value === '' ? null : e.target.value)}
      >
        <option value="">{t('chat.projectNone')}</option>
        {projects.map((p) => (
          <option key={p.id} value={p.name}>
            {p.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The project a conversation that has begun is in; nothing for one in no project. */
export function ProjectLabel({ project }: { project: string | null }) {
  const t = useT();
  if (project === null) return null;
  return (
    <p className="chat-project" data-testid="chat-project">
      {t('chat.projectLabel', { name: project })}
    </p>
  );
}
