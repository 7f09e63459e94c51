// @vitest-environment jsdom
// The trace page in jsdom against an in-memory engine: the turns with their markers, a turn's
// waterfall (bars by kind, degraded and failed spans marked, the extraction after the turn),
// the span detail for each kind — the model call exactly as sent and received, read only when
// selected, or "not captured" — memory links, the session link, filters and Export as case.

import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { span, traceEngine, turnRecord } from '../../trace/testFakes';
import { browserDownload } from '../../trace/traceStore';
import { byTestId, cleanup, fill, flush, mount } from '../settings/testing';
import { TraceView } from './TraceView';

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const all = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];
const click = async (el: Element | null | undefined) => {
  if (!el) throw new Error('nothing to click');
  await act(async () => (el as HTMLElement).click());
  await flush();
};
const row = (root: ParentNode, spanId: string) => root.querySelector(`[data-testid="span-row"][data-span-id="${spanId}"]`);

const turns = [
  turnRecord('t-2', {
    input: 'Book the cheapest train to Porto\nand tell me when it leaves',
    status: 'failed',
    degraded: true,
    approvals: 1,
    entry_point: 'quick_ask',
    started_at: '2026-11-05T10:00:00.000Z',
    finished_at: '2026-11-05T10:00:03.250Z',
    input_tokens: 4200,
    output_tokens: 310,
  }),
  turnRecord('t-1', { session_name: 'notes' }),
];

