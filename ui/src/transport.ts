// How the UI talks to the engine: one transport-neutral `Transport` interface, and its
// implementation over `echod serve` (HTTP + server-sent events read from a `fetch` body,
// because EventSource cannot send the bearer token). The desktop app's implementation over
// Tauri IPC is `TauriTransport` (`tauriTransport.ts`); only it has the `desktop` bridge.

import {
  type EventEnvelope,
  OPERATION_ROUTES,
  type OperationName,
  type Operations,
  type Paired,
  type PairRequest,
  type SendTurn,
  type ShortcutStatus,
  type TemporaryChat,
} from './generated/engine';
import { SseParser } from './sse';

/** A turn on its way: `done` settles when the stream ends (rejects on a transport error). */
export interface TurnHandle {
  done: Promise<void>;
}

/** How a turn is run, besides its session and input. */
export interface TurnOptions {
  /**
   * A user message's stored id: that message and everything after it are set aside before
   * the turn runs (regenerate, edit and resend).
   */
  replaceFrom?: string;
  /** A quick-ask turn (the desktop's quick-ask window; only Tauri IPC passes it on). */
  quick?: boolean;
  /** Research (a cited report) instead of a quick answer, whatever the router would say. */
  research?: boolean;
  /** Start the session as a temporary chat (kept nowhere once left, teaches memory nothing). */
  temporary?: TemporaryChat;
  /**
   * Start the session in this project (by name). Only for a conversation's first message:
   * the engine refuses it for a conversation that is not in that project.
   */
  project?: string;
}

/** What only the desktop app can do: the quick-ask window and its global shortcut. */
export interface DesktopBridge {
  /** The quick-ask shortcut and whether it is registered. */
  quickShortcut(): Promise<ShortcutStatus>;
  /** Sets the quick-ask shortcut (rejects with a message when it is taken or invalid). */
  setQuickShortcut(shortcut: string): Promise<ShortcutStatus>;
  /** Hands a quick-ask conversation over to the main window. */
  openInMain(session: string): Promise<void>;
  /** Hides the quick-ask window. */
  dismissQuick(): Promise<void>;
  /** Calls `cb` with a session the main window should open; returns the unsubscribe. */
  onOpenSession(cb: (session: string) => void): () => void;
}

/** An operation's request type. */
export type RequestOf<K extends OperationName> = Operations[K]['request'];
/** An operation's response type. */
export type ResponseOf<K extends OperationName> = Operations[K]['response'];

/**
 * Everything the UI asks of the engine: its operations through `call`, turns (a stream of
 * events) through `sendTurn`, and the desktop app's own commands through `desktop`.
 */
export interface Transport {
  /**
   * Carries out one engine operation (see `Operations` in `generated/engine.ts`, generated
   * from the engine's operation table): the same name and types over HTTP and over IPC.
   * Rejects with a `TransportError` carrying the engine's error code and message.
   */
  call<K extends OperationName>(op: K, request: RequestOf<K>): Promise<ResponseOf<K>>;
  /** Runs a turn, calling `onEvent` for every event as it arrives. */
  sendTurn(
    session: string,
    input: string,
    onEvent: (event: EventEnvelope) => void,
    options?: TurnOptions,
  ): TurnHandle;
  /** The desktop app's extras; absent in the browser. */
  desktop?: DesktopBridge;
}

/** A failure with the server's error code (or `network`, `http`, `protocol`) and one line. */
export class TransportError extends Error {
  readonly code: string;
  readonly status: number | undefined;

  constructor(code: string, message: string, status?: number) {
    super(message);
    this.name = 'TransportError';
    this.code = code;
    this.status = status;
  }
}

/** Where the paired token is kept: a page's for the browser session, a device's for good. */
export const TOKEN_KEY = 'echo-desk-token';

/** Where tokens are kept: a page's dies with the tab, a device's stays until it is revoked. */
export interface TokenStorage {
  page: Pick<Storage, 'getItem' | 'setItem'>;
  device: Pick<Storage, 'getItem' | 'setItem'>;
}

/**
 * The page's bearer token. The address `echod serve` printed carries a one-time pairing code
 * (`#pair=...`), never a token, because the browser keeps the addresses it opens: the code
 * leaves the address bar at once and is traded (`pair`) for a token. A page's code gives a
 * token that lives as long as that server's process, kept in `storage.page` for reloads; a
 * device's (`echod devices pair`) gives one that lasts until the device is revoked, kept in
 * `storage.device`. Without a code: the kept token, if any. Rejects with the server's reason
 * when the code was wrong or spent.
 */
export async function pairPage(
  location: Pick<Location, 'hash' | 'pathname' | 'search'>,
  storage: TokenStorage,
  history: Pick<History, 'replaceState'>,
  pair: (code: string) => Promise<Paired>,
): Promise<string | undefined> {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const code = params.get('pair');
  if (!code) return keptToken(storage);
  params.delete('pair');
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
  const paired = await pair(code);
  (paired.device ? storage.device : storage.page).setItem(TOKEN_KEY, paired.token);
  return paired.token;
}

