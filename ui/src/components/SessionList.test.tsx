// @vitest-environment jsdom
// The sidebar in jsdom: the search box filters by name or title regardless of case; Rename
// edits inline (Enter saves, Esc cancels, the server's refusal is shown); Delete asks inline
// what becomes of what the conversation taught (keep, forget or delete the memories, or
// Cancel / Esc) before it deletes, sends that choice and says how many memories went with it;
// Forget memories asks inline (saying it can be undone from the memory page) before it
// forgets, then says how many were forgotten. Sessions in no project come first, then a
// labelled group per project (even an empty one) with "New chat" starting one in it. Move to
// project offers "No project" and every project (the current one marked and disabled), moves
// the session into the chosen group, and shows a refusal next to it.

import { act, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { LearnedMemories, SessionDeleted, SessionSummary } from '../generated/engine';
import { I18nContext, translator } from '../i18n';
import { TransportError } from '../transport';
import { SessionList, filterSessions, groupSessions } from './SessionList';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const session = (id: string, name: string, title: string | null): SessionSummary => ({
  id,
  name,
  title,
  created_at: '',
  updated_at: '',
  message_count: 2,
  turn_count: 1,
  consolidated_seq: 0,
});

const initial = [
  session('1', 'work-notes', 'Quarterly Report'),
  session('2', 'holiday', 'Trip to Kyoto'),
  session('3', 'taken', null),
];

type Forget = (name: string) => Promise<number>;
type Remove = (name: string, memories: LearnedMemories) => Promise<SessionDeleted>;

/** The list with its own session state, as the store would keep it. */
function Harness({ calls, forget, remove }: { calls: string[]; forget?: Forget; remove?: Remove }) {
  const [sessions, setSessions] = useState(initial);
  return (
    <SessionList
      sessions={sessions}
      selected="work-notes"
      disabled={false}
      onSelect={(name) => void calls.push(`select ${name}`)}
      onNew={() => void calls.push('new')}
      onRename={async (name, newName) => {
        calls.push(`rename ${name} ${newName}`);
        if (sessions.some((s) => s.name === newName)) {
          throw new TransportError('invalid_input', `the name ${newName} is taken`, 400);
        }
        setSessions((all) => all.map((s) => (s.name === name ? { ...s, name: newName } : s)));
      }}
      onDelete={async (name, memories) => {
        calls.push(`delete ${name} ${memories}`);
        // By default each session taught 3 memories.
        const answer = remove ? await remove(name, memories) : { memories: memories === 'keep' ? 0 : 3 };
        setSessions((all) => all.filter((s) => s.name !== name));
        return answer;
      }}
      onForgetMemories={async (name) => {
        calls.push(`forget ${name}`);
        return forget ? forget(name) : 3;
      }}
    />
  );
}

function fill(el: HTMLInputElement, value: string) {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(el, value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
}

function key(el: Element, k: string) {
  el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
}

async function flush() {
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

function mount(locale: 'en' | 'zh-CN' = 'en', forget?: Forget, remove?: Remove) {
  const calls: string[] = [];
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() =>
    root.render(
      <I18nContext.Provider value={translator(locale)}>
        <Harness calls={calls} forget={forget} remove={remove} />
      </I18nContext.Provider>,
    ),
  );
  const titles = () => [...container.querySelectorAll('.session-title')].map((e) => e.textContent);
  const row = (name: string) => container.querySelector(`[data-row="${name}"]`) as HTMLElement;
  const click = (el: Element | null) => act(() => (el as HTMLButtonElement).click());
  return { container, root, calls, titles, row, click };
}

afterEach(() => {
  document.body.innerHTML = '';
});

describe('filterSessions', () => {
  it('matches the name or the title, ignoring case and surrounding spaces', () => {
    expect(filterSessions(initial, '').map((s) => s.name)).toEqual(['work-notes', 'holiday', 'taken']);
    expect(filterSessions(initial, ' KYOTO ').map((s) => s.name)).toEqual(['holiday']);
    expect(filterSessions(initial, 'Notes').map((s) => s.name)).toEqual(['work-notes']);
    expect(filterSessions(initial, 'ta').map((s) => s.name)).toEqual(['taken']);
    expect(filterSessions(initial, 'zzz')).toEqual([]);
  });
});

describe('SessionList', () => {
  it('filters by the search box', () => {
    const { container, titles } = mount();
    const search = container.querySelector('.session-search') as HTMLInputElement;
    expect(search.placeholder).toBe('Search sessions');
    act(() => fill(search, 'quarterly'));
    expect(titles()).toEqual(['Quarterly Report']);
    act(() => fill(search, 'HOLI'));
    expect(titles()).toEqual(['Trip to Kyoto']);
    act(() => fill(search, 'nothing like it'));
    expect(titles()).toEqual([]);
    expect(container.textContent).toContain('No matching sessions.');
    act(() => fill(search, ''));
    expect(titles()).toEqual(['Quarterly Report', 'Trip to Kyoto', 'taken']);
  });

  it('keeps automation runs out of the list unless asked for, or one is open', () => {
    const runs = [
      session('1', 'work-notes', 'Quarterly Report'),
      { ...session('4', 'Inbox · run 1', 'File a.pdf'), automation: 'Inbox' },
      { ...session('5', 'Inbox · run 2', 'File b.pdf'), automation: 'Inbox' },
    ];
    const render = (selected: string) => {
      const container = document.createElement('div');
      document.body.append(container);
      act(() =>
        createRoot(container).render(
          <I18nContext.Provider value={translator('en')}>
            <SessionList
              sessions={runs}
              selected={selected}
              disabled={false}
              onSelect={() => {}}
              onNew={() => {}}
              onRename={async () => {}}
              onDelete={async () => ({ memories: 0 })}
              onForgetMemories={async () => 0}
            />
          </I18nContext.Provider>,
        ),
      );
      const titles = () => [...container.querySelectorAll('.session-title')].map((e) => e.textContent);
      const toggle = () => container.querySelector('[data-testid="session-runs-toggle"]') as HTMLButtonElement;
      return { titles, toggle };
    };
    const list = render('work-notes');
    expect(list.titles()).toEqual(['Quarterly Report']);
    expect(list.toggle().textContent).toBe('Show automation runs (2)');
    act(() => list.toggle().click());
    expect(list.titles()).toEqual(['Quarterly Report', 'File a.pdf', 'File b.pdf']);
    expect(list.toggle().textContent).toBe('Hide automation runs');
    // A run opened from the Automations page is listed while it is open.
    const open = render('Inbox · run 2');
    expect(open.titles()).toEqual(['Quarterly Report', 'File b.pdf']);
    expect(open.toggle().textContent).toBe('Show automation runs (1)');
  });

  it('renames inline: Esc cancels, a refusal is shown, Enter saves', async () => {
    const { container, calls, row, click } = mount();
    click(row('holiday').querySelector('.session-rename-button'));
    let input = row('holiday').querySelector('.session-rename') as HTMLInputElement;
    expect(input.value).toBe('holiday');
    act(() => fill(input, 'ignored'));
    act(() => key(input, 'Escape'));
    expect(row('holiday').querySelector('.session-rename')).toBeNull();
    expect(calls).toEqual([]);

    click(row('holiday').querySelector('.session-rename-button'));
    input = row('holiday').querySelector('.session-rename') as HTMLInputElement;
    act(() => fill(input, 'taken'));
    act(() => key(input, 'Enter'));
    await flush();
    expect(row('holiday').querySelector('[role="alert"]')?.textContent).toBe('the name taken is taken');
    expect(row('holiday').querySelector('.session-rename')).not.toBeNull();

    input = row('holiday').querySelector('.session-rename') as HTMLInputElement;
    act(() => fill(input, 'kyoto-2026'));
    act(() => key(input, 'Enter'));
    await flush();
    expect(calls).toEqual(['rename holiday taken', 'rename holiday kyoto-2026']);
    expect(row('holiday')).toBeNull();
    expect(row('kyoto-2026').querySelector('.session-rename')).toBeNull();
    expect(container.querySelector('[role="alert"]')).toBeNull();
  });

  it('deletes only after the inline confirmation', async () => {
    const { container, calls, row, click, titles } = mount();
    click(row('taken').querySelector('.session-delete-button'));
    expect(row('taken').querySelector('.session-confirm')?.textContent).toBe(
      'Delete this conversation? What it taught me:Delete, keep memoriesDelete and forget memoriesDelete with its memoriesCancel',
    );
    click(row('taken').querySelector('.session-delete-no'));
    expect(row('taken').querySelector('.session-confirm')).toBeNull();
    expect(calls).toEqual([]);

    click(row('taken').querySelector('.session-delete-button'));
    click(row('taken').querySelector('[data-testid="session-delete-keep"]'));
    await flush();
    expect(calls).toEqual(['delete taken keep']);
    expect(row('taken')).toBeNull();
    expect(titles()).toEqual(['Quarterly Report', 'Trip to Kyoto']);
    // Nothing went with it, so there is nothing to say.
    expect(container.querySelector('[data-testid="session-delete-notice"]')).toBeNull();
    expect(container.querySelector('[role="alert"]')).toBeNull();
  });

  it('asks what becomes of the memories as a labelled group: Cancel has the focus, Esc cancels', () => {
    const { calls, row, click } = mount();
    click(row('holiday').querySelector('.session-delete-button'));
    const group = row('holiday').querySelector('.session-delete-confirm') as HTMLElement;
    expect(group.getAttribute('role')).toBe('group');
    const label = document.getElementById(group.getAttribute('aria-labelledby') ?? '');
    expect(label?.textContent).toBe('Delete this conversation? What it taught me:');
    const button = (id: string) => group.querySelector(`[data-testid="${id}"]`) as HTMLButtonElement;
    expect(button('session-delete-keep').className).toBe('session-delete-keep');
    expect(button('session-delete-forget').className).toBe('session-delete-forget');
    // Only the choice that cannot be undone looks dangerous.
    expect(button('session-delete-purge').className).toBe('session-delete-purge danger');
    expect(button('session-delete-keep').title).toContain('stays in memory');
    expect(button('session-delete-forget').title).toContain('undo that from the Memory page');
    expect(button('session-delete-purge').title).toContain('cannot be undone');
    expect(document.activeElement).toBe(button('session-delete-no'));
    expect(button('session-delete-no').textContent).toBe('Cancel');

    act(() => key(button('session-delete-forget'), 'Escape'));
    expect(row('holiday').querySelector('.session-delete-confirm')).toBeNull();
    expect(row('holiday').querySelector('.session-delete-button')).not.toBeNull();
    expect(calls).toEqual([]);
  });

  it.each([
    ['session-delete-keep', 'keep'],
    ['session-delete-forget', 'forget'],
    ['session-delete-purge', 'delete'],
  ] as const)('%s deletes the session with memories: %s', async (testId, memories) => {
    const { calls, row, click, titles } = mount();
    click(row('holiday').querySelector('.session-delete-button'));
    click(row('holiday').querySelector(`[data-testid="${testId}"]`));
    await flush();
    expect(calls).toEqual([`delete holiday ${memories}`]);
    expect(row('holiday')).toBeNull();
    expect(titles()).toEqual(['Quarterly Report', 'taken']);
  });

  it('says how many memories were forgotten or deleted with a session, until the next action', async () => {
    const { container, row, click } = mount();
    const notice = () => container.querySelector('[data-testid="session-delete-notice"]');
    click(row('holiday').querySelector('.session-delete-button'));
    click(row('holiday').querySelector('[data-testid="session-delete-forget"]'));
    await flush();
    expect(notice()?.getAttribute('role')).toBe('status');
    expect(notice()?.textContent).toBe(
      'Deleted “Trip to Kyoto” and forgot 3 memories learned in it (undo from the Memory page).',
    );

    click(row('taken').querySelector('.session-delete-button'));
    expect(notice()).toBeNull();
    click(row('taken').querySelector('[data-testid="session-delete-purge"]'));
    await flush();
    expect(notice()?.textContent).toBe('Deleted “taken” and, for good, 3 memories learned in it.');
  });

  it('says so when a deleted session had taught nothing', async () => {
    const { container, row, click } = mount('en', undefined, async () => ({ memories: 0 }));
    click(row('holiday').querySelector('.session-delete-button'));
    click(row('holiday').querySelector('[data-testid="session-delete-purge"]'));
    await flush();
    expect(container.querySelector('[data-testid="session-delete-notice"]')?.textContent).toBe(
      'Deleted “Trip to Kyoto”; no memories had been learned in it.',
    );
  });

  it('shows the refusal to delete a session next to it, keeping the session', async () => {
    const { container, row, click, titles } = mount('en', undefined, () =>
      Promise.reject(new TransportError('invalid_input', '"holiday" has a turn running; stop it first', 400)),
    );
    click(row('holiday').querySelector('.session-delete-button'));
    click(row('holiday').querySelector('[data-testid="session-delete-forget"]'));
    await flush();
    expect(row('holiday').querySelector('.session-error')?.textContent).toBe('"holiday" has a turn running; stop it first');
    expect(row('holiday').querySelector('.session-delete-confirm')).toBeNull();
    expect(container.querySelector('[data-testid="session-delete-notice"]')).toBeNull();
    expect(titles()).toEqual(['Quarterly Report', 'Trip to Kyoto', 'taken']);
  });

  it('forgets the memories of a session only after the inline confirmation, and says how many', async () => {
    const { calls, row, click, titles } = mount();
    const button = row('holiday').querySelector('[data-testid="session-forget-memories"]');
    expect(button?.textContent).toBe('Forget memories');
    click(button);
    const confirm = row('holiday').querySelector('.session-forget-confirm');
    expect(confirm?.textContent).toContain('Forget everything learned from this conversation?');
    expect(confirm?.textContent).toContain('undo it from the Memory page');
    // Not the delete confirmation (the e2e waits for `.session-confirm` after Delete).
    expect(row('holiday').querySelector('.session-confirm')).toBeNull();
    click(row('holiday').querySelector('[data-testid="session-forget-memories-no"]'));
    expect(row('holiday').querySelector('.session-forget-confirm')).toBeNull();
    expect(calls).toEqual([]);

    click(row('holiday').querySelector('[data-testid="session-forget-memories"]'));
    click(row('holiday').querySelector('[data-testid="session-forget-memories-yes"]'));
    await flush();
    expect(calls).toEqual(['forget holiday']);
    expect(row('holiday').querySelector('.session-forget-confirm')).toBeNull();
    expect(row('holiday').querySelector('[role="status"]')?.textContent).toBe('Forgot 3 memories (undo from the Memory page).');
    expect(row('holiday').querySelector('.session-error')).toBeNull();
    // The session itself stays.
    expect(titles()).toEqual(['Quarterly Report', 'Trip to Kyoto', 'taken']);
  });

  it('shows the refusal to forget a session\'s memories next to it', async () => {
    const { row, click } = mount('en', () => Promise.reject(new TransportError('not_found', 'no session holiday', 404)));
    click(row('holiday').querySelector('[data-testid="session-forget-memories"]'));
    click(row('holiday').querySelector('[data-testid="session-forget-memories-yes"]'));
    await flush();
    expect(row('holiday').querySelector('.session-error')?.textContent).toBe('no session holiday');
    expect(row('holiday').querySelector('[role="status"]')).toBeNull();
  });

  it('speaks Chinese in zh-CN', () => {
    const { container, row, click } = mount('zh-CN');
    expect((container.querySelector('.session-search') as HTMLInputElement).placeholder).toBe('搜索会话');
    click(row('taken').querySelector('.session-delete-button'));
    expect(row('taken').querySelector('.session-confirm')?.textContent).toBe(
      '删除这次对话？我从中学到的内容：删除，保留记忆删除并忘记记忆连同记忆一起删除取消',
    );
  });
});

describe('groupSessions', () => {
  const inProject = (id: string, name: string, project: string) => ({ ...session(id, name, null), project });
  it('puts the sessions in no project first, then one group per project in the given order', () => {
    const sessions = [
      inProject('1', 'tiles', 'Kitchen'),
      session('2', 'holiday', null),
      inProject('3', 'chapter 2', 'Thesis'),
      inProject('4', 'cabinets', 'Kitchen'),
      inProject('5', 'old', 'Zoo'),
    ];
    const groups = groupSessions(sessions, ['Thesis', 'Kitchen', 'Garden']);
    expect(groups.map((g) => [g.project, g.sessions.map((s) => s.name)])).toEqual([
      [null, ['holiday']],
      ['Thesis', ['chapter 2']],
      ['Kitchen', ['tiles', 'cabinets']],
      ['Garden', []],
      // A project a session names that the list does not (yet) know still gets its group.
      ['Zoo', ['old']],
    ]);
  });
});

describe('SessionList by project', () => {
  const sessions = [
    session('1', 'work-notes', 'Quarterly Report'),
    { ...session('2', 'tiles', 'Floor tiles'), project: 'Kitchen' },
    session('3', 'holiday', 'Trip to Kyoto'),
    { ...session('4', 'chapter', 'Chapter two'), project: 'Thesis' },
  ];

  function render(props: { selected?: string; newProject?: string | null } = {}) {
    const calls: string[] = [];
    const container = document.createElement('div');
    document.body.append(container);
    act(() =>
      createRoot(container).render(
        <I18nContext.Provider value={translator('en')}>
          <SessionList
            sessions={sessions}
            selected={props.selected ?? 'work-notes'}
            disabled={false}
            onSelect={(name) => void calls.push(`select ${name}`)}
            onNew={() => void calls.push('new')}
            onRename={async (name, newName) => void calls.push(`rename ${name} ${newName}`)}
            onDelete={async () => ({ memories: 0 })}
            onForgetMemories={async () => 0}
            projects={['Kitchen', 'Thesis', 'Garden']}
            newProject={props.newProject ?? null}
            onNewInProject={(project) => void calls.push(`new in ${project}`)}
          />
        </I18nContext.Provider>,
      ),
    );
    const groups = () => [...container.querySelectorAll<HTMLElement>('.session-group')];
    const titlesIn = (el: ParentNode) => [...el.querySelectorAll('.session-title')].map((e) => e.textContent);
    return { container, calls, groups, titlesIn };
  }

  it('lists the sessions in no project first, then a labelled group per project', () => {
    const { container, groups, titlesIn } = render();
    const loose = container.querySelector('nav.sessions > ul') as HTMLElement;
    expect(titlesIn(loose)).toEqual(['Quarterly Report', 'Trip to Kyoto']);
    expect(groups().map((g) => g.querySelector('h3')?.textContent)).toEqual(['Kitchen', 'Thesis', 'Garden']);
    for (const g of groups()) {
      expect(g.getAttribute('role')).toBe('group');
      expect(document.getElementById(g.getAttribute('aria-labelledby') ?? '')?.textContent).toBe(g.dataset.project);
    }
    expect(groups().map((g) => titlesIn(g))).toEqual([['Floor tiles'], ['Chapter two'], []]);
    expect(groups()[2]?.textContent).toContain('No conversations yet.');
    // The list's order is kept: no project's sessions come before a group.
    expect(titlesIn(container)).toEqual(['Quarterly Report', 'Trip to Kyoto', 'Floor tiles', 'Chapter two']);
  });

  it('opens and renames a session in a group as anywhere else', async () => {
    const { calls, groups } = render();
    const kitchen = groups()[0] as HTMLElement;
    act(() => (kitchen.querySelector('[data-session="tiles"]') as HTMLButtonElement).click());
    act(() => (kitchen.querySelector('.session-rename-button') as HTMLButtonElement).click());
    const input = kitchen.querySelector('.session-rename') as HTMLInputElement;
    act(() => fill(input, 'floor'));
    act(() => key(input, 'Enter'));
    await flush();
    expect(calls).toEqual(['select tiles', 'rename tiles floor']);
  });

  it('starts a new chat in a project from its group', () => {
    const { calls, groups } = render();
    const button = groups()[2]?.querySelector('[data-testid="session-group-new"]') as HTMLButtonElement;
    expect(button.textContent).toBe('New chat');
    expect(button.getAttribute('aria-label')).toBe('New chat in Garden');
    act(() => button.click());
    expect(calls).toEqual(['new in Garden']);
  });

  it('shows a new conversation in the group of the project it starts in', () => {
    const { container, groups, titlesIn } = render({ selected: 'chat-new', newProject: 'Garden' });
    expect(titlesIn(groups()[2] as HTMLElement)).toEqual(['Untitled']);
    expect(groups()[2]?.textContent).not.toContain('No conversations yet.');
    expect(titlesIn(container.querySelector('nav.sessions > ul') as HTMLElement)).toEqual(['Quarterly Report', 'Trip to Kyoto']);
  });

  it('keeps only the groups with a match while searching', () => {
    const { container, groups, titlesIn } = render();
    act(() => fill(container.querySelector('.session-search') as HTMLInputElement, 'tiles'));
    expect(groups().map((g) => g.dataset.project)).toEqual(['Kitchen']);
    expect(titlesIn(container)).toEqual(['Floor tiles']);
  });
});

describe('SessionList moves a session to a project', () => {
  const start = [
    session('1', 'work-notes', 'Quarterly Report'),
    { ...session('2', 'tiles', 'Floor tiles'), project: 'Kitchen' },
    session('3', 'holiday', 'Trip to Kyoto'),
  ];
  type Move = (name: string, project: string | null) => Promise<void>;

  /** The list with its own session state, moving a session as the store does. */
  function MoveHarness({ calls, move, projects }: { calls: string[]; move?: Move; projects: string[] }) {
    const [sessions, setSessions] = useState<SessionSummary[]>(start);
    return (
      <SessionList
        sessions={sessions}
        selected="work-notes"
        disabled={false}
        onSelect={(name) => void calls.push(`select ${name}`)}
        onNew={() => void calls.push('new')}
        onRename={async () => {}}
        onMove={async (name, project) => {
          calls.push(`move ${name} ${project}`);
          if (move) await move(name, project);
          setSessions((all) =>
            all.map((s) => {
              if (s.name !== name) return s;
              const moved: SessionSummary = { ...s };
              delete moved.project;
              return project === null ? moved : { ...moved, project };
            }),
          );
        }}
        onDelete={async () => ({ memories: 0 })}
        onForgetMemories={async () => 0}
        projects={projects}
      />
    );
  }

  function render(options: { move?: Move; projects?: string[]; locale?: 'en' | 'zh-CN' } = {}) {
    const calls: string[] = [];
    const container = document.createElement('div');
    document.body.append(container);
    act(() =>
      createRoot(container).render(
        <I18nContext.Provider value={translator(options.locale ?? 'en')}>
          <MoveHarness calls={calls} move={options.move} projects={options.projects ?? ['Kitchen', 'Thesis']} />
        </I18nContext.Provider>,
      ),
    );
    const row = (name: string) => container.querySelector(`[data-row="${name}"]`) as HTMLElement;
    const group = (project: string) => container.querySelector(`.session-group[data-project="${project}"]`) as HTMLElement;
    const loose = () => container.querySelector('nav.sessions > ul') as HTMLElement;
    const titlesIn = (el: ParentNode) => [...el.querySelectorAll('.session-title')].map((e) => e.textContent);
    const choices = (name: string) => [...row(name).querySelectorAll<HTMLButtonElement>('[data-testid="session-move-choice"]')];
    const choose = (name: string, label: string) =>
      act(() => (choices(name).find((b) => b.textContent === label) as HTMLButtonElement).click());
    const open = (name: string) => act(() => (row(name).querySelector('[data-testid="session-move"]') as HTMLButtonElement).click());
    return { container, calls, row, group, loose, titlesIn, choices, choose, open };
  }

  it('offers "No project" and every project, the current one marked and disabled', () => {
    const { row, choices, open } = render();
    const button = row('tiles').querySelector('[data-testid="session-move"]') as HTMLButtonElement;
    expect(button.textContent).toBe('Move to project…');
    expect(button.className).toBe('session-move-button');
    // Beside Rename and Delete, in the same row of actions.
    expect([...row('tiles').querySelectorAll('.session-actions button')].map((b) => b.textContent)).toEqual([
      'Rename',
      'Move to project…',
      'Delete',
      'Forget memories',
    ]);
    open('tiles');
    const group = row('tiles').querySelector('.session-move') as HTMLElement;
    expect(group.getAttribute('role')).toBe('group');
    expect(document.getElementById(group.getAttribute('aria-labelledby') ?? '')?.textContent).toBe('Move “Floor tiles” to:');
    expect(choices('tiles').map((b) => [b.textContent, b.disabled, b.getAttribute('aria-current')])).toEqual([
      ['No project', false, null],
      ['Kitchen (current)', true, 'true'],
      ['Thesis', false, null],
    ]);
    open('holiday');
    expect(choices('holiday').map((b) => [b.textContent, b.disabled])).toEqual([
      ['No project (current)', true],
      ['Kitchen', false],
      ['Thesis', false],
    ]);
  });

  it('moves a session into the chosen project: it then shows in that group', async () => {
    const { calls, group, loose, titlesIn, choose, open, row } = render();
    expect(titlesIn(group('Thesis'))).toEqual([]);
    open('holiday');
    choose('holiday', 'Thesis');
    await flush();
    expect(calls).toEqual(['move holiday Thesis']);
    expect(titlesIn(group('Thesis'))).toEqual(['Trip to Kyoto']);
    expect(titlesIn(loose())).toEqual(['Quarterly Report']);
    expect(row('holiday').querySelector('.session-move')).toBeNull();
    expect(row('holiday').querySelector('.session-error')).toBeNull();
  });

  it('moves a session out of its project with "No project"', async () => {
    const { calls, group, loose, titlesIn, choose, open } = render();
    open('tiles');
    choose('tiles', 'No project');
    await flush();
    expect(calls).toEqual(['move tiles null']);
    expect(titlesIn(loose())).toEqual(['Quarterly Report', 'Floor tiles', 'Trip to Kyoto']);
    expect(titlesIn(group('Kitchen'))).toEqual([]);
  });

  it('keeps the session where it is on Cancel or Esc', () => {
    const { calls, row, open } = render();
    open('holiday');
    const cancel = row('holiday').querySelector('[data-testid="session-move-no"]') as HTMLButtonElement;
    expect(document.activeElement).toBe(cancel);
    expect(cancel.textContent).toBe('Cancel');
    act(() => cancel.click());
    expect(row('holiday').querySelector('.session-move')).toBeNull();
    open('holiday');
    act(() => key(row('holiday').querySelector('[data-testid="session-move-choice"]') as Element, 'Escape'));
    expect(row('holiday').querySelector('.session-move')).toBeNull();
    expect(calls).toEqual([]);
  });

  it('shows the refusal to move a session next to it, keeping it in its group', async () => {
    const { row, group, titlesIn, choose, open } = render({
      move: () => Promise.reject(new TransportError('not_found', 'no project Thesis', 404)),
    });
    open('tiles');
    choose('tiles', 'Thesis');
    await flush();
    expect(row('tiles').querySelector('.session-error')?.textContent).toBe('no project Thesis');
    expect(row('tiles').querySelector('.session-error')?.getAttribute('role')).toBe('alert');
    expect(row('tiles').querySelector('.session-move')).toBeNull();
    expect(titlesIn(group('Kitchen'))).toEqual(['Floor tiles']);
    expect(titlesIn(group('Thesis'))).toEqual([]);
  });

  it('offers no move when there is no project to move to or out of', () => {
    const { row } = render({ projects: [] });
    expect(row('holiday').querySelector('[data-testid="session-move"]')).toBeNull();
    // One whose project the list does not know can still leave it.
    expect(row('tiles').querySelector('[data-testid="session-move"]')).not.toBeNull();
  });

  it('speaks Chinese in zh-CN', () => {
    const { row, choices, open } = render({ locale: 'zh-CN' });
    expect(row('tiles').querySelector('[data-testid="session-move"]')?.textContent).toBe('移到项目…');
    open('tiles');
    expect(row('tiles').querySelector('.session-move > span')?.textContent).toBe('把“Floor tiles”移到：');
    expect(choices('tiles').map((b) => b.textContent)).toEqual(['不属于任何项目', 'Kitchen（当前）', 'Thesis']);
  });
});
