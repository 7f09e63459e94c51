// The automation form: name and trigger kind; for a watch rule its folders, subfolders,
// include and exclude globs, events, settle time and hidden files; for a schedule its cron
// text, zone and missed-run policy; then the prompt (with the variables it can use), tools,
// pre-approvals, task type, the project its runs' conversations belong to, and limits. Beside it the engine's preview: the next five fire
// times in the schedule's zone, or the folders and which of them do not exist, or why the
// spec is not valid.

import { useEffect, useRef } from 'react';
import type { AutomationPreview } from '../../generated/engine';
import { useT } from '../../i18n';
import type { Editor } from '../../automations/automationStore';
import {
  type AutomationForm,
  FILE_EVENTS,
  MAX_CONCURRENCY,
  MISSED_POLICIES,
  PROMPT_VARIABLES,
  TASK_TYPES,
  type TriggerKind,
  toggleEvent,
} from '../../automations/form';
import { formatFireTime } from '../../automations/summary';
import { oneOf } from '../../settings/store';

interface Props {
  editor: Editor;
  /** The stored automation's name (Edit), for the heading. */
  storedName: string | undefined;
  onChange: (change: Partial<AutomationForm>) => void;
  onSave: () => void;
  onCancel: () => void;
  /** The projects' names, offered for its runs' conversations. */
  projects?: readonly string[];
}

const KINDS: readonly TriggerKind[] = ['watch', 'schedule'];