/** The token kept from an earlier pairing: this tab's, else this device's. */
export function keptToken(storage: TokenStorage): string | undefined {
  return storage.page.getItem(TOKEN_KEY) ?? storage.device.getItem(TOKEN_KEY) ?? undefined;
}

type Fetch = typeof fetch;

/** `Transport` over `echod serve`. */
export class HttpTransport implements Transport {
  private readonly base: string;
  private readonly token: string | undefined;
  private readonly fetchFn: Fetch;

  /** `base` is the server's origin (the page's own); `fetchFn` is replaceable for tests. */
  constructor(base: string, token: string | undefined, fetchFn: Fetch = (...a) => fetch(...a)) {
    this.base = base.replace(/\/$/, '');
    this.token = token;
    this.fetchFn = fetchFn;
  }

  /**
   * The operation's route from the table: `{field}`s of the path are taken from the request,
   * the rest goes in the query (GET, DELETE) or the JSON body.
   */
  async call<K extends OperationName>(op: K, request: RequestOf<K>): Promise<ResponseOf<K>> {
    const { method, path } = OPERATION_ROUTES[op];
    const rest: Record<string, unknown> = { ...request };
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = rest[name];
      delete rest[name];
      return encodeURIComponent(String(value));
    });
    if (method === 'GET' || method === 'DELETE') {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(rest)) {
        if (value !== undefined && value !== null) query.set(key, String(value));
      }
      const search = query.toString();
      return this.json<ResponseOf<K>>(method, search ? `${url}?${search}` : url);
    }
    return this.json<ResponseOf<K>>(method, url, rest);
  }

  /** Trades a one-time pairing code for a token (needs none itself); see `pairPage`. */
  async pair(code: string): Promise<Paired> {
    const request: PairRequest = { code };
    return this.json<Paired>('POST', '/api/pair', request);
  }

  /** `options.quick` is not sent: quick ask exists only in the desktop app. */
  sendTurn(
    session: string,
    input: string,
    onEvent: (event: EventEnvelope) => void,
    options: TurnOptions = {},
  ): TurnHandle {
    const body: SendTurn = {
      session,
      input,
      ...(options.replaceFrom ? { replace_from: options.replaceFrom } : {}),
      ...(options.research ? { research: true } : {}),
      ...(options.temporary ? { temporary: options.temporary } : {}),
      ...(options.project ? { project: options.project } : {}),
    };
    const done = (async () => {
      const response = await this.request('POST', '/api/turns', body);
      if (!response.body) throw new TransportError('protocol', 'the server sent no event stream');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      const deliver = (data: string) => {
        let event: EventEnvelope;
        try {
          event = JSON.parse(data);
        } catch {
          throw new TransportError('protocol', `the server sent an event that is not JSON: ${data.slice(0, 80)}`);
        }
        onEvent(event);
      };
      for (;;) {
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch (e) {
          throw new TransportError('network', `the event stream broke: ${describe(e)}`);
        }
        if (chunk.done) break;
        for (const message of parser.push(chunk.value)) deliver(message.data);
      }
      parser.finish();
    })();
    return { done };
  }

  private headers(body: boolean): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (body) headers['Content-Type'] = 'application/json';
    return headers;
  }

  private async request(method: string, path: string, body?: unknown): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetchFn(this.base + path, {
        method,
        headers: this.headers(body !== undefined),
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new TransportError('network', `cannot reach the engine: ${describe(e)}`);
    }
    if (!response.ok) throw await errorFrom(response);
    return response;
  }

  /** The answer's JSON; `null` for 204 No Content (an operation that returns nothing). */
  private async json<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await this.request(method, path, body);
    const text = response.status === 204 ? '' : await response.text();
    try {
      return JSON.parse(text === '' ? 'null' : text);
    } catch {
      throw new TransportError('protocol', `the server answered with something that is not JSON (HTTP ${response.status})`);
    }
  }
}

/**
 * The engine's error body (`ErrorBody`: `{"error": {"code", "message"}}`, the same over HTTP
 * and IPC), read from whatever arrived; undefined when it is something else.
 */
export function readErrorBody(value: unknown): { code: string | undefined; message: string } | undefined {
  if (typeof value !== 'object' || value === null || !('error' in value)) return undefined;
  const { error } = value;
  if (typeof error !== 'object' || error === null || !('message' in error) || typeof error.message !== 'string') {
    return undefined;
  }
  return { code: 'code' in error && typeof error.code === 'string' ? error.code : undefined, message: error.message };
}

/** The server's error body, or the status and the start of the body. */
async function errorFrom(response: Response): Promise<TransportError> {
  const text = await response.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: described by the status below.
  }
  const body = readErrorBody(parsed);
  if (body) return new TransportError(body.code ?? 'http', body.message, response.status);
  const snippet = text.trim().slice(0, 200);
  return new TransportError(
    'http',
    `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${snippet ? `: ${snippet}` : ''}`,
    response.status,
  );
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
