// @vitest-environment jsdom
// The automations page in jsdom against an in-memory engine: the list shows each automation's
// state (with the reason when it is in error), trigger and run counts, and the first one's
// runs with links to their conversation and trace; a template opens the editor prefilled
// and previews it, an invalid zone shows the engine's message inline, Save adds it; Remove
// asks first; Pause all pauses; the approval queue shows the exact action and answers; the
// editor offers the projects for its runs' conversations.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalQueue } from '../../automations/approvalQueue';
import { PREVIEW_DELAY_MS } from '../../automations/automationStore';
import { automation, automationsEngine, question, run, scheduleSpec, watchSpec } from '../../automations/testFakes';
import { project } from '../../memory/testFakes';
import { byTestId, cleanup, fill, flush, mount } from '../settings/testing';
import { AutomationsView } from './AutomationsView';

afterEach(cleanup);

const all = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const click = async (el: Element | null | undefined) => {
  if (!el) throw new Error('nothing to click');
  await act(async () => (el as HTMLElement).click());
  await flush();
};
const typing = async (el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null, value: string) => {
  if (!el) throw new Error('no field');
  act(() => fill(el, value));
  await act(async () => {
    await new Promise((r) => setTimeout(r, PREVIEW_DELAY_MS + 20));
  });
  await flush();
};

function engine() {
  return automationsEngine(
    [
      automation(1, watchSpec(), { name: 'inbox', state: 'error', state_reason: 'cannot watch ~/Inbox: permission denied' }),
      automation(2, scheduleSpec('0 8 * * 1-5', 'Europe/Berlin'), { name: 'brief' }),
    ],
    [
      run(1, 'a-2', { cause: 'schedule', event: undefined, path: undefined, fire_time: '2026-12-02T08:00:00+01:00', session: 'brief · run 1', turn_id: 't-b1' }),
      run(2, 'a-2', { status: 'failed', cause: 'schedule', event: undefined, path: undefined, reason: 'the model failed', session: undefined, turn_id: undefined }),
    ],
  );
}

