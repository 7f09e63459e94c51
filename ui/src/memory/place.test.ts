// Where a memory belongs, from its scope: global, a project's (named through the list, or
// unnamed when the list does not know it) or one conversation's.

import { describe, expect, it } from 'vitest';
import { placeOf } from './place';
import { project } from './testFakes';

describe('placeOf', () => {
  it('names the project of a project scope by its id, and tells global and conversation scopes apart', () => {
    const kitchen = project(1, 'Kitchen');
    const projects = [kitchen, project(2, 'Thesis')];
    expect(placeOf('global', projects)).toEqual({ kind: 'global' });
    expect(placeOf('project:p-1', projects)).toEqual({ kind: 'project', project: kitchen });
    expect(placeOf('project:p-7', projects)).toEqual({ kind: 'project', project: null });
    expect(placeOf('session:s-1', projects)).toEqual({ kind: 'session' });
  });
});
