// Where a memory belongs, from its scope: the global memories (`global`), one project's
// (`project:<project id>`, named through the project list), or one conversation's
// (`session:<id>`). A project id the list does not know (not read yet, or read before the
// project was added) has no name.

import type { Project } from '../generated/engine';

export type Place =
  | { kind: 'global' }
  | { kind: 'project'; project: Project | null }
  | { kind: 'session' };

const PROJECT = 'project:';

export function placeOf(scope: string, projects: readonly Project[]): Place {
  if (scope.startsWith(PROJECT)) {
    const id = scope.slice(PROJECT.length);
    return { kind: 'project', project: projects.find((p) => p.id === id) ?? null };
  }
  return scope.startsWith('session:') ? { kind: 'session' } : { kind: 'global' };
}
