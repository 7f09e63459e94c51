// @vitest-environment jsdom
// The page in jsdom: the approval dialog shows the exact action (Esc puts it aside unanswered,
// a button brings it back) and answers through the store; strings come from the chosen
// locale.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from './App';
import { ChatStore } from './chatStore';
import type { EventEnvelope, ProviderView, SessionSummary, StoredMessage } from './generated/engine';
import { translator } from './i18n';
import { FakeEngine } from './testing/fakeEngine';
import type { DesktopBridge } from './transport';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const providerView: ProviderView = {
  settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt', fallback_models: [] },
  key_source: 'none',
  keychain: 'Secret Service',
  keychain_available: true,
  env_overrides: [],
  kinds: [{ kind: 'openai', default_base_url: 'https://api.openai.com/v1' }],
  notice: null,
};

function setup(
  locale: 'en' | 'zh-CN',
  desktop?: DesktopBridge,
  stored: StoredMessage[] = [],
  access: { hasToken: boolean; pairingError?: string } = { hasToken: true },
  notice: string | null = null,
) {
  const answers: string[] = [];
  const listed: string[] = [];
  const sent: string[] = [];
  let emit: (e: EventEnvelope) => void = () => {};
  const transport = new FakeEngine({
    list_sessions: () => {
      listed.push('list');
      return [];
    },
    history: () => stored,
    cancel_turn: () => null,
    answer_approval: ({ request_id: id, answer }) => {
      answers.push(`${id} ${answer}`);
      return null;
    },
    list_rules: () => [],
    mcp_servers: () => [],
    mcp_config: () => [],
    approvals: () => [],
    provider: () => ({ ...providerView, notice }),
    detect_ollama: () => null,
    bootstrap_files: () => [],
    memory_list: () => ({ items: [], total: 0 }),
    memory_conflicts: () => [],
    memory_settings: () => ({ ask_before_remembering: false }),
    memory_proposals: () => [],
  });
  transport.sendTurn = (_s, input, onEvent, options) => {
    sent.push(`${input} ${options?.replaceFrom ?? '-'}`);
    emit = onEvent;
    return { done: new Promise(() => {}) };
  };
  transport.desktop = desktop;
  const store = new ChatStore(transport);
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<App store={store} transport={transport} initialLocale={locale} initialTheme="system" {...access} />));
  return { store, transport, container, answers, listed, sent, emit: (e: EventEnvelope) => act(() => emit(e)), root };
}

const approval: EventEnvelope = {
  v: 1,
  turn_id: 't1',
  seq: 1,
  type: 'approval_requested',
  request_id: 'r1',
  call_id: 'c1',
  tool: 'shell',
  risk: 'exec',
  detail: '$ rm -rf build\n(cwd: /w)',
  reason: 'shell is an exec tool',
  suggested_pattern: null,
  timeout_secs: 30,
};

afterEach(() => {
  document.body.innerHTML = '';
});

