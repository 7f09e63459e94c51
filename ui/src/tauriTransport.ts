// `Transport` over Tauri IPC: the desktop app runs the engine in-process and answers
// `invoke(command, args)` (argument keys in camelCase); a turn's events come through a
// `Channel`. The Tauri functions are passed in, so tests can run it against fakes.

import type { ShortcutStatus } from './desktopTypes';
import type { EventEnvelope, SessionSummary, StoredMessage } from './events';
import type {
  AuditEntry,
  BootstrapFile,
  ConnectionReport,
  McpServerConfig,
  McpServerStatus,
  NewRule,
  OllamaInfo,
  ProviderUpdate,
  ProviderView,
  Rule,
} from './settingsTypes';
import {
  type ApprovalAnswer,
  type DesktopBridge,
  type Transport,
  TransportError,
  type TurnHandle,
  type TurnOptions,
} from './transport';

/** A channel the backend sends messages through (`Channel` of `@tauri-apps/api/core`). */
export interface IpcChannel<T> {
  onmessage: (message: T) => void;
}

/** The parts of `@tauri-apps/api` this transport uses. */
export interface TauriApi {
  invoke<T>(cmd: string, args?: Record<string, unknown>): Promise<T>;
  Channel: new <T>() => IpcChannel<T>;
  listen<T>(event: string, handler: (event: { payload: T }) => void): Promise<() => void>;
}

/** The event the main window receives when quick ask hands a conversation over. */
export const OPEN_SESSION_EVENT = 'open-session';

/**
 * How long a turn waits, after its command returned, for a `turn_finished` still on its way
 * through the channel (channel messages and the command's answer travel separately).
 */
const LATE_EVENT_GRACE_MS = 1000;

/** An IPC rejection (`{code, message}`, or a bare string) as a `TransportError`. */
export function ipcError(e: unknown): TransportError {
  if (e instanceof TransportError) return e;
  if (typeof e === 'string') return new TransportError('ipc', e);
  if (e && typeof e === 'object') {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof message === 'string') return new TransportError(typeof code === 'string' ? code : 'ipc', message);
  }
  return new TransportError('ipc', e instanceof Error ? e.message : String(e));
}

/** `Transport` over Tauri IPC, with the desktop bridge. */
export class TauriTransport implements Transport {
  private readonly api: TauriApi;
  readonly desktop: DesktopBridge;

  constructor(api: TauriApi) {
    this.api = api;
    this.desktop = {
      quickShortcut: () => this.call<ShortcutStatus>('quick_shortcut'),
      setQuickShortcut: (shortcut) => this.call<ShortcutStatus>('set_quick_shortcut', { shortcut }),
      openInMain: async (session) => void (await this.call('open_in_main', { session })),
      dismissQuick: async () => void (await this.call('dismiss_quick')),
      onOpenSession: (cb) => this.onOpenSession(cb),
    };
  }

  private async call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
    try {
      return await this.api.invoke<T>(cmd, args);
    } catch (e) {
      throw ipcError(e);
    }
  }

  listSessions(): Promise<SessionSummary[]> {
    return this.call('list_sessions');
  }

  history(session: string): Promise<StoredMessage[]> {
    return this.call('history', { session });
  }

  renameSession(name: string, newName: string): Promise<SessionSummary> {
    return this.call('rename_session', { name, newName });
  }

  async deleteSession(name: string): Promise<void> {
    await this.call('delete_session', { name });
  }

  sendTurn(
    session: string,
    input: string,
    onEvent: (event: EventEnvelope) => void,
    options: TurnOptions = {},
  ): TurnHandle {
    const channel = new this.api.Channel<EventEnvelope>();
    let finished = false;
    let whenFinished: (() => void) | undefined;
    channel.onmessage = (event) => {
      onEvent(event);
      if (event.type === 'turn_finished') {
        finished = true;
        whenFinished?.();
      }
    };
    const args: Record<string, unknown> = { session, input, onEvent: channel };
    if (options.quick) args.quick = true;
    if (options.replaceFrom) args.replaceFrom = options.replaceFrom;
    const done = (async () => {
      await this.call('send_turn', args);
      if (finished) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LATE_EVENT_GRACE_MS);
        whenFinished = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    })();
    return { done };
  }

  async cancel(turnId: string): Promise<void> {
    await this.call('cancel_turn', { turnId });
  }

  async answerApproval(requestId: string, answer: ApprovalAnswer): Promise<void> {
    await this.call('answer_approval', { requestId, answer });
  }

  listRules(): Promise<Rule[]> {
    return this.call('list_rules');
  }

  addRule(rule: NewRule): Promise<Rule> {
    return this.call('add_rule', { rule });
  }

  removeRule(id: string): Promise<Rule> {
    return this.call('remove_rule', { id });
  }

  mcpServers(): Promise<McpServerStatus[]> {
    return this.call('mcp_servers');
  }

  mcpConfig(): Promise<McpServerConfig[]> {
    return this.call('mcp_config');
  }

  setMcpConfig(servers: McpServerConfig[]): Promise<McpServerStatus[]> {
    return this.call('set_mcp_config', { servers });
  }

  approvals(limit: number): Promise<AuditEntry[]> {
    return this.call('approvals', { limit });
  }

  provider(): Promise<ProviderView> {
    return this.call('provider');
  }

  updateProvider(update: ProviderUpdate): Promise<ProviderView> {
    return this.call('update_provider', { update });
  }

  testProvider(update: ProviderUpdate): Promise<ConnectionReport> {
    return this.call('test_provider', { update });
  }

  async detectOllama(): Promise<OllamaInfo | null> {
    return (await this.call<OllamaInfo | null | undefined>('detect_ollama')) ?? null;
  }

  bootstrapFiles(): Promise<BootstrapFile[]> {
    return this.call('bootstrap_files');
  }

  /** `content: null` restores the default. */
  saveBootstrapFile(name: string, content: string | null): Promise<BootstrapFile> {
    return this.call('save_bootstrap_file', { name, content });
  }

  /** Listens for `open-session`; the returned function stops listening, even before `listen` settled. */
  private onOpenSession(cb: (session: string) => void): () => void {
    let stopped = false;
    let unlisten: (() => void) | undefined;
    this.api.listen<string>(OPEN_SESSION_EVENT, (event) => cb(event.payload)).then(
      (u) => {
        if (stopped) u();
        else unlisten = u;
      },
      () => {
        // No event system (should not happen in the app): nothing to listen to.
      },
    );
    return () => {
      stopped = true;
      unlisten?.();
    };
  }
}
