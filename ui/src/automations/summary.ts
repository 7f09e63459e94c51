// How the automations page words and colours things: a trigger in one line, fire times in the
// schedule's own zone, a run's status and an automation's state as a tone (the CSS class),
// what a run was about. Pure functions over the wire types and a translator; no React here.

import type {
  AutomationRun,
  AutomationSpec,
  AutomationState,
  AutomationView,
  QueuedApproval,
  RunCounts,
  RunStatus,
} from '../generated/engine';
import type { Translate } from '../i18n';

/** How a status looks: `ok` green, `warn` amber, `error` red, `active` accent, `muted` grey. */
export type Tone = 'ok' | 'warn' | 'error' | 'active' | 'muted';

const RUN_TONES: Record<RunStatus, Tone> = {
  queued: 'muted',
  running: 'active',
  waiting_for_approval: 'warn',
  done: 'ok',
  failed: 'error',
  skipped: 'muted',
};

const STATE_TONES: Record<AutomationState, Tone> = {
  active: 'ok',
  paused: 'muted',
  error: 'error',
  rate_limited: 'warn',
  idle: 'muted',
};

/** A run status's tone. */
export function runTone(status: RunStatus): Tone {
  return RUN_TONES[status];
}

/** An automation state's tone. */
export function stateTone(state: AutomationState): Tone {
  return STATE_TONES[state];
}

/** Whether a run can still change (the history is read again while one is). */
export function runIsLive(status: RunStatus): boolean {
  return status === 'queued' || status === 'running' || status === 'waiting_for_approval';
}

/** The run counts in the order the list shows them, zeros left out. */
export const COUNT_ORDER: readonly (keyof RunCounts)[] = ['queued', 'running', 'waiting_for_approval', 'done', 'failed', 'skipped'];

export function nonZeroCounts(counts: RunCounts): { status: keyof RunCounts; count: number }[] {
  return COUNT_ORDER.map((status) => ({ status, count: Number(counts[status]) })).filter((c) => c.count > 0);
}

/**
 * A fire time as the engine wrote it (RFC 3339 in the schedule's zone, with its offset),
 * shown as that wall-clock time (weekday, date, time) in `locale`, then the zone's name, or
 * the offset when the zone is not known. A text that is not such a time is shown as it is.
 */
export function formatFireTime(iso: string, timeZone?: string | null, locale?: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(iso.trim());
  if (!m) return iso;
  const [, y, mo, d, h, mi, s, offset] = m;
  const wall = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0)));
  let text: string;
  try {
    text = new Intl.DateTimeFormat(locale, {
      timeZone: 'UTC',
      weekday: 'short',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(wall);
  } catch {
    text = `${y}-${mo}-${d} ${h}:${mi}`;
  }
  const zone = timeZone?.trim() || (offset ? (offset.toUpperCase() === 'Z' ? 'UTC' : `UTC${offset}`) : '');
  return zone ? `${text} (${zone})` : text;
}

/** A stored time (RFC 3339) in the reader's locale and zone; the text itself when it is not a time. */
export function when(at: string | null | undefined, locale?: string): string {
  if (!at) return '';
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toLocaleString(locale);
}

/** The trigger in one line: folders and globs with the events, or the schedule and its next fire. */
export function describeTrigger(spec: AutomationSpec, nextFires: readonly string[], t: Translate, locale?: string): string {
  const trigger = spec.trigger;
  if (trigger.kind === 'watch') {
    const globs = trigger.include.length > 0 ? trigger.include.join(', ') : t('automations.summary.anyFile');
    const parts = [
      t('automations.summary.watch', {
        folders: trigger.folders.join(', '),
        globs,
        events: trigger.events.map((e) => t(`automations.event.${e}`)).join(', '),
      }),
    ];
    if (trigger.exclude.length > 0) parts.push(t('automations.summary.except', { globs: trigger.exclude.join(', ') }));
    if (!trigger.recursive) parts.push(t('automations.summary.topOnly'));
    return parts.join(' ');
  }
  const next = nextFires[0];
  const schedule = t('automations.summary.schedule', { cron: trigger.cron });
  return next
    ? `${schedule} ${t('automations.summary.next', { time: formatFireTime(next, trigger.time_zone, locale) })}`
    : schedule;
}

/** What a run was about: the file (and where it was, for a rename), the fire time, or nothing (manual). */
export function runSubject(run: AutomationRun, timeZone?: string | null, locale?: string): string {
  if (run.path) return run.old_path ? `${run.old_path} → ${run.path}` : run.path;
  if (run.fire_time) return formatFireTime(run.fire_time, timeZone, locale);
  return '';
}

/** The schedule's zone of a spec, if it has one. */
export function scheduleZone(spec: AutomationSpec): string | undefined {
  return spec.trigger.kind === 'schedule' ? spec.trigger.time_zone : undefined;
}

/** Pending questions only, oldest first (the engine's order for pending ones). */
export function pendingOnly(queue: readonly QueuedApproval[]): QueuedApproval[] {
  return queue.filter((q) => q.status === 'pending');
}

/** Whether any automation is on / off (the "Pause all" and "Resume all" buttons). */
export function anyEnabled(list: readonly AutomationView[], enabled: boolean): boolean {
  return list.some((v) => v.automation.enabled === enabled);
}
