// The MCP servers: the configured list and each one's live state, the open add/edit form,
// and the last save or refusal. Every change (save, remove, toggle) sends the whole list,
// which the engine saves and applies at once; while servers start, their states are read
// again every second, ten times at most.

import type { McpServerConfig, McpServerStatus } from '../generated/engine';
import { EMPTY_MCP_FORM, type McpForm, type McpFormProblem, configFromForm, formFromConfig } from '../mcpForm';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** After a save the states are read again every second, ten times at most (or until none starts). */
export const MCP_POLL_MS = 1000;
export const MCP_POLL_TRIES = 10;

/** The open form: a new server (`original` null) or the configured one of that name. */
export interface McpEditing {
  original: string | null;
  form: McpForm;
}

/** Why the last change was not saved: the form's own check, or the engine's message. */
export type McpFailure = { problem: McpFormProblem } | { message: string };

export interface McpState {
  /** The configured servers, in order. */
  configs: McpServerConfig[] | undefined;
  configError: string | null;
  /** Their live states, as last read. */
  states: McpServerStatus[] | undefined;
  statesError: string | null;
  editing: McpEditing | null;
  busy: boolean;
  saved: boolean;
  failure: McpFailure | null;
}

/** Whether a config runs over streamable HTTP (rather than as a stdio program). */
export function isHttp(c: McpServerConfig): boolean {
  return c.url !== null && c.command === null;
}

export class McpStore extends SettingsStore<McpState> {
  private readonly transport: SettingsTransport;
  /** Bumped by every new round of polling and by `dispose`, which ends the one before. */
  private pollRound = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(transport: SettingsTransport) {
    super({
      configs: undefined,
      configError: null,
      states: undefined,
      statesError: null,
      editing: null,
      busy: false,
      saved: false,
      failure: null,
    });
    this.transport = transport;
  }

  async load(): Promise<void> {
    await Promise.all([this.loadConfigs(), this.refresh()]);
  }

  private async loadConfigs(): Promise<void> {
    try {
      this.set({ configs: await this.transport.call('mcp_config', {}), configError: null });
    } catch (e) {
      this.set({ configError: describe(e) });
    }
  }

  /** Reads the live states again. */
  async refresh(): Promise<void> {
    try {
      this.set({ states: await this.transport.call('mcp_servers', {}), statesError: null });
    } catch (e) {
      this.set({ statesError: describe(e) });
    }
  }

  /** Stops polling. */
  dispose(): void {
    this.pollRound += 1;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Reads the states every `MCP_POLL_MS` until none is starting, `MCP_POLL_TRIES` times at most. */
  private poll(): void {
    this.dispose();
    const round = this.pollRound;
    let left = MCP_POLL_TRIES;
    const tick = async () => {
      left -= 1;
      try {
        const next = await this.transport.call('mcp_servers', {});
        if (round !== this.pollRound) return;
        this.set({ states: next });
        if (!next.some((s) => s.state === 'starting')) return;
      } catch {
        // Keep the last states; the next tick tries again.
      }
      if (round === this.pollRound && left > 0) this.timer = setTimeout(() => void tick(), MCP_POLL_MS);
    };
    this.timer = setTimeout(() => void tick(), MCP_POLL_MS);
  }

  /** Sends the whole list; true when the engine took it. */
  private async apply(next: McpServerConfig[]): Promise<boolean> {
    this.set({ busy: true, saved: false });
    try {
      const states = await this.transport.call('set_mcp_config', { servers: next });
      this.set({ configs: next, states, failure: null, saved: true });
      if (states.some((s) => s.state === 'starting')) this.poll();
      return true;
    } catch (e) {
      this.set({ failure: { message: describe(e) } });
      return false;
    } finally {
      this.set({ busy: false });
    }
  }

  private open(editing: McpEditing): void {
    this.set({ editing, saved: false, failure: null });
  }

  /** Opens an empty form (unless one for a new server is open already, which keeps its text). */
  openNew(): void {
    if (this.getState().editing?.original !== null) this.open({ original: null, form: EMPTY_MCP_FORM });
  }

  /** Opens the form on a configured server. */
  openEdit(name: string): void {
    const config = this.getState().configs?.find((c) => c.name === name);
    if (config) this.open({ original: name, form: formFromConfig(config) });
  }

  change(patch: Partial<McpForm>): void {
    const { editing } = this.getState();
    this.set({ editing: editing && { ...editing, form: { ...editing.form, ...patch } }, saved: false });
  }

  cancel(): void {
    this.set({ editing: null, failure: null });
  }

  /** Checks the form and sends the list with it; the form closes when the engine took it. */
  async submit(): Promise<void> {
    const { editing, configs } = this.getState();
    if (!editing || !configs) return;
    const base = configs.find((c) => c.name === editing.original);
    const checked = configFromForm(
      editing.form,
      configs.filter((c) => c !== base),
      base,
    );
    if (!checked.ok) {
      this.set({ saved: false, failure: { problem: checked.problem } });
      return;
    }
    // An edited entry keeps its place; a new one (or one removed meanwhile) goes last.
    const next = base ? configs.map((c) => (c === base ? checked.value : c)) : [...configs, checked.value];
    if (await this.apply(next)) this.set({ editing: null });
  }

  /** Sends the list without the server (closing its form, if open). */
  async remove(name: string): Promise<void> {
    const { configs, editing } = this.getState();
    if (!configs) return;
    if ((await this.apply(configs.filter((c) => c.name !== name))) && editing?.original === name) {
      this.set({ editing: null });
    }
  }

  /** Sends the list with the server turned on or off (and its open form following). */
  async toggle(name: string): Promise<void> {
    const { configs, editing } = this.getState();
    if (!configs) return;
    const next = configs.map((c) => (c.name === name ? { ...c, enabled: !c.enabled } : c));
    if ((await this.apply(next)) && editing?.original === name) {
      const enabled = next.find((c) => c.name === name)?.enabled ?? true;
      const now = this.getState().editing;
      this.set({ editing: now && { ...now, form: { ...now.form, enabled } } });
    }
  }
}
