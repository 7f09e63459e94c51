// @vitest-environment jsdom
// The research card: the plan with each sub-question's state, the counts, Stop while it
// runs, Export once the report is there; the composer's Research toggle.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResearchProgress } from '../generated/engine';
import { I18nContext, translator } from '../i18n';
import { Composer } from './Composer';
import { ResearchCard } from './ResearchCard';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

function mount(ui: React.ReactNode) {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<I18nContext.Provider value={translator('en')}>{ui}</I18nContext.Provider>));
  return { container, root };
}

const byTestId = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

const progress: ResearchProgress = {
  run_id: 'r1',
  phase: 'gathering',
  sub_questions: [
    { question: 'kyoto family hotels', state: 'done', found: 2, read: 2 },
    { question: 'kyoto trains', state: 'reading', found: 2, read: 1 },
    { question: 'kyoto museums', state: 'gap', found: 0, read: 0 },
  ],
  sources_found: 4,
  sources_read: 3,
  notes: 5,
  elapsed_ms: 12_400,
};

afterEach(() => {
  document.body.innerHTML = '';
});

describe('ResearchCard', () => {
  it('shows the plan, each state and the counts, and Stop while it runs', () => {
    let stopped = 0;
    const { container, root } = mount(<ResearchCard progress={progress} running onStop={() => stopped++} />);
    expect(byTestId(container, 'research-phase')[0]?.textContent).toBe('Searching and reading');
    const subs = byTestId(container, 'research-sub');
    expect(subs.map((s) => s.dataset.state)).toEqual(['done', 'reading', 'gap']);
    expect(subs[1]?.textContent).toContain('kyoto trains');
    expect(subs[1]?.textContent).toContain('2 found, 1 read');
    expect(subs[2]?.textContent).toContain('nothing found');
    expect(byTestId(container, 'research-stats')[0]?.textContent).toBe('4 sources found · 3 read · 5 notes · 12 s');
    expect(byTestId(container, 'research-export')).toHaveLength(0);
    act(() => byTestId(container, 'research-stop')[0]?.click());
    expect(stopped).toBe(1);
    act(() => root.unmount());
  });

  it('offers Export instead of Stop once the report is there', () => {
    let exported = 0;
    const done = { ...progress, phase: 'done' as const };
    const { container, root } = mount(<ResearchCard progress={done} running={false} onStop={() => {}} onExport={() => exported++} />);
    expect(byTestId(container, 'research-stop')).toHaveLength(0);
    act(() => byTestId(container, 'research-export')[0]?.click());
    expect(exported).toBe(1);
    act(() => root.unmount());
  });
});

describe('Composer research toggle', () => {
  it('is pressed or not as told, and says which way it should go', () => {
    const toggled: boolean[] = [];
    const { container, root } = mount(
      <Composer running={false} canStop={false} onSend={() => {}} onStop={() => {}} research={false} onResearch={(on) => toggled.push(on)} />,
    );
    const toggle = byTestId(container, 'research-toggle')[0];
    expect(toggle?.getAttribute('aria-pressed')).toBe('false');
    act(() => toggle?.click());
    expect(toggled).toEqual([true]);
    act(() => root.unmount());
    const plain = mount(<Composer running={false} canStop={false} onSend={() => {}} onStop={() => {}} />);
    expect(byTestId(plain.container, 'research-toggle')).toHaveLength(0);
    act(() => plain.root.unmount());
  });

  it('says above the box why research cannot run, with the way to set up search', () => {
    let opened = 0;
    const props = { running: false, canStop: false, onSend: () => {}, onStop: () => {}, onResearch: () => {} };
    const { container, root } = mount(
      <Composer {...props} research researchBlocked="Brave Search needs an API key" onSetUpSearch={() => opened++} />,
    );
    expect(byTestId(container, 'research-hint')[0]?.textContent).toBe(
      'Research needs a web search service, and none works now. Brave Search needs an API keySet up web search',
    );
    act(() => byTestId(container, 'research-set-up-search')[0]?.click());
    expect(opened).toBe(1);
    act(() => root.unmount());
    for (const quiet of [{ research: false, researchBlocked: 'x' }, { research: true, researchBlocked: null }]) {
      const m = mount(<Composer {...props} {...quiet} onSetUpSearch={() => opened++} />);
      expect(byTestId(m.container, 'research-hint')).toHaveLength(0);
      act(() => m.root.unmount());
    }
  });
});
