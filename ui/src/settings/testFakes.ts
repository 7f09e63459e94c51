// In-memory engines for the settings stores' and panels' tests: each is a `FakeEngine` whose
// handlers keep what they were sent and answer like the engine does (refusing what the
// engine refuses). `handlers` can be merged (`new FakeEngine({ ...a.handlers, ...b.handlers })`)
// or replaced one operation at a time.

import type {
  AddProject,
  AddRule,
  BootstrapFile,
  ConnectionReport,
  DataDeleted,
  DeleteAllData,
  DownloadState,
  LocalModelEntry,
  LocalModels,
  McpServerConfig,
  McpServerStatus,
  OllamaInfo,
  Project,
  ProviderKindInfo,
  ProviderUpdate,
  ProviderView,
  Rule,
  SearchKind,
  SearchUpdate,
  SearchView,
  ShortcutStatus,
  TraceSettings,
  UpdateTraceSettings,
} from '../generated/engine';
import { FakeEngine } from '../testing/fakeEngine';
import { TransportError } from '../transport';

/**
 * A projects engine: names are unique and not blank, folders must be absolute paths, a
 * rename or change keeps the rest, and a project with memories is removed only when the
 * request says what becomes of them (global, or deleted), like the engine. `memories` sets a
 * project's memory count.
 */
export function projectsTransport(initial: Project[] = []) {
  let projects = [...initial];
  const byName = (name: string) => {
    const p = projects.find((x) => x.name === name);
    if (!p) throw new TransportError('not_found', `no project ${name}`, 404);
    return p;
  };
  const checkName = (name: string, except?: string) => {
    if (name.trim() === '') throw new TransportError('invalid_input', 'invalid name: it is empty', 400);
    if (name !== except && projects.some((p) => p.name === name)) throw new TransportError('invalid_input', `invalid name: project ${JSON.stringify(name)} exists`, 400);
  };
  const checkFolders = (folders: string[]) => {
    const relative = folders.find((f) => !f.startsWith('/'));
    if (relative !== undefined) throw new TransportError('invalid_input', `invalid folders: ${relative} is not an absolute path`, 400);
  };
  const sent: AddProject[] = [];
  const engine = new FakeEngine({
    list_projects: () => [...projects].sort((a, b) => a.name.localeCompare(b.name)),
    add_project: (r) => {
      sent.push(r);
      checkName(r.name);
      checkFolders(r.folders ?? []);
      const p: Project = { id: `p-${projects.length + 1}`, name: r.name, instructions: r.instructions ?? null, folders: r.folders ?? [], created_at: '2026-12-01T10:00:00Z', sessions: 0, memories: 0 };
      projects.push(p);
      return p;
    },
    edit_project: (r) => {
      const p = byName(r.name);
      if (r.new_name !== undefined) checkName(r.new_name, r.name);
      if (r.folders) checkFolders(r.folders);
      const changed: Project = {
        ...p,
        name: r.new_name ?? p.name,
        instructions: r.instructions === undefined ? p.instructions : r.instructions || null,
        folders: r.folders ?? p.folders,
      };
      projects = projects.map((x) => (x.id === p.id ? changed : x));
      return changed;
    },
    remove_project: ({ name, memories }) => {
      const p = byName(name);
      if (p.memories > 0 && memories === undefined) {
        throw new TransportError('invalid_input', `invalid memories: project ${JSON.stringify(name)} has ${p.memories} memories: say whether they become global memories or are deleted`, 400);
      }
      projects = projects.filter((x) => x.id !== p.id);
      return { project: p, moved: memories === 'global' ? p.memories : 0, deleted: memories === 'delete' ? p.memories : 0 };
    },
  });
  return Object.assign(engine, {
    sent,
    projects: () => projects,
    memories: (name: string, count: number) => {
      projects = projects.map((p) => (p.name === name ? { ...p, memories: count } : p));
    },
  });
}

