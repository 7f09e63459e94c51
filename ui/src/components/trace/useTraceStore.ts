// React's side of the trace store: one store for the page's life, read through
// `useSyncExternalStore`, loaded on mount and its polling stopped on unmount.

export { useSettingsStore as useTraceStore } from '../settings/useSettingsStore';
