// React's side of the memory store: one store for the page's life, read through
// `useSyncExternalStore` and loaded on mount (the settings panels' `useSettingsStore`).

export { useSettingsStore as useMemoryStore } from '../settings/useSettingsStore';
