// The projects store without a page: the requests a form stands for (instructions and
// folders only when given, an edit with only what changed), adding and editing (the list read
// again, the page told), a refusal that keeps the form, and removal, which sends nothing for
// a project with memories until told what becomes of them.

import { describe, expect, it } from 'vitest';
import { project } from '../memory/testFakes';
import { EMPTY_PROJECT, ProjectsStore, addRequest, editRequest, folderList } from './projectsStore';
import { projectsTransport } from './testFakes';

describe('the project form', () => {
  it('reads folders one a line, trimmed, blank lines dropped', () => {
    expect(folderList(' /home/me/site \n\n/srv/data\n  ')).toEqual(['/home/me/site', '/srv/data']);
    expect(folderList('')).toEqual([]);
  });

  it('adds with instructions and folders only when given', () => {
    expect(addRequest({ name: ' Kitchen ', instructions: '  ', folders: '\n' })).toEqual({ name: 'Kitchen' });
    expect(addRequest({ name: 'Site', instructions: ' Use British English. ', folders: '/w/site\n/w/assets' })).toEqual({
      name: 'Site',
      instructions: 'Use British English.',
      folders: ['/w/site', '/w/assets'],
    });
  });

  it('edits only what changed: a new name, instructions ("" for none), the whole folder list', () => {
    const site = project(1, 'Site', { instructions: 'Be brief.', folders: ['/w/site'] });
    expect(editRequest(site, { name: 'Site', instructions: 'Be brief.', folders: '/w/site' })).toEqual({ name: 'Site' });
    expect(editRequest(site, { name: 'Web site', instructions: '', folders: '/w/site\n/w/blog' })).toEqual({
      name: 'Site',
      new_name: 'Web site',
      instructions: '',
      folders: ['/w/site', '/w/blog'],
    });
    expect(editRequest(site, { name: 'Site', instructions: 'Be brief.', folders: '' })).toEqual({ name: 'Site', folders: [] });
  });
});

describe('ProjectsStore', () => {
  it('adds a project, reads the list again and tells the page; a refusal keeps the form', async () => {
    const engine = projectsTransport();
    let changed = 0;
    const store = new ProjectsStore(engine, () => (changed += 1));
    await store.load();
    expect(store.getState().projects).toEqual([]);
    store.openNew();
    store.change({ name: 'Site', folders: 'w/site' });
    await store.submit();
    expect(store.getState()).toMatchObject({ failure: 'invalid folders: w/site is not an absolute path', busy: false });
    expect(store.getState().editing?.draft).toEqual({ ...EMPTY_PROJECT, name: 'Site', folders: 'w/site' });
    expect(changed).toBe(0);
    store.change({ folders: '/w/site' });
    await store.submit();
    expect(engine.sent.at(-1)).toEqual({ name: 'Site', folders: ['/w/site'] });
    expect(store.getState()).toMatchObject({ editing: null, failure: null, notice: { kind: 'added', name: 'Site' } });
    expect(store.getState().projects?.map((p) => p.name)).toEqual(['Site']);
    expect(changed).toBe(1);
  });

  it('removes a project with memories only once told what becomes of them', async () => {
    const engine = projectsTransport([project(1, 'Kitchen', { memories: 3 }), project(2, 'Thesis')]);
    const store = new ProjectsStore(engine);
    await store.load();
    store.requestRemove('Kitchen');
    await store.remove();
    expect(engine.requests.filter((r) => r.op === 'remove_project')).toEqual([]);
    await store.remove('delete');
    expect(engine.requests.filter((r) => r.op === 'remove_project').map((r) => r.request)).toEqual([{ name: 'Kitchen', memories: 'delete' }]);
    expect(store.getState().notice).toMatchObject({ kind: 'removed', removed: { deleted: 3, moved: 0 } });
    // A project without memories is removed without the question.
    store.requestRemove('Thesis');
    await store.remove();
    expect(engine.requests.filter((r) => r.op === 'remove_project').at(-1)?.request).toEqual({ name: 'Thesis' });
    expect(store.getState().projects).toEqual([]);
  });
});
