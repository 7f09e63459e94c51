// Which page shows and what it opens: a trace or a memory opened from another page is for one
// visit; a page chosen from the header starts plain.

import { describe, expect, it } from 'vitest';
import { Navigation } from './navigation';

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
});
