// The MCP form's text: argument lines split like a shell in simple cases and joined back so
// they split the same, env and header lines parsed (bad or repeated lines named by number),
// and the obvious mistakes refused before the engine is asked.

import { describe, expect, it } from 'vitest';
import {
  EMPTY_MCP_FORM,
  commandLine,
  configFromForm,
  formFromConfig,
  joinArgs,
  scanArgs,
  splitArgs,
} from './mcpForm';
import type { McpServerConfig } from './generated/engine';

describe('splitArgs / joinArgs', () => {
  it('splits at whitespace and keeps quoted parts together, without the quotes', () => {
    expect(splitArgs('')).toEqual([]);
    expect(splitArgs('  -y   @mcp/server-github \t --verbose ')).toEqual(['-y', '@mcp/server-github', '--verbose']);
    expect(splitArgs('--root "/home/me/My Documents" \'a b\'')).toEqual(['--root', '/home/me/My Documents', 'a b']);
    expect(splitArgs('--name="two words" x')).toEqual(['--name=two words', 'x']);
    expect(splitArgs(`"it's" 'say "hi"'`)).toEqual(["it's", 'say "hi"']);
    expect(splitArgs('"" a \'\'')).toEqual(['', 'a', '']);
    expect(splitArgs('C:\\Program Files\\x')).toEqual(['C:\\Program', 'Files\\x']);
    expect(splitArgs('"C:\\Program Files\\x"')).toEqual(['C:\\Program Files\\x']);
  });

  it('reads an unclosed quote to the end of the line and says which', () => {
    expect(scanArgs('a "b c')).toEqual({ args: ['a', 'b c'], openQuote: '"' });
    expect(scanArgs("a 'b")).toEqual({ args: ['a', 'b'], openQuote: "'" });
    expect(scanArgs('a "b"')).toEqual({ args: ['a', 'b'], openQuote: null });
  });

  it('quotes only what needs it', () => {
    expect(joinArgs(['-y', '@mcp/server', '--port=3000'])).toBe('-y @mcp/server --port=3000');
    expect(joinArgs(['/My Documents', ''])).toBe("'/My Documents' ''");
    expect(joinArgs(["it's"])).toBe(`"it's"`);
    expect(joinArgs(['say "hi"'])).toBe(`'say "hi"'`);
  });

  it('round-trips any arguments through the text field', () => {
    const cases: string[][] = [
      [],
      ['-y', '@modelcontextprotocol/server-filesystem', '/home/me'],
      ['--root', '/home/me/My Documents', 'a  b', ' lead', 'trail '],
      ['', 'x', ''],
      ["it's", 'say "hi"', `both ' and "`, `'`, `"`, `'"'`, `"'"`],
      ['tab\there', 'new\nline', 'C:\\Program Files\\node.exe', 'back\\slash'],
      ['--env=KEY="v a l"', "--q='x'"],
    ];
    for (const args of cases) expect(splitArgs(joinArgs(args))).toEqual(args);
  });

  it('joins the command and its arguments as one line', () => {
    expect(commandLine({ command: 'npx', args: ['-y', 'my server'] })).toBe("npx -y 'my server'");
  });
});

const gh: McpServerConfig = {
  name: 'gh',
  command: 'npx',
  args: ['-y', '@modelcontextprotocol/server-github'],
  env: { GITHUB_TOKEN: 'ghp_secret', LOG: 'a=b' },
  url: null,
  headers: {},
  enabled: true,
};
const docs: McpServerConfig = {
  name: 'docs',
  command: null,
  args: [],
  env: {},
  url: 'https://docs.example.com/mcp',
  headers: { Authorization: 'Bearer tok', 'X-Team': 'core' },
  enabled: false,
};

