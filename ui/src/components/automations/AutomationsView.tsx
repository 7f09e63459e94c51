// The automations page: "what runs on its own, and what is it waiting for". The approval
// queue of unattended runs on top while it has questions; new automations from templates;
// pause or resume all; the automations with their state and run counts beside the selected
// one's run history; the editor with its live preview (and the projects its runs can be in). State and calls live in
// `AutomationStore`; the queue is `ApprovalQueue`, shared with the header's badge when the app
// passes it. A run opens its conversation (`onOpenChat`) or its trace (`onOpenTrace`).

import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { useT } from '../../i18n';
import { ApprovalQueue } from '../../automations/approvalQueue';
import { AutomationStore, type Notice } from '../../automations/automationStore';
import { TEMPLATE_IDS } from '../../automations/form';
import { anyEnabled } from '../../automations/summary';
import type { Translate } from '../../i18n';
import type { SettingsTransport } from '../../settings/store';
import { useSettingsStore } from '../settings/useSettingsStore';
import { LoadState } from '../settings/LoadState';
import { ApprovalQueuePanel } from './ApprovalQueuePanel';
import { AutomationEditor } from './AutomationEditor';
import { AutomationList } from './AutomationList';
import { RunHistory } from './RunHistory';

interface Props {
  transport: SettingsTransport;
  /** The app's approval queue (the header's badge); the page makes its own without one. */
  queue?: ApprovalQueue;
  onOpenChat?: (session: string) => void;
  onOpenTrace?: (turnId: string) => void;
}

function noticeText(t: Translate, n: Notice): string {
  switch (n.kind) {
    case 'queued':
      return t('automations.notice.queued', { name: n.name, seq: n.seq });
    case 'allPaused':
      return t('automations.notice.allPaused', { count: n.count });
    case 'allResumed':
      return t('automations.notice.allResumed', { count: n.count });
    case 'removed':
      return t('automations.notice.removed', { name: n.name });
    case 'saved':
      return t('automations.notice.saved', { name: n.name });
  }
}

export function AutomationsView({ transport, queue, onOpenChat, onOpenTrace }: Props) {
  const t = useT();
  const [state, store] = useSettingsStore(() => new AutomationStore(transport));
  const [approvals] = useState(() => queue ?? new ApprovalQueue(transport));
  const q = useSyncExternalStore(approvals.subscribe, approvals.getState);
  // The projects the editor offers; without them (not read), none is offered.
  const [projects, setProjects] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    transport.call('list_projects', {}).then(
      (list) => {
        if (live) setProjects(list.map((p) => p.name));
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [transport]);
  useEffect(() => {
    if (approvals === queue) {
      // The app polls it; read it at once on opening the page.
      void approvals.refresh();
      return;
    }
    void approvals.load();
    return () => approvals.dispose();
  }, [approvals, queue]);

  const { list, selected, editor } = state;
  const names = useMemo(() => Object.fromEntries((list ?? []).map((v) => [v.automation.id, v.automation.name])), [list]);
  const selectedView = list?.find((v) => v.automation.id === selected);
  const storedName = editor?.id ? names[editor.id] : undefined;

  return (
    <div className="automations">
      <div className="automations-head">
        <div>
          <h2>{t('automations.heading')}</h2>
          <p className="help">{t('automations.help')}</p>
        </div>
        <div className="buttons automations-all">
          <button
            type="button"
            data-testid="automations-pause-all"
            disabled={state.busy || !list || !anyEnabled(list, true)}
            onClick={() => void store.setAllEnabled(false)}
          >
            {t('automations.pauseAll')}
          </button>
          <button
            type="button"
            data-testid="automations-resume-all"
            disabled={state.busy || !list || !anyEnabled(list, false)}
            onClick={() => void store.setAllEnabled(true)}
          >
            {t('automations.resumeAll')}
          </button>
        </div>
      </div>
      <ApprovalQueuePanel
        pending={q.pending}
        answering={q.answering}
        error={q.error}
        answerError={q.answerError}
        onAnswer={(id, answer) => void approvals.answer(id, answer).then(() => store.refresh())}
        onDismissError={() => approvals.dismissError()}
        onOpenTrace={onOpenTrace}
      />
      {state.actionError && (
        <div className="banner error" role="alert" data-testid="automations-error">
          <span>{t('automations.failed', { message: state.actionError })}</span>
          <button type="button" onClick={() => store.dismiss()}>{t('error.dismiss')}</button>
        </div>
      )}
      {state.notice && (
        <div className="banner notice" role="status" data-testid="automations-notice">
          <span>{noticeText(t, state.notice)}</span>
          <button type="button" onClick={() => store.dismiss()}>{t('error.dismiss')}</button>
        </div>
      )}
      {editor ? (
        <AutomationEditor
          key={editor.id ?? 'new'}
          editor={editor}
          storedName={storedName}
          onChange={(change) => store.editForm(change)}
          onSave={() => void store.save()}
          onCancel={() => store.cancelEdit()}
          projects={projects}
        />
      ) : (
        <div className="automations-templates" role="group" aria-label={t('automations.newFrom')}>
          <span className="muted">{t('automations.newFrom')}</span>
          {TEMPLATE_IDS.map((id) => (
            <button key={id} type="button" data-testid={`template-${id}`} onClick={() => store.startNew(id)}>
              {t(`automations.template.${id}`)}
            </button>
          ))}
        </div>
      )}
      <div className="automations-body">
        <div className="automations-list-pane">
          {(state.loadError || list === undefined) && <LoadState loaded={list !== undefined} error={state.loadError} />}
          {list && list.length === 0 && <p className="muted" data-testid="automations-empty">{t('automations.empty')}</p>}
          {list && list.length > 0 && (
            <AutomationList
              list={list}
              selected={selected}
              busy={state.busy}
              confirmRemove={state.confirmRemove}
              onSelect={(id) => store.select(id)}
              onSetEnabled={(id, enabled) => void store.setEnabled(id, enabled)}
              onRunNow={(id) => void store.runNow(id)}
              onEdit={(id) => store.startEdit(id)}
              onRemove={(id) => store.requestRemove(id)}
              onConfirmRemove={() => void store.confirmRemoval()}
              onCancelRemove={() => store.cancelRemove()}
            />
          )}
        </div>
        <div className="automations-runs-pane">
          <RunHistory
            view={selectedView}
            runs={state.runs}
            error={state.runsError}
            limit={state.runsLimit}
            names={names}
            onShowMore={() => void store.showMoreRuns()}
            onOpenChat={onOpenChat}
            onOpenTrace={onOpenTrace}
          />
        </div>
      </div>
    </div>
  );
}