/** A rules engine (and empty answers for the other settings lists). */
export function fakeTransport() {
  const rules: Rule[] = [];
  const sent: AddRule[] = [];
  const engine = new FakeEngine({
    list_rules: () => [...rules],
    add_rule: (r) => {
      sent.push(r);
      if (r.tool === 'bad') throw new TransportError('invalid_input', 'rule: tool: it is empty', 400);
      const rule: Rule = {
        id: `r-${String(rules.length).padStart(8, '0')}`,
        tool: r.tool,
        pattern: r.pattern ?? null,
        decision: r.decision,
        scope: r.scope ?? 'always',
        session_id: r.session ?? null,
        created_by: 'user',
        created_at: '2026-01-01T00:00:00Z',
      };
      rules.push(rule);
      return rule;
    },
    remove_rule: ({ id }) => {
      const i = rules.findIndex((r) => r.id === id);
      const removed = rules[i];
      if (!removed) throw new TransportError('not_found', `no rule ${id}`, 404);
      rules.splice(i, 1);
      return removed;
    },
    mcp_servers: () => [],
    mcp_config: () => [],
    approvals: () => [],
    bootstrap_files: () => [],
  });
  return Object.assign(engine, { rules, sent });
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

export const copy = <T,>(v: T): T => structuredClone(v);

/** An MCP engine over an in-memory list; it refuses a non-HTTP URL like the engine does. */
export function mcpTransport(initial: McpServerConfig[] = [gh, docs]) {
  let configs = copy(initial);
  const sets: McpServerConfig[][] = [];
  const engine = Object.assign(new FakeEngine(), {
    sets,
    /** How many times the states were read. */
    polls: 0,
    /** What `mcp_servers` answers. */
    states: (list: McpServerConfig[]): McpServerStatus[] => list.map((c) => stateOf(c)),
    /** What a save answers. */
    saved: (list: McpServerConfig[]): McpServerStatus[] => list.map((c) => stateOf(c)),
  });
  engine.handlers = {
    mcp_config: () => copy(configs),
    mcp_servers: () => {
      engine.polls += 1;
      return engine.states(configs);
    },
    set_mcp_config: ({ servers }) => {
      sets.push(copy(servers));
      const bad = servers.find((c) => c.url !== null && !/^https?:\/\//.test(c.url));
      if (bad) throw new TransportError('invalid_input', `MCP server ${bad.name}: \`url\` must start with http:// or https://, not "${bad.url}"`, 400);
      configs = copy(servers);
      return engine.saved(configs);
    },
  };
  return engine;
}

/** The kinds the engine offers, with their usual addresses (`ProviderKind::default_base_url`). */
export const providerKinds: ProviderKindInfo[] = [
  { kind: 'openai', default_base_url: 'https://api.openai.com/v1' },
  { kind: 'anthropic', default_base_url: 'https://api.anthropic.com' },
  { kind: 'ollama', default_base_url: 'http://127.0.0.1:11434/v1' },
  { kind: 'local', default_base_url: '' },
];

export const keychainView: ProviderView = {
  settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4o', fallback_models: ['gpt-4o-mini'] },
  key_source: 'keychain',
  keychain: 'Secret Service',
  keychain_available: true,
  env_overrides: [],
  kinds: providerKinds,
  notice: null,
};

/** A provider engine keeping what it was sent; `ollama` is what detection finds. */
export function providerTransport(options: { view?: ProviderView; ollama?: OllamaInfo | null; report?: ConnectionReport } = {}) {
  let view = options.view ?? keychainView;
  const saved: ProviderUpdate[] = [];
  const tested: ProviderUpdate[] = [];
  const engine = new FakeEngine({
    provider: () => view,
    update_provider: (u) => {
      saved.push(u);
      if (u.settings.model === '') throw new TransportError('invalid_input', 'model: it is empty', 400);
      view = {
        ...view,
        settings: u.settings,
        key_source: u.clear_api_key ? 'none' : u.api_key ? 'keychain' : view.key_source,
      };
      return view;
    },
    test_provider: (u) => {
      tested.push(u);
      return options.report ?? { ok: true, code: null, message: 'the model answered', latency_ms: 42 };
    },
    detect_ollama: () => options.ollama ?? null,
  });
  return Object.assign(engine, { saved, tested });
}

export const MODELS_DIR = '/home/lin/.local/share/echo-desk/models';

/** Catalog entries as the engine lists them (smallest first), none installed. */
export const catalogModels: LocalModelEntry[] = [
  {
    id: 'smollm2-135m',
    name: 'SmolLM2 135M Instruct (Q4_1)',
    size_bytes: 98_362_432,
    license: 'Apache-2.0',
    note: 'Tiny and fast; follows simple requests, weak at facts. The offline default.',
    checksum: 'pinned',
    path: null,
    in_use: false,
    download: null,
  },
  {
    id: 'qwen2.5-0.5b',
    name: 'Qwen2.5 0.5B Instruct (Q4_K_M)',
    size_bytes: 398_000_000,
    license: 'Apache-2.0',
    note: 'Multilingual, knows tool calls; a good small default on a laptop.',
    checksum: 'published_by_host',
    path: null,
    in_use: false,
    download: null,
  },
  {
    id: 'smollm2-1.7b',
    name: 'SmolLM2 1.7B Instruct (Q4_K_M)',
    size_bytes: 1_060_000_000,
    license: 'Apache-2.0',
    note: 'The best of these at answers; needs about 2 GB of memory and a patient CPU.',
    checksum: 'published_by_host',
    path: null,
    in_use: false,
    download: null,
  },
];

/**
 * A built-in model engine: `fetch_local_model` starts a download that advances by `step`
 * bytes at every `local_models` read (resuming where it stopped after a failure); a
 * download fails once at the read given in `failAfter` (by id); `use_local_model` takes an
 * installed catalog id or a `.gguf` path, like the engine, and answers the provider view.
 */
export function localModelsTransport(
  options: { models?: LocalModelEntry[]; view?: ProviderView; step?: number; failAfter?: Record<string, number> } = {},
) {
  const models = copy(options.models ?? catalogModels);
  let view = options.view ?? keychainView;
  const step = options.step ?? 40_000_000;
  const failAfter = { ...options.failAfter };
  const fetched: string[] = [];
  const used: string[] = [];
  const engine = Object.assign(new FakeEngine(), { fetched, used, reads: 0, view: () => view });
  const inUse = () => (view.settings.kind === 'local' ? view.settings.model : null);
  const advance = (m: LocalModelEntry) => {
    const d: DownloadState | null = m.download;
    if (!d || d.finished) return;
    const left = failAfter[m.id];
    if (left !== undefined) {
      failAfter[m.id] = left - 1;
      if (left <= 1) {
        delete failAfter[m.id];
        m.download = { ...d, finished: true, error: 'connection reset by peer' };
        return;
      }
    }
    const done = Math.min(d.done + step, m.size_bytes);
    if (done === m.size_bytes) {
      m.download = { done, total: m.size_bytes, finished: true, error: null };
      m.path = `${MODELS_DIR}/${m.id}.gguf`;
    } else {
      m.download = { ...d, done };
    }
  };
  engine.handlers = {
    local_models: (): LocalModels => {
      engine.reads += 1;
      models.forEach(advance);
      const current = inUse();
      return {
        dir: MODELS_DIR,
        in_use: current,
        threads: 2,
        models: models.map((m) => ({ ...copy(m), in_use: m.path !== null && m.path === current })),
      };
    },
    fetch_local_model: ({ id }) => {
      fetched.push(id);
      const m = models.find((e) => e.id === id);
      if (!m) throw new TransportError('not_found', `no model ${id}`, 404);
      if (!m.download || m.download.finished) {
        // A retry resumes from what the failed try left on disk.
        m.download = { done: m.download?.done ?? 0, total: m.size_bytes, finished: false, error: null };
      }
      return null;
    },
    use_local_model: ({ model }) => {
      used.push(model);
      const m = models.find((e) => e.id === model.trim());
      let path: string;
      if (m) {
        if (!m.path) throw new TransportError('invalid_input', `model: ${m.name} is not downloaded yet: run \`echod model fetch ${m.id}\``, 400);
        path = m.path;
      } else if (model.trim().endsWith('.gguf')) {
        path = model.trim();
      } else {
        throw new TransportError('invalid_input', `model: "${model.trim()}" is neither a GGUF file nor a catalog model`, 400);
      }
      view = { ...view, settings: { kind: 'local', base_url: '', model: path, fallback_models: [] }, key_source: 'none' };
      return view;
    },
  };
  return engine;
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
  const engine = new FakeEngine({
    bootstrap_files: () => Object.keys(BOOTSTRAP_DEFAULTS).map(view),
    save_bootstrap_file: ({ name, content }) => {
      saved.push([name, content]);
      if (content !== null && content.length > 1000) {
        throw new TransportError('invalid_input', `${name} is ${content.length} bytes; the limit is 262144`, 400);
      }
      if (content === null) copies.delete(name);
      else copies.set(name, content);
      return view(name);
    },
  });
  return Object.assign(engine, { saved });
}

/** Trace settings kept in memory; more than 3650 days is refused with the engine's message. */
export function traceSettingsTransport(initial: TraceSettings = { capture: true, retention_days: 30, notice_rate: 0.3 }) {
  let settings = { ...initial };
  const sent: UpdateTraceSettings[] = [];
  const engine = new FakeEngine({
    trace_settings: () => ({ ...settings }),
    update_trace_settings: (r) => {
      sent.push(r);
      if (r.retention_days > 3650) throw new TransportError('invalid_input', 'invalid retention_days: at most 3650 days', 400);
      settings = { capture: r.capture, retention_days: r.retention_days, notice_rate: r.notice_rate ?? settings.notice_rate };
      return { ...settings };
    },
  });
  return Object.assign(engine, { sent, settings: () => settings });
}

/**
 * An engine deleting all the person's data like the engine does: it refuses a confirmation
 * other than the phrase (trimmed), and is busy while `running` (a turn) is set; otherwise it
 * answers `deleted`. `answer` can be replaced to hold the answer back.
 */
export function deleteDataTransport(deleted: DataDeleted = { sessions: 3, memories: 12, rows: 57, user_notes: true }) {
  const sent: DeleteAllData[] = [];
  const engine = Object.assign(new FakeEngine(), {
    sent,
    running: false,
    answer: (): DataDeleted | Promise<DataDeleted> => ({ ...deleted }),
  });
  engine.handlers = {
    delete_all_data: (r) => {
      sent.push(r);
      if (r.confirm.trim() !== 'delete all my data') {
        throw new TransportError('invalid_input', 'invalid confirm: type "delete all my data" to delete all your data', 400);
      }
      if (engine.running) throw new TransportError('busy', 'a turn is running; stop it first', 409);
      return engine.answer();
    },
  };
  return engine;
}

/**
 * An engine keeping web search settings like the engine does: a keyed service (Brave, Tavily)
 * needs a key typed now or kept, unless the key is being removed; a SearXNG needs its URL;
 * `ECHO_SEARCH_*` in `env` lock it. Records every save and test.
 */
export function searchTransport(env: string[] = []) {
  const sent: SearchUpdate[] = [];
  const tested: SearchUpdate[] = [];
  let view: SearchView = {
    kind: 'none', url: null, service_url: null, max_results: 8, needs_key: false, key_source: 'none',
    keychain: 'Secret Service', keychain_available: true, env_overrides: env, available: false, problem: null,
    kinds: ['none', 'searxng', 'brave', 'tavily'],
  };
  const keyed = (kind: SearchKind) => kind === 'brave' || kind === 'tavily';
  const engine = new FakeEngine({
    search: () => ({ ...view }),
    update_search: (r) => {
      sent.push(r);
      if (env.length) throw new TransportError('invalid_input', `invalid search settings: ${env.join(', ')} in the environment decide the web search service`, 400);
      if (r.kind === 'searxng' && !r.url) throw new TransportError('invalid_input', 'search.url: a SearXNG search needs the instance\'s URL', 400);
      const key = r.api_key ? 'keychain' : r.clear_api_key ? 'none' : view.key_source;
      if (keyed(r.kind) && key === 'none' && !r.clear_api_key) {
        throw new TransportError('invalid_input', 'invalid search settings: Brave Search needs an API key', 400);
      }
      const own = r.kind === 'brave' ? 'https://api.search.brave.com' : r.kind === 'tavily' ? 'https://api.tavily.com' : null;
      const works = r.kind !== 'none' && (!keyed(r.kind) || key !== 'none');
      view = {
        ...view, kind: r.kind, url: r.url ?? null, service_url: r.url ?? own, max_results: r.max_results ?? view.max_results,
        needs_key: keyed(r.kind), key_source: keyed(r.kind) ? key : 'none', available: works,
        problem: works || r.kind === 'none' ? null : 'Brave Search needs an API key: save one in Settings → Web search',
      };
      return { ...view };
    },
    test_search: (r) => {
      tested.push(r);
      return { ok: true, message: `SearXNG at ${r.url} answered with 3 results in 12 ms`, results: 3, latency_ms: 12 };
    },
  });
  return Object.assign(engine, { sent, tested, view: () => view });
}
