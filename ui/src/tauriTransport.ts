// `Transport` over Tauri IPC: the desktop app runs the engine in-process. An engine operation
// is the command of the same name with one argument, `request` (`invoke(op, { request })`); a
// turn's events come through a `Channel`; the desktop's own commands take their arguments in
// camelCase. The Tauri functions are passed in, so tests can run it against fakes.

import type { EventEnvelope, OperationName, SendTurn, ShortcutStatus } from './generated/engine';
import {
  type DesktopBridge,
  type RequestOf,
  type ResponseOf,
  type Transport,
  TransportError,
  type TurnHandle,
  type TurnOptions,
  readErrorBody,
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

/**
 * An IPC rejection as a `TransportError`: the engine's `{"error": {code, message}}` (every
 * command answers failures with it), or a bare string (Tauri's own, e.g. a bad argument).
 */
export function ipcError(e: unknown): TransportError {
  if (e instanceof TransportError) return e;
  if (typeof e === 'string') return new TransportError('ipc', e);
  const body = readErrorBody(e);
  if (body) return new TransportError(body.code ?? 'ipc', body.message);
  return new TransportError('ipc', e instanceof Error ? e.message : String(e));
}

/** `Transport` over Tauri IPC, with the desktop bridge. */
export class TauriTransport implements Transport {
  private readonly api: TauriApi;
  readonly desktop: DesktopBridge;

  constructor(api: TauriApi) {
    this.api = api;
    this.desktop = {
      quickShortcut: () => this.invoke<ShortcutStatus>('quick_shortcut'),
      setQuickShortcut: (shortcut) => this.invoke<ShortcutStatus>('set_quick_shortcut', { shortcut }),
      openInMain: async (session) => void (await this.invoke('open_in_main', { session })),
      dismissQuick: async () => void (await this.invoke('dismiss_quick')),
      onOpenSession: (cb) => this.onOpenSession(cb),
    };
  }

  /** An engine operation: the command of the same name, with the request as its argument. */
  call<K extends OperationName>(op: K, request: RequestOf<K>): Promise<ResponseOf<K>> {
    return this.invoke<ResponseOf<K>>(op, { request });
  }

  private async invoke<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
    try {
      return await this.api.invoke<T>(cmd, args);
    } catch (e) {
      throw ipcError(e);
    }
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
    const request: SendTurn = { session, input };
    if (options.replaceFrom) request.replace_from = options.replaceFrom;
    if (options.research) request.research = true;
    if (options.temporary) request.temporary = options.temporary;
    if (options.project) request.project = options.project;
    const args: Record<string, unknown> = { request, onEvent: channel };
    if (options.quick) args.quick = true;
    const done = (async () => {
      await this.invoke('send_turn', args);
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
