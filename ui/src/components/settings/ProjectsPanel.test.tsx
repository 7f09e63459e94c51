// @vitest-environment jsdom
// The projects panel in jsdom against an in-memory engine: adding a project from the form
// (instructions, folders one a line) lists it with its counts; the engine's refusal shows in
// the form; Edit sends only what changed; Remove asks first (Cancel and Esc send nothing), and
// for a project with memories asks whether they become global or are deleted, and sends that.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { project } from '../../memory/testFakes';
import { projectsTransport } from '../../settings/testFakes';
import { ProjectsPanel } from './ProjectsPanel';
import { byTestId, cleanup, fill, flush, mount } from './testing';

afterEach(cleanup);

const click = async (el: Element | null | undefined) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};
const row = (root: ParentNode, name: string) => root.querySelector(`tr[data-project="${name}"]`) as HTMLElement | null;

describe('ProjectsPanel', () => {
  it('adds a project from the form and lists it; the engine\'s refusal shows in the form', async () => {
    const engine = projectsTransport();
    let changed = 0;
    const { container, root } = mount(<ProjectsPanel transport={engine} onChanged={() => (changed += 1)} />);
    await flush();
    expect(container.querySelector('.projects-empty')?.textContent).toBe('No projects yet.');
    await click(byTestId(container, 'project-add'));
    const field = (id: string) => byTestId<HTMLInputElement>(container, id) as HTMLInputElement;
    expect(byTestId<HTMLButtonElement>(container, 'project-save')?.disabled).toBe(true);
    act(() => fill(field('project-name'), 'Kitchen remodel'));
    act(() => fill(field('project-instructions'), 'Metric units. Budget is 12k.'));
    act(() => fill(field('project-folders'), '/home/me/kitchen\nplans'));
    await click(byTestId(container, 'project-save'));
    const error = byTestId(byTestId(container, 'project-form') as HTMLElement, 'project-error');
    expect(error?.getAttribute('role')).toBe('alert');
    expect(error?.textContent).toBe('Not saved: invalid folders: plans is not an absolute path');
    expect(changed).toBe(0);

    act(() => fill(field('project-folders'), '/home/me/kitchen\n/home/me/plans\n'));
    await click(byTestId(container, 'project-save'));
    expect(engine.sent.at(-1)).toEqual({
      name: 'Kitchen remodel',
      instructions: 'Metric units. Budget is 12k.',
      folders: ['/home/me/kitchen', '/home/me/plans'],
    });
    expect(byTestId(container, 'project-form')).toBeNull();
    expect(byTestId(container, 'project-notice')?.textContent).toBe('Added project “Kitchen remodel”.');
    const added = row(container, 'Kitchen remodel');
    expect(added?.textContent).toContain('Metric units. Budget is 12k.');
    expect(added?.textContent).toContain('/home/me/plans');
    expect(byTestId(added as HTMLElement, 'project-sessions')?.textContent).toBe('0');
    expect(changed).toBe(1);
    act(() => root.unmount());
  });

  it('edits a project, sending only what changed', async () => {
    const engine = projectsTransport([project(1, 'Site', { instructions: 'Be brief.', folders: ['/w/site'], sessions: 2, memories: 4 })]);
    const { container, root } = mount(<ProjectsPanel transport={engine} />);
    await flush();
    expect(byTestId(row(container, 'Site') as HTMLElement, 'project-memories')?.textContent).toBe('4');
    await click(row(container, 'Site')?.querySelector('[data-testid="project-edit"]'));
    expect(byTestId<HTMLTextAreaElement>(container, 'project-instructions')?.value).toBe('Be brief.');
    act(() => fill(byTestId<HTMLInputElement>(container, 'project-name') as HTMLInputElement, 'Web site'));
    act(() => fill(byTestId<HTMLTextAreaElement>(container, 'project-folders') as HTMLTextAreaElement, '/w/site\n/w/blog'));
    await click(byTestId(container, 'project-save'));
    expect(engine.requests.filter((r) => r.op === 'edit_project').map((r) => r.request)).toEqual([
      { name: 'Site', new_name: 'Web site', folders: ['/w/site', '/w/blog'] },
    ]);
    expect(row(container, 'Site')).toBeNull();
    expect(row(container, 'Web site')?.textContent).toContain('/w/blog');
    expect(byTestId(container, 'project-notice')?.textContent).toBe('Saved project “Web site”.');
    act(() => root.unmount());
  });

  it('removes a project without memories after asking; Cancel and Esc send nothing', async () => {
    const engine = projectsTransport([project(1, 'Thesis', { sessions: 3 })]);
    const { container, root } = mount(<ProjectsPanel transport={engine} />);
    await flush();
    const removals = () => engine.requests.filter((r) => r.op === 'remove_project').map((r) => r.request);
    await click(row(container, 'Thesis')?.querySelector('[data-testid="project-remove"]'));
    const confirm = byTestId<HTMLElement>(container, 'project-remove-confirm') as HTMLElement;
    expect(confirm.getAttribute('role')).toBe('group');
    expect(document.getElementById(confirm.getAttribute('aria-labelledby') ?? '')?.textContent).toBe(
      'Remove project “Thesis”? Its conversations stay, in no project.',
    );
    expect(document.activeElement).toBe(byTestId(container, 'project-remove-cancel'));
    await click(byTestId(container, 'project-remove-cancel'));
    expect(byTestId(container, 'project-remove-confirm')).toBeNull();
    await click(row(container, 'Thesis')?.querySelector('[data-testid="project-remove"]'));
    act(() => {
      byTestId(container, 'project-remove-yes')?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(byTestId(container, 'project-remove-confirm')).toBeNull();
    expect(removals()).toEqual([]);

    await click(row(container, 'Thesis')?.querySelector('[data-testid="project-remove"]'));
    await click(byTestId(container, 'project-remove-yes'));
    expect(removals()).toEqual([{ name: 'Thesis' }]);
    expect(row(container, 'Thesis')).toBeNull();
    expect(byTestId(container, 'project-notice')?.textContent).toBe('Removed project “Thesis”.');
    act(() => root.unmount());
  });

  it.each([
    ['project-remove-global', 'global', 'Removed project “Kitchen”; its 3 memories are global now.'],
    ['project-remove-delete', 'delete', 'Removed project “Kitchen” and deleted its 3 memories for good.'],
  ] as const)('asks what becomes of a project\'s memories: %s sends memories: %s', async (testId, memories, said) => {
    const engine = projectsTransport([project(1, 'Kitchen', { memories: 3 })]);
    const { container, root } = mount(<ProjectsPanel transport={engine} />);
    await flush();
    await click(row(container, 'Kitchen')?.querySelector('[data-testid="project-remove"]'));
    const confirm = byTestId<HTMLElement>(container, 'project-remove-confirm') as HTMLElement;
    expect(confirm.textContent).toContain('What becomes of its 3 memories?');
    // No plain "Remove": the memories' fate must be chosen.
    expect(byTestId(container, 'project-remove-yes')).toBeNull();
    expect(byTestId(container, 'project-remove-delete')?.className).toBe('danger');
    await click(byTestId(container, testId));
    expect(engine.requests.filter((r) => r.op === 'remove_project').map((r) => r.request)).toEqual([{ name: 'Kitchen', memories }]);
    expect(byTestId(container, 'project-notice')?.textContent).toBe(said);
    expect(container.querySelector('.projects-empty')).not.toBeNull();
    act(() => root.unmount());
  });

  it('shows the engine\'s refusal to remove in the question, and the counts read again', async () => {
    const engine = projectsTransport([project(1, 'Kitchen')]);
    const { container, root } = mount(<ProjectsPanel transport={engine} />, 'zh-CN');
    await flush();
    await click(row(container, 'Kitchen')?.querySelector('[data-testid="project-remove"]'));
    // A memory was added to it since the list was read: the engine wants to know.
    engine.memories('Kitchen', 1);
    await click(byTestId(container, 'project-remove-yes'));
    const error = byTestId(byTestId(container, 'project-remove-confirm') as HTMLElement, 'project-error');
    expect(error?.textContent).toContain('未移除：invalid memories');
    expect(byTestId(row(container, 'Kitchen') as HTMLElement, 'project-memories')?.textContent).toBe('1');
    expect(byTestId(container, 'project-remove-global')).not.toBeNull();
    act(() => root.unmount());
  });
});
