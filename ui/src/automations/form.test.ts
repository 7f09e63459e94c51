// The automation form: templates start with the right trigger, globs, events, prompt and
// pre-approvals; the form's text turns into the wire spec (one item a line, comma lists,
// blanks left out, the events in order, optional fields absent when empty) or names the field
// that is not a whole number; a stored spec comes back unchanged through the form.

import { describe, expect, it } from 'vitest';
import type { AutomationSpec } from '../generated/engine';
import {
  TEMPLATE_IDS,
  blankForm,
  buildSpec,
  checkName,
  commaList,
  formFromSpec,
  lines,
  templateForm,
  toggleEvent,
  wholeNumber,
} from './form';

const specOf = (form: ReturnType<typeof blankForm>) => {
  const built = buildSpec(form);
  if (!built.ok) throw new Error(`not built: ${built.problem.field}`);
  return built.spec;
};

describe('templates', () => {
  it('summarises PDFs landing in ~/Inbox, allowed to write under ~/Notes', () => {
    const form = templateForm('inboxPdfs');
    expect(form.name).not.toBe('');
    expect(specOf(form)).toEqual({
      trigger: {
        kind: 'watch',
        folders: ['~/Inbox'],
        recursive: true,
        include: ['*.pdf'],
        exclude: [],
        events: ['created'],
        settle_ms: 1000,
        include_hidden: false,
      },
      prompt: 'Read {{path}} and write a short summary of it to ~/Notes/Inbox summaries/{{name}}.md',
      allow: [{ tool: 'write_file', pattern: '~/Notes/**' }],
      concurrency: 1,
      max_runs_per_hour: 2000,
      max_runs_per_file_per_hour: 10,
    });
  });

  it('pulls todos from the notes file when it is modified', () => {
    const spec = specOf(templateForm('notesTodos'));
    expect(spec.trigger).toMatchObject({ kind: 'watch', folders: ['~/Notes'], include: ['todo.md'], events: ['modified'] });
    expect(spec.prompt).toContain('{{path}}');
  });

  it('briefs on weekdays at 8:00, running once for a missed morning', () => {
    const spec = specOf(templateForm('morningBrief'));
    expect(spec.trigger).toEqual({ kind: 'schedule', cron: '0 8 * * 1-5', missed: 'run_once' });
    expect(spec.prompt).toMatch(/^Brief me on today/);
  });

  it('offers blank forms of both kinds and every template has a kind', () => {
    expect(templateForm('blankWatch')).toEqual(blankForm('watch'));
    expect(templateForm('blankSchedule').kind).toBe('schedule');
    expect(templateForm('blankSchedule').prompt).toBe('');
    for (const id of TEMPLATE_IDS) expect(['watch', 'schedule']).toContain(templateForm(id).kind);
  });
});

describe('buildSpec', () => {
  it('reads lines, comma lists and rows, leaving blanks out', () => {
    const spec = specOf({
      ...blankForm('watch'),
      folders: ' ~/A \n\n~/B\r\n',
      include: '*.md\n  \nnotes/**/*.txt',
      exclude: '*.tmp',
      events: ['renamed', 'created'],
      settleMs: ' 250 ',
      includeHidden: true,
      recursive: false,
      prompt: 'Do {{name}}',
      tools: 'read_file, , write_file ,',
      allow: [
        { tool: ' write_file ', pattern: ' ~/Notes/** ' },
        { tool: 'shell', pattern: '' },
        { tool: '  ', pattern: 'ignored' },
      ],
      task: 'research',
      concurrency: '3',
    });
    expect(spec.trigger).toEqual({
      kind: 'watch',
      folders: ['~/A', '~/B'],
      recursive: false,
      include: ['*.md', 'notes/**/*.txt'],
      exclude: ['*.tmp'],
      events: ['created', 'renamed'],
      settle_ms: 250,
      include_hidden: true,
    });
    expect(spec.tools).toEqual(['read_file', 'write_file']);
    expect(spec.allow).toEqual([{ tool: 'write_file', pattern: '~/Notes/**' }, { tool: 'shell' }]);
    expect(spec.task).toBe('research');
    expect(spec.concurrency).toBe(3);
  });

  it('leaves tools, task, project and the zone out when they are empty', () => {
    const spec = specOf({ ...blankForm('schedule'), cron: ' every weekday at 8:00 ', timeZone: '  ', missed: 'skip', prompt: 'x' });
    expect(spec).not.toHaveProperty('tools');
    expect(spec).not.toHaveProperty('task');
    expect(spec).not.toHaveProperty('project');
    expect(specOf({ ...blankForm('schedule'), cron: '0 8 * * *', project: 'Kitchen' }).project).toBe('Kitchen');
    expect(spec.trigger).toEqual({ kind: 'schedule', cron: 'every weekday at 8:00', missed: 'skip' });
    const zoned = specOf({ ...blankForm('schedule'), cron: '0 8 * * *', timeZone: ' Europe/Berlin ' });
    expect(zoned.trigger).toEqual({ kind: 'schedule', cron: '0 8 * * *', time_zone: 'Europe/Berlin', missed: 'run_once' });
  });

  it('names the field that is not a whole number', () => {
    expect(buildSpec({ ...blankForm('watch'), settleMs: '1.5' })).toEqual({
      ok: false,
      problem: { field: 'settleMs', key: 'automations.problem.number' },
    });
    expect(buildSpec({ ...blankForm('schedule'), concurrency: 'two' })).toMatchObject({ ok: false, problem: { field: 'concurrency' } });
    expect(buildSpec({ ...blankForm('schedule'), maxRunsPerHour: '' })).toMatchObject({ ok: false, problem: { field: 'maxRunsPerHour' } });
    // A schedule has no settle time: whatever the hidden field holds does not matter.
    expect(buildSpec({ ...blankForm('schedule'), settleMs: 'x' }).ok).toBe(true);
  });

  it('leaves range checks to the engine', () => {
    expect(specOf({ ...blankForm('watch'), concurrency: '9', settleMs: '0' })).toMatchObject({ concurrency: 9, trigger: { settle_ms: 0 } });
  });
});

