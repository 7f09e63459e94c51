// How the automations page words things: a watch rule's folders, globs and events, a
// schedule with its next fire time in the schedule's zone (the engine's wall-clock time, not
// the reader's), run statuses and states as tones, what a run was about, pending questions.

import { describe, expect, it } from 'vitest';
import { translator } from '../i18n';
import {
  anyEnabled,
  describeTrigger,
  formatFireTime,
  nonZeroCounts,
  pendingOnly,
  runIsLive,
  runSubject,
  runTone,
  stateTone,
} from './summary';
import { automation, question, run, scheduleSpec, watchSpec } from './testFakes';

const t = translator('en');

describe('formatFireTime', () => {
  it('shows the wall-clock time the engine wrote, with the zone or the offset', () => {
    expect(formatFireTime('2026-12-04T08:00:00+01:00', 'Europe/Berlin', 'en-US')).toBe('Fri, Dec 4, 2026, 08:00 (Europe/Berlin)');
    // Whatever zone the reader is in, 8:00 in New York stays 8:00.
    expect(formatFireTime('2026-12-04T08:00:00-05:00', undefined, 'en-US')).toBe('Fri, Dec 4, 2026, 08:00 (UTC-05:00)');
    expect(formatFireTime('2026-12-04T08:30:00Z', null, 'en-US')).toBe('Fri, Dec 4, 2026, 08:30 (UTC)');
    expect(formatFireTime('2026-12-04T08:30:00.123+05:30', '', 'en-US')).toBe('Fri, Dec 4, 2026, 08:30 (UTC+05:30)');
  });

  it('shows anything else as it is', () => {
    expect(formatFireTime('soon')).toBe('soon');
  });
});

describe('describeTrigger', () => {
  it('says which folders, files and events a watch rule covers', () => {
    expect(describeTrigger(watchSpec(['~/Inbox', '~/Downloads']), [], t)).toBe('Watches ~/Inbox, ~/Downloads for *.pdf (created)');
    const spec = watchSpec();
    if (spec.trigger.kind !== 'watch') throw new Error('a watch rule');
    spec.trigger = { ...spec.trigger, include: [], exclude: ['*.tmp'], events: ['modified', 'renamed'], recursive: false };
    expect(describeTrigger(spec, [], t)).toBe('Watches ~/Inbox for any file (modified, renamed) except *.tmp (top folder only)');
  });

  it('says the cron and the next fire time in the schedule’s zone', () => {
    expect(describeTrigger(scheduleSpec('0 8 * * 1-5', 'Europe/Berlin'), ['2026-12-07T08:00:00+01:00'], t, 'en-US')).toBe(
      'Schedule 0 8 * * 1-5 — next Mon, Dec 7, 2026, 08:00 (Europe/Berlin)',
    );
    expect(describeTrigger(scheduleSpec('every hour'), [], t)).toBe('Schedule every hour');
  });

  it('speaks the chosen locale', () => {
    expect(describeTrigger(watchSpec(), [], translator('zh-CN'))).toBe('监视 ~/Inbox 中的 *.pdf（新建）');
  });
});

describe('tones and subjects', () => {
  it('colours every run status and state', () => {
    expect(runTone('done')).toBe('ok');
    expect(runTone('failed')).toBe('error');
    expect(runTone('waiting_for_approval')).toBe('warn');
    expect(runTone('running')).toBe('active');
    expect(runTone('queued')).toBe('muted');
    expect(runTone('skipped')).toBe('muted');
    expect(stateTone('active')).toBe('ok');
    expect(stateTone('error')).toBe('error');
    expect(stateTone('rate_limited')).toBe('warn');
    expect(stateTone('paused')).toBe('muted');
    expect(stateTone('idle')).toBe('muted');
    expect(['queued', 'running', 'waiting_for_approval'].every((s) => runIsLive(s as 'queued'))).toBe(true);
    expect(runIsLive('done') || runIsLive('failed') || runIsLive('skipped')).toBe(false);
  });

  it('says what a run was about', () => {
    expect(runSubject(run(1, 'a-1'))).toBe('/home/me/Inbox/file1.pdf');
    expect(runSubject(run(2, 'a-1', { event: 'renamed', old_path: '/x/old.pdf', path: '/x/new.pdf' }))).toBe('/x/old.pdf → /x/new.pdf');
    expect(runSubject(run(3, 'a-1', { cause: 'schedule', path: undefined, event: undefined, fire_time: '2026-12-04T08:00:00+01:00' }), 'Europe/Berlin', 'en-US')).toBe(
      'Fri, Dec 4, 2026, 08:00 (Europe/Berlin)',
    );
    expect(runSubject(run(4, 'a-1', { cause: 'manual', path: undefined, event: undefined }))).toBe('');
  });

  it('counts what is there, keeps pending questions and tells whether any are on or off', () => {
    expect(nonZeroCounts({ queued: 0, running: 1, waiting_for_approval: 0, done: 7, failed: 0, skipped: 2 })).toEqual([
      { status: 'running', count: 1 },
      { status: 'done', count: 7 },
      { status: 'skipped', count: 2 },
    ]);
    expect(pendingOnly([question('q1'), question('q2', { status: 'denied' }), question('q3')]).map((q) => q.id)).toEqual(['q1', 'q3']);
    const views = [automation(1, watchSpec()), automation(2, watchSpec(), { enabled: false })].map((a) => ({
      automation: a,
      next_fires: [],
      runs: { queued: 0, running: 0, waiting_for_approval: 0, done: 0, failed: 0, skipped: 0 },
    }));
    expect(anyEnabled(views, true)).toBe(true);
    expect(anyEnabled(views.slice(0, 1), false)).toBe(false);
  });
});
