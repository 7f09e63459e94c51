// @vitest-environment jsdom
// The conversation in jsdom: Regenerate sits on the last answer only, Edit opens an inline
// editor (Send passes the new text, Cancel and Esc leave it); neither is offered without its
// handler. Show trace sits on answers with a turn id; a highlighted message is marked for a
// few seconds. A long history renders only some rows, and the newest ones once scrolled to the
// end (jsdom has no layout, so row and list heights are stood in for here). Only the answer
// being written is in the live region.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { I18nContext, translator } from '../i18n';
import { type ChatMessage, newTurn } from '../turnStore';
import { ChatView, HIGHLIGHT_MS } from './ChatView';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const user = (n: number, id?: string): ChatMessage => ({ role: 'user', key: `u${n}`, text: `question ${n}`, ...(id ? { id } : {}) });
const answer = (n: number): ChatMessage => ({ ...newTurn(`a${n}`), text: `answer ${n}`, status: 'completed' });

function mount(ui: React.ReactNode) {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<I18nContext.Provider value={translator('en')}>{ui}</I18nContext.Provider>));
  return { container, root };
}

const byTestId = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

afterEach(() => {
  document.body.innerHTML = '';
});

describe('ChatView actions', () => {
  const messages = [user(1, 'm1'), answer(1), user(2, 'm3'), answer(2)];

  it('offers the follow-up questions of the last answer only, and a click sends one', () => {
    const sent: string[] = [];
    const withFollowUps = (n: number): ChatMessage => ({
      ...newTurn(`a${n}`),
      text: `answer ${n}`,
      status: 'completed',
      followUps: [`next ${n}?`, `more ${n}?`],
    });
    const { container, root } = mount(
      <ChatView messages={[user(1), withFollowUps(1), user(2), withFollowUps(2)]} loading={false} onFollowUp={(q) => sent.push(q)} />,
    );
    const chips = byTestId(container, 'follow-up');
    expect(chips.map((c) => c.textContent)).toEqual(['next 2?', 'more 2?']);
    expect(byTestId(container, 'follow-ups')[0]?.getAttribute('aria-label')).toBe('Questions to ask next');
    act(() => chips[1]?.click());
    expect(sent).toEqual(['more 2?']);
    act(() => root.unmount());
    const idle = mount(<ChatView messages={[user(1), withFollowUps(1)]} loading={false} />);
    expect(byTestId(idle.container, 'follow-up')).toHaveLength(0);
    act(() => idle.root.unmount());
  });

  it('offers Regenerate on the last answer only', () => {
    const regenerated: number[] = [];
    const { container, root } = mount(
      <ChatView messages={messages} loading={false} onRegenerate={() => regenerated.push(1)} onEdit={() => {}} />,
    );
    const buttons = byTestId(container, 'regenerate');
    expect(buttons).toHaveLength(1);
    expect(buttons[0]?.closest('.message')?.textContent).toContain('answer 2');
    act(() => buttons[0]?.click());
    expect(regenerated).toEqual([1]);
    act(() => root.unmount());
  });

  it('edits a user message inline: Send passes the new text, Cancel and Esc leave it', () => {
    const edits: string[] = [];
    const { container, root } = mount(
      <ChatView messages={[user(1, 'm1'), answer(1), user(2), answer(2)]} loading={false} onEdit={(key, text) => edits.push(`${key}: ${text}`)} />,
    );
    // Only messages with a stored id can be edited.
    expect(byTestId(container, 'edit-message')).toHaveLength(1);
    act(() => byTestId(container, 'edit-message')[0]?.click());
    const input = byTestId(container, 'edit-input')[0] as HTMLTextAreaElement;
    expect(input.value).toBe('question 1');
    act(() => {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')?.set?.call(input, 'question one, better');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    act(() => byTestId(container, 'edit-cancel')[0]?.click());
    expect(byTestId(container, 'edit-input')).toHaveLength(0);
    expect(edits).toEqual([]);

    act(() => byTestId(container, 'edit-message')[0]?.click());
    act(() => byTestId(container, 'edit-input')[0]?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
    expect(byTestId(container, 'edit-input')).toHaveLength(0);

    act(() => byTestId(container, 'edit-message')[0]?.click());
    const again = byTestId(container, 'edit-input')[0] as HTMLTextAreaElement;
    act(() => {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')?.set?.call(again, 'question one, better');
      again.dispatchEvent(new Event('input', { bubbles: true }));
    });
    act(() => byTestId(container, 'edit-send')[0]?.click());
    expect(edits).toEqual(['u1: question one, better']);
    expect(byTestId(container, 'edit-input')).toHaveLength(0);
    act(() => root.unmount());
  });

  it('offers Show trace on answers whose turn is known', () => {
    const opened: string[] = [];
    const traced = [user(1, 'm1'), { ...answer(1), turnId: 't-1' }, user(2, 'm3'), answer(2)];
    const { container, root } = mount(<ChatView messages={traced} loading={false} onShowTrace={(id) => opened.push(id)} />);
    const links = byTestId(container, 'show-trace');
    expect(links).toHaveLength(1);
    expect(links[0]?.closest('.message')?.textContent).toContain('answer 1');
    act(() => links[0]?.click());
    expect(opened).toEqual(['t-1']);
    act(() => root.unmount());
  });

  it('marks the highlighted message, then reports it seen after a few seconds', () => {
    vi.useFakeTimers();
    try {
      let seen = 0;
      const { container, root } = mount(
        <ChatView messages={messages} loading={false} highlight="a1" onHighlightSeen={() => (seen += 1)} />,
      );
      const marked = byTestId(container, 'message-highlighted');
      expect(marked).toHaveLength(1);
      expect(marked[0]?.textContent).toContain('answer 1');
      expect(marked[0]?.classList.contains('highlighted')).toBe(true);
      act(() => vi.advanceTimersByTime(HIGHLIGHT_MS - 1));
      expect(seen).toBe(0);
      act(() => vi.advanceTimersByTime(1));
      expect(seen).toBe(1);
      act(() => root.unmount());
    } finally {
      vi.useRealTimers();
    }
  });

  it('says in words when an answer waits for the built-in model', () => {
    const waiting: ChatMessage = {
      ...newTurn('a9'),
      status: 'running',
      degradations: [
        { reason: 'model_busy', detail: 'waiting for the built-in model (x.gguf): it is answering another request' },
        { reason: 'retry', detail: 'HTTP 500; retry 2 of model m in 1.0s' },
      ],
    };
    const { container, root } = mount(<ChatView messages={[user(9), waiting]} loading={false} />);
    const notes = [...container.querySelectorAll('.degraded')].map((p) => p.textContent);
    expect(notes).toEqual([
      'Waiting for the built-in model: it is answering another request.',
      'Note: HTTP 500; retry 2 of model m in 1.0s',
    ]);
    act(() => root.unmount());
  });

  it('offers neither without handlers (a turn is running)', () => {
    const { container, root } = mount(<ChatView messages={messages} loading={false} />);
    expect(byTestId(container, 'regenerate')).toHaveLength(0);
    expect(byTestId(container, 'edit-message')).toHaveLength(0);
    act(() => root.unmount());
  });
});

describe('ChatView virtualisation', () => {
  const ROW = 100;
  const VIEW = 600;
  const saved = new Map<string, PropertyDescriptor | undefined>();
  const stub = (name: string, get: (this: HTMLElement) => number) => {
    saved.set(name, Object.getOwnPropertyDescriptor(HTMLElement.prototype, name));
    Object.defineProperty(HTMLElement.prototype, name, { configurable: true, get });
  };

  beforeAll(() => {
    stub('offsetHeight', function () {
      return this.classList.contains('chat-row') ? ROW : this.classList.contains('chat') ? VIEW : 0;
    });
    stub('clientHeight', function () {
      return this.classList.contains('chat') ? VIEW : 0;
    });
    stub('scrollHeight', function () {
      const rows = this.classList.contains('chat') ? this.querySelector<HTMLElement>('.chat-rows') : null;
      return rows ? parseFloat(rows.style.height || '0') : 0;
    });
  });

  afterAll(() => {
    for (const [name, descriptor] of saved) {
      if (descriptor) Object.defineProperty(HTMLElement.prototype, name, descriptor);
      else delete (HTMLElement.prototype as unknown as Record<string, unknown>)[name];
    }
  });

  it('renders only the rows near the end of a long history, the newest included', async () => {
    const long: ChatMessage[] = [];
    for (let n = 0; n < 250; n++) long.push(user(n, `m${n}`), answer(n));
    const { container, root } = mount(<ChatView messages={long} loading={false} />);
    const chat = container.querySelector('.chat') as HTMLElement;
    // The browser reports each scroll the page makes; jsdom does not, so report them here.
    for (let i = 0; i < 5; i++) {
      await act(async () => {
        chat.dispatchEvent(new Event('scroll'));
        await new Promise((r) => setTimeout(r, 0));
      });
    }
    const rendered = container.querySelectorAll('.message');
    expect(rendered.length).toBeGreaterThan(0);
    expect(rendered.length).toBeLessThan(40);
    expect(rendered[rendered.length - 1]?.textContent).toContain('answer 249');
    expect(container.textContent).not.toContain('question 0');
    // Rows are in order, so "the last .message" is the newest.
    const indexes = [...container.querySelectorAll('.chat-row')].map((r) => Number(r.getAttribute('data-index')));
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    expect(indexes.at(-1)).toBe(499);
    act(() => root.unmount());
  });
});

describe('ChatView live region', () => {
  const live = (root: ParentNode) => byTestId(root, 'chat-live')[0];

  it('holds only the answer being written, not the conversation', () => {
    const history = [user(1, 'm1'), answer(1)];
    const { container, root } = mount(<ChatView messages={history} loading={false} />);
    expect(container.querySelector('section.chat')?.getAttribute('aria-live')).toBeNull();
    expect(live(container)?.getAttribute('aria-live')).toBe('polite');
    // What was there before is not read out again.
    expect(live(container)?.textContent).toBe('');

    const writing = { ...newTurn('a2'), text: 'Six days' };
    const render = (m: ChatMessage[]) =>
      act(() => root.render(<I18nContext.Provider value={translator('en')}><ChatView messages={m} loading={false} /></I18nContext.Provider>));
    render([...history, user(2), writing]);
    expect(live(container)?.textContent).toBe('Six days');
    // It keeps the whole answer once the turn ends, and nothing of the question.
    render([...history, user(2), { ...writing, text: 'Six days in Kyoto.', status: 'completed' }]);
    expect(live(container)?.textContent).toBe('Six days in Kyoto.');
    expect(live(container)?.textContent).not.toContain('question');
    act(() => root.unmount());
  });
});