describe('AutomationsView', () => {
  it('lists automations and the selected one’s runs, with links to chat and trace', async () => {
    const e = engine();
    const chats: string[] = [];
    const traces: string[] = [];
    const { container, root } = mount(<AutomationsView transport={e} onOpenChat={(s) => chats.push(s)} onOpenTrace={(id) => traces.push(id)} />);
    await flush();
    const cards = all(container, 'automation');
    expect(cards.map((c) => c.querySelector('.automation-name')?.textContent)).toEqual(['brief', 'inbox']);
    expect(cards[1]?.querySelector('[data-testid="automation-state"]')?.textContent).toBe('error');
    expect(cards[1]?.querySelector('[data-testid="automation-reason"]')?.textContent).toBe('cannot watch ~/Inbox: permission denied');
    expect(cards[0]?.querySelector('[data-testid="automation-reason"]')).toBeNull();
    expect(cards[1]?.querySelector('[data-testid="automation-trigger"]')?.textContent).toBe('Watches ~/Inbox for *.pdf (created)');
    expect(cards[0]?.querySelector('[data-testid="automation-trigger"]')?.textContent).toMatch(/^Schedule 0 8 \* \* 1-5 — next .*08:00 \(Europe\/Berlin\)$/);
    expect(cards[0]?.querySelector('[data-testid="automation-counts"]')?.textContent).toBe('1 done · 1 failed');
    expect(cards[1]?.querySelector('[data-testid="automation-counts"]')?.textContent).toBe('no runs yet');

    const runs = all(container, 'run');
    expect(runs.map((r) => r.dataset.status)).toEqual(['failed', 'done']);
    expect(runs[0]?.textContent).toContain('the model failed');
    expect(runs[0]?.querySelector('[data-testid="run-open-chat"]')).toBeNull();
    await click(runs[1]?.querySelector('[data-testid="run-open-chat"]'));
    await click(runs[1]?.querySelector('[data-testid="run-open-trace"]'));
    expect(chats).toEqual(['brief · run 1']);
    expect(traces).toEqual(['t-b1']);

    await click(cards[1]?.querySelector('[data-testid="automation-runs"]'));
    expect(byTestId(container, 'runs-empty')).not.toBeNull();
    expect(e.sent('automation_runs').at(-1)).toMatchObject({ automation: 'a-1' });
    act(() => root.unmount());
  });

  it('creates from a template with a live preview and the engine’s error inline', async () => {
    const e = engine();
    const { container, root } = mount(<AutomationsView transport={e} />);
    await flush();
    await click(byTestId(container, 'template-morningBrief'));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 10));
    });
    await flush();
    expect(byTestId<HTMLInputElement>(container, 'form-cron')?.value).toBe('0 8 * * 1-5');
    expect(byTestId<HTMLSelectElement>(container, 'form-missed')?.value).toBe('run_once');
    expect(byTestId(container, 'form-variables')?.textContent).toContain('{{path}} {{name}} {{ext}} {{event}} {{old_path}} {{time}}');
    expect(all(container, 'preview-fires')[0]?.querySelectorAll('li')).toHaveLength(5);

    await typing(byTestId<HTMLInputElement>(container, 'form-zone'), 'Mars');
    expect(byTestId(container, 'preview-error')?.textContent).toContain('"Mars" is not an IANA time zone');
    await typing(byTestId<HTMLInputElement>(container, 'form-zone'), 'Europe/Berlin');
    expect(byTestId(container, 'preview-error')).toBeNull();
    expect(byTestId(container, 'preview-fires')?.textContent).toContain('(Europe/Berlin)');

    await click(byTestId(container, 'form-save'));
    expect(e.sent('add_automation')).toEqual([
      expect.objectContaining({ name: 'Morning brief', spec: expect.objectContaining({ trigger: { kind: 'schedule', cron: '0 8 * * 1-5', time_zone: 'Europe/Berlin', missed: 'run_once' } }) }),
    ]);
    expect(byTestId(container, 'automation-editor')).toBeNull();
    expect(byTestId(container, 'automations-notice')?.textContent).toContain('Saved Morning brief.');
    expect(all(container, 'automation').map((c) => c.querySelector('.automation-name')?.textContent)).toContain('Morning brief');
    act(() => root.unmount());
  });

  it('puts an automation\'s runs in a project chosen in the editor, and keeps it through an edit', async () => {
    const e = engine();
    e.handlers.list_projects = () => [project(1, 'Kitchen'), project(2, 'Thesis')];
    const { container, root } = mount(<AutomationsView transport={e} />);
    await flush();
    await click(byTestId(container, 'template-morningBrief'));
    const select = () => byTestId<HTMLSelectElement>(container, 'form-project') as HTMLSelectElement;
    expect([...select().options].map((o) => o.textContent)).toEqual(['No project', 'Kitchen', 'Thesis']);
    expect(select().value).toBe('');
    await typing(select(), 'Thesis');
    await click(byTestId(container, 'form-save'));
    expect(e.sent('add_automation')).toEqual([expect.objectContaining({ spec: expect.objectContaining({ project: 'Thesis' }) })]);
    act(() => root.unmount());
  });

  it('shows a watch rule’s folders, and which are missing', async () => {
    const e = engine();
    const { container, root } = mount(<AutomationsView transport={e} />);
    await flush();
    await click(byTestId(container, 'template-inboxPdfs'));
    await typing(byTestId<HTMLTextAreaElement>(container, 'form-folders'), '~/Inbox\n~/missing');
    const folders = byTestId(container, 'preview-folders');
    expect(folders?.textContent).toContain('/home/me/Inbox');
    expect(folders?.querySelector('[data-missing]')?.textContent).toBe('Does not exist yet (the rule waits for it): /home/me/missing');
    expect(all(container, 'form-allow-row')).toHaveLength(1);
    expect(byTestId<HTMLInputElement>(container, 'form-allow-pattern')?.value).toBe('~/Notes/**');
    await click(byTestId(container, 'form-cancel'));
    expect(byTestId(container, 'automation-editor')).toBeNull();
    act(() => root.unmount());
  });

  it('removes only after confirmation, pauses all and runs now', async () => {
    const e = engine();
    const { container, root } = mount(<AutomationsView transport={e} />);
    await flush();
    await click(all(container, 'automation')[1]?.querySelector('[data-testid="automation-remove"]'));
    expect(byTestId(container, 'automation-remove-confirm')?.textContent).toContain('Remove inbox and its run history?');
    expect(e.sent('remove_automation')).toEqual([]);
    await click(byTestId(container, 'automation-remove-yes'));
    expect(e.sent('remove_automation')).toEqual([{ automation: 'a-1' }]);
    expect(all(container, 'automation')).toHaveLength(1);

    await click(byTestId(container, 'automations-pause-all'));
    expect(e.sent('set_all_automations_enabled')).toEqual([{ enabled: false }]);
    expect(byTestId(container, 'automations-notice')?.textContent).toContain('Paused 1 automation.');
    expect(byTestId<HTMLInputElement>(container, 'automation-enabled')?.checked).toBe(false);
    expect(byTestId<HTMLButtonElement>(container, 'automations-pause-all')?.disabled).toBe(true);

    await click(byTestId(container, 'automation-enabled'));
    expect(e.sent('set_automation_enabled')).toEqual([{ automation: 'a-2', enabled: true }]);

    await click(byTestId(container, 'automation-run-now'));
    expect(byTestId(container, 'automations-notice')?.textContent).toContain('Run #3 of brief queued.');
    expect(all(container, 'run')[0]?.dataset.status).toBe('queued');
    act(() => root.unmount());
  });

  it('answers the approval queue', async () => {
    const e = automationsEngine([automation(1, watchSpec())], [], [question('q1'), question('q2', { tool: 'write_file', risk: 'write', detail: 'write ~/Notes/a.md' })]);
    const queue = new ApprovalQueue(e);
    const { container, root } = mount(<AutomationsView transport={e} queue={queue} />);
    await flush();
    const items = all(container, 'queued-approval');
    expect(items).toHaveLength(2);
    expect(items[0]?.querySelector('pre')?.textContent).toBe('$ rm -rf ~/Inbox/old\n(cwd: /home/me)');
    expect(items[0]?.textContent).toContain('shell is an exec tool');
    expect(items[0]?.textContent).toContain('automation 1');
    expect([...(items[0]?.querySelectorAll('.buttons button') ?? [])].map((b) => b.textContent)).toEqual([
      'Allow once',
      'Allow for this automation',
      'Deny',
    ]);
    await click(items[0]?.querySelector('[data-testid="queue-allow-automation"]'));
    await click(all(container, 'queued-approval')[0]?.querySelector('[data-testid="queue-deny"]'));
    expect(e.sent('answer_approval')).toEqual([
      { request_id: 'q1', answer: 'allow_automation' },
      { request_id: 'q2', answer: 'deny' },
    ]);
    expect(byTestId(container, 'approval-queue')).toBeNull();
    act(() => root.unmount());
    queue.dispose();
  });

  it('speaks Simplified Chinese', async () => {
    const { container, root } = mount(<AutomationsView transport={engine()} />, 'zh-CN');
    await flush();
    expect(container.querySelector('.automations h2')?.textContent).toBe('自动化');
    expect(byTestId(container, 'template-blankWatch')?.textContent).toBe('空白监视规则');
    act(() => root.unmount());
  });
});
