// The automations page's store against an in-memory engine: the list loads and the first
// automation's runs show; the editor starts from a template and previews once typing pauses
// (an older answer is dropped, an invalid spec shows the engine's message, a field the form
// cannot read is named without asking); saving adds or edits (renaming only when the name
// changed); switching, pausing all, running now and removing (only after confirmation) call
// the engine; polling reads the list and runs again until the page goes.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AutomationPreview } from '../generated/engine';
import { AutomationStore, POLL_MS, PREVIEW_DELAY_MS, RUNS_PAGE } from './automationStore';
import { FAKE_FIRES, automation, automationsEngine, run, scheduleSpec, watchSpec } from './testFakes';

afterEach(() => {
  vi.useRealTimers();
});

const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function twoAutomations() {
  return automationsEngine(
    [automation(1, watchSpec(), { name: 'inbox' }), automation(2, scheduleSpec('0 8 * * 1-5', 'Europe/Berlin'), { name: 'brief' })],
    [run(1, 'a-1'), run(2, 'a-1', { status: 'failed', reason: 'the model failed' }), run(1, 'a-2', { cause: 'schedule' })],
  );
}

describe('AutomationStore', () => {
  it('loads the list by name and shows the first one’s runs, newest first', async () => {
    const engine = twoAutomations();
    const store = new AutomationStore(engine);
    await store.load();
    await settle();
    store.dispose();
    const s = store.getState();
    expect(s.list?.map((v) => v.automation.name)).toEqual(['brief', 'inbox']);
    expect(s.list?.[0]?.next_fires).toEqual(FAKE_FIRES);
    expect(s.selected).toBe('a-2');
    expect(engine.sent('automation_runs')).toEqual([{ automation: 'a-2', limit: RUNS_PAGE }]);
    store.select('a-1');
    await settle();
    expect(store.getState().runs?.map((r) => r.seq)).toEqual([2, 1]);
    await store.showMoreRuns();
    expect(engine.sent('automation_runs').at(-1)).toEqual({ automation: 'a-1', limit: 2 * RUNS_PAGE });
  });

  it('previews a template once typing pauses and shows the engine’s refusal inline', async () => {
    vi.useFakeTimers();
    const engine = automationsEngine();
    const store = new AutomationStore(engine);
    store.startNew('morningBrief');
    await vi.advanceTimersByTimeAsync(0);
    expect(engine.sent('preview_automation')).toHaveLength(1);
    expect(store.getState().editor?.preview?.next_fires).toEqual(FAKE_FIRES);

    store.editForm({ timeZone: 'M' });
    store.editForm({ timeZone: 'Ma' });
    store.editForm({ timeZone: 'Mars' });
    await vi.advanceTimersByTimeAsync(PREVIEW_DELAY_MS - 1);
    expect(engine.sent('preview_automation')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(engine.sent('preview_automation')).toHaveLength(2);
    const editor = store.getState().editor;
    expect(editor?.preview).toBeNull();
    expect(editor?.previewError).toContain('time_zone');
    expect(editor?.previewError).toContain('Mars');

    // A field the form cannot read is named without asking the engine.
    store.editForm({ timeZone: 'Europe/Berlin', concurrency: 'x' });
    await vi.advanceTimersByTimeAsync(PREVIEW_DELAY_MS);
    expect(engine.sent('preview_automation')).toHaveLength(2);
    expect(store.getState().editor?.problem?.field).toBe('concurrency');
    store.dispose();
  });

  it('drops a preview that answers after a newer one', async () => {
    const engine = automationsEngine();
    const answers: ((p: AutomationPreview) => void)[] = [];
    engine.handlers.preview_automation = () => new Promise((ok) => answers.push(ok));
    const store = new AutomationStore(engine);
    store.startNew('blankWatch');
    const first = store.preview();
    const second = store.preview();
    answers[1]?.({ next_fires: [], folders: ['/new'], missing_folders: [] });
    await second;
    answers[0]?.({ next_fires: [], folders: ['/old'], missing_folders: [] });
    await first;
    expect(store.getState().editor?.preview?.folders).toEqual(['/new']);
    store.dispose();
  });

  it('adds from a template and selects the new automation', async () => {
    const engine = automationsEngine();
    const store = new AutomationStore(engine);
    await store.load();
    store.startNew('inboxPdfs');
    store.editForm({ name: '' });
    await store.save();
    expect(store.getState().editor?.problem).toEqual({ field: 'name', key: 'automations.problem.name' });
    expect(engine.sent('add_automation')).toEqual([]);
    store.editForm({ name: ' PDFs ' });
    await store.save();
    store.dispose();
    expect(engine.sent('add_automation')).toEqual([
      {
        name: 'PDFs',
        enabled: true,
        spec: expect.objectContaining({ allow: [{ tool: 'write_file', pattern: '~/Notes/**' }], prompt: expect.stringContaining('{{path}}') }),
      },
    ]);
    const s = store.getState();
    expect(s.editor).toBeNull();
    expect(s.notice).toEqual({ kind: 'saved', name: 'PDFs' });
    expect(s.list?.map((v) => v.automation.name)).toEqual(['PDFs']);
    expect(s.selected).toBe(s.list?.[0]?.automation.id);
  });

  it('keeps the editor open with the engine’s refusal when saving fails', async () => {
    const engine = automationsEngine([automation(1, watchSpec(), { name: 'taken' })]);
    const store = new AutomationStore(engine);
    await store.load();
    store.startNew('blankSchedule');
    store.editForm({ name: 'taken', cron: '0 8 * * *', prompt: 'x' });
    await store.save();
    store.dispose();
    expect(store.getState().editor?.saveError).toContain('taken');
    expect(store.getState().editor?.saving).toBe(false);
  });

  it('edits a stored automation, renaming it only when the name changed', async () => {
    const engine = twoAutomations();
    const store = new AutomationStore(engine);
    await store.load();
    store.startEdit('a-1');
    expect(store.getState().editor?.form).toMatchObject({ name: 'inbox', folders: '~/Inbox', include: '*.pdf' });
    store.editForm({ prompt: 'Summarise {{path}} briefly' });
    await store.save();
    expect(engine.sent('edit_automation')).toEqual([{ automation: 'a-1', spec: expect.objectContaining({ prompt: 'Summarise {{path}} briefly' }) }]);
    store.startEdit('a-1');
    store.editForm({ name: 'pdf inbox' });
    await store.save();
    store.dispose();
    expect(engine.sent('edit_automation')[1]).toMatchObject({ automation: 'a-1', name: 'pdf inbox' });
    expect(engine.automations().find((a) => a.id === 'a-1')?.name).toBe('pdf inbox');
  });

  it('pauses and resumes one or all, runs now and removes after confirmation', async () => {
    const engine = twoAutomations();
    const store = new AutomationStore(engine);
    await store.load();
    await store.setEnabled('a-1', false);
    expect(store.getState().list?.find((v) => v.automation.id === 'a-1')?.automation.state).toBe('paused');
    await store.setAllEnabled(false);
    expect(store.getState().notice).toEqual({ kind: 'allPaused', count: 1 });
    expect(store.getState().list?.every((v) => !v.automation.enabled)).toBe(true);
    await store.setAllEnabled(true);
    expect(store.getState().notice).toEqual({ kind: 'allResumed', count: 2 });

    await store.runNow('a-1');
    expect(engine.sent('run_automation')).toEqual([{ automation: 'a-1' }]);
    expect(store.getState().notice).toEqual({ kind: 'queued', name: 'inbox', seq: 3 });
    expect(store.getState().selected).toBe('a-1');
    await settle();
    expect(store.getState().runs?.[0]).toMatchObject({ seq: 3, status: 'queued', cause: 'manual' });

    store.requestRemove('a-1');
    expect(engine.sent('remove_automation')).toEqual([]);
    store.cancelRemove();
    await store.confirmRemoval();
    expect(engine.sent('remove_automation')).toEqual([]);
    store.requestRemove('a-1');
    await store.confirmRemoval();
    await settle();
    store.dispose();
    expect(engine.sent('remove_automation')).toEqual([{ automation: 'a-1' }]);
    expect(store.getState().list?.map((v) => v.automation.name)).toEqual(['brief']);
    expect(store.getState().selected).toBe('a-2');
    expect(store.getState().notice).toEqual({ kind: 'removed', name: 'inbox' });
  });

  it('says what failed', async () => {
    const engine = twoAutomations();
    const store = new AutomationStore(engine);
    await store.load();
    await store.runNow('a-nope');
    store.dispose();
    expect(store.getState().actionError).toContain('no automation a-nope');
    expect(store.getState().busy).toBe(false);
  });

  it('reads the list and the open runs again while the page is open, and stops after', async () => {
    vi.useFakeTimers();
    const engine = twoAutomations();
    const store = new AutomationStore(engine);
    await store.load();
    await vi.advanceTimersByTimeAsync(0);
    const lists = engine.sent('automations').length;
    const runs = engine.sent('automation_runs').length;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(engine.sent('automations')).toHaveLength(lists + 1);
    expect(engine.sent('automation_runs')).toHaveLength(runs + 1);
    store.dispose();
    await vi.advanceTimersByTimeAsync(POLL_MS * 5);
    expect(engine.sent('automations')).toHaveLength(lists + 1);
  });
});