export function AutomationEditor({ editor, storedName, onChange, onSave, onCancel, projects = [] }: Props) {
  const t = useT();
  const { form, problem } = editor;
  const formRef = useRef<HTMLFormElement>(null);
  // Opened from a card further down the page: bring the form into view.
  useEffect(() => {
    formRef.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);
  const fieldError = (field: NonNullable<typeof problem>['field']) =>
    problem?.field === field ? (
      <small className="error-text" role="alert" data-testid={`form-problem-${field}`}>
        {t(problem.key)}
      </small>
    ) : null;
  // A project the list does not know (yet) stays offered, so saving keeps it.
  const projectChoices = form.project && !projects.includes(form.project) ? [...projects, form.project] : projects;
  const setAllow = (i: number, change: Partial<AutomationForm['allow'][number]>) =>
    onChange({ allow: form.allow.map((a, j) => (j === i ? { ...a, ...change } : a)) });

  return (
    <form
      ref={formRef}
      className="panel automation-editor"
      data-testid="automation-editor"
      onSubmit={(e) => {
        e.preventDefault();
        onSave();
      }}
    >
      <h3>{editor.id === null ? t('automations.form.add') : t('automations.form.edit', { name: storedName ?? form.name })}</h3>
      <div className="automation-editor-body">
        <div className="field-grid">
          <label className="field">
            <span>{t('automations.form.name')}</span>
            <input name="name" data-testid="form-name" value={form.name} onChange={(e) => onChange({ name: e.target.value })} />
            <small>{t('automations.form.nameHelp')}</small>
            {fieldError('name')}
          </label>
          <label className="field">
            <span>{t('automations.form.kind')}</span>
            <select
              name="kind"
              data-testid="form-kind"
              value={form.kind}
              onChange={(e) => onChange({ kind: oneOf(KINDS, e.target.value) ?? form.kind })}
            >
              {KINDS.map((k) => (
                <option key={k} value={k}>{t(`automations.kind.${k}`)}</option>
              ))}
            </select>
          </label>

          {form.kind === 'watch' ? (
            <>
              <label className="field wide">
                <span>{t('automations.form.folders')}</span>
                <textarea name="folders" data-testid="form-folders" rows={2} value={form.folders} onChange={(e) => onChange({ folders: e.target.value })} />
              </label>
              <label className="field">
                <span>{t('automations.form.include')}</span>
                <textarea name="include" data-testid="form-include" rows={2} value={form.include} onChange={(e) => onChange({ include: e.target.value })} />
              </label>
              <label className="field">
                <span>{t('automations.form.exclude')}</span>
                <textarea name="exclude" data-testid="form-exclude" rows={2} value={form.exclude} onChange={(e) => onChange({ exclude: e.target.value })} />
              </label>
              <fieldset className="field wide automation-events">
                <legend>{t('automations.form.events')}</legend>
                {FILE_EVENTS.map((ev) => (
                  <label key={ev} className="check">
                    <input
                      type="checkbox"
                      data-testid={`form-event-${ev}`}
                      checked={form.events.includes(ev)}
                      onChange={() => onChange({ events: toggleEvent(form, ev).events })}
                    />
                    <span>{t(`automations.event.${ev}`)}</span>
                  </label>
                ))}
              </fieldset>
              <label className="field">
                <span>{t('automations.form.settleMs')}</span>
                <input name="settleMs" data-testid="form-settle" inputMode="numeric" value={form.settleMs} onChange={(e) => onChange({ settleMs: e.target.value })} />
                {fieldError('settleMs')}
              </label>
              <label className="check">
                <input type="checkbox" data-testid="form-recursive" checked={form.recursive} onChange={(e) => onChange({ recursive: e.target.checked })} />
                <span>{t('automations.form.recursive')}</span>
              </label>
              <label className="check">
                <input type="checkbox" data-testid="form-hidden" checked={form.includeHidden} onChange={(e) => onChange({ includeHidden: e.target.checked })} />
                <span>{t('automations.form.includeHidden')}</span>
              </label>
            </>
          ) : (
            <>
              <label className="field wide">
                <span>{t('automations.form.cron')}</span>
                <input name="cron" data-testid="form-cron" value={form.cron} placeholder="0 8 * * 1-5" onChange={(e) => onChange({ cron: e.target.value })} />
                <small>{t('automations.form.cronHelp')}</small>
              </label>
              <label className="field">
                <span>{t('automations.form.timeZone')}</span>
                <input
                  name="timeZone"
                  data-testid="form-zone"
                  value={form.timeZone}
                  placeholder={t('automations.form.timeZonePlaceholder')}
                  onChange={(e) => onChange({ timeZone: e.target.value })}
                />
              </label>
              <label className="field">
                <span>{t('automations.form.missed')}</span>
                <select
                  name="missed"
                  data-testid="form-missed"
                  value={form.missed}
                  onChange={(e) => onChange({ missed: oneOf(MISSED_POLICIES, e.target.value) ?? form.missed })}
                >
                  {MISSED_POLICIES.map((m) => (
                    <option key={m} value={m}>{t(`automations.form.missed.${m}`)}</option>
                  ))}
                </select>
              </label>
            </>
          )}

          <label className="field wide">
            <span>{t('automations.form.prompt')}</span>
            <textarea name="prompt" data-testid="form-prompt" rows={4} value={form.prompt} onChange={(e) => onChange({ prompt: e.target.value })} />
            <small data-testid="form-variables">
              {t('automations.form.variables', { vars: PROMPT_VARIABLES.map((v) => `{{${v}}}`).join(' ') })}
            </small>
          </label>
          <label className="field wide">
            <span>{t('automations.form.tools')}</span>
            <input name="tools" data-testid="form-tools" value={form.tools} placeholder="read_file, write_file" onChange={(e) => onChange({ tools: e.target.value })} />
          </label>
          <div className="field wide automation-allow">
            <span>{t('automations.form.allow')}</span>
            <small>{t('automations.form.allowHelp')}</small>
            {form.allow.map((a, i) => (
              <div key={i} className="allow-row" data-testid="form-allow-row">
                <input
                  aria-label={t('automations.form.allowTool')}
                  placeholder={t('automations.form.allowTool')}
                  data-testid="form-allow-tool"
                  value={a.tool}
                  onChange={(e) => setAllow(i, { tool: e.target.value })}
                />
                <input
                  aria-label={t('automations.form.allowPattern')}
                  placeholder={t('automations.form.allowPattern')}
                  data-testid="form-allow-pattern"
                  value={a.pattern}
                  onChange={(e) => setAllow(i, { pattern: e.target.value })}
                />
                <button type="button" data-testid="form-allow-remove" onClick={() => onChange({ allow: form.allow.filter((_, j) => j !== i) })}>
                  {t('automations.form.allowRemove')}
                </button>
              </div>
            ))}
            <div>
              <button type="button" data-testid="form-allow-add" onClick={() => onChange({ allow: [...form.allow, { tool: '', pattern: '' }] })}>
                {t('automations.form.allowAdd')}
              </button>
            </div>
          </div>
          <label className="field">
            <span>{t('automations.form.task')}</span>
            <select name="task" data-testid="form-task" value={form.task} onChange={(e) => onChange({ task: oneOf(TASK_TYPES, e.target.value) ?? '' })}>
              <option value="">{t('automations.form.taskAuto')}</option>
              {TASK_TYPES.map((task) => (
                <option key={task} value={task}>{t(`automations.form.task.${task}`)}</option>
              ))}
            </select>
          </label>
          {projectChoices.length > 0 && (
            <label className="field">
              <span>{t('automations.form.project')}</span>
              <select name="project" data-testid="form-project" value={form.project} onChange={(e) => onChange({ project: e.target.value })}>
                <option value="">{t('automations.form.projectNone')}</option>
                {projectChoices.map((p) => (
                  <option key={p} value={p}>{p}</option>
                ))}
              </select>
            </label>
          )}
          <label className="field">
            <span>{t('automations.form.concurrency')}</span>
            <select name="concurrency" data-testid="form-concurrency" value={form.concurrency} onChange={(e) => onChange({ concurrency: e.target.value })}>
              {Array.from({ length: MAX_CONCURRENCY }, (_, i) => String(i + 1)).map((n) => (
                <option key={n} value={n}>{n}</option>
              ))}
              {!/^[1-4]$/.test(form.concurrency) && <option value={form.concurrency}>{form.concurrency}</option>}
            </select>
            {fieldError('concurrency')}
          </label>
          <label className="field">
            <span>{t('automations.form.maxRunsPerHour')}</span>
            <input name="maxRunsPerHour" inputMode="numeric" value={form.maxRunsPerHour} onChange={(e) => onChange({ maxRunsPerHour: e.target.value })} />
            {fieldError('maxRunsPerHour')}
          </label>
          {form.kind === 'watch' && (
            <label className="field">
              <span>{t('automations.form.maxRunsPerFilePerHour')}</span>
              <input
                name="maxRunsPerFilePerHour"
                inputMode="numeric"
                value={form.maxRunsPerFilePerHour}
                onChange={(e) => onChange({ maxRunsPerFilePerHour: e.target.value })}
              />
              {fieldError('maxRunsPerFilePerHour')}
            </label>
          )}
        </div>
        <Preview editor={editor} />
      </div>
      {editor.saveError && (
        <p className="banner error" role="alert" data-testid="form-save-error">{t('automations.form.saveFailed', { message: editor.saveError })}</p>
      )}
      <div className="form-actions">
        <button type="submit" className="primary" data-testid="form-save" disabled={editor.saving}>
          {editor.saving ? t('automations.form.saving') : t('automations.form.save')}
        </button>
        <button type="button" data-testid="form-cancel" onClick={onCancel}>{t('automations.form.cancel')}</button>
      </div>
    </form>
  );
}

function Preview({ editor }: { editor: Editor }) {
  const t = useT();
  const { preview, previewError, previewing } = editor;
  return (
    <aside className="automation-preview" aria-live="polite" data-testid="automation-preview">
      <h4>{t('automations.preview.heading')}</h4>
      {previewError ? (
        <p className="error-text" role="alert" data-testid="preview-error">{t('automations.preview.invalid', { message: previewError })}</p>
      ) : preview ? (
        <PreviewBody preview={preview} />
      ) : (
        previewing && <p className="muted">{t('automations.preview.checking')}</p>
      )}
    </aside>
  );
}

function PreviewBody({ preview }: { preview: AutomationPreview }) {
  const t = useT();
  // A schedule's preview has its cron (absent or null for a watch rule: the engine sends null).
  if (preview.cron || preview.next_fires.length > 0) {
    return (
      <>
        <p>{t('automations.preview.cron', { cron: preview.cron ?? '', zone: preview.time_zone ?? '' })}</p>
        <ol className="preview-fires" data-testid="preview-fires">
          {preview.next_fires.slice(0, 5).map((f) => (
            <li key={f}>{formatFireTime(f, preview.time_zone)}</li>
          ))}
        </ol>
      </>
    );
  }
  const missing = new Set(preview.missing_folders);
  return (
    <>
      <p>{t('automations.preview.folders')}</p>
      <ul className="preview-folders" data-testid="preview-folders">
        {preview.folders.map((f) => (
          <li key={f} className={missing.has(f) ? 'warn-text' : undefined} data-missing={missing.has(f) || undefined}>
            {missing.has(f) ? t('automations.preview.missing', { folder: f }) : f}
          </li>
        ))}
      </ul>
    </>
  );
}
