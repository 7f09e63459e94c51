// The MCP server form's text and the `McpServerConfig` it stands for: arguments typed as one
// line (split like a shell would in simple cases), environment variables as `KEY=VALUE` lines
// and headers as `Name: value` lines, and the obvious mistakes caught before the engine (which
// remains the judge) is asked. Pure functions, so they are tested without a page.

import type { McpServerConfig } from './generated/engine';
import type { MessageKey } from './i18n';

/** How the server is reached: a program over stdio, or a streamable-HTTP URL. */
export type McpFormTransport = 'stdio' | 'http';

/** The form as typed. Both transports' fields are kept, so switching back loses nothing. */
export interface McpForm {
  name: string;
  transport: McpFormTransport;
  command: string;
  /** The arguments on one line. */
  args: string;
  /** `KEY=VALUE`, one a line. */
  env: string;
  url: string;
  /** `Name: value`, one a line. */
  headers: string;
  enabled: boolean;
}

/** A new server's form: stdio, enabled. */
export const EMPTY_MCP_FORM: McpForm = {
  name: '',
  transport: 'stdio',
  command: '',
  args: '',
  env: '',
  url: '',
  headers: '',
  enabled: true,
};

/** The words of `text` and the quote left open at its end, if any. */
export function scanArgs(text: string): { args: string[]; openQuote: '"' | "'" | null } {
  const args: string[] = [];
  let word = '';
  // A word has started even when it is still empty: `''` is an empty argument.
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null;
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) args.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) args.push(word);
  return { args, openQuote: quote };
}

/**
 * Splits an argument line at whitespace, keeping "double" or 'single' quoted parts together
 * (quotes removed; `a"b c"` is one word). Backslashes are kept as typed, so Windows paths need
 * no escaping. An unclosed quote runs to the end of the line.
 */
export function splitArgs(text: string): string[] {
  return scanArgs(text).args;
}

/** One argument as `splitArgs` reads it back: bare when it can be, quoted otherwise. */
function quoteArg(arg: string): string {
  if (arg !== '' && !/[\s"']/.test(arg)) return arg;
  if (!arg.includes("'")) return `'${arg}'`;
  if (!arg.includes('"')) return `"${arg}"`;
  // Both kinds of quote: single-quote the runs without `'`, double-quote each `'`.
  return arg
    .split("'")
    .map((part) => (part === '' ? '' : `'${part}'`))
    .join(`"'"`);
}

/** The argument line `splitArgs` turns back into `args`. */
export function joinArgs(args: readonly string[]): string {
  return args.map(quoteArg).join(' ');
}

/** A mistake in the form: a message key and what it names. */
export interface McpFormProblem {
  key: MessageKey;
  vars: Record<string, string | number>;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: McpFormProblem };

/**
 * `KEY=VALUE` lines (or `Name: value` with `sep` ':') as a map, keys and values trimmed; blank
 * lines are skipped. A bad or repeated line is named by its number or key, never its value,
 * since values may be secrets.
 */
function parseLines(
  text: string,
  sep: '=' | ':',
  server: string,
  badKey: MessageKey,
  twiceKey: MessageKey,
): Parsed<Record<string, string>> {
  const map: Record<string, string> = {};
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const at = line.indexOf(sep);
    const key = at < 0 ? '' : line.slice(0, at).trim();
    if (key === '') return { ok: false, problem: { key: badKey, vars: { name: server, line: i + 1 } } };
    // Header names are case-insensitive; environment variable names are not (everywhere).
    const id = sep === ':' ? key.toLowerCase() : key;
    if (seen.has(id)) return { ok: false, problem: { key: twiceKey, vars: { name: server, key } } };
    seen.add(id);
    // Spaces around a value are dropped: pasted lines often carry some, a token never does.
    map[key] = line.slice(at + 1).trim();
  }
  return { ok: true, value: map };
}

/** `KEY=VALUE` lines from a map, in its order. */
export function envLines(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

/** `Name: value` lines from a map, in its order. */
export function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}

/** The form showing a configured server. */
export function formFromConfig(c: McpServerConfig): McpForm {
  return {
    name: c.name,
    transport: c.url !== null && c.command === null ? 'http' : 'stdio',
    command: c.command ?? '',
    args: joinArgs(c.args),
    env: envLines(c.env),
    url: c.url ?? '',
    headers: headerLines(c.headers),
    enabled: c.enabled,
  };
}

/** A stdio server's whole command line, as shown in the list. */
export function commandLine(c: Pick<McpServerConfig, 'command' | 'args'>): string {
  return joinArgs([c.command ?? '', ...c.args]);
}

/**
 * The config the form stands for, or its first obvious mistake. `others` are the rest of the
 * list (for a unique name); `base` is the entry being edited, whose fields the form does not
 * show are kept.
 */
export function configFromForm(
  form: McpForm,
  others: readonly McpServerConfig[],
  base?: McpServerConfig,
): Parsed<McpServerConfig> {
  const fail = (key: MessageKey, vars: Record<string, string | number> = {}): Parsed<McpServerConfig> => ({
    ok: false,
    problem: { key, vars },
  });
  const name = form.name.trim();
  if (name === '') return fail('mcp.check.nameEmpty');
  if (others.some((o) => o.name === name)) return fail('mcp.check.nameTwice', { name });
  const common = { ...base, name, enabled: form.enabled };
  if (form.transport === 'stdio') {
    const command = form.command.trim();
    if (command === '') return fail('mcp.check.noCommand', { name });
    const { args, openQuote } = scanArgs(form.args);
    if (openQuote) return fail('mcp.check.openQuote', { name, quote: openQuote });
    const env = parseLines(form.env, '=', name, 'mcp.check.envLine', 'mcp.check.envTwice');
    if (!env.ok) return env;
    return { ok: true, value: { ...common, command, args, env: env.value, url: null, headers: {} } };
  }
  const url = form.url.trim();
  if (url === '') return fail('mcp.check.noUrl', { name });
  const headers = parseLines(form.headers, ':', name, 'mcp.check.headerLine', 'mcp.check.headerTwice');
  if (!headers.ok) return headers;
  return { ok: true, value: { ...common, command: null, args: [], env: {}, url, headers: headers.value } };
}
