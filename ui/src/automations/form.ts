// The automation form as typed, and the spec it stands for: the form's fields are text (one
// folder or glob a line, tools as a comma list, numbers as typed) so that a half-typed value
// is kept as it is; `buildSpec` turns them into an `AutomationSpec` (or names the field that
// cannot be read), `formFromSpec` goes the other way for Edit. The templates are forms to
// start from. The engine checks the spec itself (`preview_automation`, then add/edit); this
// module only reads what was typed. No React here.

import type {
  Automation,
  AutomationSpec,
  AutomationTrigger,
  FileEvent,
  MissedRuns,
  PreApproval,
  TaskType,
} from '../generated/engine';

/** A watch rule's trigger, as the wire type has it. */
export type WatchTrigger = Extract<AutomationTrigger, { kind: 'watch' }>;
/** A schedule's trigger, as the wire type has it. */
export type ScheduleTrigger = Extract<AutomationTrigger, { kind: 'schedule' }>;
export type TriggerKind = AutomationTrigger['kind'];

/** The file events, in the order the form offers them. */
export const FILE_EVENTS: readonly FileEvent[] = ['created', 'modified', 'deleted', 'renamed'];
/** The missed-run policies. */
export const MISSED_POLICIES: readonly MissedRuns[] = ['run_once', 'skip'];
/** The task types a run can be routed as ('' in the form: judged from the prompt). */
export const TASK_TYPES: readonly TaskType[] = ['chat', 'code', 'research', 'planning'];
/** The variables a prompt template can use. */
export const PROMPT_VARIABLES = ['path', 'name', 'ext', 'event', 'old_path', 'time'] as const;
/** Runs of one automation at a time: 1 to this. */
export const MAX_CONCURRENCY = 4;

/** The engine's defaults for a new spec (`Spec::new`, `Watch::new`, `Schedule::new`). */
export const DEFAULTS = {
  events: ['created', 'modified'] as FileEvent[],
  settleMs: 1000,
  missed: 'run_once' as MissedRuns,
  concurrency: 1,
  maxRunsPerHour: 2000,
  maxRunsPerFilePerHour: 10,
};

/** A pre-approval row as typed. */
export interface AllowRow {
  tool: string;
  pattern: string;
}

/** The form as typed. */
export interface AutomationForm {
  name: string;
  kind: TriggerKind;
  /** Watch: one folder a line. */
  folders: string;
  recursive: boolean;
  /** Watch: one glob a line. */
  include: string;
  exclude: string;
  events: FileEvent[];
  settleMs: string;
  includeHidden: boolean;
  /** Schedule: a cron expression or a phrase ("every weekday at 8:00"). */
  cron: string;
  /** Schedule: an IANA zone, or empty for the computer's. */
  timeZone: string;
  missed: MissedRuns;
  prompt: string;
  /** Comma-separated tool names; empty: every tool. */
  tools: string;
  allow: AllowRow[];
  /** '' : judged from the prompt. */
  task: TaskType | '';
  /** The project its runs' conversations belong to (by name); '': none. */
  project: string;
  concurrency: string;
  maxRunsPerHour: string;
  maxRunsPerFilePerHour: string;
}

/** A field the form could not read, with the message key that says why. */
export interface FormProblem {
  field: 'name' | 'settleMs' | 'concurrency' | 'maxRunsPerHour' | 'maxRunsPerFilePerHour';
  key: 'automations.problem.name' | 'automations.problem.number';
}

export type BuildResult = { ok: true; spec: AutomationSpec } | { ok: false; problem: FormProblem };

/** An empty form of either kind, with the engine's defaults. */
export function blankForm(kind: TriggerKind): AutomationForm {
  return {
    name: '',
    kind,
    folders: '',
    recursive: true,
    include: '',
    exclude: '',
    events: [...DEFAULTS.events],
    settleMs: String(DEFAULTS.settleMs),
    includeHidden: false,
    cron: '',
    timeZone: '',
    missed: DEFAULTS.missed,
    prompt: '',
    tools: '',
    allow: [],
    task: '',
    project: '',
    concurrency: String(DEFAULTS.concurrency),
    maxRunsPerHour: String(DEFAULTS.maxRunsPerHour),
    maxRunsPerFilePerHour: String(DEFAULTS.maxRunsPerFilePerHour),
  };
}

/** The templates the "New" menu offers, in its order. */
export const TEMPLATE_IDS = ['inboxPdfs', 'notesTodos', 'morningBrief', 'blankWatch', 'blankSchedule'] as const;
export type TemplateId = (typeof TEMPLATE_IDS)[number];

/** A template's form: prefilled, for the person to change before saving. */
export function templateForm(id: TemplateId): AutomationForm {
  switch (id) {
    case 'inboxPdfs':
      return {
        ...blankForm('watch'),
        name: 'Summarise Inbox PDFs',
        folders: '~/Inbox',
        include: '*.pdf',
        events: ['created'],
        prompt: 'Read {{path}} and write a short summary of it to ~/Notes/Inbox summaries/{{name}}.md',
        allow: [{ tool: 'write_file', pattern: '~/Notes/**' }],
      };
    case 'notesTodos':
      return {
        ...blankForm('watch'),
        name: 'Todos from my notes',
        folders: '~/Notes',
        recursive: false,
        include: 'todo.md',
        events: ['modified'],
        prompt:
          'My notes file {{path}} just changed. Read it and list the todo items that are new or not done yet, each with its due date when it has one.',
      };
    case 'morningBrief':
      return {
        ...blankForm('schedule'),
        name: 'Morning brief',
        cron: '0 8 * * 1-5',
        missed: 'run_once',
        prompt:
          'Brief me on today ({{time}}): what I have planned, what is due, and anything from my notes I should not forget. Keep it short.',
      };
    case 'blankWatch':
      return blankForm('watch');
    case 'blankSchedule':
      return blankForm('schedule');
  }
}