describe('App', () => {
  it('shows the approval dialog and answers with the clicked button', async () => {
    const { store, container, answers, emit, root } = setup('en');
    await act(async () => void store.send('clean up'));
    emit(approval);
    emit({ v: 1, turn_id: 't1', seq: 2, type: 'approval_explanation', request_id: 'r1', text: 'Deletes build/.' });
    const dialog = container.querySelector('[role="dialog"]');
    expect(dialog?.querySelector('pre')?.textContent).toBe('$ rm -rf build\n(cwd: /w)');
    expect(dialog?.textContent).toContain('Deletes build/.');
    expect(dialog?.textContent).toContain('shell is an exec tool');
    const buttons = [...(dialog?.querySelectorAll('button') ?? [])];
    expect(buttons.map((b) => b.textContent)).toEqual(['Allow once', 'Allow for session', 'Always allow', 'Deny']);
    await act(async () => buttons[1]?.click());
    expect(answers).toEqual(['r1 allow_session']);
    expect(container.querySelector('[role="dialog"]')).toBeNull();
    expect(container.querySelector('.composer button.stop')?.textContent).toBe('Stop');
    act(() => root.unmount());
  });

  it('puts the question aside on Esc without answering it, and brings it back', async () => {
    const { store, container, answers, emit, root } = setup('en');
    await act(async () => void store.send('clean up'));
    emit(approval);
    const dialog = container.querySelector('[role="dialog"]');
    expect(dialog).not.toBeNull();
    act(() => {
      dialog?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(container.querySelector('[role="dialog"]')).toBeNull();
    expect(answers).toEqual([]);
    const waiting = container.querySelector<HTMLButtonElement>('[data-testid="approval-waiting"]');
    expect(waiting?.textContent).toBe('A question is waiting for your answer: show it');
    await act(async () => waiting?.click());
    const back = container.querySelector('[role="dialog"]');
    expect(back?.querySelector('pre')?.textContent).toBe('$ rm -rf build\n(cwd: /w)');
    const deny = [...(back?.querySelectorAll('button') ?? [])].find((b) => b.textContent === 'Deny');
    await act(async () => deny?.click());
    expect(answers).toEqual(['r1 deny']);
    expect(container.querySelector('[data-testid="approval-waiting"]')).toBeNull();
    act(() => root.unmount());
  });

  it('says how to connect when the page is not paired, with the reason pairing failed', () => {
    const banner = (access: { hasToken: boolean; pairingError?: string }) => {
      const { container, root } = setup('en', undefined, [], access);
      const text = container.querySelector('.main > .banner.error')?.textContent ?? null;
      act(() => root.unmount());
      document.body.innerHTML = '';
      return text;
    };
    expect(banner({ hasToken: true })).toBeNull();
    expect(banner({ hasToken: false })).toContain('Open the newest address it printed');
    expect(banner({ hasToken: false, pairingError: 'this pairing code was used already' })).toBe(
      'Could not connect to `echod serve`: this pairing code was used already',
    );
  });

  it('says under an empty conversation which provider the engine chose at start', async () => {
    const note = 'No model provider is configured and no Ollama server answers: using the built-in model.';
    const { store, container, emit, root } = setup('en', undefined, [], { hasToken: true }, note);
    await act(async () => {});
    expect(container.querySelector('[data-testid="chat-start-note"]')?.textContent).toBe(note);
    await act(async () => void store.send('hello'));
    emit(approval);
    expect(container.querySelector('[data-testid="chat-start-note"]')).toBeNull();
    act(() => root.unmount());
    document.body.innerHTML = '';
    const chosen = setup('en');
    await act(async () => {});
    expect(chosen.container.querySelector('[data-testid="chat-start-note"]')).toBeNull();
    act(() => chosen.root.unmount());
  });

  it('speaks Simplified Chinese', async () => {
    const { store, container, emit, root } = setup('zh-CN');
    const zh = translator('zh-CN');
    expect(container.querySelector('.new-session')?.textContent).toBe(zh('sessions.new'));
    await act(async () => void store.send('你好'));
    emit(approval);
    expect(container.querySelector('[role="dialog"] h2')?.textContent).toBe('允许此操作吗？');
    act(() => root.unmount());
  });
});

describe('App views', () => {
  it('switches between chat and settings from the header', async () => {
    const { container, root } = setup('en');
    const nav = (c: string) => container.querySelector(`.topbar button.${c}`) as HTMLButtonElement;
    expect(nav('nav-chat').getAttribute('aria-pressed')).toBe('true');
    await act(async () => nav('nav-settings').click());
    expect(container.querySelector('.composer')).toBeNull();
    expect([...container.querySelectorAll('.settings h2')].map((h) => h.textContent)).toEqual([
      'Model provider',
      'Web search',
      'Standing instructions',
      'Projects',
      'Approval rules',
      'MCP servers',
      'Trace capture',
      'Recent approvals',
      'Devices',
      'Delete all my data',
    ]);
    expect(nav('nav-settings').getAttribute('aria-pressed')).toBe('true');
    await act(async () => nav('nav-chat').click());
    expect(container.querySelector('.composer textarea')).not.toBeNull();
    act(() => root.unmount());
  });

  it('switches to the memory page from the header', async () => {
    const { container, root } = setup('en');
    const nav = (c: string) => container.querySelector(`.topbar button.${c}`) as HTMLButtonElement;
    expect([...container.querySelectorAll('.topbar .view-switch button')].map((b) => b.textContent)).toEqual(['Chat', 'Memory', 'Traces', 'Automations', 'Settings']);
    await act(async () => nav('nav-memory').click());
    expect(nav('nav-memory').getAttribute('aria-pressed')).toBe('true');
    expect(container.querySelector('.composer')).toBeNull();
    expect(container.querySelector('.memory h2')?.textContent).toBe('What the assistant remembers');
    await act(async () => nav('nav-chat').click());
    expect(container.querySelector('.memory')).toBeNull();
    act(() => root.unmount());
  });
});

describe('App after deleting all data', () => {
  it('leaves the open conversation and reads the emptied session list and conflicts again', async () => {
    const { store, transport, container, root } = setup('en');
    const summary: SessionSummary = { id: 's1', name: 'web', title: 'Trip plans', created_at: '', updated_at: '', message_count: 2, turn_count: 1, consolidated_seq: 0 };
    let sessions = [summary];
    let conflictReads = 0;
    transport.handlers.list_sessions = () => [...sessions];
    transport.handlers.memory_conflicts = () => {
      conflictReads += 1;
      return [];
    };
    transport.handlers.delete_all_data = () => {
      sessions = [];
      return { sessions: 1, memories: 0, rows: 9, user_notes: false };
    };
    await act(async () => store.refreshSessions());
    await act(async () => store.select('web'));
    expect(container.querySelector('.sessions [data-session="web"]')).not.toBeNull();
    await act(async () => (container.querySelector('.topbar button.nav-settings') as HTMLButtonElement).click());
    const input = container.querySelector('[data-testid="delete-all-data-confirm"]') as HTMLInputElement;
    act(() => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, 'delete all my data');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    const reads = conflictReads;
    await act(async () => {
      (container.querySelector('[data-testid="delete-all-data"]') as HTMLButtonElement).click();
      await new Promise((r) => setTimeout(r, 0));
    });
    expect(container.querySelector('[data-testid="delete-all-data-result"]')?.textContent).toContain('Deleted 1 conversations');
    expect(store.getState()).toMatchObject({ sessions: [], selected: null, messages: [] });
    expect(container.querySelector('.sessions [data-session="web"]')).toBeNull();
    expect(conflictReads).toBe(reads + 1);
    act(() => root.unmount());
  });
});

describe('App regenerate and edit', () => {
  const message = (id: string, role: 'user' | 'assistant', content: string): StoredMessage => ({
    id, session_id: 's', turn_id: 't', seq: 0, role, content, reasoning: null, tool_calls: [], tool_call_id: null, name: null, status: 'complete', created_at: '',
  });
  const history = [message('m1', 'user', 'first'), message('m2', 'assistant', 'one'), message('m3', 'user', 'second'), message('m4', 'assistant', 'two')];
  const byTestId = (root: ParentNode, id: string) => [...root.querySelectorAll(`[data-testid="${id}"]`)] as HTMLElement[];

  it('regenerates the last answer from the chat, then offers nothing while it runs', async () => {
    const { store, container, sent, root } = setup('en', undefined, history);
    await act(async () => store.select('web'));
    await act(async () => byTestId(container, 'regenerate')[0]?.click());
    expect(sent).toEqual(['second m3']);
    expect([...container.querySelectorAll('.message')].map((m) => m.querySelector('.user-text')?.textContent ?? 'answer')).toEqual([
      'first',
      'answer',
      'second',
      'answer',
    ]);
    expect([...container.querySelectorAll('.message.assistant')].at(-1)?.getAttribute('data-status')).toBe('running');
    expect(byTestId(container, 'regenerate')).toHaveLength(0);
    expect(byTestId(container, 'edit-message')).toHaveLength(0);
    act(() => root.unmount());
  });

  it('edits and resends a user message from the chat', async () => {
    const { store, container, sent, root } = setup('en', undefined, history);
    await act(async () => store.select('web'));
    await act(async () => byTestId(container, 'edit-message')[0]?.click());
    const input = byTestId(container, 'edit-input')[0] as HTMLTextAreaElement;
    act(() => {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')?.set?.call(input, 'first, again');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await act(async () => byTestId(container, 'edit-send')[0]?.click());
    expect(sent).toEqual(['first, again m1']);
    expect(store.getState().messages.map((m) => m.text)).toEqual(['first, again', '']);
    act(() => root.unmount());
  });
});

describe('App in the desktop app', () => {
  it('opens the session quick ask hands over, reloading the session list', async () => {
    let open: ((session: string) => void) | undefined;
    let unsubscribed = false;
    const desktop: DesktopBridge = {
      quickShortcut: async () => ({ shortcut: 'Alt+Space', registered: true, error: null }),
      setQuickShortcut: async () => Promise.reject(new Error('not in this test')),
      openInMain: async () => {},
      dismissQuick: async () => {},
      onOpenSession: (cb) => {
        open = cb;
        return () => {
          unsubscribed = true;
        };
      },
    };
    const { store, container, listed, root } = setup('en', desktop);
    await act(async () => (container.querySelector('.topbar button.nav-settings') as HTMLButtonElement).click());
    expect(container.querySelector('.desktop-panel')).not.toBeNull();
    await act(async () => {
      open?.('Quick ask 2026-11-30 23:10:05');
      await new Promise((r) => setTimeout(r, 0));
    });
    expect(listed).toEqual(['list']);
    expect(store.getState().selected).toBe('Quick ask 2026-11-30 23:10:05');
    expect(container.querySelector('.composer')).not.toBeNull();
    act(() => root.unmount());
    expect(unsubscribed).toBe(true);
  });
});

describe('translator', () => {
  it('fills placeholders and keeps unknown ones', () => {
    expect(translator('en')('sessions.messages', { count: 3 })).toBe('3 messages');
    expect(translator('zh-CN')('status.error', { code: 'x', message: 'y' })).toBe('错误（x）：y');
    expect(translator('en')('tool.call')).toBe('Tool: {name}');
  });
});