describe('configFromForm / formFromConfig', () => {
  it('turns a configured server into the form and back unchanged', () => {
    expect(formFromConfig(gh)).toEqual({
      name: 'gh',
      transport: 'stdio',
      command: 'npx',
      args: '-y @modelcontextprotocol/server-github',
      env: 'GITHUB_TOKEN=ghp_secret\nLOG=a=b',
      url: '',
      headers: '',
      enabled: true,
    });
    expect(formFromConfig(docs)).toMatchObject({
      transport: 'http',
      url: 'https://docs.example.com/mcp',
      headers: 'Authorization: Bearer tok\nX-Team: core',
      enabled: false,
    });
    for (const c of [gh, docs]) expect(configFromForm(formFromConfig(c), [], c)).toEqual({ ok: true, value: c });
  });

  it('reads a typed stdio server: trimmed name and command, split args, env lines', () => {
    const form = {
      ...EMPTY_MCP_FORM,
      name: ' fs ',
      command: ' npx ',
      args: '-y server "/tmp/my dir"',
      env: '\n A=1 \r\nB = two words\n\nC=x=y',
      url: 'ignored',
      headers: 'Ignored: yes',
    };
    expect(configFromForm(form, [gh])).toEqual({
      ok: true,
      value: {
        name: 'fs',
        command: 'npx',
        args: ['-y', 'server', '/tmp/my dir'],
        env: { A: '1', B: 'two words', C: 'x=y' },
        url: null,
        headers: {},
        enabled: true,
      },
    });
  });

  it('reads a typed HTTP server with its headers', () => {
    const form = { ...EMPTY_MCP_FORM, name: 'web', transport: 'http' as const, url: ' https://x.test/mcp ', headers: 'Authorization:  Bearer a:b \nX-A: 1', enabled: false, command: 'ignored' };
    expect(configFromForm(form, [])).toEqual({
      ok: true,
      value: { name: 'web', command: null, args: [], env: {}, url: 'https://x.test/mcp', headers: { Authorization: 'Bearer a:b', 'X-A': '1' }, enabled: false },
    });
  });

  it('refuses the obvious mistakes, naming lines by number and never their values', () => {
    const stdio = { ...EMPTY_MCP_FORM, name: 'fs', command: 'npx' };
    const http = { ...EMPTY_MCP_FORM, name: 'web', transport: 'http' as const, url: 'https://x.test' };
    const problem = (r: ReturnType<typeof configFromForm>) => (r.ok ? null : r.problem);
    expect(problem(configFromForm({ ...stdio, name: '  ' }, []))).toEqual({ key: 'mcp.check.nameEmpty', vars: {} });
    expect(problem(configFromForm({ ...stdio, name: 'gh' }, [gh, docs]))).toEqual({ key: 'mcp.check.nameTwice', vars: { name: 'gh' } });
    expect(problem(configFromForm({ ...stdio, command: ' ' }, []))).toEqual({ key: 'mcp.check.noCommand', vars: { name: 'fs' } });
    expect(problem(configFromForm({ ...stdio, args: 'a "b' }, []))).toEqual({ key: 'mcp.check.openQuote', vars: { name: 'fs', quote: '"' } });
    expect(problem(configFromForm({ ...stdio, env: 'A=1\nsecret-without-equals' }, []))).toEqual({ key: 'mcp.check.envLine', vars: { name: 'fs', line: 2 } });
    expect(problem(configFromForm({ ...stdio, env: '=x' }, []))).toEqual({ key: 'mcp.check.envLine', vars: { name: 'fs', line: 1 } });
    expect(problem(configFromForm({ ...stdio, env: 'A=1\nA=2' }, []))).toEqual({ key: 'mcp.check.envTwice', vars: { name: 'fs', key: 'A' } });
    expect(problem(configFromForm({ ...http, url: '' }, []))).toEqual({ key: 'mcp.check.noUrl', vars: { name: 'web' } });
    expect(problem(configFromForm({ ...http, headers: 'Bearer abc' }, []))).toEqual({ key: 'mcp.check.headerLine', vars: { name: 'web', line: 1 } });
    expect(problem(configFromForm({ ...http, headers: 'X-A: 1\nx-a: 2' }, []))).toEqual({ key: 'mcp.check.headerTwice', vars: { name: 'web', key: 'x-a' } });
  });
});
