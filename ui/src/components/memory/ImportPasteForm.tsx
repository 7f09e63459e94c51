// The first step of an import from another assistant: what to paste and where to find it, the
// text, the project cards about its work go to (none: all global), and Read, which has the
// memory model read it (busy meanwhile: a model call can take a while).

import { useId } from 'react';
import type { Project } from '../../generated/engine';
import { useT } from '../../i18n';

interface Props {
  text: string;
  project: string;
  projects: readonly Project[];
  reading: boolean;
  canRead: boolean;
  onText: (text: string) => void;
  onProject: (project: string) => void;
  onRead: () => void;
  onClose: () => void;
}

export function ImportPasteForm({ text, project, projects, reading, canRead, onText, onProject, onRead, onClose }: Props) {
  const t = useT();
  const hintId = useId();
  const projectHelpId = useId();
  return (
    <form
      className="assistant-import-paste"
      aria-busy={reading}
      onSubmit={(e) => {
        e.preventDefault();
        onRead();
      }}
    >
      <p className="help" id={hintId}>{t('memory.assistantImport.hint')}</p>
      <label className="assistant-import-field">
        <span>{t('memory.assistantImport.text')}</span>
        <textarea
          data-testid="assistant-import-text"
          aria-describedby={hintId}
          value={text}
          rows={10}
          readOnly={reading}
          autoFocus
          onChange={(e) => onText(e.target.value)}
        />
      </label>
      {projects.length > 0 && (
        <div className="assistant-import-field">
          <label>
            <span>{t('memory.assistantImport.project')}</span>
            <select
              data-testid="assistant-import-project"
              aria-describedby={projectHelpId}
              value={project}
              disabled={reading}
              onChange={(e) => onProject(e.target.value)}
            >
              <option value="">{t('memory.assistantImport.projectNone')}</option>
              {projects.map((p) => <option key={p.id} value={p.name}>{p.name}</option>)}
            </select>
          </label>
          <span className="help" id={projectHelpId}>{t('memory.assistantImport.projectHelp')}</span>
        </div>
      )}
      <p className="help">{t('memory.assistantImport.nothingYet')}</p>
      {reading && <p role="status" data-testid="assistant-import-reading">{t('memory.assistantImport.readingNote')}</p>}
      <div className="buttons">
        <button type="submit" className="primary" data-testid="assistant-import-read" disabled={!canRead}>
          {reading ? t('memory.assistantImport.reading') : t('memory.assistantImport.read')}
        </button>
        <button type="button" data-testid="assistant-import-close" onClick={onClose}>{t('memory.assistantImport.close')}</button>
      </div>
    </form>
  );
}
