// How the UI talks to the engine: one transport-neutral `Transport` interface, and its
// implementation over `echod serve` (HTTP + server-sent events read from a `fetch` body,
// because EventSource cannot send the bearer token). The desktop app's implementation over
// Tauri IPC is `TauriTransport` (`tauriTransport.ts`); only it has the `desktop` bridge.

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
import { SseParser } from './sse';

/** The answers an approval question takes. */
export type ApprovalAnswer = 'allow_once' | 'allow_session' | 'allow_always' | 'deny';

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

/** Everything the UI asks of the engine. */
export interface Transport {
  /** Sessions, most recent first. */
  listSessions(): Promise<SessionSummary[]>;
  /** A session's stored messages in order. */
  history(session: string): Promise<StoredMessage[]>;
  /** Renames a session and returns its summary (rejects with `invalid_input` for a bad or taken name). */
  renameSession(name: string, newName: string): Promise<SessionSummary>;
  /** Deletes a session and its history (rejects with `invalid_input` while one of its turns runs). */
  deleteSession(name: string): Promise<void>;
  /** Runs a turn, calling `onEvent` for every event as it arrives. */
  sendTurn(
    session: string,
    input: string,
    onEvent: (event: EventEnvelope) => void,
    options?: TurnOptions,
  ): TurnHandle;
  /** Stops a running turn (its partial answer is kept). */
  cancel(turnId: string): Promise<void>;
  /** Answers an approval question. */
  answerApproval(requestId: string, answer: ApprovalAnswer): Promise<void>;
  /** Every approval rule. */
  listRules(): Promise<Rule[]>;
  /** Adds a rule and returns it (rejects with the server's message when it is invalid). */
  addRule(rule: NewRule): Promise<Rule>;
  /** Removes a rule and returns it. */
  removeRule(id: string): Promise<Rule>;
  /** The MCP servers and their state. */
  mcpServers(): Promise<McpServerStatus[]>;
  /** The configured MCP servers, in order. */
  mcpConfig(): Promise<McpServerConfig[]>;
  /**
   * Replaces the whole MCP server list: saved to config.toml and applied at once (the old
   * servers stop, the new ones start). Returns their states; rejects with the server's
   * message, changing nothing, when the list is invalid.
   */
  setMcpConfig(servers: McpServerConfig[]): Promise<McpServerStatus[]>;
  /** The most recent gate decisions, newest first. */
  approvals(limit: number): Promise<AuditEntry[]>;
  /** The model provider's settings and where its key comes from. */
  provider(): Promise<ProviderView>;
  /** Saves the provider settings (and the key, if given) and returns the new view. */
  updateProvider(update: ProviderUpdate): Promise<ProviderView>;
  /** Tries the given settings without saving anything. */
  testProvider(update: ProviderUpdate): Promise<ConnectionReport>;
  /** A local Ollama and its models, or null when none answers. */
  detectOllama(): Promise<OllamaInfo | null>;
  /**
   * The standing instructions (AGENTS.md, SOUL.md, USER.md, TOOLS.md, in that order): each
   * file's text, or its built-in default.
   */
  bootstrapFiles(): Promise<BootstrapFile[]>;
  /**
   * Saves a bootstrap file's whole text (`null` removes the user's copy, restoring the
   * default) and returns it as it now is; the next turn uses it. Rejects with the server's
   * message, changing nothing, e.g. for a file that is too large.
   */
  saveBootstrapFile(name: string, content: string | null): Promise<BootstrapFile>;
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

/** Where the token is kept for the rest of the browser session. */
export const TOKEN_KEY = 'echo-desk-token';

/**
 * The bearer token: taken once from the address's `#token=...` (then kept in `storage` and
 * removed from the address bar), otherwise read from `storage`.
 */
export function takeToken(
  location: Pick<Location, 'hash' | 'pathname' | 'search'>,
  storage: Pick<Storage, 'getItem' | 'setItem'>,
  history: Pick<History, 'replaceState'>,
): string | undefined {
  const params = new URLSearchParams(location.hash.replace(/^#/, ''));
  const fromHash = params.get('token');
  if (fromHash) {
    storage.setItem(TOKEN_KEY, fromHash);
    params.delete('token');
    const rest = params.toString();
    history.replaceState(null, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
    return fromHash;
  }
  return storage.getItem(TOKEN_KEY) ?? undefined;
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

  async listSessions(): Promise<SessionSummary[]> {
    return (await this.json('GET', '/api/sessions')) as SessionSummary[];
  }

  async history(session: string): Promise<StoredMessage[]> {
    return (await this.json(
      'GET',
      `/api/sessions/${encodeURIComponent(session)}/messages`,
    )) as StoredMessage[];
  }

  async renameSession(name: string, newName: string): Promise<SessionSummary> {
    return (await this.json('PATCH', `/api/sessions/${encodeURIComponent(name)}`, {
      name: newName,
    })) as SessionSummary;
  }

  async deleteSession(name: string): Promise<void> {
    await this.json('DELETE', `/api/sessions/${encodeURIComponent(name)}`);
  }

  async cancel(turnId: string): Promise<void> {
    await this.json('POST', `/api/turns/${encodeURIComponent(turnId)}/cancel`, {});
  }

  async answerApproval(requestId: string, answer: ApprovalAnswer): Promise<void> {
    await this.json('POST', `/api/approvals/${encodeURIComponent(requestId)}`, { answer });
  }

  async listRules(): Promise<Rule[]> {
    return (await this.json('GET', '/api/rules')) as Rule[];
  }

  async addRule(rule: NewRule): Promise<Rule> {
    return (await this.json('POST', '/api/rules', rule)) as Rule;
  }

  async removeRule(id: string): Promise<Rule> {
    return (await this.json('DELETE', `/api/rules/${encodeURIComponent(id)}`)) as Rule;
  }

  async mcpServers(): Promise<McpServerStatus[]> {
    return (await this.json('GET', '/api/mcp')) as McpServerStatus[];
  }

  async mcpConfig(): Promise<McpServerConfig[]> {
    return (await this.json('GET', '/api/settings/mcp')) as McpServerConfig[];
  }

  async setMcpConfig(servers: McpServerConfig[]): Promise<McpServerStatus[]> {
    return (await this.json('PUT', '/api/settings/mcp', servers)) as McpServerStatus[];
  }

  async approvals(limit: number): Promise<AuditEntry[]> {
    return (await this.json('GET', `/api/approvals?limit=${encodeURIComponent(String(limit))}`)) as AuditEntry[];
  }

  async provider(): Promise<ProviderView> {
    return (await this.json('GET', '/api/settings/provider')) as ProviderView;
  }

  async updateProvider(update: ProviderUpdate): Promise<ProviderView> {
    return (await this.json('PUT', '/api/settings/provider', update)) as ProviderView;
  }

  async testProvider(update: ProviderUpdate): Promise<ConnectionReport> {
    return (await this.json('POST', '/api/settings/provider/test', update)) as ConnectionReport;
  }

  async detectOllama(): Promise<OllamaInfo | null> {
    return ((await this.json('GET', '/api/settings/ollama')) as OllamaInfo | null | undefined) ?? null;
  }

  async bootstrapFiles(): Promise<BootstrapFile[]> {
    return (await this.json('GET', '/api/settings/bootstrap')) as BootstrapFile[];
  }

  /** PUT with the text, or DELETE (the default comes back) for `null`. */
  async saveBootstrapFile(name: string, content: string | null): Promise<BootstrapFile> {
    const path = `/api/settings/bootstrap/${encodeURIComponent(name)}`;
    return (await (content === null ? this.json('DELETE', path) : this.json('PUT', path, { content }))) as BootstrapFile;
  }

  /** `options.quick` is not sent: quick ask exists only in the desktop app. */
  sendTurn(
    session: string,
    input: string,
    onEvent: (event: EventEnvelope) => void,
    options: TurnOptions = {},
  ): TurnHandle {
    const body = { session, input, ...(options.replaceFrom ? { replace_from: options.replaceFrom } : {}) };
    const done = (async () => {
      const response = await this.request('POST', '/api/turns', body);
      if (!response.body) throw new TransportError('protocol', 'the server sent no event stream');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      const deliver = (data: string) => {
        let event: EventEnvelope;
        try {
          event = JSON.parse(data) as EventEnvelope;
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

  private async json(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await this.request(method, path, body);
    if (response.status === 204) return undefined;
    const text = await response.text();
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new TransportError('protocol', `the server answered with something that is not JSON (HTTP ${response.status})`);
    }
  }
}

/** The server's `{"error": {"code", "message"}}`, or the status and the start of the body. */
async function errorFrom(response: Response): Promise<TransportError> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    const { code, message } = parsed.error ?? {};
    if (typeof message === 'string') {
      return new TransportError(typeof code === 'string' ? code : 'http', message, response.status);
    }
  } catch {
    // Not JSON: fall through.
  }
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
