// What every settings store shares, in the style of the chat store: one immutable state,
// replaced by its actions and read by components through `useSyncExternalStore`. A store
// talks to the engine only through the transport it was made with (its `call`); no React here.

import type { Transport } from '../transport';

/** What a settings store needs of the transport: the engine's operations. */
export type SettingsTransport = Pick<Transport, 'call'>;

/** A settings domain's store: its state, who listens to it, and its first load. */
export abstract class SettingsStore<S> {
  private state: S;
  private readonly listeners = new Set<() => void>();

  protected constructor(initial: S) {
    this.state = initial;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): S => this.state;

  /** Replaces part of the state and tells the listeners. */
  protected set(change: Partial<S>): void {
    this.state = { ...this.state, ...change };
    for (const l of this.listeners) l();
  }

  /** Loads what the panel shows (again, when called again). */
  abstract load(): Promise<void>;

  /** Stops background work (polling); a later `load` starts afresh. */
  dispose(): void {}
}

/** One line for a failure: the transport's message, or the thing itself. */
export function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** `value` when it is one of `options` (a select's value read back as its type), else undefined. */
export function oneOf<T extends string>(options: readonly T[], value: string): T | undefined {
  return options.find((o) => o === value);
}
