// Which page the main window shows, and what another page asked it to open there: a turn's
// trace ("Show trace" on an answer) or a memory (a memory id in a trace). Opening a
// conversation is the chat store's (`ChatStore.openAt`); `App` wires the two. A target is
// for one visit: choosing a page from the header opens it as it starts.

/** The pages, in the header's order. */
export const VIEWS = ['chat', 'memory', 'traces', 'automations', 'settings'] as const;
export type View = (typeof VIEWS)[number];

export interface Route {
  view: View;
  /** The turn the trace page opens. */
  turnId: string | null;
  /** The memory the memory page opens. */
  memoryId: string | null;
}

export class Navigation {
  private state: Route = { view: 'chat', turnId: null, memoryId: null };
  private readonly listeners = new Set<() => void>();

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): Route => this.state;

  private go(route: Route): void {
    this.state = route;
    for (const l of this.listeners) l();
  }

  /** A page from the header, as it starts. */
  show(view: View): void {
    if (view !== this.state.view || this.state.turnId !== null || this.state.memoryId !== null) {
      this.go({ view, turnId: null, memoryId: null });
    }
  }

  /** The trace page, at a turn. */
  openTrace(turnId: string): void {
    this.go({ view: 'traces', turnId, memoryId: null });
  }

  /** The memory page, at a memory. */
  openMemory(memoryId: string): void {
    this.go({ view: 'memory', turnId: null, memoryId });
  }
}
