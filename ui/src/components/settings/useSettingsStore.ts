// React's side of a settings store: one store for the panel's life, read through
// `useSyncExternalStore`, loaded on mount and stopped (its polling) on unmount.

import { useEffect, useState, useSyncExternalStore } from 'react';
import type { SettingsStore } from '../../settings/store';

type StateOf<T> = T extends SettingsStore<infer S> ? S : never;

/** The store `create` makes on the first render, and its current state. */
export function useSettingsStore<T extends SettingsStore<object>>(create: () => T): [StateOf<T>, T] {
  const [store] = useState(create);
  const state = useSyncExternalStore(store.subscribe, store.getState) as StateOf<T>;
  useEffect(() => {
    void store.load();
    return () => store.dispose();
  }, [store]);
  return [state, store];
}
