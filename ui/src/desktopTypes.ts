// Types of the desktop app's own commands (not the engine's, so not generated).

/**
 * The quick-ask global shortcut: mirrors `src-tauri/src/desktop.rs::ShortcutStatus` by hand;
 * keep the two in step.
 */
export interface ShortcutStatus {
  /** The accelerator, e.g. `CommandOrControl+Shift+Space`. */
  shortcut: string;
  /** Whether the system accepted it. */
  registered: boolean;
  /** Why it is not registered, if it is not. */
  error: string | null;
}
