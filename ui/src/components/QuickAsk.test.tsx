// @vitest-environment jsdom
// The quick-ask panel in jsdom: Enter sends a quick turn in a session named after the time
// and the answer streams in as Markdown; a follow-up stays in that session; Enter on an empty
// input hands the conversation to the main window; Esc hides the panel; approvals use the
// dialog.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatStore } from '../chatStore';
import type { EventEnvelope, TurnEvent } from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import type { TurnOptions } from '../transport';
import { QuickAsk } from './QuickAsk';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

function setup() {
  const calls: string[] = [];
  let emit: (e: EventEnvelope) => void = () => {};
  let end: () => void = () => {};
  const transport = new FakeEngine({
    list_sessions: () => [],
    cancel_turn: ({ turn_id: id }) => {
      calls.push(`cancel ${id}`);
      return null;
    },
    answer_approval: ({ request_id: id, answer }) => {
      calls.push(`answer ${id} ${answer}`);
      return null;
    },
  });
  transport.sendTurn = (session: string, input: string, onEvent: (e: EventEnvelope) => void, options?: TurnOptions) => {
    calls.push(`send ${session} | ${input} | ${JSON.stringify(options ?? {})}`);
    emit = onEvent;
    return { done: new Promise<void>((resolve) => (end = resolve)) };
  };
  const desktop = {
    openInMain: async (session: string) => void calls.push(`open ${session}`),
    dismissQuick: async () => void calls.push('dismiss'),
  };
  const store = new ChatStore(transport, undefined, {
    quick: true,
    sessionName: () => 'Quick ask 2026-11-30 23:10:05',
  });
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<QuickAsk store={store} desktop={desktop} locale="en" />));
  const input = container.querySelector('[data-testid="quick-input"]') as HTMLInputElement;
  let seq = 0;
  return {
    calls,
    container,
    root,
    input,
    store,
    emit: (e: TurnEvent) => act(() => emit({ v: 1, turn_id: 't1', seq: seq++, ...e })),
    end: async () => {
      await act(async () => {
        end();
        await new Promise((r) => setTimeout(r, 0));
      });
    },
  };
}

function type(input: HTMLInputElement, value: string) {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

function press(el: Element, key: string) {
  el.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
}

const finished: TurnEvent = {
  type: 'turn_finished',
  status: 'completed',
  usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0 },
  trace_id: 't1',
};

afterEach(() => {
  document.body.innerHTML = '';
});

describe('QuickAsk', () => {
  it('sends on Enter and streams the answer as Markdown; follow-ups stay in the session', async () => {
    const { calls, container, root, input, emit, end } = setup();
    expect(document.activeElement).toBe(input);
    expect(container.querySelector('[data-testid="quick-open"]')).toBeNull();
    act(() => type(input, 'What is **this**?'));
    await act(async () => press(input, 'Enter'));
    expect(calls).toEqual(['send Quick ask 2026-11-30 23:10:05 | What is **this**? | {"quick":true}']);
    expect(input.value).toBe('');
    emit({ type: 'turn_started', session_id: 's', session_name: 'Quick ask 2026-11-30 23:10:05' });
    emit({ type: 'reasoning', text: 'thinking about it' });
    emit({ type: 'token', text: 'It is **bold**' });
    const answer = container.querySelector('[data-testid="quick-answer"]');
    expect(answer?.querySelector('strong')?.textContent).toBe('bold');
    expect(answer?.querySelector('details.reasoning')?.hasAttribute('open')).toBe(false);
    expect(container.querySelector('[data-testid="quick-stop"]')).not.toBeNull();
    // Enter on an empty input does nothing while the answer streams.
    await act(async () => press(input, 'Enter'));
    expect(calls).toHaveLength(1);
    emit(finished);
    await end();
    expect(container.querySelector('[data-testid="quick-stop"]')).toBeNull();
    act(() => type(input, 'and then?'));
    await act(async () => press(input, 'Enter'));
    expect(calls[1]).toBe('send Quick ask 2026-11-30 23:10:05 | and then? | {"quick":true}');
    act(() => root.unmount());
  });

  it('opens the conversation in the main window on Enter in an empty input', async () => {
    const { calls, container, root, input, emit, end, store } = setup();
    act(() => type(input, 'hi'));
    await act(async () => press(input, 'Enter'));
    emit({ type: 'final', text: 'hello' });
    emit(finished);
    await end();
    expect(container.querySelector('[data-testid="quick-open"]')).not.toBeNull();
    await act(async () => press(input, 'Enter'));
    expect(calls.at(-1)).toBe('open Quick ask 2026-11-30 23:10:05');
    // Handed over: the panel starts afresh.
    expect(store.getState().selected).toBeNull();
    expect(container.querySelector('[data-testid="quick-answer"]')).toBeNull();
    act(() => root.unmount());
  });

  it('opens in the main window from the button too', async () => {
    const { calls, container, root, input, emit, end } = setup();
    act(() => type(input, 'hi'));
    await act(async () => press(input, 'Enter'));
    emit(finished);
    await end();
    await act(async () => (container.querySelector('[data-testid="quick-open"]') as HTMLButtonElement).click());
    expect(calls.at(-1)).toBe('open Quick ask 2026-11-30 23:10:05');
    act(() => root.unmount());
  });

  it('hides the panel on Esc, but not while an approval waits', async () => {
    const { calls, container, root, input, emit } = setup();
    await act(async () => press(input, 'Escape'));
    expect(calls).toEqual(['dismiss']);
    act(() => type(input, 'clean up'));
    await act(async () => press(input, 'Enter'));
    emit({
      type: 'approval_requested',
      request_id: 'r1',
      call_id: 'c1',
      tool: 'shell',
      risk: 'exec',
      detail: '$ rm -rf build',
      reason: 'asks',
      suggested_pattern: null,
      timeout_secs: 30,
    });
    const dialog = container.querySelector('[role="dialog"]');
    expect(dialog?.querySelector('.approval-detail')?.textContent).toBe('$ rm -rf build');
    await act(async () => press(document.body, 'Escape'));
    expect(calls.filter((c) => c === 'dismiss')).toHaveLength(1);
    await act(async () => (dialog?.querySelector('button.primary') as HTMLButtonElement).click());
    expect(calls.at(-1)).toBe('answer r1 allow_once');
    act(() => root.unmount());
  });
});
