// @vitest-environment jsdom
// The page in jsdom: the approval dialog shows the exact action and answers through the
// store; strings come from the chosen locale.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from './App';
import { ChatStore } from './chatStore';
import type { EventEnvelope } from './events';
import type { ApprovalAnswer, Transport } from './transport';
import { translator } from './i18n';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

function setup(locale: 'en' | 'zh-CN') {
  const answers: string[] = [];
  let emit: (e: EventEnvelope) => void = () => {};
  const transport: Transport = {
    listSessions: async () => [],
    history: async () => [],
    renameSession: async () => Promise.reject(new Error('not in this test')),
    deleteSession: async () => Promise.reject(new Error('not in this test')),
    sendTurn: (_s, _i, onEvent) => {
      emit = onEvent;
      return { done: new Promise(() => {}) };
    },
    cancel: async () => {},
    answerApproval: async (id: string, a: ApprovalAnswer) => void answers.push(`${id} ${a}`),
    listRules: async () => [],
    addRule: async () => Promise.reject(new Error('not in this test')),
    removeRule: async () => Promise.reject(new Error('not in this test')),
    mcpServers: async () => [],
    approvals: async () => [],
  };
  const store = new ChatStore(transport);
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<App store={store} transport={transport} initialLocale={locale} initialTheme="system" hasToken />));
  return { store, container, answers, emit: (e: EventEnvelope) => act(() => emit(e)), root };
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
      'Approval rules',
      'MCP servers',
      'Recent approvals',
    ]);
    expect(nav('nav-settings').getAttribute('aria-pressed')).toBe('true');
    await act(async () => nav('nav-chat').click());
    expect(container.querySelector('.composer textarea')).not.toBeNull();
    act(() => root.unmount());
  });
});

describe('translator', () => {
  it('fills placeholders and keeps unknown ones', () => {
    expect(translator('en')('sessions.messages', { count: 3 })).toBe('3 messages');
    expect(translator('zh-CN')('status.error', { code: 'x', message: 'y' })).toBe('错误（x）：y');
    expect(translator('en')('tool.call')).toBe('Tool: {name}');
  });
});
