// In-memory engines for the settings stores' and panels' tests: each keeps what it was sent
// and answers like the engine does (refusing what the engine refuses).

import type { ShortcutStatus } from '../desktopTypes';
import type { BootstrapFile, ConnectionReport, McpServerConfig, McpServerStatus, NewRule, OllamaInfo, ProviderUpdate, ProviderView, Rule } from '../settingsTypes';
import { TransportError } from '../transport';

/** A rules engine (and empty answers for the other settings). */
export function fakeTransport() {
  const rules: Rule[] = [];
  const sent: NewRule[] = [];
  return {
    rules,
    sent,
    listRules: async () => [...rules],
    addRule: async (r: NewRule) => {
      sent.push(r);
      if (r.tool === 'bad') throw new TransportError('invalid_input', 'rule: tool: it is empty', 400);
      const rule: Rule = {
        id: `r-${String(rules.length).padStart(8, '0')}`,
        tool: r.tool,
        pattern: r.pattern ?? null,
        decision: r.decision,
        scope: r.scope,
        session_id: r.session ?? null,
        created_by: 'user',
        created_at: '2026-01-01T00:00:00Z',
      };
      rules.push(rule);
      return rule;
    },
    removeRule: async (id: string) => {
      const i = rules.findIndex((r) => r.id === id);
      if (i < 0) throw new TransportError('not_found', `no rule ${id}`, 404);
      return rules.splice(i, 1)[0] as Rule;
    },
    mcpServers: async (): Promise<McpServerStatus[]> => [],
    mcpConfig: async (): Promise<McpServerConfig[]> => [],
    setMcpConfig: async (): Promise<McpServerStatus[]> => [],
    approvals: async () => [],
    bootstrapFiles: async (): Promise<BootstrapFile[]> => [],
    saveBootstrapFile: async (): Promise<BootstrapFile> => Promise.reject(new Error('not in this test')),
  };
}

export const gh: McpServerConfig = {
  name: 'gh',
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-github'],
  env: { GITHUB_TOKEN: 'ghp_SECRET1' },
  url: null,
  headers: {},
  enabled: true,
};
export const docs: McpServerConfig = {
  name: 'docs',
  command: null,
  args: [],
  env: {},
  url: 'https://docs.example.com/mcp',
  headers: { Authorization: 'Bearer SECRET2' },
  enabled: false,
};

/** A server's state as the fake engine reports it. */
export function stateOf(c: McpServerConfig, state?: McpServerStatus['state']): McpServerStatus {
  const s = state ?? (c.enabled ? 'ready' : 'disabled');
  return { name: c.name, transport: c.url ? 'http' : 'stdio', state: s, error: null, tools: s === 'ready' ? 2 : 0, restarts: 0, pid: null };
}

export const copy = <T,>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** An MCP transport over an in-memory list; it refuses a non-HTTP URL like the engine does. */
export function mcpTransport(initial: McpServerConfig[] = [gh, docs]) {
  let configs = copy(initial);
  const sets: McpServerConfig[][] = [];
  const t = {
    sets,
    polls: 0,
    /** What `mcpServers` answers. */
    states: (list: McpServerConfig[]) => list.map((c) => stateOf(c)),
    /** What a save answers. */
    saved: (list: McpServerConfig[]) => list.map((c) => stateOf(c)),
    mcpConfig: async () => copy(configs),
    mcpServers: async () => {
      t.polls += 1;
      return t.states(configs);
    },
    setMcpConfig: async (list: McpServerConfig[]) => {
      sets.push(copy(list));
      const bad = list.find((c) => c.url !== null && !/^https?:\/\//.test(c.url));
      if (bad) throw new TransportError('invalid_input', `MCP server ${bad.name}: \`url\` must start with http:// or https://, not "${bad.url}"`, 400);
      configs = copy(list);
      return t.saved(configs);
    },
  };
  return t;
}

export const keychainView: ProviderView = {
  settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4o', fallback_models: ['gpt-4o-mini'] },
  key_source: 'keychain',
  keychain: 'Secret Service',
  keychain_available: true,
  env_overrides: [],
};

/** A provider transport keeping what it was sent; `ollama` is what detection finds. */
export function providerTransport(options: { view?: ProviderView; ollama?: OllamaInfo | null; report?: ConnectionReport } = {}) {
  let view = options.view ?? keychainView;
  const saved: ProviderUpdate[] = [];
  const tested: ProviderUpdate[] = [];
  return {
    saved,
    tested,
    provider: async () => view,
    updateProvider: async (u: ProviderUpdate) => {
      saved.push(u);
      if (u.settings.model === '') throw new TransportError('invalid_input', 'model: it is empty', 400);
      view = {
        ...view,
        settings: u.settings,
        key_source: u.clear_api_key ? 'none' : u.api_key ? 'keychain' : view.key_source,
      };
      return view;
    },
    testProvider: async (u: ProviderUpdate) => {
      tested.push(u);
      return options.report ?? { ok: true, code: 'ok', message: 'the model answered', latency_ms: 42 };
    },
    detectOllama: async () => options.ollama ?? null,
  };
}

/** A desktop bridge whose shortcut `taken` is refused as taken by another application. */
export function desktopBridge(taken: string) {
  let status: ShortcutStatus = { shortcut: 'CommandOrControl+Shift+Space', registered: true, error: null };
  const set: string[] = [];
  return {
    set,
    quickShortcut: async () => status,
    setQuickShortcut: async (s: string) => {
      set.push(s);
      if (s === taken) throw new TransportError('ipc', `${s} is taken by another application`);
      status = { shortcut: s, registered: true, error: null };
      return status;
    },
    openInMain: async () => {},
    dismissQuick: async () => {},
    onOpenSession: () => () => {},
  };
}

export const BOOTSTRAP_DEFAULTS: Record<string, string> = {
  'AGENTS.md': '<!-- How the assistant should work for you. -->\n- Prefer small, checkable steps.\n',
  'SOUL.md': '<!-- The assistant’s voice. -->\nCalm, direct and warm.\n',
  'USER.md': '<!-- About you. -->\n',
  'TOOLS.md': '<!-- Notes about your machine. -->\n',
};

/** An in-memory engine of bootstrap files keeping what it was asked to save. */
export function bootstrapTransport(custom: Record<string, string> = {}) {
  const saved: [string, string | null][] = [];
  const copies = new Map(Object.entries(custom));
  const view = (name: string): BootstrapFile => ({
    name,
    content: copies.get(name) ?? BOOTSTRAP_DEFAULTS[name] ?? '',
    is_default: !copies.has(name),
    path: `/home/lin/.local/share/echo-desk/${name}`,
  });
  return {
    saved,
    bootstrapFiles: async () => Object.keys(BOOTSTRAP_DEFAULTS).map(view),
    saveBootstrapFile: async (name: string, content: string | null) => {
      saved.push([name, content]);
      if (content !== null && content.length > 1000) {
        throw new TransportError('invalid_input', `${name} is ${content.length} bytes; the limit is 262144`, 400);
      }
      if (content === null) copies.delete(name);
      else copies.set(name, content);
      return view(name);
    },
  };
}