describe('formFromSpec', () => {
  const watch: AutomationSpec = {
    trigger: { kind: 'watch', folders: ['/a', '/b'], recursive: false, include: ['*.md'], exclude: ['x/**'], events: ['deleted', 'modified'], settle_ms: 5000, include_hidden: true },
    prompt: 'Look at {{path}} ({{event}})',
    tools: ['read_file'],
    allow: [{ tool: 'write_file', pattern: '/a/**' }, { tool: 'shell' }],
    task: 'code',
    project: 'Kitchen',
    concurrency: 2,
    max_runs_per_hour: 30,
    max_runs_per_file_per_hour: 3,
  };
  const schedule: AutomationSpec = {
    trigger: { kind: 'schedule', cron: '0 9 * * 1', time_zone: 'America/New_York', missed: 'skip' },
    prompt: 'Weekly review at {{time}}',
    allow: [],
    concurrency: 1,
    max_runs_per_hour: 2000,
    max_runs_per_file_per_hour: 10,
  };

  it('gives back the same spec through the form', () => {
    const w = formFromSpec('w', watch);
    expect(w.folders).toBe('/a\n/b');
    // Its project stays through an edit.
    expect(w.project).toBe('Kitchen');
    expect(w.tools).toBe('read_file');
    expect(w.allow).toEqual([{ tool: 'write_file', pattern: '/a/**' }, { tool: 'shell', pattern: '' }]);
    // The events come back in the form's order.
    expect(specOf(w)).toEqual({ ...watch, trigger: { ...watch.trigger, events: ['modified', 'deleted'] } });
    const s = formFromSpec('s', schedule);
    expect(s).toMatchObject({ name: 's', kind: 'schedule', cron: '0 9 * * 1', timeZone: 'America/New_York', missed: 'skip', task: '' });
    expect(specOf(s)).toEqual(schedule);
  });
});

describe('formFromSpec with the engine’s nulls', () => {
  it('reads null optional fields as empty and sends none back', () => {
    const stored = {
      trigger: { kind: 'schedule', cron: '0 8 * * *', time_zone: null, missed: 'run_once' },
      prompt: 'x',
      tools: null,
      allow: [{ tool: 'shell', pattern: null }],
      task: null,
      project: null,
      concurrency: 1,
      max_runs_per_hour: 2000,
      max_runs_per_file_per_hour: 10,
    } as unknown as AutomationSpec;
    const form = formFromSpec('n', stored);
    expect(form).toMatchObject({ timeZone: '', tools: '', task: '', project: '', allow: [{ tool: 'shell', pattern: '' }] });
    expect(specOf(form)).toEqual({
      trigger: { kind: 'schedule', cron: '0 8 * * *', missed: 'run_once' },
      prompt: 'x',
      allow: [{ tool: 'shell' }],
      concurrency: 1,
      max_runs_per_hour: 2000,
      max_runs_per_file_per_hour: 10,
    });
  });
});

describe('helpers', () => {
  it('reads lines, comma lists, whole numbers, names and events', () => {
    expect(lines('a\n \n b ')).toEqual(['a', 'b']);
    expect(commaList(' a,b ,, c')).toEqual(['a', 'b', 'c']);
    expect(wholeNumber(' 42 ')).toBe(42);
    expect(wholeNumber('-1')).toBeUndefined();
    expect(wholeNumber('1e3')).toBeUndefined();
    expect(checkName({ ...blankForm('watch'), name: '  ' })).toEqual({ field: 'name', key: 'automations.problem.name' });
    expect(checkName({ ...blankForm('watch'), name: 'x' })).toBeNull();
    const form = blankForm('watch');
    expect(toggleEvent(form, 'created').events).toEqual(['modified']);
    expect(toggleEvent(form, 'deleted').events).toEqual(['created', 'modified', 'deleted']);
    expect(form.events).toEqual(['created', 'modified']);
  });
});
