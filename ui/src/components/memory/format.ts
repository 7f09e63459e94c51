// How the memory page shows times, fractions and where a memory belongs.

import type { Translate } from '../../i18n';
import type { Place } from '../../memory/place';

/** A stored time in the reader's locale; the text itself when it is not a time. */
export function when(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toLocaleString();
}

/** 0..1 as a whole percentage. */
export function percent(x: number): string {
  return `${Math.round(x * 100)}%`;
}

/** Where a memory belongs, in words: "Global", its project's name, or one conversation. */
export function placeLabel(t: Translate, place: Place): string {
  if (place.kind === 'global') return t('memory.scope.global');
  if (place.kind === 'session') return t('memory.scope.session');
  return place.project ? t('memory.scope.project', { name: place.project.name }) : t('memory.scope.unknownProject');
}