describe('TraceView', () => {
  it('shows how often turns fell back today and this week, each fallback on its own', async () => {
    const engine = traceEngine(turns);
    const day = Date.now() - 24 * 60 * 60 * 1000;
    engine.handlers.trace_stats = ({ since }) => {
      const today = Math.abs(Date.parse(since ?? '') - day) < 60_000;
      return today
        ? { since: since ?? '', turns: 4, degraded_turns: 1, rate: 0.25, by_reason: [{ reason: 'retry', turns: 1, rate: 0.25 }] }
        : {
            since: since ?? '',
            turns: 40,
            degraded_turns: 6,
            rate: 0.15,
            by_reason: [
              { reason: 'partial_report', turns: 4, rate: 0.1 },
              { reason: 'retry', turns: 1, rate: 0.025 },
            ],
          };
    };
    const { container, root } = mount(<TraceView transport={engine} />);
    await flush();
    const rates = byTestId<HTMLElement>(container, 'degradation-rates');
    expect(rates?.querySelector('p')?.textContent).toBe('Fell back: 25% of 4 turns today · 15% of 40 turns this week');
    const reasons = all(container, 'degradation-reason');
    expect(reasons.map((r) => r.dataset.reason)).toEqual(['partial_report', 'retry']);
    expect(reasons[0]?.textContent).toBe('partial_report 10% (4 turns)');
    expect(reasons[1]?.textContent).toBe('retry 2.5% (1 turn)');
    act(() => root.unmount());
  });

  it('shows no rates without turns this week', async () => {
    const engine = traceEngine(turns);
    engine.handlers.trace_stats = ({ since }) => ({ since: since ?? '', turns: 0, degraded_turns: 0, rate: 0, by_reason: [] });
    const { container, root } = mount(<TraceView transport={engine} />);
    await flush();
    expect(byTestId(container, 'degradation-rates')).toBeNull();
    expect(engine.sent('trace_stats')).toHaveLength(2);
    act(() => root.unmount());
  });

  it('lists turns with their duration, tokens, origin and markers', async () => {
    const engine = traceEngine(turns);
    const { container, root } = mount(<TraceView transport={engine} />);
    await flush();
    const rows = all(container, 'trace-row');
    expect(rows.map((r) => r.dataset.turnId)).toEqual(['t-2', 't-1']);
    const first = rows[0] as HTMLElement;
    expect(first.textContent).toContain('Book the cheapest train to Porto');
    expect(first.textContent).not.toContain('when it leaves');
    expect(first.querySelector('[data-testid="trace-duration"]')?.textContent).toBe('3.3 s');
    expect(first.textContent).toContain('4,200 / 310');
    expect(first.textContent).toContain('quick ask');
    expect(first.textContent).toContain('failed');
    expect(first.querySelector('[data-testid="trace-degraded"]')?.textContent).toBe('degraded');
    expect(first.querySelector('[data-testid="trace-approvals"]')?.textContent).toBe('1 approval');
    expect(rows[1]?.querySelector('[data-testid="trace-degraded"]')).toBeNull();
    expect(rows[1]?.querySelector('[data-testid="trace-approvals"]')).toBeNull();
    act(() => root.unmount());
  });

  it('opens a turn as a waterfall and shows each kind of span in detail', async () => {
    const engine = traceEngine(turns);
    const memories: string[] = [];
    const { container, root } = mount(<TraceView transport={engine} onOpenMemory={(id) => memories.push(id)} />);
    await flush();
    await click(all(container, 'trace-row')[1]?.querySelector('.trace-open'));
    expect(engine.sent('trace')).toEqual([{ turn_id: 't-1' }]);
    expect(byTestId(container, 'turn-summary')?.getAttribute('data-turn-id')).toBe('t-1');
    const bars = all(container, 'span-row');
    expect(bars.map((b) => b.dataset.spanId)).toEqual(['root', 'ctx', 'recall', 'inf1', 'call1', 'tools1', 'appr', 'tool', 'inf2', 'call2', 'resp', 'bg']);
    expect(bars.map((b) => b.dataset.kind)).toContain('memory_write');
    expect(row(container, 'call1')?.querySelector('[data-testid="span-degraded"]')?.textContent).toBe('⚠ retry');
    expect(row(container, 'bg')?.classList.contains('after-turn')).toBe(true);
    expect(row(container, 'recall')?.querySelector('.span-label')?.getAttribute('style')).toContain('padding-left: 2.1rem');
    expect(byTestId(container, 'waterfall-legend')?.textContent).toContain('model call');
    expect(engine.sent('trace_call')).toEqual([]);

    // The model call: read now, exactly as sent and received.
    await click(row(container, 'call1'));
    expect(engine.sent('trace_call')).toEqual([{ turn_id: 't-1', span_id: 'call1' }]);
    expect(byTestId(container, 'span-duration')?.textContent).toBe('840 ms');
    const request = byTestId<HTMLElement>(container, 'call-request') as HTMLElement;
    const messages = all(request, 'call-message');
    expect(messages.map((m) => m.dataset.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(messages[0]?.textContent).toContain('You are Echo, a careful assistant.');
    expect(messages[1]?.textContent).toContain('Where did I say I am going in May?');
    expect(messages[2]?.textContent).toContain('memory_search');
    expect(messages[3]?.textContent).toContain('answers call c0');
    expect(request.textContent).toContain('max tokens 4096, temperature 0.2, tool choice auto');
    expect(byTestId(container, 'call-tools')?.textContent).toContain('Tools offered (1)');
    const response = byTestId<HTMLElement>(container, 'call-response') as HTMLElement;
    expect(byTestId(response, 'call-response-text')?.textContent).toBe('Let me look at your notes.');
    expect(response.textContent).toContain('The notes file may say.');
    expect(byTestId(response, 'call-tool-call')?.textContent).toContain('"path": "notes.txt"');
    expect(response.textContent).toContain('Usage: 1000 in, 30 out · Finish reason: tool_calls');

    // A call whose capture is off: said so, nothing asked.
    await click(row(container, 'call2'));
    expect(byTestId(container, 'call-not-captured')?.textContent).toContain('not kept');
    expect(engine.sent('trace_call')).toHaveLength(1);

    await click(row(container, 'tool'));
    expect(byTestId(container, 'tool-arguments')?.textContent).toBe('{\n  "path": "notes.txt",\n  "limit": 10\n}');
    expect(byTestId(container, 'tool-result')?.textContent).toBe('Lisbon in May');
    expect(byTestId(container, 'span-attrs')?.textContent).toContain('exit_code');

    await click(row(container, 'appr'));
    const approval = byTestId<HTMLElement>(container, 'approval-pane')?.textContent;
    expect(approval).toContain('read_file reads outside the workspace');
    expect(approval).toContain('allow');
    expect(approval).toContain('user');
    expect(approval).toContain('600 ms');
    expect(byTestId(container, 'approval-question')?.textContent).toBe('read_file ../notes.txt');

    await click(row(container, 'recall'));
    const links = all(container, 'span-memory-link');
    expect(links.map((l) => l.dataset.memoryId)).toEqual(['m-0001', 'm-0002']);
    await click(links[1]);
    expect(memories).toEqual(['m-0002']);
    act(() => root.unmount());
  });

  it('opens the turn it is given, marks failed spans and links the session to its chat', async () => {
    const engine = traceEngine(turns, () => [
      span('root', null, 0, 500),
      span('inf1', 'root', 0, 400, { status: 'error', error: 'HTTP 500 from the model', degraded: true, degraded_reason: 'retry,fallback_model' }),
      span('judge', 'root', 450, 50, { level: 'call', kind: 'model', name: 'judge_memory_conflict', attrs: null as unknown as Record<string, unknown> }),
    ]);
    const chats: string[] = [];
    const { container, root } = mount(<TraceView transport={engine} turnId="t-2" onOpenChat={(s) => chats.push(s)} />);
    await flush();
    expect(byTestId(container, 'turn-summary')?.getAttribute('data-turn-id')).toBe('t-2');
    const failed = row(container, 'inf1') as HTMLElement;
    expect(failed.classList.contains('status-error')).toBe(true);
    expect(failed.querySelector('[data-testid="span-degraded"]')?.textContent).toBe('⚠ retry, fallback model');
    await click(failed);
    expect(byTestId(container, 'span-error')?.textContent).toContain('HTTP 500 from the model');
    // A call stored without attributes and without a capture: said so, no broken pane.
    await click(row(container, 'judge'));
    expect(byTestId(container, 'call-not-captured')).not.toBeNull();
    expect(byTestId(container, 'span-attrs')).toBeNull();
    await click(byTestId(container, 'trace-session'));
    expect(chats).toEqual(['travel plans']);
    act(() => root.unmount());
  });

  it('filters the list on the server', async () => {
    const engine = traceEngine(turns);
    const { container, root } = mount(<TraceView transport={engine} sessions={['notes', 'travel plans']} />);
    await flush();
    act(() => fill(container.querySelector('.trace-filters select[name="status"]') as HTMLSelectElement, 'failed'));
    await flush();
    act(() => fill(container.querySelector('.trace-filters select[name="approvals"]') as HTMLSelectElement, 'yes'));
    await flush();
    expect(engine.sent('traces').at(-1)).toEqual({ limit: 100, status: 'failed', has_approvals: true });
    expect(all(container, 'trace-row').map((r) => r.dataset.turnId)).toEqual(['t-2']);
    act(() => fill(container.querySelector('.trace-filters input[name="session"]') as HTMLInputElement, 'notes'));
    await act(async () => {
      await new Promise((r) => setTimeout(r, 350));
    });
    await flush();
    expect(engine.sent('traces').at(-1)).toEqual({ limit: 100, session: 'notes', status: 'failed', has_approvals: true });
    expect(byTestId(container, 'trace-empty')?.textContent).toBe('No turns match.');
    act(() => root.unmount());
  });

  it('exports the open turn as <turn_id>.case.json', async () => {
    const engine = traceEngine(turns);
    const files: { name: string; json: unknown }[] = [];
    const download = (name: string, blob: Blob) => void blob.text().then((text) => files.push({ name, json: JSON.parse(text) }));
    const { container, root } = mount(<TraceView transport={engine} turnId="t-1" download={download} />, 'zh-CN');
    await flush();
    expect(byTestId(container, 'trace-export')?.textContent).toBe('导出为用例');
    await click(byTestId(container, 'trace-export'));
    await flush();
    expect(engine.sent('trace_case')).toEqual([{ turn_id: 't-1' }]);
    expect(files.map((f) => f.name)).toEqual(['t-1.case.json']);
    expect(files[0]?.json).toMatchObject({ turn_id: 't-1', final_text: 'Lisbon, in May.' });
    expect(byTestId(container, 'trace-exported')?.textContent).toContain('t-1.case.json');
    act(() => root.unmount());
  });

  it('downloads through an object URL and a link in the browser', async () => {
    const created: Blob[] = [];
    const clicked: string[] = [];
    // jsdom has no object URLs: stand in for them.
    Object.assign(URL, {
      createObjectURL: (b: Blob) => {
        created.push(b);
        return 'blob:case';
      },
      revokeObjectURL: () => {},
    });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(`${this.download} ${this.href}`);
    });
    browserDownload('t-1.case.json', new Blob(['{}'], { type: 'application/json' }));
    expect(clicked).toEqual(['t-1.case.json blob:case']);
    expect(created[0]?.type).toBe('application/json');
    expect(document.querySelector('a[download]')).toBeNull();
  });
});