/** The non-empty trimmed lines of a text area. */
export function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The non-empty trimmed items of a comma list. */
export function commaList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A whole number typed in a field, or undefined when it is not one. */
export function wholeNumber(text: string): number | undefined {
  const s = text.trim();
  if (!/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The spec the form stands for, or the first field that cannot be read as typed. Empty
 * lines, blank tool names and pre-approval rows with no tool are left out; an empty tools
 * list means every tool (absent), an empty zone the computer's. Whether the spec is valid
 * (globs, cron, zone, ranges) is the engine's to say.
 */
export function buildSpec(form: AutomationForm): BuildResult {
  const numbers: Record<'settleMs' | 'concurrency' | 'maxRunsPerHour' | 'maxRunsPerFilePerHour', number | undefined> = {
    settleMs: form.kind === 'watch' ? wholeNumber(form.settleMs) : DEFAULTS.settleMs,
    concurrency: wholeNumber(form.concurrency),
    maxRunsPerHour: wholeNumber(form.maxRunsPerHour),
    maxRunsPerFilePerHour: wholeNumber(form.maxRunsPerFilePerHour),
  };
  for (const field of ['settleMs', 'concurrency', 'maxRunsPerHour', 'maxRunsPerFilePerHour'] as const) {
    if (numbers[field] === undefined) return { ok: false, problem: { field, key: 'automations.problem.number' } };
  }
  const trigger: AutomationTrigger =
    form.kind === 'watch'
      ? {
          kind: 'watch',
          folders: lines(form.folders),
          recursive: form.recursive,
          include: lines(form.include),
          exclude: lines(form.exclude),
          // In the form's order, whatever order they were ticked in.
          events: FILE_EVENTS.filter((e) => form.events.includes(e)),
          settle_ms: numbers.settleMs ?? DEFAULTS.settleMs,
          include_hidden: form.includeHidden,
        }
      : {
          kind: 'schedule',
          cron: form.cron.trim(),
          ...(form.timeZone.trim() ? { time_zone: form.timeZone.trim() } : {}),
          missed: form.missed,
        };
  const tools = commaList(form.tools);
  const allow: PreApproval[] = form.allow
    .filter((a) => a.tool.trim() !== '')
    .map((a) => (a.pattern.trim() ? { tool: a.tool.trim(), pattern: a.pattern.trim() } : { tool: a.tool.trim() }));
  return {
    ok: true,
    spec: {
      trigger,
      prompt: form.prompt,
      ...(tools.length > 0 ? { tools } : {}),
      allow,
      ...(form.task ? { task: form.task } : {}),
      ...(form.project ? { project: form.project } : {}),
      concurrency: numbers.concurrency ?? DEFAULTS.concurrency,
      max_runs_per_hour: numbers.maxRunsPerHour ?? DEFAULTS.maxRunsPerHour,
      max_runs_per_file_per_hour: numbers.maxRunsPerFilePerHour ?? DEFAULTS.maxRunsPerFilePerHour,
    },
  };
}

/** The name to save, or the problem when there is none. */
export function checkName(form: AutomationForm): FormProblem | null {
  return form.name.trim() === '' ? { field: 'name', key: 'automations.problem.name' } : null;
}

/** The form for a stored spec (Edit). A watch form keeps a schedule's defaults and back. */
export function formFromSpec(name: string, spec: AutomationSpec): AutomationForm {
  const base = blankForm(spec.trigger.kind);
  const common: AutomationForm = {
    ...base,
    name,
    prompt: spec.prompt,
    tools: (spec.tools ?? []).join(', '),
    allow: spec.allow.map((a) => ({ tool: a.tool, pattern: a.pattern ?? '' })),
    task: spec.task ?? '',
    project: spec.project ?? '',
    concurrency: String(spec.concurrency),
    maxRunsPerHour: String(spec.max_runs_per_hour),
    maxRunsPerFilePerHour: String(spec.max_runs_per_file_per_hour),
  };
  const t = spec.trigger;
  if (t.kind === 'watch') {
    return {
      ...common,
      folders: t.folders.join('\n'),
      recursive: t.recursive,
      include: t.include.join('\n'),
      exclude: t.exclude.join('\n'),
      events: [...t.events],
      settleMs: String(t.settle_ms),
      includeHidden: t.include_hidden,
    };
  }
  return { ...common, cron: t.cron, timeZone: t.time_zone ?? '', missed: t.missed };
}

/** The form for a stored automation (Edit). */
export function formFromAutomation(a: Automation): AutomationForm {
  return formFromSpec(a.name, a.spec);
}

/** The form with one event ticked or unticked. */
export function toggleEvent(form: AutomationForm, event: FileEvent): AutomationForm {
  const events = form.events.includes(event) ? form.events.filter((e) => e !== event) : [...form.events, event];
  return { ...form, events };
}
