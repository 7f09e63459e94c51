// Which page shows and what it opens: a trace or a memory opened from another page is for one
// visit; a page chosen from the header starts plain.

import { describe, expect, it } from 'vitest';
import { Navigation, VIEWS } from './navigation';

describe('Navigation', () => {
  it('opens a turn on the trace page and a memory on the memory page, once', () => {
    const nav = new Navigation();
    const seen: string[] = [];
    nav.subscribe(() => seen.push(nav.getState().view));
    expect(nav.getState()).toEqual({ view: 'chat', turnId: null, memoryId: null });
    nav.openTrace('t-1');
    expect(nav.getState()).toEqual({ view: 'traces', turnId: 't-1', memoryId: null });
    nav.openMemory('m-1');
    expect(nav.getState()).toEqual({ view: 'memory', turnId: null, memoryId: 'm-1' });
    nav.show('memory');
    expect(nav.getState()).toEqual({ view: 'memory', turnId: null, memoryId: null });
    const before = nav.getState();
    nav.show('memory');
    expect(nav.getState()).toBe(before);
    nav.show('settings');
    expect(seen).toEqual(['traces', 'memory', 'memory', 'settings']);
  });

  it('has the automations page between traces and settings', () => {
    expect(VIEWS).toEqual(['chat', 'memory', 'traces', 'automations', 'settings']);
    const nav = new Navigation();
    nav.openTrace('t-7');
    nav.show('automations');
    expect(nav.getState()).toEqual({ view: 'automations', turnId: null, memoryId: null });
    // A run's trace link from the automations page.
    nav.openTrace('t-8');
    expect(nav.getState()).toEqual({ view: 'traces', turnId: 't-8', memoryId: null });
  });
});
