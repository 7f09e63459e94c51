// The colour theme: follow the system (prefers-color-scheme) or force light or dark; the
// choice is kept in localStorage and applied as `data-theme` on <html>.

/** The theme choice. */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'echo-desk-theme';

/** The saved choice, `system` by default. */
export function loadTheme(): ThemeChoice {
  const saved = window.localStorage.getItem(KEY);
  return saved === 'light' || saved === 'dark' ? saved : 'system';
}

/** Saves and applies a choice. */
export function applyTheme(choice: ThemeChoice): void {
  window.localStorage.setItem(KEY, choice);
  if (choice === 'system') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', choice);
}

/** The next choice of the toggle: system → light → dark → system. */
export function nextTheme(choice: ThemeChoice): ThemeChoice {
  return choice === 'system' ? 'light' : choice === 'light' ? 'dark' : 'system';
}
