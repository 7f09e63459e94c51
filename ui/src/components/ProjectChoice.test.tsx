// @vitest-environment jsdom
// A conversation's project: the select under a new conversation (No project, then every
// project) reports the choice, and is gone once a message is sent or when there are no
// projects; the label says the project of a conversation that has begun.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { project } from '../memory/testFakes';
import { ProjectLabel, ProjectSelect } from './ProjectChoice';
import { byTestId, cleanup, fill, mount } from './settings/testing';

afterEach(cleanup);

const projects = [project(1, 'Kitchen'), project(2, 'Thesis')];

describe('ProjectSelect', () => {
  it('offers No project and every project, and reports the choice', () => {
    const chosen: (string | null)[] = [];
    const { container } = mount(<ProjectSelect projects={projects} project={null} canChange onChange={(p) => chosen.push(p)} />);
    const select = byTestId<HTMLSelectElement>(container, 'project-select') as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual(['No project', 'Kitchen', 'Thesis']);
    expect(select.value).toBe('');
    expect(container.querySelector('label')?.textContent).toContain('Project');
    act(() => fill(select, 'Thesis'));
    act(() => fill(select, ''));
    expect(chosen).toEqual(['Thesis', null]);
  });

  it('shows the chosen project, and nothing once it cannot change or without projects', () => {
    const { container, root } = mount(<ProjectSelect projects={projects} project="Kitchen" canChange onChange={() => {}} />, 'zh-CN');
    expect(byTestId<HTMLSelectElement>(container, 'project-select')?.value).toBe('Kitchen');
    expect(byTestId<HTMLSelectElement>(container, 'project-select')?.options[0]?.textContent).toBe('不属于任何项目');
    act(() => root.render(<ProjectSelect projects={projects} project="Kitchen" canChange={false} onChange={() => {}} />));
    expect(container.textContent).toBe('');
    act(() => root.render(<ProjectSelect projects={[]} project={null} canChange onChange={() => {}} />));
    expect(container.textContent).toBe('');
  });
});

describe('ProjectLabel', () => {
  it('names the project, and says nothing for a conversation in none', () => {
    const { container, root } = mount(<ProjectLabel project="Kitchen" />);
    expect(byTestId(container, 'chat-project')?.textContent).toBe('Project: Kitchen');
    act(() => root.render(<ProjectLabel project={null} />));
    expect(byTestId(container, 'chat-project')).toBeNull();
  });
});
