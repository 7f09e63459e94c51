// Browser end-to-end test of the web UI against the real engine: starts the scripted mock
// model server and `echod serve --ui ui/dist`, drives Debian's chromium with playwright-core
// and checks streaming, an approval, stop, reload, a model error, a rule made in Settings,
// renaming and deleting a session, a temporary chat, a project (made in Settings → Projects,
// a chat started in it, the sidebar's group, the memory page filtered by it, the chat moved
// out of it and back), regenerate and
// edit-and-resend, standing instructions
// (USER.md edited in Settings reaches the model's system message; restore the default),
// provider settings (test connection, save with the key in the keychain, reload) and the MCP
// server editor, the memory page (add, open, edit, undo, delete for good), the memory tools (a
// memory's fading chart, the store's counts, export then import back, a bad file refused by
// line) and the Traces settings panel (capture off and on again, kept across reloads); then,
// against a second `echod serve` with memory extraction on: the trace page (a tool turn's
// waterfall, span durations, the exact request sent to the model, export as a case), "Show
// trace" from an answer, a memory's "Show where it was learned", the conflict badge on the
// Memory button, a second conflict edited into one memory, and "Memory updated" under an
// answer with its Undo; then, against a third `echod serve`: the Automations page (a watch
// rule made from a template in the form, a file dropped into its folder, the run waiting for
// approval, the question answered in the approval queue, the file the run wrote, the run's
// trace); then, against a fourth `echod serve` and a search
// service on loopback: the Research toggle's hint with no service, the service set up in
// Settings → Web search, a research run from the toggle (the card's plan and states, the
// report's citations leading to the pages read, Export as Markdown); then, against a fifth
// `echod serve`: importing another assistant's memories (a pasted list read into cards, a
// clash with a memory there, a card edited and one dropped, the kept ones imported and listed
// as imported); then, against a sixth `echod serve` with memory extraction on: "ask before
// remembering" (switched on in the Memory page, two facts of an answer waiting under it and
// in "Waiting for your yes" but not in memory, one kept from the chat and shown with Undo,
// the other discarded and nowhere, the switch off again); then, against a seventh `echod
// serve`, a phone-sized screen (390×844): chat with a streamed answer and a code block, an
// approval answered in its dialog, the memory page, then the traces, automations and
// settings pages, each with nothing past the screen's sides and every control within reach.
// Each page state it looks at (every `shot`) passes an accessibility scan in the light and
// the dark theme (axe-core, accessibility.mjs). Every page runs with all requests beyond
// loopback blocked and recorded (none may be made: the UI works with the network off), and
// the API key typed into Settings must not be in the browser's storage.
// Exits non-zero on any failure and always stops what it started. Run it inside
// scripts/with-desktop-session.sh (for the keychain).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { accessibilityFailures, scanAccessibility } from './accessibility.mjs';
import { serveAddress } from './serveAddress.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = join(ROOT, 'ui/dist');
// Where cargo builds: $CARGO_TARGET_DIR when set, else its default ./target (README "Test").
const TARGET = process.env.CARGO_TARGET_DIR || join(ROOT, 'target');
const BIN = join(TARGET, 'debug');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const STEP_TIMEOUT = 20_000;

const children = [];
const cleanups = [];
let browser;

function fail(message) {
  throw new Error(message);
}

/** Spawns a child that is killed at the end, whatever happens. */
function start(cmd, args, options) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  children.push(child);
  const stderr = [];
  child.stderr.on('data', (d) => {
    stderr.push(d.toString());
    if (process.env.E2E_VERBOSE) process.stderr.write(`[${cmd.split('/').pop()}] ${d}`);
  });
  child.stderrText = () => stderr.join('');
  return child;
}

/** The first stdout line of a child, which must match `pattern`; its capture is returned. */
function firstLine(child, pattern, what) {
  return new Promise((resolveLine, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed no address within 20 s\n${child.stderrText()}`)), 20_000);
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      clearTimeout(timer);
      const m = pattern.exec(line);
      if (m) resolveLine(m[1]);
      else reject(new Error(`${what} printed ${JSON.stringify(line)}, expected ${pattern}\n${child.stderrText()}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before printing its address\n${child.stderrText()}`));
    });
  });
}

function stopAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      child.kill('SIGTERM');
    }
  }
  for (const c of cleanups.reverse()) {
    try {
      c();
    } catch {
      // best effort
    }
  }
}

const SCRIPT = {
  steps: [
    // 1. streaming
    {
      model: 'primary',
      text: 'Hello **there**, tokens are streaming in.\n\n```sh\necho streamed\n```\n',
      chunks: 12,
      chunk_delay_ms: 120,
    },
    // 2. a shell call that asks for approval, then the answer
    {
      model: 'primary',
      tool_calls: [{ id: 'c1', name: 'shell', arguments: '{"command": "touch e2e-approved.txt"}' }],
    },
    { model: 'primary', text: 'I made the file e2e-approved.txt.' },
    { model: 'explainer', times: 10, text: 'It creates an empty file named e2e-approved.txt.', chunks: 4, chunk_delay_ms: 50 },
    // 3. a long answer that is stopped
    {
      model: 'primary',
      text: `Once upon a time ${'there was a very long story that goes on and on. '.repeat(20)}The end.`,
      chunks: 60,
      chunk_delay_ms: 150,
    },
    // 4. a model error
    { model: 'primary', status: 500, error_message: 'the mock model is down' },
    // 6. a shell call that a rule added in Settings allows without asking
    {
      model: 'primary',
      tool_calls: [{ id: 'c6', name: 'shell', arguments: '{"command":"echo from-rule"}' }],
    },
    { model: 'primary', text: 'The rule let it run.' },
    // 7. a temporary chat
    { model: 'primary', text: 'Understood, for now only: e2e-temporary-9k4w.' },
    // 7. a chat in a project
    { model: 'primary', text: 'Noted for the project: e2e-project-5t8v.' },
    // 8. regenerate, then edit and resend
    { model: 'primary', text: 'Seven.' },
    { model: 'primary', text: 'Eight, on second thought.' },
    { model: 'primary', text: 'The letter Q.' },
    // 9. standing instructions: the turn after USER.md is saved
    { model: 'primary', text: 'Noted, Lin: metric units from now on.' },
    // 10. provider settings: the connection test and the turn after saving use this model
    { model: 'settings-model', times: 5, text: 'OK from the saved settings.' },
    // 15. traces and memory links, on the second server (its own models): a shell call that
    // takes a moment (so its spans last), the answer, then a statement that extraction turns
    // into two contradicting memories of the same turn, which the judge leaves as a conflict;
    // 16. later a second such statement, whose conflict is edited into one memory.
    {
      model: 'trace-primary',
      delay_ms: 80,
      tool_calls: [{ id: 't1', name: 'shell', arguments: '{"command": "sleep 0.1 && echo sunny"}' }],
    },
    { model: 'trace-primary', text: 'It is sunny.' },
    { model: 'trace-primary', text: 'Noted: vegetarian, and fond of steak.' },
    { model: 'trace-primary', text: 'Noted: Lisbon, and Porto.' },
    { model: 'trace-primary', text: 'Noted: green tea.' },
    { model: 'extractor', when_tool: 'extract_memories', tool_calls: [{ id: 'x1', name: 'extract_memories', arguments: '{"memories": []}' }] },
    {
      model: 'extractor',
      when_tool: 'extract_memories',
      tool_calls: [{
        id: 'x2',
        name: 'extract_memories',
        arguments: JSON.stringify({
          memories: [
            { kind: 'preference', subject: 'user', slot: 'diet', content: 'The user is vegetarian.', value: 'vegetarian', source: 'user_stated', confidence: 0.8, valid_until: null, evidence: 'I am vegetarian', scope: 'long_term' },
            { kind: 'preference', subject: 'user', slot: 'diet', content: 'The user loves steak.', value: 'eats steak', source: 'user_stated', confidence: 0.8, valid_until: null, evidence: 'I love a good steak', scope: 'long_term' },
          ],
        }),
      }],
    },
    {
      model: 'extractor',
      when_tool: 'judge_memory_conflict',
      tool_calls: [{ id: 'j1', name: 'judge_memory_conflict', arguments: '{"verdict": "contradiction", "explanation": "A vegetarian does not eat steak."}' }],
    },
    // 16. The second statement's two memories (words of their own, so only they meet) and
    // the judge's verdict on them; taken only after the steps above are used up.
    {
      model: 'extractor',
      when_tool: 'extract_memories',
      tool_calls: [{
        id: 'x4',
        name: 'extract_memories',
        arguments: JSON.stringify({
          memories: [
            { kind: 'fact', subject: 'user', slot: 'home_city', content: 'Home city: Lisbon.', value: 'Lisbon', source: 'user_stated', confidence: 0.8, valid_until: null, evidence: 'I live in Lisbon', scope: 'long_term' },
            { kind: 'fact', subject: 'user', slot: 'home_city', content: 'Home city: Porto.', value: 'Porto', source: 'user_stated', confidence: 0.8, valid_until: null, evidence: 'I live in Porto', scope: 'long_term' },
          ],
        }),
      }],
    },
    {
      model: 'extractor',
      when_tool: 'judge_memory_conflict',
      tool_calls: [{ id: 'j3', name: 'judge_memory_conflict', arguments: '{"verdict": "contradiction", "explanation": "One home city at a time."}' }],
    },
    // The "Memory updated" line's Undo: one memory of a turn of its own.
    {
      model: 'extractor',
      when_tool: 'extract_memories',
      tool_calls: [{
        id: 'x5',
        name: 'extract_memories',
        arguments: JSON.stringify({
          memories: [
            { kind: 'habit', subject: 'user', slot: null, content: 'The user drinks green tea every morning.', value: null, source: 'user_stated', confidence: 0.8, valid_until: null, evidence: 'I drink green tea every morning', scope: 'long_term' },
          ],
        }),
      }],
    },
    { model: 'extractor', when_tool: 'extract_memories', times: 20, tool_calls: [{ id: 'x3', name: 'extract_memories', arguments: '{"memories": []}' }] },
    { model: 'extractor', when_tool: 'judge_memory_conflict', times: 20, tool_calls: [{ id: 'j2', name: 'judge_memory_conflict', arguments: '{"verdict": "unrelated", "explanation": "Different things."}' }] },
  ],
};

/** Polls `fn` in the page until it returns a truthy value. */
async function until(page, what, fn, arg) {
  try {
    return await page.waitForFunction(fn, arg, { timeout: STEP_TIMEOUT, polling: 50 });
  } catch {
    fail(`timed out waiting for: ${what}`);
  }
}

/**
 * A page state worth a look: scanned for accessibility (accessibility.mjs; the run fails at
 * the end on any violation), and with E2E_SCREENSHOTS=DIR saved there as a screenshot.
 */
async function shot(page, name) {
  await scanAccessibility(page, name);
  const dir = process.env.E2E_SCREENSHOTS;
  if (dir) await page.screenshot({ path: join(dir, `${name}.png`) });
}

async function send(page, text) {
  await page.fill('.composer textarea', text);
  await page.click('.composer button.send');
}

/**
 * Blocks every request of `page` that would leave this machine, and remembers it: the UI must
 * work with the network off (no CDN, font, telemetry or update check), so a page that asks
 * for anything beyond loopback fails the run (`offPage`).
 */
async function loopbackOnly(page) {
  const away = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    const { protocol, hostname } = new URL(url);
    const local = ['data:', 'blob:'].includes(protocol) || ['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
    if (local) return route.continue();
    away.push(url);
    return route.abort('internetdisconnected');
  });
  return away;
}

function offPage(away, which) {
  if (away.length) fail(`${which} asked for something beyond this machine: ${away.join(', ')}`);
}

/** Everything the page keeps in the browser: local and session storage, cookies, databases, caches. */
async function browserStorage(page) {
  return page.evaluate(async () => {
    const dbs = indexedDB.databases ? await indexedDB.databases() : [];
    const cached = 'caches' in self ? await caches.keys() : [];
    return [JSON.stringify({ ...localStorage }), JSON.stringify({ ...sessionStorage }), document.cookie,
      JSON.stringify(dbs), JSON.stringify(cached)].join('\n');
  });
}

async function main() {
  for (const [bin, hint] of [
    ['mock-model', 'cargo build -p echo-mock-model'],
    ['echod', 'cargo build -p echod'],
    ['mcp-test-server', 'cargo build -p echo-mcp-test-server'],
  ]) {
    if (!existsSync(join(BIN, bin))) fail(`${join(BIN, bin)} is missing; build it with \`${hint}\``);
  }
  if (!existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing; install it with \`apt-get install -y chromium\``);
  if (!existsSync(join(DIST, 'index.html'))) {
    console.log('e2e: ui/dist is missing, building it');
    const built = spawnSync('npx', ['vite', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (built.status !== 0) fail('npm run build failed');
  }

  const tmp = mkdtempSync(join(tmpdir(), 'echo-desk-e2e-'));
  cleanups.push(() => rmSync(tmp, { recursive: true, force: true }));
  const home = join(tmp, 'home');
  const work = join(tmp, 'work');
  for (const d of [home, work]) spawnSync('mkdir', ['-p', d]);
  const scriptFile = join(tmp, 'script.json');
  writeFileSync(scriptFile, JSON.stringify({
    ...SCRIPT,
    steps: [...SCRIPT.steps, ...automationSteps(tmp), ...RESEARCH_STEPS, ...IMPORT_STEPS, ...ASK_STEPS, ...PHONE_STEPS],
  }));
  writeFileSync(
    join(home, 'config.toml'),
    '[memory]\nextraction = false\nembedder = "none"\n[side]\nmodel = "none"\n[tools]\nexplain_model = "explainer"\n[llm.retry]\nmax_retries = 0\n',
  );

  const mock = start(join(BIN, 'mock-model'), ['--script', scriptFile, '--exit-on-stdin-eof']);
  const mockUrl = await firstLine(mock, /^mock-model listening on (http:\/\/127\.0\.0\.1:\d+)$/, 'mock-model');

  const env = {
    ...process.env,
    ECHO_DESK_HOME: home,
    ECHO_LLM_KIND: 'openai',
    ECHO_LLM_BASE_URL: `${mockUrl}/v1`,
    ECHO_LLM_MODEL: 'primary',
  };
  const echod = start(join(BIN, 'echod'), ['serve', '--ui', DIST], { cwd: work, env });
  const { open, code: firstCode } = await serveAddress(echod, 'echod serve');
  const token = readFileSync(join(home, 'serve-token'), 'utf8').trim();
  tokensSeen.push(token);

  // A profile on disk, like a person's browser, so what the pages leave in it can be scanned
  // at the end (step 23).
  const profile = join(tmp, 'chromium-profile');
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true, acceptDownloads: true,
  });
  const page = await browser.newPage();
  const away = await loopbackOnly(page);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(open);
  await until(page, 'the pairing code to leave the address bar', () => !location.hash.includes('pair='));
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));
  // The address, which the browser keeps in its history, opens nothing a second time.
  const again = await page.evaluate(async (code) => {
    const r = await fetch('/api/pair', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) });
    return r.status;
  }, firstCode);
  if (again !== 401) fail(`a spent pairing code was answered ${again}, not 401`);

  // 1. Tokens stream in.
  console.log('e2e: streaming');
  await send(page, 'Say hello');
  await until(page, 'a partial answer while the turn runs', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last && last.dataset.status === 'running' && last.querySelector('.markdown')?.textContent.length > 0;
  });
  await until(page, 'the streamed answer to complete', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes('tokens are streaming in');
  });
  const rendered = await page.evaluate(() => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return { strong: last.querySelector('strong')?.textContent, code: last.querySelector('.code-block pre')?.textContent, copy: !!last.querySelector('.code-block button.copy') };
  });
  if (rendered.strong !== 'there' || !rendered.code?.includes('echo streamed') || !rendered.copy) {
    fail(`the answer is not rendered as Markdown with a copyable code block: ${JSON.stringify(rendered)}`);
  }

  // 2. An approval: the dialog shows the command; Allow once; the answer completes.
  console.log('e2e: approval');
  await send(page, 'Make a file');
  await until(page, 'the approval dialog with the command', () =>
    document.querySelector('[role="dialog"] .approval-detail')?.textContent.includes('touch e2e-approved.txt'));
  await until(page, 'the explanation to stream into the dialog', () =>
    document.querySelector('[role="dialog"] .approval-explanation')?.textContent.includes('creates an empty file'));
  const labels = await page.$$eval('[role="dialog"] .buttons button', (bs) => bs.map((b) => b.textContent));
  const expected = ['Allow once', 'Allow for session', 'Always allow', 'Deny'];
  if (JSON.stringify(labels) !== JSON.stringify(expected)) fail(`approval buttons are ${JSON.stringify(labels)}`);
  await shot(page, 'approval');
  await page.click('[role="dialog"] button:has-text("Allow once")');
  await until(page, 'the dialog to close', () => !document.querySelector('[role="dialog"]'));
  await until(page, 'the answer after the approved call', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes('I made the file') && last.querySelector('.tool[data-tool="shell"]');
  });
  if (!existsSync(join(work, 'e2e-approved.txt'))) fail('the approved command did not run');

  // 3. Stop mid-stream.
  console.log('e2e: stop');
  await send(page, 'Tell me a long story');
  await until(page, 'the story to start streaming', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'running' && last.textContent.includes('Once upon');
  });
  await until(page, 'the Stop button to be enabled', () => {
    const b = document.querySelector('.composer button.stop');
    return b && !b.disabled;
  });
  await page.click('.composer button.stop');
  await until(page, 'the answer to be marked interrupted', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'interrupted' && last.querySelector('.badge.warn') && !last.textContent.includes('The end.');
  });

  // 4. Reload: the history is still there (the token now comes from sessionStorage).
  console.log('e2e: reload');
  await page.reload();
  await until(page, 'the history after a reload', () => {
    const text = document.querySelector('.chat')?.textContent ?? '';
    return ['Say hello', 'tokens are streaming in', 'Make a file', 'I made the file', 'Tell me a long story', 'Once upon'].every((s) => text.includes(s))
      && document.querySelector('.message.assistant[data-status="interrupted"]');
  });

  // 5. A model error is shown clearly in the message.
  console.log('e2e: model error');
  await send(page, 'This will fail');
  await until(page, 'the model error in the message', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'failed' && last.querySelector('.turn-error[role="alert"]')?.textContent.length > 0;
  });
  await shot(page, 'error-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, 'error-dark');
  const errorText = await page.evaluate(() => {
    const m = document.querySelectorAll('.message.assistant');
    return m[m.length - 1].querySelector('.turn-error').textContent;
  });
  console.log(`e2e: shown error: ${errorText}`);

  // 6. Settings: no MCP servers; a rule added there lets a shell call run without a
  // question; the audit shows it; removing the rule empties the list.
  console.log('e2e: settings rule');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.click('.topbar button.nav-settings');
  await until(page, 'the MCP panel to say no servers are configured', () =>
    document.querySelector('.mcp-panel .mcp-empty')?.textContent === 'No servers configured.');
  await until(page, 'the empty rules list', () => document.querySelector('.rules-panel .rules-empty'));
  await page.fill('.rule-form input[name="tool"]', 'shell');
  await page.fill('.rule-form input[name="pattern"]', 'echo');
  await page.selectOption('.rule-form select[name="decision"]', 'allow');
  await page.selectOption('.rule-form select[name="scope"]', 'always');
  await page.click('.rule-form button.add-rule');
  await until(page, 'the new rule in the list', () => {
    const rows = document.querySelectorAll('.rules-panel table.rules tbody tr');
    const text = rows[0]?.textContent ?? '';
    return rows.length === 1 && /^r-/.test(rows[0].dataset.ruleId ?? '') && ['shell', 'echo', 'allow', 'always'].every((s) => text.includes(s));
  });
  if (await page.$('.rule-error')) fail('adding the rule showed an error');
  await shot(page, 'settings');
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  await page.evaluate(() => {
    window.__sawDialog = false;
    new MutationObserver(() => {
      if (document.querySelector('[role="dialog"]')) window.__sawDialog = true;
    }).observe(document.body, { childList: true, subtree: true });
  });
  await send(page, 'Echo something');
  await until(page, 'the answer after the rule-allowed call', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes('The rule let it run.');
  });
  const ruled = await page.evaluate(() => {
    const m = document.querySelectorAll('.message.assistant');
    const tool = m[m.length - 1].querySelector('.tool[data-tool="shell"]');
    const pres = tool ? [...tool.querySelectorAll('pre')].map((p) => p.textContent) : [];
    return { sawDialog: window.__sawDialog, result: pres[1] ?? null, decision: tool?.querySelector('.tool-decision')?.textContent ?? null };
  });
  if (ruled.sawDialog) fail('an approval dialog appeared although a rule allows the command');
  if (!ruled.result?.includes('from-rule')) fail(`the tool result does not show from-rule: ${JSON.stringify(ruled)}`);
  console.log(`e2e: rule-allowed call: ${JSON.stringify(ruled)}`);
  await page.click('.topbar button.nav-settings');
  await until(page, 'the rule decision in the recent approvals', () =>
    [...document.querySelectorAll('.audit-panel tbody tr')].some((r) => r.textContent.includes('shell') && r.textContent.includes('rule')));
  await until(page, 'the rule still listed', () => document.querySelectorAll('.rules-panel table.rules tbody tr').length === 1);
  await page.click('.rules-panel button.remove-rule');
  await until(page, 'the rules list to be empty', () =>
    !document.querySelector('.rules-panel table.rules') && document.querySelector('.rules-panel .rules-empty'));
  const left = await page.evaluate(async (t) => {
    const r = await fetch('/api/rules', { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, token);
  if (!Array.isArray(left) || left.length !== 0) fail(`the server still has rules: ${JSON.stringify(left)}`);

  // 7. Rename the current session in the sidebar, then delete it after the inline confirmation.
  console.log('e2e: rename and delete a session');
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  const listSessions = () =>
    page.evaluate(async (t) => {
      const r = await fetch('/api/sessions', { headers: { Authorization: `Bearer ${t}` } });
      return (await r.json()).map((s) => s.name);
    }, token);
  const current = await page.evaluate(() => document.querySelector('.session.current[data-session]')?.dataset.session);
  if (!current) fail('no current session in the sidebar');
  const renamed = 'e2e renamed';
  await page.click(`[data-row="${current}"] .session-rename-button`);
  await page.fill(`[data-row="${current}"] .session-rename`, renamed);
  await page.press(`[data-row="${current}"] .session-rename`, 'Enter');
  await until(page, 'the renamed session to be the current one', (name) =>
    document.querySelector('.session.current')?.dataset.session === name && !document.querySelector('.session-rename'), renamed);
  if (await page.$('.session-error')) fail('renaming showed an error');
  const afterRename = await listSessions();
  if (!afterRename.includes(renamed) || afterRename.includes(current)) {
    fail(`the server did not rename ${current}: ${JSON.stringify(afterRename)}`);
  }
  await shot(page, 'renamed');
  await page.click(`[data-row="${renamed}"] .session-delete-button`);
  await until(page, 'the inline delete confirmation', (name) =>
    document.querySelector(`[data-row="${name}"] .session-confirm`), renamed);
  await page.click(`[data-row="${renamed}"] .session-delete-keep`);
  await until(page, 'the deleted session to leave the sidebar', (name) =>
    !document.querySelector(`[data-row="${name}"]`), renamed);
  if (await page.$('.session-error')) fail('deleting showed an error');
  const afterDelete = await listSessions();
  if (afterDelete.includes(renamed)) fail(`the server still has ${renamed}: ${JSON.stringify(afterDelete)}`);
  console.log(`e2e: renamed ${current} to ${renamed}, then deleted it; sessions left: ${JSON.stringify(afterDelete)}`);
  await temporaryChat({ page, home, listSessions });
  await projectChat({ page, work, token });

  // 8. Regenerate the last answer, then edit the question and resend: the replaced messages
  // leave the history (also after a reload) and the new answers stream in.
  console.log('e2e: regenerate and edit');
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));
  await send(page, 'Pick a number');
  const lastAssistant = (text) => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes(text);
  };
  await until(page, 'the first answer', lastAssistant, 'Seven.');
  await until(page, 'the Regenerate button', () => document.querySelector('[data-testid="regenerate"]'));
  await page.click('[data-testid="regenerate"]');
  await until(page, 'the regenerated answer', lastAssistant, 'Eight, on second thought.');
  await until(page, 'the replaced answer to be gone', () => !document.querySelector('.chat')?.textContent.includes('Seven.'));
  await until(page, 'the Edit button', () => document.querySelector('.message.user [data-testid="edit-message"]'));
  const edits = await page.$$('.message.user [data-testid="edit-message"]');
  await edits[edits.length - 1].click();
  await page.fill('[data-testid="edit-input"]', 'Pick a letter');
  await page.click('[data-testid="edit-send"]');
  await until(page, 'the answer to the edited question', lastAssistant, 'The letter Q.');
  const session = await page.evaluate(() => document.querySelector('.session.current[data-session]')?.dataset.session);
  const history = await page.evaluate(async ([t, name]) => {
    const r = await fetch(`/api/sessions/${encodeURIComponent(name)}/messages`, { headers: { Authorization: `Bearer ${t}` } });
    return (await r.json()).map((m) => m.content);
  }, [token, session]);
  if (JSON.stringify(history) !== JSON.stringify(['Pick a letter', 'The letter Q.'])) {
    fail(`the history after regenerate and edit is ${JSON.stringify(history)}`);
  }
  await page.reload();
  await until(page, 'the edited history after a reload', () => {
    const text = document.querySelector('.chat')?.textContent ?? '';
    return text.includes('Pick a letter') && text.includes('The letter Q.') && !text.includes('Pick a number') && !text.includes('Eight');
  });

  // 9. Standing instructions: a sentence typed into USER.md in Settings and saved is in the
  // system message of the next model request (its default comment is not); Restore default
  // (after the inline confirmation) brings the default text back and removes the file.
  console.log('e2e: standing instructions');
  await page.click('.topbar button.nav-settings');
  await until(page, 'the four instruction files', () =>
    [...document.querySelectorAll('.bootstrap-panel [data-testid="bootstrap-tab"]')].map((t) => t.dataset.file).join()
      === 'AGENTS.md,SOUL.md,USER.md,TOOLS.md');
  await page.click('[data-testid="bootstrap-tab"][data-file="USER.md"]');
  await until(page, 'USER.md in the editor, marked default', () =>
    document.querySelector('.bootstrap-editor')?.dataset.file === 'USER.md'
    && document.querySelector('[data-testid="bootstrap-default"]'));
  const userDefault = await page.inputValue('[data-testid="bootstrap-text"]');
  if (!userDefault.includes('<!--')) fail(`the default USER.md is not the commented template: ${JSON.stringify(userDefault)}`);
  if (!(await page.isDisabled('[data-testid="bootstrap-save"]'))) fail('Save is enabled before any edit');
  const sentence = 'My name is Lin and I prefer metric units.';
  await page.click('[data-testid="bootstrap-text"]');
  await page.keyboard.press('Control+End');
  await page.keyboard.type(`\n${sentence}`);
  await until(page, 'the USER.md tab to be marked unsaved', () =>
    document.querySelector('[data-testid="bootstrap-tab"][data-file="USER.md"]')?.dataset.dirty === 'true');
  await page.click('[data-testid="bootstrap-save"]');
  await until(page, 'the saved status', () =>
    document.querySelector('[data-testid="bootstrap-saved"]')?.textContent.includes('USER.md saved'));
  if (await page.$('[data-testid="bootstrap-error"]')) fail('saving USER.md showed an error');
  if (await page.$('[data-testid="bootstrap-default"]')) fail('USER.md is still marked default after saving');
  const userPath = await page.textContent('[data-testid="bootstrap-path"] code');
  if (!userPath || !existsSync(userPath) || !readFileSync(userPath, 'utf8').includes(sentence)) {
    fail(`USER.md was not written with the sentence at ${userPath}`);
  }
  await shot(page, 'bootstrap');
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  const mockRequests = () => fetch(`${mockUrl}/_mock/requests`).then((r) => r.json());
  const before = (await mockRequests()).length;
  await send(page, 'What should you remember about me?');
  await until(page, 'the answer after USER.md was saved', lastAssistant, 'Noted, Lin: metric units from now on.');
  const next = (await mockRequests()).slice(before).find((r) => r.path.endsWith('/chat/completions'));
  const system = next?.body.messages?.[0];
  const systemText = typeof system?.content === 'string'
    ? system.content
    : (system?.content ?? []).map((part) => part.text ?? '').join('');
  if (system?.role !== 'system' || !systemText.includes(sentence)) {
    fail(`the next model request's system message lacks the sentence: ${JSON.stringify(system)?.slice(0, 400)}`);
  }
  if (systemText.includes(userDefault.trim())) fail('the USER.md comment reached the system message');
  console.log('e2e: the system message carries the saved USER.md');
  await page.click('.topbar button.nav-settings');
  await until(page, 'the instruction files again', () => document.querySelector('[data-testid="bootstrap-tab"][data-file="USER.md"]'));
  await page.click('[data-testid="bootstrap-tab"][data-file="USER.md"]');
  await until(page, 'the saved USER.md in the editor', (s) =>
    document.querySelector('.bootstrap-editor')?.dataset.file === 'USER.md'
    && document.querySelector('[data-testid="bootstrap-text"]')?.value.includes(s), sentence);
  await page.click('[data-testid="bootstrap-restore"]');
  await until(page, 'the restore confirmation', () => document.querySelector('[data-testid="bootstrap-confirm"]'));
  await page.click('[data-testid="bootstrap-restore-yes"]');
  await until(page, 'the default USER.md back in the editor', (d) =>
    document.querySelector('[data-testid="bootstrap-text"]')?.value === d
    && document.querySelector('[data-testid="bootstrap-default"]')
    && document.querySelector('[data-testid="bootstrap-saved"]'), userDefault);
  if (await page.$('[data-testid="bootstrap-error"]')) fail('restoring USER.md showed an error');
  if (existsSync(userPath)) fail(`${userPath} is still there after Restore default`);
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));

  // 10. Provider settings: test the connection, save (with a key, which must not reach the
  // config file), see "saved", and find the settings again after a reload; the next turn
  // uses them.
  console.log('e2e: provider settings');
  await page.click('.topbar button.nav-settings');
  await until(page, 'the provider form', () => document.querySelector('[data-testid="provider-model"]'));
  await page.fill('[data-testid="provider-model"]', 'settings-model');
  await page.fill('[data-testid="provider-fallbacks"]', 'backup-model');
  await page.click('[data-testid="provider-test"]');
  await until(page, 'a successful connection test', () =>
    document.querySelector('[data-testid="provider-test-result"]')?.textContent.includes('settings-model'));
  await page.fill('[data-testid="provider-api-key"]', 'sk-e2e-secret');
  await page.click('[data-testid="provider-save"]');
  await until(page, 'the saved confirmation', () => document.querySelector('[data-testid="provider-saved"]'));
  if (await page.$('[data-testid="provider-error"]')) fail('saving the provider showed an error');
  await until(page, 'the key to be in the keychain', () =>
    document.querySelector('[data-testid="provider-key-source"]')?.dataset.source === 'keychain');
  const config = readFileSync(join(home, 'config.toml'), 'utf8');
  if (!config.includes('settings-model') || !config.includes('backup-model')) fail(`config.toml lacks the saved settings:\n${config}`);
  if (config.includes('sk-e2e-secret')) fail('the API key reached config.toml');
  if ((await browserStorage(page)).includes('sk-e2e-secret')) fail("the API key is in the browser's storage");
  await page.reload();
  await page.click('.topbar button.nav-settings');
  await until(page, 'the saved settings after a reload', () =>
    document.querySelector('[data-testid="provider-model"]')?.value === 'settings-model'
    && document.querySelector('[data-testid="provider-fallbacks"]')?.value.includes('backup-model'));
  await shot(page, 'provider');
  await page.click('.topbar button.nav-chat');
  await send(page, 'Which settings?');
  await until(page, 'an answer from the saved model', lastAssistant, 'OK from the saved settings.');
  const used = await fetch(`${mockUrl}/_mock/requests`).then((r) => r.json());
  const last = used[used.length - 1];
  if (last.body.model !== 'settings-model' || last.api_key !== 'sk-e2e-secret') {
    fail(`the turn after saving used ${JSON.stringify({ model: last.body.model, key: last.api_key })}`);
  }
  // Leave the keychain as it was.
  await page.click('.topbar button.nav-settings');
  await until(page, 'the remove-key button', () => document.querySelector('[data-testid="provider-clear-key"]'));
  await page.click('[data-testid="provider-clear-key"]');
  await until(page, 'the key to be gone', () =>
    document.querySelector('[data-testid="provider-key-source"]')?.dataset.source === 'none');

  // 11. MCP servers: add the real test server (stdio) in Settings; it starts at once, its
  // env value never shows in the list, the file has it; removing it stops it.
  console.log('e2e: MCP server editor');
  await page.click('.topbar button.nav-settings');
  await until(page, 'the MCP panel', () => document.querySelector('[data-testid="mcp-add"]'));
  await page.click('[data-testid="mcp-add"]');
  await page.fill('[data-testid="mcp-name"]', 'tester');
  await page.selectOption('[data-testid="mcp-transport"]', 'stdio');
  await page.fill('[data-testid="mcp-command"]', join(BIN, 'mcp-test-server'));
  await page.fill('[data-testid="mcp-env"]', 'MCP_TEST_SECRET=s3cr3t-value');
  await page.click('[data-testid="mcp-save"]');
  await until(page, 'the saved notice', () => document.querySelector('[data-testid="mcp-saved"]'));
  if (await page.$('[data-testid="mcp-error"]')) fail('saving the MCP server showed an error');
  await until(page, 'the server to be ready with tools', () => {
    const row = document.querySelector('tr[data-server="tester"]');
    return row?.querySelector('.state.state-ready') && Number(row.children[3]?.textContent) > 0;
  });
  const rowText = await page.evaluate(() => document.querySelector('tr[data-server="tester"]')?.textContent ?? '');
  if (rowText.includes('s3cr3t-value') || !rowText.includes('MCP_TEST_SECRET')) fail(`the env value shows in the list: ${rowText}`);
  const saved = readFileSync(join(home, 'config.toml'), 'utf8');
  if (!saved.includes('[[tools.mcp]]') || !saved.includes('name = "tester"')) fail(`config.toml lacks the server:\n${saved}`);
  await shot(page, 'mcp');
  await page.click('tr[data-server="tester"] [data-testid="mcp-remove"]');
  await until(page, 'the server to leave the list', () => !document.querySelector('tr[data-server="tester"]'));
  const running = await page.evaluate(async (t) => {
    const r = await fetch('/api/mcp', { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, token);
  if (running.length !== 0) fail(`MCP servers still running after removal: ${JSON.stringify(running)}`);

  // 12. The memory page: add a memory in the form, open it, edit it, undo the edit, then
  // delete it for good (confirmed) and check the engine no longer has it.
  console.log('e2e: memory page');
  await page.click('.topbar button.nav-memory');
  await until(page, 'the memory page', () => document.querySelector('[data-testid="memory-add-content"]'));
  await page.fill('[data-testid="memory-add-content"]', 'The user keeps bees on the roof');
  await page.click('[data-testid="memory-add"]');
  await until(page, 'the new row', () =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].some((r) => r.textContent.includes('keeps bees')));
  const memoryId = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].find((r) => r.textContent.includes('keeps bees'))?.dataset.memoryId);
  if (!memoryId) fail('the memory row has no id');
  await page.click(`[data-testid="memory-row"][data-memory-id="${memoryId}"] .memory-open`);
  await until(page, 'the detail', () =>
    document.querySelector('[data-testid="memory-detail-content"]')?.textContent === 'The user keeps bees on the roof');
  await page.click('[data-testid="memory-edit"]');
  await page.fill('[data-testid="memory-edit-input"]', 'The user keeps wasps on the roof');
  await page.click('[data-testid="memory-edit-save"]');
  await until(page, 'the edited text', () =>
    document.querySelector('[data-testid="memory-detail-content"]')?.textContent === 'The user keeps wasps on the roof');
  await page.click('[data-testid="memory-undo"]');
  await until(page, 'the undone edit', () =>
    document.querySelector('[data-testid="memory-detail-content"]')?.textContent === 'The user keeps bees on the roof');
  await shot(page, 'memory');
  await page.click('[data-testid="memory-delete"]');
  await until(page, 'the confirmation', () => document.querySelector('[data-testid="memory-confirm-delete"]'));
  await page.click('[data-testid="memory-confirm-delete"]');
  await until(page, 'the row to go', (id) => !document.querySelector(`[data-testid="memory-row"][data-memory-id="${id}"]`), memoryId);
  const gone = await page.evaluate(async ([t, id]) => {
    const r = await fetch(`/api/memory/${id}`, { headers: { Authorization: `Bearer ${t}` } });
    return r.status;
  }, [token, memoryId]);
  if (gone !== 404) fail(`the deleted memory still answers ${gone}`);

  await memoryTools({ page, tmp });
  await traceSettings({ page, home });

  if (pageErrors.length) fail(`errors in the page: ${pageErrors.join('; ')}`);
  offPage(away, 'the first page');

  // 15. Traces and the links between pages, against a second server with memory extraction
  // on (its own home, models and page, so nothing above changes); 16. edit into one.
  await tracesAndLinks({ tmp, mockUrl });

  // 17. The Automations page, against a third server (its own home, model and page); 18. the
  // run's trace.
  await automationsPage({ tmp, mockUrl });

  // 19. Research, against a fourth server with a search service: the card updates, the
  // report's citations lead to their sources, the report exports as Markdown.
  await researchPage({ tmp, mockUrl });

  // 20. Importing another assistant's memories, against a fifth server: read, review, import.
  await assistantImport({ tmp, mockUrl });

  // 21. Ask before remembering, against a sixth server: what an answer taught waits for Keep
  // or Discard, and only a kept fact is remembered.
  await askBeforeRemembering({ tmp, mockUrl });

  // 22. A phone-sized screen, against a seventh server: chat, an approval and the memory page
  // fit the screen.
  await phoneScreen({ tmp, mockUrl });

  // 23. What the browser kept on disk: once it has closed (flushing its databases), no file
  // of its profile holds the API key typed into Settings.
  console.log("e2e: the browser's profile on disk");
  await browser.close();
  browser = undefined;
  const leaks = filesContaining(profile, ['sk-e2e-secret']);
  if (leaks.length) fail(`the browser's profile keeps the typed API key: ${leaks.join(', ')}`);
  // The pages were paired with one-time codes: the lasting token of each data directory (its
  // serve-token file) never reached the browser.
  const tokenFiles = filesContaining(profile, tokensSeen);
  if (tokenFiles.length) fail(`the browser's profile keeps a lasting gateway token: ${tokenFiles.join(', ')}`);
  console.log(`e2e: ${filesUnder(profile).length} files of the browser's profile: none holds the API key `
    + 'or a lasting gateway token');
  const inaccessible = accessibilityFailures();
  if (inaccessible.length) fail(`the accessibility scan found ${inaccessible.length} violations:\n  ${inaccessible.join('\n  ')}`);
  console.log('e2e: 23 passed, 0 failed');
}

/**
 * 7, continued. A temporary chat: the toggle before the first message, the notice while it is
 * open, in no list; leaving it (New chat) deletes it: no file of the data directory holds what
 * was said any more.
 */
async function temporaryChat({ page, home, listSessions }) {
  console.log('e2e: a temporary chat');
  const said = 'e2e-temporary-9k4w';
  await page.click('.new-session');
  await until(page, 'the temporary chat toggle', () => document.querySelector('[data-testid="temporary-toggle"]'));
  await page.click('[data-testid="temporary-toggle"]');
  await until(page, 'the temporary chat notice', () => document.querySelector('[data-testid="temporary-notice"]'));
  await shot(page, 'temporary');
  await send(page, `My locker code is ${said}`);
  await until(page, 'the temporary answer', (text) => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes(text);
  }, said);
  if (await page.$('[data-testid="temporary-toggle"]')) fail('the temporary toggle is still offered after a message');
  if (!(await page.$('[data-testid="temporary-notice"]'))) fail('the open temporary chat is not marked');
  const listed = await listSessions();
  const temporary = listed.find((name) => name.startsWith('temporary-'));
  if (temporary) fail(`the temporary chat is listed: ${JSON.stringify(listed)}`);
  if (filesContaining(home, [said]).length === 0) fail('the open temporary chat is not on disk (the scan below would prove nothing)');
  await page.click('.new-session');
  await until(page, 'the notice to go', () => !document.querySelector('[data-testid="temporary-notice"]'));
  const deadline = Date.now() + 10_000;
  let left = filesContaining(home, [said]);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = filesContaining(home, [said]);
  }
  if (left.length > 0) fail(`the temporary chat left what was said in ${left.join(', ')}`);
  console.log('e2e: the temporary chat was in no list and, once left, in no file');
}

/**
 * 7, continued. A project: made in Settings → Projects (instructions, a folder), a chat started
 * in it with the project select, answered, listed under the project's group in the sidebar
 * and kept in the project by the engine; then the memory page filtered by it: a memory added
 * there is the project's (not among the global ones), and is deleted again for good.
 */
async function projectChat({ page, work, token }) {
  console.log('e2e: a project');
  const name = 'e2e Kitchen';
  const said = 'e2e-project-5t8v';
  await page.click('.topbar button.nav-settings');
  await until(page, 'the Projects panel', () => document.querySelector('[data-testid="project-add"]:not(:disabled)'));
  await page.click('[data-testid="project-add"]');
  await page.fill('[data-testid="project-name"]', name);
  await page.fill('[data-testid="project-instructions"]', 'Answer in metric units.');
  await page.fill('[data-testid="project-folders"]', work);
  await page.click('[data-testid="project-save"]');
  await until(page, 'the project in the list', (n) => document.querySelector(`.projects-panel tr[data-project="${n}"]`), name);
  if (await page.$('[data-testid="project-error"]')) fail('adding the project showed an error');
  await page.locator('.projects-panel').scrollIntoViewIfNeeded();
  await shot(page, 'projects');

  await page.click('.topbar button.nav-chat');
  await page.click('.new-session');
  await until(page, 'the project in the select', (n) =>
    [...document.querySelectorAll('[data-testid="project-select"] option')].some((o) => o.value === n), name);
  await page.selectOption('[data-testid="project-select"]', name);
  await send(page, `Remember the tiles: ${said}`);
  await until(page, 'the answer in the project', (text) => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes(text);
  }, said);
  await until(page, 'the conversation under the project in the sidebar', (n) =>
    document.querySelector(`.session-group[data-project="${n}"] .session.current[data-session]`), name);
  await until(page, 'the project above the chat', (n) =>
    document.querySelector('[data-testid="chat-project"]')?.textContent.includes(n), name);
  if (await page.$('[data-testid="project-select"]')) fail('the project select is still offered after a message');
  await shot(page, 'project-chat');
  const session = await page.evaluate(() => document.querySelector('.session.current[data-session]')?.dataset.session);
  const listed = await page.evaluate(async (t) => {
    const r = await fetch('/api/sessions', { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, token);
  const kept = listed.find((s) => s.name === session);
  if (kept?.project !== name) fail(`the engine has the conversation in project ${JSON.stringify(kept?.project)}, not ${name}`);

  await page.click('.topbar button.nav-memory');
  await until(page, 'the project in the memory filter', (n) =>
    [...document.querySelectorAll('[data-testid="memory-scope-filter"] option')].some((o) => o.value === `project:${n}`), name);
  await page.selectOption('[data-testid="memory-scope-filter"]', `project:${name}`);
  await until(page, 'the project\'s empty list', () => document.querySelector('[data-testid="memory-empty"]'));
  await page.fill('[data-testid="memory-add-content"]', 'The kitchen tiles are 30 cm wide');
  await page.click('[data-testid="memory-add"]');
  await until(page, 'the memory, in the project', (n) =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].some((r) =>
      r.textContent.includes('kitchen tiles') && r.querySelector('[data-testid="memory-place"]')?.textContent === `Project: ${n}`), name);
  await page.selectOption('[data-testid="memory-scope-filter"]', 'global');
  await until(page, 'no global memory', () =>
    document.querySelector('[data-testid="memory-empty"]') && !document.querySelector('[data-testid="memory-row"]'));
  await page.click('[data-testid="memory-delete"]');
  await until(page, 'the confirmation', () => document.querySelector('[data-testid="memory-confirm-delete"]'));
  await page.click('[data-testid="memory-confirm-delete"]');
  await until(page, 'the memory deleted', () => document.querySelector('[data-testid="memory-deleted"]'));
  await page.click('.topbar button.nav-chat');
  console.log(`e2e: ${session} is in project ${name}, listed under it, and its memories filter on their own`);
  await moveConversation({ page, token, session, name });
  await page.click('.new-session');
}

/**
 * 7, continued. "Move to project…" on the conversation's row: out of the project (it leaves
 * the project's group, the label above the chat goes, the engine has it in none), then back
 * in (under the group again, labelled, and the engine agrees).
 */
async function moveConversation({ page, token, session, name }) {
  const projectOf = () => page.evaluate(async ([t, s]) => {
    const r = await fetch('/api/sessions', { headers: { Authorization: `Bearer ${t}` } });
    return (await r.json()).find((x) => x.name === s)?.project ?? null;
  }, [token, session]);
  const move = async (to) => {
    const row = `.session-row[data-row="${session}"]`;
    await page.hover(row);
    await page.click(`${row} [data-testid="session-move"]`);
    await until(page, 'the project choices', (r) => document.querySelector(`${r} [data-testid="session-move-choice"]`), row);
    await page.click(`${row} [data-testid="session-move-choice"][data-project="${to}"]`);
    await until(page, 'the choices closed', (r) => !document.querySelector(`${r} .session-move`), row);
  };

  await move('');
  await until(page, 'the conversation outside every project', (s) => {
    const row = document.querySelector(`.session[data-session="${s}"]`);
    return row && !row.closest('.session-group') && !document.querySelector('[data-testid="chat-project"]');
  }, session);
  const out = await projectOf();
  if (out !== null) fail(`after moving out, the engine has the conversation in ${JSON.stringify(out)}`);
  await shot(page, 'session-moved-out');

  await move(name);
  await until(page, 'the conversation back under its project', ([s, n]) =>
    document.querySelector(`.session-group[data-project="${n}"] .session[data-session="${s}"]`)
      && document.querySelector('[data-testid="chat-project"]')?.textContent.includes(n), [session, name]);
  const back = await projectOf();
  if (back !== name) fail(`after moving back, the engine has the conversation in ${JSON.stringify(back)}`);
  console.log(`e2e: ${session} moved out of ${name} and back, in the sidebar, above the chat and in the engine`);
}

/** The lasting gateway tokens (serve-token files) of the servers the pages paired with. */
const tokensSeen = [];

/** Every file under `dir`. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

/** The files under `dir` (relative to it) whose bytes hold any of `needles`, as UTF-8 or
 * UTF-16LE (how Chromium's databases keep some text). */
function filesContaining(dir, needles) {
  const patterns = needles.flatMap((n) => [Buffer.from(n, 'utf8'), Buffer.from(n, 'utf16le')]);
  return filesUnder(dir)
    .filter((file) => {
      const bytes = readFileSync(file);
      return patterns.some((p) => bytes.includes(p));
    })
    .map((file) => relative(dir, file));
}

/** The numbers in a text, in order. */
const numbers = (text) => (text.match(/\d+/g) ?? []).map(Number);

// 13. The memory tools: a new memory's detail draws its fading chart (the engine's curve, the
// threshold, now); the store's counts show it; Export downloads echo-memories-<date>.jsonl with
// a header and that memory; importing the file into the same store reports every memory as
// imported or already known; a file with a bad line is refused naming the line, and nothing
// is lost.
async function memoryTools({ page, tmp }) {
  console.log('e2e: memory tools (fading chart, counts, export and import)');
  await page.fill('[data-testid="memory-add-content"]', 'The user grows tomatoes on the balcony');
  await page.click('[data-testid="memory-add"]');
  await until(page, 'the new memory opened', () =>
    document.querySelector('[data-testid="memory-detail-content"]')?.textContent === 'The user grows tomatoes on the balcony');
  await until(page, 'its fading chart', () => {
    const chart = document.querySelector('[data-testid="memory-fading"] [data-testid="fading-chart"]');
    return chart?.querySelector('[data-testid="fading-projected"]')?.getAttribute('points')
      && chart.querySelector('[data-testid="fading-threshold"]') && chart.querySelector('[data-testid="fading-now"]');
  });
  await until(page, 'the counts with the memory', () =>
    /^1 active of 1 memory$/.test(document.querySelector('[data-testid="memory-stats-total"]')?.textContent ?? ''));
  const sweep = await page.textContent('[data-testid="memory-stats-sweep"]');
  if (!/next sweep: \d+ expired, \d+ faded/.test(sweep ?? '')) fail(`the next sweep reads ${JSON.stringify(sweep)}`);
  await page.locator('[data-testid="memory-fading"]').scrollIntoViewIfNeeded();
  await shot(page, 'memory-fading');

  const [download] = await Promise.all([page.waitForEvent('download', { timeout: STEP_TIMEOUT }), page.click('[data-testid="memory-export"]')]);
  const name = download.suggestedFilename();
  if (!/^echo-memories-\d{4}-\d{2}-\d{2}\.jsonl$/.test(name)) fail(`the export downloads as ${name}`);
  const file = join(tmp, name);
  await download.saveAs(file);
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());
  const header = JSON.parse(lines[0]);
  if (header.format !== 'echo-desk-memory' || lines.length !== 2 || !lines[1].includes('grows tomatoes')) {
    fail(`the export is ${lines.join('\n').slice(0, 300)}`);
  }

  await page.setInputFiles('[data-testid="memory-import"]', file);
  await until(page, 'the import count', () =>
    document.querySelector('[data-testid="memory-transfer-outcome"][role="status"]')?.textContent.startsWith('Imported'));
  const [created, known] = numbers(await page.textContent('[data-testid="memory-transfer-outcome"]'));
  if (created + known !== 1 || known !== 1) fail(`importing the export into the same store reports ${created} new, ${known} known`);
  console.log(`e2e: export ${name} imported back: ${created} new, ${known} already known`);

  await page.setInputFiles('[data-testid="memory-import"]', {
    name: 'broken.jsonl',
    mimeType: 'application/x-ndjson',
    buffer: Buffer.from(`${lines[0]}\n${lines[1]}\nnot a memory\n`),
  });
  await until(page, 'the refusal naming the bad line', () =>
    document.querySelector('[data-testid="memory-transfer-outcome"][role="alert"]')?.textContent.includes('line 3'));
  const kept = await page.evaluate(() => document.querySelector('[data-testid="memory-stats-total"]')?.textContent);
  if (kept !== '1 active of 1 memory') fail(`after the refused file the counts read ${kept}`);
}

// 14. The Traces settings panel: capture off is saved to config.toml and still off after a
// reload; on again likewise.
async function traceSettings({ page, home }) {
  console.log('e2e: trace settings');
  const setCapture = async (on) => {
    await page.click('.topbar button.nav-settings');
    await until(page, 'the Traces panel', () => document.querySelector('[data-testid="trace-capture"]'));
    if ((await page.isChecked('[data-testid="trace-capture"]')) === on) fail(`capture is already ${on ? 'on' : 'off'}`);
    await page.setChecked('[data-testid="trace-capture"]', on);
    await page.click('[data-testid="trace-settings-save"]');
    await until(page, 'the trace settings saved', () => document.querySelector('[data-testid="trace-settings-saved"]'));
    if (await page.$('[data-testid="trace-settings-error"]')) fail('saving the trace settings showed an error');
    const config = readFileSync(join(home, 'config.toml'), 'utf8');
    if (!config.includes(`capture = ${on}`)) fail(`config.toml lacks capture = ${on}:\n${config}`);
    await page.reload();
    await page.click('.topbar button.nav-settings');
    await until(page, `capture ${on ? 'on' : 'off'} after a reload`, (want) => {
      const box = document.querySelector('[data-testid="trace-capture"]');
      return box && box.checked === want;
    }, on);
  };
  await setCapture(false);
  await page.locator('.traces-panel').scrollIntoViewIfNeeded();
  await shot(page, 'trace-settings');
  await setCapture(true);
  const days = await page.inputValue('[data-testid="trace-retention"]');
  if (days !== '30') fail(`the retention reads ${days}`);
}

/** The duration shown in the span detail, in ms ("840 ms", "2.4 s"); NaN when unreadable. */
function shownMs(text) {
  const m = /^([\d.]+) (ms|s)$/.exec(text?.trim() ?? '');
  return m ? Number(m[1]) * (m[2] === 's' ? 1000 : 1) : Number.NaN;
}

/**
 * A further `echod serve` of its own for one step: a fresh data directory `home-NAME` and
 * workspace `work-NAME` under `tmp` (and `dirs`), `config` as its config.toml, the mock model
 * `model` as its provider; `prepare(env)` runs before it starts (a rule to add, a variable to
 * drop). Its bearer token joins the ones no browser file may hold; a new page is open on its
 * address, loopback-only, with the page's errors collected.
 */
async function serveStep({ tmp, mockUrl, name, label, config, model, dirs = [], prepare }) {
  const home = join(tmp, `home-${name}`);
  const work = join(tmp, `work-${name}`);
  for (const d of [home, work, ...dirs]) spawnSync('mkdir', ['-p', d]);
  writeFileSync(join(home, 'config.toml'), config);
  const env = {
    ...process.env,
    ECHO_DESK_HOME: home,
    ECHO_LLM_KIND: 'openai',
    ECHO_LLM_BASE_URL: `${mockUrl}/v1`,
    ECHO_LLM_MODEL: model,
  };
  prepare?.(env);
  const server = start(join(BIN, 'echod'), ['serve', '--ui', DIST], { cwd: work, env });
  const { open } = await serveAddress(server, label);
  const token = readFileSync(join(home, 'serve-token'), 'utf8').trim();
  tokensSeen.push(token);
  const page = await browser.newPage();
  const away = await loopbackOnly(page);
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { home, work, env, open, token, page, away, pageErrors };
}

async function tracesAndLinks({ tmp, mockUrl }) {
  console.log('e2e: traces and memory links (second server)');
  const { open, token, page, away, pageErrors } = await serveStep({
    tmp,
    mockUrl,
    name: 'traces',
    label: 'the second echod serve',
    config: '[memory]\nextraction = true\nextraction_model = "extractor"\nembedder = "none"\n[tools]\nexplain_approvals = false\n[llm.retry]\nmax_retries = 0\n',
    model: 'trace-primary',
  });
  await page.goto(open);
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));
  const lastAssistant = (text) => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes(text);
  };

  // A turn that calls a tool (after an approval).
  const question = 'Check the weather with a shell command';
  await send(page, question);
  await until(page, 'the approval dialog', () => document.querySelector('[role="dialog"] .approval-detail')?.textContent.includes('echo sunny'));
  await page.click('[role="dialog"] button:has-text("Allow once")');
  await until(page, 'the answer after the tool call', lastAssistant, 'It is sunny.');
  // The session list is refreshed after the turn, not with it: wait for it to mark the session.
  await until(page, 'the current session in the list', () => !!document.querySelector('.session.current[data-session]'));
  const session = await page.evaluate(() => document.querySelector('.session.current[data-session]')?.dataset.session);
  if (!session) fail('no current session on the second server');

  // "Show trace" on the answer lands on its turn.
  await until(page, 'Show trace on the answer', () => {
    const m = document.querySelectorAll('.message.assistant');
    return m[m.length - 1]?.querySelector('[data-testid="show-trace"]');
  });
  const links = await page.$$('.message.assistant [data-testid="show-trace"]');
  await links[links.length - 1].click();
  await until(page, 'the trace of the answer', () =>
    document.querySelector('.topbar button.nav-traces')?.getAttribute('aria-pressed') === 'true'
    && document.querySelector('[data-testid="turn-summary"]')?.dataset.turnId);
  const shownTurn = await page.evaluate(() => document.querySelector('[data-testid="turn-summary"]').dataset.turnId);

  // Traces from the header: the newest turn that used a tool, its waterfall and spans.
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  await page.click('.topbar button.nav-traces');
  await until(page, 'the turn list', () => document.querySelectorAll('[data-testid="trace-row"]').length > 0);
  const rows = await page.$$eval('[data-testid="trace-row"]', (rs) => rs.map((r) => r.dataset.turnId));
  let toolTurn = null;
  for (const id of rows) {
    await page.click(`[data-testid="trace-row"][data-turn-id="${id}"] .trace-open`);
    await until(page, 'the waterfall of the opened turn', (t) =>
      document.querySelector('[data-testid="turn-summary"]')?.dataset.turnId === t
      && document.querySelectorAll('[data-testid="span-row"]').length > 0, id);
    if (await page.$('[data-testid="span-row"][data-kind="tool"]')) {
      toolTurn = id;
      break;
    }
  }
  if (toolTurn !== shownTurn) fail(`the newest turn with a tool is ${toolTurn}, Show trace opened ${shownTurn}`);
  if (!(await page.$('[data-testid="span-row"][data-kind="model"]'))) fail('the waterfall has no model span');
  await shot(page, 'trace-waterfall');
  const duration = async (kind) => {
    await page.click(`[data-testid="span-row"][data-kind="${kind}"]`);
    await until(page, `the ${kind} span's detail`, (k) => document.querySelector('[data-testid="span-detail"]')?.dataset.kind === k, kind);
    return page.textContent('[data-testid="span-detail"] [data-testid="span-duration"]');
  };
  const toolDuration = await duration('tool');
  if (!(shownMs(toolDuration) > 0)) fail(`the tool span's duration is ${JSON.stringify(toolDuration)}`);
  const modelDuration = await duration('model');
  if (!(shownMs(modelDuration) > 0)) fail(`the model span's duration is ${JSON.stringify(modelDuration)}`);
  await until(page, "the user's message in the request sent to the model", (q) =>
    [...document.querySelectorAll('[data-testid="call-request"] [data-testid="call-message"][data-role="user"]')]
      .some((m) => m.textContent.includes(q)), question);
  if (!(await page.$('[data-testid="call-request"] [data-testid="call-message"][data-role="system"]'))) fail('the request pane shows no system message');
  await shot(page, 'trace-model-call');
  console.log(`e2e: trace of ${toolTurn}: tool ${toolDuration}, model ${modelDuration}`);

  // Export as case: a download named after the turn, whose JSON is that turn.
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: STEP_TIMEOUT }), page.click('[data-testid="trace-export"]')]);
  if (download.suggestedFilename() !== `${toolTurn}.case.json`) fail(`the case downloads as ${download.suggestedFilename()}`);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  if (exported.turn_id !== toolTurn || exported.input !== question) fail(`the exported case is ${JSON.stringify(exported).slice(0, 300)}`);
  // The downloaded case replays through the real engine without diverging (`echod replay`).
  const replayed = spawnSync(join(BIN, 'echod'), ['replay', await download.path(), '--json'], { encoding: 'utf8', timeout: 120_000 });
  if (replayed.status !== 0) fail(`echod replay of the downloaded case exited ${replayed.status}: ${replayed.stdout}${replayed.stderr}`);
  const report = JSON.parse(replayed.stdout);
  if (report.divergence !== null && report.divergence !== undefined) fail(`the downloaded case diverges on replay: ${replayed.stdout}`);

  // The session leads back to its conversation.
  await page.click('[data-testid="trace-session"]');
  await until(page, 'the conversation of the trace', (name) =>
    document.querySelector('.session.current[data-session]')?.dataset.session === name
    && document.querySelector('.chat')?.textContent.includes('It is sunny.'), session);

  // A statement extraction turns into two contradicting memories: the badge appears.
  if (await page.$('[data-testid="nav-conflicts-badge"]')) fail('a conflict badge shows before any conflict');
  await send(page, 'I am vegetarian, but I love a good steak.');
  await until(page, 'the answer to the statement', lastAssistant, 'Noted: vegetarian, and fond of steak.');
  await until(page, 'the conflict badge after the turn', () => document.querySelector('[data-testid="nav-conflicts-badge"]')?.textContent === '1');
  // Under the answer, "Memory updated" lists what the turn taught.
  await until(page, 'the "Memory updated" line under the answer', () => {
    const m = document.querySelectorAll('.message.assistant');
    const items = [...(m[m.length - 1]?.querySelectorAll('[data-testid="memory-learned"]') ?? [])].map((li) => li.textContent);
    return items.length === 2 && items[0].includes('The user is vegetarian.') && items[1].includes('The user loves steak.');
  });

  // Where the memory was learned: from another conversation, back to the marked message.
  await page.click('.new-session');
  await page.click('.topbar button.nav-memory');
  await until(page, 'the learned memory in the list', () =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].some((r) => r.textContent.includes('The user is vegetarian.')));
  const learned = await page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].find((r) => r.textContent.includes('The user is vegetarian.')).dataset.memoryId);
  await page.click(`[data-testid="memory-row"][data-memory-id="${learned}"] .memory-open`);
  await until(page, 'the provenance link', () => document.querySelector('[data-testid="memory-provenance"]'));
  await page.click('[data-testid="memory-provenance"]');
  await until(page, 'the highlighted message it was learned from', (name) =>
    document.querySelector('.session.current[data-session]')?.dataset.session === name
    && document.querySelector('[data-testid="message-highlighted"]')?.textContent.includes('Noted: vegetarian, and fond of steak.'), session);
  await shot(page, 'provenance');

  // Settling the conflict drops the badge at once.
  await page.click('.topbar button.nav-memory');
  await page.click('[data-testid="memory-tab-conflicts"]');
  await until(page, 'the conflict in the queue', () => document.querySelector('[data-testid="conflict"]'));
  await page.click('[data-testid="conflict-keep-a"]');
  await until(page, 'the badge to go', () => !document.querySelector('[data-testid="nav-conflicts-badge"]'));

  // 16. A second statement raises a second conflict; "Edit into one" rewrites the two as one
  // memory kept by B (A is replaced), and the badge drops at once.
  console.log('e2e: edit a conflict into one');
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  await page.click('.new-session');
  await send(page, 'I live in Lisbon, and I live in Porto.');
  await until(page, 'the answer to the second statement', lastAssistant, 'Noted: Lisbon, and Porto.');
  await until(page, 'the conflict badge again', () => document.querySelector('[data-testid="nav-conflicts-badge"]')?.textContent === '1');
  await page.click('.topbar button.nav-memory');
  await page.click('[data-testid="memory-tab-conflicts"]');
  await until(page, 'the second conflict in the queue', () =>
    document.querySelector('[data-testid="conflict"]')?.textContent.includes('Home city: Porto.'));
  const sides = await page.$eval('[data-testid="conflict"]', (c) => ({ id: c.dataset.conflictId }));
  await page.click('[data-testid="conflict-merge"]');
  const prefilled = await page.inputValue('[data-testid="conflict-merge-text"]');
  if (!prefilled.includes('Home city: Lisbon.') || !prefilled.includes('Home city: Porto.')) fail(`the merge text starts as ${JSON.stringify(prefilled)}`);
  const merged = 'Home city: Lisbon, with weekends in Porto.';
  await page.fill('[data-testid="conflict-merge-text"]', merged);
  await page.check('[data-testid="conflict-merge-keep-b"]');
  await shot(page, 'conflict-merge');
  await page.click('[data-testid="conflict-merge-save"]');
  await until(page, 'the badge to go after the merge', () => !document.querySelector('[data-testid="nav-conflicts-badge"]'));
  await until(page, 'the queue to be empty', () => document.querySelector('[data-testid="conflicts-empty"]'));
  const settled = await page.evaluate(async ([t, id]) => {
    const r = await fetch('/api/memory/conflicts?all=true', { headers: { Authorization: `Bearer ${t}` } });
    return (await r.json()).find((c) => c.id === id);
  }, [token, sides.id]);
  if (!settled || settled.status === 'open') fail(`the conflict is still ${JSON.stringify(settled)}`);
  await page.click('[data-testid="memory-tab-list"]');
  await until(page, 'the merged memory in the list', (text) =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].some((r) => r.textContent.includes(text)), merged);
  const kept = await page.evaluate(async ([t, id]) => {
    const r = await fetch(`/api/memory/${id}`, { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, [token, settled.memory_b]);
  if (kept.content !== merged || kept.status !== 'active') fail(`the kept memory is ${JSON.stringify(kept).slice(0, 300)}`);

  // "Memory updated" under an answer: Undo takes the memory the turn made back out.
  console.log('e2e: "Memory updated" and its Undo');
  await page.click('.topbar button.nav-chat');
  await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  await page.click('.new-session');
  await send(page, 'I drink green tea every morning.');
  await until(page, 'the answer about tea', lastAssistant, 'Noted: green tea.');
  await until(page, 'the tea memory under the answer', () =>
    document.querySelector('.message.assistant [data-testid="memory-learned"]')?.textContent.includes('The user drinks green tea every morning.'));
  await shot(page, 'memory-updated');
  await page.click('.message.assistant [data-testid="memory-learned-undo"]');
  await until(page, 'the line to empty after Undo', () => !document.querySelector('[data-testid="memory-learned"]'));
  const teaLeft = await page.evaluate(async (t) => {
    const r = await fetch('/api/memory', { headers: { Authorization: `Bearer ${t}` } });
    return (await r.json()).items.filter((m) => m.content.includes('green tea')).map((m) => m.status);
  }, token);
  if (teaLeft.some((status) => status === 'active')) fail(`the undone memory is still in force: ${JSON.stringify(teaLeft)}`);
  if (pageErrors.length) fail(`errors in the second page: ${pageErrors.join('; ')}`);
  offPage(away, 'the second page');
  await page.close();
}

/** The folders of the automations step, inside its server's working directory (the default
 * workspace root, so the run may write there). */
function automationPaths(tmp) {
  const home = join(tmp, 'home-automations');
  const work = join(tmp, 'work-automations');
  return { home, work, inbox: join(work, 'inbox'), notes: join(work, 'notes'), summary: join(work, 'notes', 'summary.md') };
}

/** The model of the third server: only the automation's run asks it. */
const AUTOMATION_MODEL = 'auto-model';
const SUMMARY_TEXT = '# report.txt\n\nQuarterly numbers, filed by the automation.\n';

/** The mock's answers to the automation's run: a write_file call (which asks), then a text. */
function automationSteps(tmp) {
  const { summary } = automationPaths(tmp);
  return [
    {
      model: AUTOMATION_MODEL,
      tool_calls: [{ id: 'w1', name: 'write_file', arguments: JSON.stringify({ path: summary, content: SUMMARY_TEXT }) }],
    },
    { model: AUTOMATION_MODEL, text: 'Filed report.txt into notes/summary.md.' },
  ];
}

// 17. The Automations page: a watch rule from the PDF-inbox template, edited to watch a folder
// for *.txt with a short settle time, its pre-approval removed and routed as code (to the
// model only this step's mock answers serve); it becomes active; a file dropped into the
// folder makes a run that waits for approval, and the question (in the queue and on the
// header's badge) names the exact path; Allow once lets the run finish and write the file.
// 18. The run's trace link opens the trace of its turn.
async function automationsPage({ tmp, mockUrl }) {
  console.log('e2e: automations page (third server)');
  const { inbox, notes, summary } = automationPaths(tmp);
  const { work, open, token, page, away, pageErrors } = await serveStep({
    tmp,
    mockUrl,
    name: 'automations',
    label: 'the third echod serve',
    config: `[memory]\nextraction = false\nembedder = "none"\n[tools]\nexplain_approvals = false\n[routing]\ncode = ["${AUTOMATION_MODEL}"]\n[llm.retry]\nmax_retries = 0\n`,
    model: AUTOMATION_MODEL,
    dirs: [inbox, notes],
  });
  await page.goto(open);
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));
  const api = (path) => page.evaluate(async ([t, p]) => {
    const r = await fetch(p, { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, [token, path]);

  // Open the page from the header; start from the template and edit it.
  await page.click('.topbar button.nav-automations');
  await until(page, 'the automations page, empty', () =>
    document.querySelector('.topbar button.nav-automations')?.getAttribute('aria-pressed') === 'true'
    && document.querySelector('[data-testid="automations-empty"]'));
  if (await page.$('[data-testid="approval-queue"]')) fail('the approval queue shows before any run');
  await page.click('[data-testid="template-inboxPdfs"]');
  await until(page, 'the editor with the template', () =>
    document.querySelector('[data-testid="form-name"]')?.value === 'Summarise Inbox PDFs'
    && document.querySelectorAll('[data-testid="form-allow-row"]').length === 1);
  const name = 'E2E inbox';
  await page.fill('[data-testid="form-name"]', name);
  await page.fill('[data-testid="form-folders"]', inbox);
  await page.fill('[data-testid="form-include"]', '*.txt');
  await page.fill('[data-testid="form-settle"]', '300');
  await page.fill('[data-testid="form-prompt"]', 'File {{name}}');
  await page.click('[data-testid="form-allow-row"] [data-testid="form-allow-remove"]');
  await until(page, 'the pre-approval to be removed', () => document.querySelectorAll('[data-testid="form-allow-row"]').length === 0);
  await page.selectOption('[data-testid="form-task"]', 'code');
  await until(page, 'the preview to list the folder as there', (f) =>
    [...document.querySelectorAll('[data-testid="preview-folders"] li')].some((li) => li.textContent === f && !li.dataset.missing), inbox);
  if (await page.$('[data-testid="preview-error"]')) fail('the preview says the spec is invalid');
  await shot(page, 'automation-editor');
  await page.click('[data-testid="form-save"]');
  await until(page, 'the editor to close after saving', () => !document.querySelector('[data-testid="automation-editor"]'));
  if (await page.$('[data-testid="automations-error"]')) fail('saving the automation showed an error');
  await until(page, 'the saved notice', (n) => document.querySelector('[data-testid="automations-notice"]')?.textContent.includes(n), name);

  // The engine has it as edited; the runner takes it up and it is watching.
  const list = await api('/api/automations');
  const stored = list.find((v) => v.automation.name === name)?.automation;
  if (!stored) fail(`the engine has no automation ${name}: ${JSON.stringify(list).slice(0, 300)}`);
  const { spec } = stored;
  const { trigger } = spec;
  if (trigger.kind !== 'watch' || JSON.stringify(trigger.folders) !== JSON.stringify([inbox])
    || JSON.stringify(trigger.include) !== '["*.txt"]' || trigger.settle_ms !== 300
    || spec.prompt !== 'File {{name}}' || spec.allow.length !== 0 || spec.task !== 'code') {
    fail(`the saved spec is ${JSON.stringify(spec)}`);
  }
  const card = `[data-testid="automation"][data-automation-id="${stored.id}"]`;
  await until(page, 'the automation to be active', (c) =>
    document.querySelector(`${c} [data-testid="automation-state"]`)?.textContent === 'active', card);
  await until(page, 'its empty run history', () => document.querySelector('[data-testid="run-history"] [data-testid="runs-empty"]'));

  // A file dropped into the folder: a run that waits for approval, with the question in the
  // queue and on the header's badge.
  writeFileSync(join(inbox, 'report.txt'), 'Quarterly numbers\n');
  await until(page, 'a run waiting for approval', () =>
    [...document.querySelectorAll('[data-testid="run-history"] [data-testid="run"]')].some((r) =>
      r.dataset.status === 'waiting_for_approval' && r.textContent.includes('waiting for approval') && r.textContent.includes('report.txt')));
  // The detail is the diff of the write, its path relative to the workspace root; what
  // "Allow for this automation" would cover names the folder in full.
  const diffHeader = `+++ b/${relative(work, summary)}`;
  await until(page, 'the question in the approval queue with the exact path and content', ([n, header, content, folder]) => {
    const q = document.querySelectorAll('[data-testid="queued-approval"]');
    const detail = q[0]?.querySelector('[data-testid="queued-detail"]')?.textContent ?? '';
    return q.length === 1 && q[0].querySelector('.queued-automation')?.textContent === n
      && q[0].querySelector('.queued-tool')?.textContent === 'write_file'
      && detail.split('\n').includes(header)
      && content.split('\n').every((line) => detail.includes(`+${line}`))
      && q[0].querySelector('.queued-suggested')?.textContent.includes(`${folder}/**`);
  }, [name, diffHeader, SUMMARY_TEXT.trimEnd(), notes]);
  await until(page, 'the badge on the Automations button', () => document.querySelector('[data-testid="nav-approvals-badge"]')?.textContent === '1');
  if (existsSync(summary)) fail(`${summary} exists before the call was allowed`);
  const asked = (await fetch(`${mockUrl}/_mock/requests`).then((r) => r.json())).filter((r) => r.body?.model === AUTOMATION_MODEL);
  const prompts = (asked[0]?.body.messages ?? []).filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
  if (!prompts.some((c) => c.includes('File report.txt'))) fail(`the run's prompt is not the template's: ${JSON.stringify(prompts)}`);
  await shot(page, 'automation-queue');

  // Allow once: the question goes, the run ends done, the file is written.
  await page.click('[data-testid="queued-approval"] [data-testid="queue-allow-once"]');
  await until(page, 'the question to leave the queue', () => !document.querySelector('[data-testid="queued-approval"]'));
  await until(page, 'the run to be done', () => {
    const runs = document.querySelectorAll('[data-testid="run-history"] [data-testid="run"]');
    return runs.length === 1 && runs[0].dataset.status === 'done' && runs[0].textContent.includes('done');
  });
  await until(page, 'the badge to go', () => !document.querySelector('[data-testid="nav-approvals-badge"]'));
  if (!existsSync(summary) || readFileSync(summary, 'utf8') !== SUMMARY_TEXT) {
    fail(`${summary} was not written as scripted: ${existsSync(summary) ? JSON.stringify(readFileSync(summary, 'utf8')) : 'missing'}`);
  }
  const runs = await api(`/api/automations/${encodeURIComponent(stored.id)}/runs`);
  const run = runs[0];
  if (runs.length !== 1 || run.status !== 'done' || run.path !== join(inbox, 'report.txt') || run.session !== `${name} · run 1` || !run.turn_id) {
    fail(`the engine's runs are ${JSON.stringify(runs).slice(0, 400)}`);
  }
  await shot(page, 'automation-done');
  console.log(`e2e: ${run.session} waited for approval, was allowed once and wrote ${summary}`);

  // 18. The run's trace link opens the trace of its turn, with the approved write_file call.
  console.log('e2e: the trace of an automation run');
  await page.click('[data-testid="run"] [data-testid="run-open-trace"]');
  await until(page, 'the trace of the run', (t) =>
    document.querySelector('.topbar button.nav-traces')?.getAttribute('aria-pressed') === 'true'
    && document.querySelector('[data-testid="turn-summary"]')?.dataset.turnId === t
    && document.querySelector('[data-testid="span-row"][data-kind="tool"]'), run.turn_id);
  const toolSpans = await page.$$eval('[data-testid="span-row"][data-kind="tool"]', (rs) => rs.map((r) => `${r.title} ${r.textContent}`));
  if (!toolSpans.some((t) => t.includes('write_file'))) fail(`the run's trace has no write_file span: ${JSON.stringify(toolSpans)}`);
  if (pageErrors.length) fail(`errors in the automations page: ${pageErrors.join('; ')}`);
  offPage(away, 'the automations page');
  await page.close();
}

/** The model of the fourth server: the research run's plan, notes, support check and report. */
const RESEARCH_MODEL = 'research-model';
const EVIDENCE = 'Family rooms cost 120 EUR a night.';
const RESEARCH_STEPS = [
  {
    model: RESEARCH_MODEL,
    when_tool: 'research_plan',
    tool_calls: [{ id: 'rp', name: 'research_plan', arguments: JSON.stringify({ sub_questions: [
      { question: 'kyoto family hotels', look_for: 'price a night' },
      { question: 'kyoto trains', look_for: 'minutes' },
    ] }) }],
  },
  {
    model: RESEARCH_MODEL,
    when_tool: 'research_notes',
    times: 4,
    tool_calls: [{ id: 'rn', name: 'research_notes', arguments: JSON.stringify({ notes: [{ quote: EVIDENCE, supports: 'the price of a room' }] }) }],
  },
  {
    model: RESEARCH_MODEL,
    when_tool: 'research_check',
    tool_calls: [{ id: 'rc', name: 'research_check', arguments: JSON.stringify({ unsupported: [] }) }],
  },
  { model: RESEARCH_MODEL, text: 'Short answer: a family room fits the budget [1].\n\n## Trains\n\nThey are quick [3][2].' },
];

/** A search service (SearXNG's JSON) and its pages on loopback; each page takes a moment, so
 * the card has states to show. Resolves to its base URL and the paths it served. */
function researchWeb() {
  const served = [];
  const server = createServer((req, res) => {
    served.push(req.url);
    const base = `http://127.0.0.1:${server.address().port}`;
    if (req.url.startsWith('/search')) {
      const first = req.url.includes('train') ? 3 : 1;
      const results = [first, first + 1].map((n) => ({ title: `Kyoto page ${n}`, url: `${base}/page/${n}`, content: 'about Kyoto' }));
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ results }));
      return;
    }
    const n = req.url.replace('/page/', '');
    setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><html><head><title>Kyoto page ${n}</title></head><body><p>${EVIDENCE}</p></body></html>`);
    }, 400);
  });
  cleanups.push(() => server.close());
  return new Promise((resolveWeb) => server.listen(0, '127.0.0.1', () =>
    resolveWeb({ url: `http://127.0.0.1:${server.address().port}`, served })));
}

// 19. Research: the Research toggle, switched on with no search service, says so and leads to
// Settings → Web search, where a SearXNG address is tested and saved (nothing in the
// environment); back in the chat, a question becomes a research run whose card shows the
// plan and its sub-questions moving, then the report; its citations jump to the sources
// (which open outside the app) and back; Export saves it as Markdown; after a reload the
// report, loaded from history, still has its finished card and Export.
async function researchPage({ tmp, mockUrl }) {
  console.log('e2e: research (fourth server)');
  const web = await researchWeb();
  const { home, open, page, away, pageErrors } = await serveStep({
    tmp,
    mockUrl,
    name: 'research',
    label: 'the fourth echod serve',
    config: '[memory]\nextraction = false\nembedder = "none"\n[llm.retry]\nmax_retries = 0\n',
    model: RESEARCH_MODEL,
    prepare: (env) => {
      for (const name of ['ECHO_SEARCH_KIND', 'ECHO_SEARCH_URL', 'ECHO_SEARCH_API_KEY']) delete env[name];
      for (const tool of ['web_search', 'web_fetch']) {
        const made = spawnSync(join(BIN, 'echod'), ['rules', 'add', '--tool', tool, '--decision', 'allow'], { env });
        if (made.status !== 0) fail(`echod rules add ${tool} failed: ${made.stderr}`);
      }
    },
  });
  await page.goto(open);
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));

  await page.click('[data-testid="research-toggle"]');
  await until(page, 'the Research toggle to be on', () =>
    document.querySelector('[data-testid="research-toggle"]')?.getAttribute('aria-pressed') === 'true');
  await until(page, 'the hint that research needs a search service', () =>
    document.querySelector('[data-testid="research-hint"]')?.textContent.includes('needs a web search service'));
  await shot(page, 'research-needs-search');
  await page.click('[data-testid="research-set-up-search"]');
  await until(page, 'Settings → Web search', () =>
    document.querySelector('[data-testid="search-state"]')?.dataset.available === 'false');
  await page.selectOption('[data-testid="search-kind"]', 'searxng');
  await page.fill('[data-testid="search-url"]', web.url);
  await page.click('[data-testid="search-test"]');
  await until(page, 'the test search to come back', () =>
    document.querySelector('[data-testid="search-test-result"]')?.dataset.ok === 'true');
  await page.click('[data-testid="search-save"]');
  await until(page, 'web search to be on', () =>
    document.querySelector('[data-testid="search-state"]')?.dataset.available === 'true');
  await shot(page, 'search-settings');
  if (!readFileSync(join(home, 'config.toml'), 'utf8').includes('kind = "searxng"')) fail('[search] was not saved to config.toml');
  await page.click('.nav-chat');
  await until(page, 'the composer, its hint gone', () =>
    document.querySelector('.composer textarea') && !document.querySelector('[data-testid="research-hint"]'));
  await send(page, 'Plan three days in Kyoto with two kids, under 900 EUR, at most an hour on trains a day');
  await until(page, 'the card with its plan, still gathering', () => {
    const card = document.querySelector('[data-testid="research-card"]');
    return card?.dataset.phase === 'gathering' && card.querySelectorAll('[data-testid="research-sub"]').length === 2
      && document.querySelector('[data-testid="research-stop"]');
  });
  await shot(page, 'research-card');
  await until(page, 'the card to be done, every sub-question answered', () => {
    const card = document.querySelector('[data-testid="research-card"]');
    const subs = [...(card?.querySelectorAll('[data-testid="research-sub"]') ?? [])];
    return card?.dataset.phase === 'done' && subs.every((s) => s.dataset.state === 'done')
      && card.querySelector('[data-testid="research-stats"]')?.textContent.startsWith('4 sources found · 4 read');
  });
  await until(page, 'the report with three citations', () =>
    document.querySelectorAll('.message.assistant .markdown sup a').length === 3
    && !document.querySelector('[data-testid="research-stop"]'));

  // A citation jumps to its source in the list; the source opens outside the app.
  await page.click('.message.assistant .markdown sup a');
  const source = await until(page, 'the first source to be focused', () => {
    const focused = document.activeElement;
    const link = focused?.closest('li')?.querySelector('a[target="_blank"]');
    return focused?.closest('section.footnotes') && link ? link.getAttribute('href') : null;
  }).then((h) => h.jsonValue());
  if (!source.startsWith(`${web.url}/page/`) || !web.served.includes(source.slice(web.url.length))) {
    fail(`the first citation's source ${source} is not a page the run read: ${JSON.stringify(web.served)}`);
  }
  // Export saves the report as Markdown.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="research-export"]')]);
  const saved = readFileSync(await download.path(), 'utf8');
  if (!download.suggestedFilename().endsWith('.md') || !saved.includes('[^1]:') || !saved.includes(source)) {
    fail(`the export ${download.suggestedFilename()} holds ${JSON.stringify(saved.slice(0, 300))}`);
  }
  await shot(page, 'research-report');
  // Loaded again from history, the report keeps its card (finished, with its plan) and Export.
  await page.reload();
  await until(page, 'the report from history with its finished card and Export', () => {
    const card = document.querySelector('[data-testid="research-card"]');
    return card?.dataset.phase === 'done' && card.querySelectorAll('[data-testid="research-sub"]').length === 2
      && document.querySelector('[data-testid="research-export"]') && document.querySelector('.markdown a[href^="#"]');
  });
  if (pageErrors.length) fail(`errors in the research page: ${pageErrors.join('; ')}`);
  offPage(away, 'the research page');
  await page.close();
  console.log(`e2e: research read ${web.served.filter((p) => p.startsWith('/page/')).length} pages; the report cites ${source}`);
}

/** The memory model of the fifth server (its `[memory] extraction_model`): only the import asks it. */
const IMPORT_MODEL = 'import-model';
/** What is pasted: a list as ChatGPT's "Manage memories" shows it. */
const IMPORT_TEXT = '- Lives in Lisbon\n- Prefers short answers\n- Has a dog named Biscuit\n- Plays the cello on Sundays\n';
/** A fact the model proposes without the pasted text saying it: the engine leaves it out. */
const IMPORT_UNFOUNDED = 'Speaks fluent Klingon.';
const IMPORT_STEPS = [
  // The reading: one card a line (their words share none but the clash's, so each meets only
  // the memory it is meant to), and one whose words are not in the text.
  {
    model: IMPORT_MODEL,
    when_tool: 'import_memories',
    tool_calls: [{
      id: 'im1',
      name: 'import_memories',
      arguments: JSON.stringify({
        memories: [
          { evidence: 'Lives in Lisbon', content: 'Lives in Lisbon.', slot: 'home_city', value: 'Lisbon', valid_until: null, about: 'person' },
          { evidence: 'Prefers short answers', content: 'Prefers short answers.', slot: 'answer_style', value: 'short', valid_until: null, about: 'person' },
          { evidence: 'Has a dog named Biscuit', content: 'Has a dog named Biscuit.', slot: 'pet', value: 'Biscuit', valid_until: null, about: 'person' },
          { evidence: 'Plays the cello on Sundays', content: 'Plays the cello on Sundays.', slot: null, value: null, valid_until: null, about: 'person' },
          { evidence: 'Speaks fluent Klingon', content: IMPORT_UNFOUNDED, slot: 'language', value: 'Klingon', valid_until: null, about: 'person' },
        ],
      }),
    }],
  },
  // The judge on Lisbon against the home city there: in the review, and again when it is written.
  {
    model: IMPORT_MODEL,
    when_tool: 'judge_memory_conflict',
    times: 2,
    tool_calls: [{ id: 'ij1', name: 'judge_memory_conflict', arguments: '{"verdict": "contradiction", "explanation": "One home city at a time."}' }],
  },
];

// 20. Import from another assistant: on a fresh store with two memories (a home city with its
// slot, and a hobby), a pasted list is read into cards: the new home city replaces the one
// there (dropped by default), the hobby is already known, a fact the text does not say is left
// out. The person keeps the new home city, edits one card and drops another, and imports:
// the summary counts what happened, the list shows the kept cards marked as imported, the old
// home city as replaced, and not the dropped card.
async function assistantImport({ tmp, mockUrl }) {
  console.log('e2e: import from another assistant (fifth server)');
  const { open, token, page, away, pageErrors } = await serveStep({
    tmp,
    mockUrl,
    name: 'import',
    label: 'the fifth echod serve',
    config: `[memory]\nextraction = false\nextraction_model = "${IMPORT_MODEL}"\nembedder = "none"\n[llm.retry]\nmax_retries = 0\n`,
    model: 'import-main',
  });
  await page.goto(open);
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));
  await page.click('.topbar button.nav-memory');
  await until(page, 'the empty memory page', () => document.querySelector('[data-testid="memory-empty"]'));

  // The memories there: a home city (with its slot, so the imported one meets it) and a hobby.
  for (const [content, slot] of [['Lives in Lyon.', 'home_city'], ['Plays the cello on Sundays.', '']]) {
    await page.fill('[data-testid="memory-add-content"]', content);
    await page.fill('.memory-add input[name="slot"]', slot);
    await page.click('[data-testid="memory-add"]');
    await until(page, 'the added memory in the list', (c) =>
      [...document.querySelectorAll('[data-testid="memory-row"] .memory-content')].some((r) => r.textContent === c), content);
  }

  // Paste and Read.
  await page.click('[data-testid="assistant-import-open"]');
  await until(page, 'the import dialog', () => document.querySelector('[role="dialog"] [data-testid="assistant-import-text"]'));
  if (!(await page.isDisabled('[data-testid="assistant-import-read"]'))) fail('Read is enabled before anything is pasted');
  await page.fill('[data-testid="assistant-import-text"]', IMPORT_TEXT);
  await shot(page, 'assistant-import-paste');
  await page.click('[data-testid="assistant-import-read"]');
  await until(page, 'the four cards, the clash and what was left out', (unfounded) => {
    const cards = [...document.querySelectorAll('[data-testid="import-card"]')];
    return cards.length === 4
      && cards[0].querySelector('[data-testid="import-clash"][data-kind="replaces"]')?.textContent.includes('Replaces: Lives in Lyon.')
      && cards[0].textContent.includes('One home city at a time.')
      && cards[3].querySelector('[data-testid="import-clash"][data-kind="duplicate"]')?.textContent.includes('Already known: Plays the cello on Sundays.')
      && document.querySelector('[data-testid="assistant-import-dropped"]')?.textContent.includes(unfounded);
  }, IMPORT_UNFOUNDED);
  const defaults = await page.$$eval('[data-testid="import-card"]', (cs) => cs.map((c) => c.dataset.decision));
  if (JSON.stringify(defaults) !== JSON.stringify(['drop', 'keep', 'keep', 'keep'])) fail(`the cards' default decisions are ${JSON.stringify(defaults)}`);
  const written = await page.evaluate(async (t) => {
    const r = await fetch('/api/memory', { headers: { Authorization: `Bearer ${t}` } });
    return (await r.json()).total;
  }, token);
  if (written !== 2) fail(`reading the text changed the memories: ${written} there`);
  await shot(page, 'assistant-import-review');

  // Keep the new home city, edit the answers card (with the keyboard), drop the dog.
  const card = (i) => `[data-testid="import-card"]:nth-child(${i + 1})`;
  await page.click(`${card(0)} [data-testid="import-card-keep"]`);
  await page.click(`${card(1)} [data-testid="import-card-edit"]`);
  await page.fill('[data-testid="import-card-edit-input"]', 'Prefers short, direct answers.');
  await page.press('[data-testid="import-card-edit-input"]', 'Enter');
  await page.click(`${card(2)} [data-testid="import-card-drop"]`);
  await until(page, 'the edited card and "Import 3 memories"', () =>
    document.querySelector('[data-testid="import-card"]:nth-child(2) [data-testid="import-card-content"]')?.textContent === 'Prefers short, direct answers.'
    && document.querySelector('[data-testid="assistant-import-submit"]')?.textContent === 'Import 3 memories');
  await shot(page, 'assistant-import-decided');
  await page.click('[data-testid="assistant-import-submit"]');
  await until(page, 'the summary, the dialog closed', () =>
    !document.querySelector('[data-testid="assistant-import"]')
    && document.querySelector('[data-testid="assistant-import-summary"]')?.textContent.includes(
      'Imported 3 memories from another assistant: 1 new, 1 already known, 1 replaced an older memory.'));

  // The list, read again: the kept cards marked as imported, Lyon replaced, no dog.
  await until(page, 'the imported memories in the list, marked', () => {
    const rows = [...document.querySelectorAll('[data-testid="memory-row"]')];
    const row = (c) => rows.find((r) => r.querySelector('.memory-content')?.textContent === c);
    const marked = (c) => row(c)?.querySelector('[data-testid="memory-source-imported"]')?.textContent === 'imported from another assistant';
    return marked('Lives in Lisbon.') && marked('Prefers short, direct answers.')
      && row('Plays the cello on Sundays.') && !marked('Plays the cello on Sundays.')
      && row('Lives in Lyon.')?.classList.contains('status-superseded')
      && !rows.some((r) => r.textContent.includes('Biscuit'));
  });
  await shot(page, 'assistant-import-done');
  const stored = await page.evaluate(async (t) => {
    const r = await fetch('/api/memory', { headers: { Authorization: `Bearer ${t}` } });
    return (await r.json()).items.map((m) => ({ content: m.content, source: m.source, status: m.status }));
  }, token);
  const lisbon = stored.find((m) => m.content === 'Lives in Lisbon.');
  const edited = stored.find((m) => m.content === 'Prefers short, direct answers.');
  if (lisbon?.source !== 'imported' || lisbon.status !== 'active' || edited?.source !== 'imported'
    || stored.some((m) => m.content.includes('Biscuit') || m.content === 'Prefers short answers.')
    || stored.find((m) => m.content === 'Lives in Lyon.')?.status !== 'superseded') {
    fail(`after the import the engine has ${JSON.stringify(stored)}`);
  }
  if (pageErrors.length) fail(`errors in the import page: ${pageErrors.join('; ')}`);
  offPage(away, 'the import page');
  await page.close();
  console.log(`e2e: imported 3 of 4 cards read from another assistant's list; ${stored.length} memories there now`);
}

/** The models of the sixth server: its main model, and its memory model (`[memory]
 * extraction_model`), which only the turn's memory extraction (and a judge, if any) asks. */
const ASK_MAIN = 'ask-main';
const ASK_MODEL = 'ask-extractor';
/** What is said; the extraction quotes its words as each fact's evidence. */
const ASK_SAID = 'I am vegetarian and my cat is called Quokka.';
const ASK_KEPT = 'The user is vegetarian.';
const ASK_DROPPED = "The user's cat is called Quokka.";
const ASK_STEPS = [
  { model: ASK_MAIN, text: 'Noted: vegetarian, and a cat called Quokka.' },
  {
    model: ASK_MODEL,
    when_tool: 'extract_memories',
    tool_calls: [{
      id: 'ax1',
      name: 'extract_memories',
      arguments: JSON.stringify({
        memories: [
          { evidence: 'I am vegetarian', content: ASK_KEPT, subject: 'user', kind: 'preference', slot: 'diet', value: 'vegetarian', source: 'user_stated', confidence: 0.9, valid_until: null },
          { evidence: 'my cat is called Quokka', content: ASK_DROPPED, subject: 'user', kind: 'fact', slot: 'cat_name', value: 'Quokka', source: 'user_stated', confidence: 0.9, valid_until: null },
        ],
      }),
    }],
  },
  // Should keeping a fact ask the judge about a neighbour: they are unrelated.
  { model: ASK_MODEL, when_tool: 'judge_memory_conflict', times: 5, tool_calls: [{ id: 'aj1', name: 'judge_memory_conflict', arguments: '{"verdict": "unrelated", "explanation": "Different things."}' }] },
];

// 21. Ask before remembering: on a fresh store, the switch is turned on in the Memory page
// (the engine has it on); a statement's two facts then wait under the answer ("Remember
// these?") and in the Memory page's "Waiting for your yes (2)", while memory stays empty.
// Keep on one from the chat writes it (the line shows it learned, with Undo; the Memory list
// has it); Discard on the other drops it (in no line, list or waiting list, and not in the
// engine). The switch goes off again.
async function askBeforeRemembering({ tmp, mockUrl }) {
  console.log('e2e: ask before remembering (sixth server)');
  const { open, token, page, away, pageErrors } = await serveStep({
    tmp,
    mockUrl,
    name: 'ask',
    label: 'the sixth echod serve',
    config: `[memory]\nextraction = true\nextraction_model = "${ASK_MODEL}"\nembedder = "none"\n[llm.retry]\nmax_retries = 0\n`,
    model: ASK_MAIN,
  });
  const api = (path) => page.evaluate(async ([t, p]) => {
    const r = await fetch(p, { headers: { Authorization: `Bearer ${t}` } });
    return r.json();
  }, [token, path]);
  const memoryPage = async (what, fn, arg) => {
    await page.click('.topbar button.nav-memory');
    await until(page, what, fn, arg);
  };
  const chat = async () => {
    await page.click('.topbar button.nav-chat');
    await until(page, 'the chat again', () => document.querySelector('.composer textarea'));
  };
  await page.goto(open);
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));

  // The switch: off, then on, saved in the engine.
  await memoryPage('the switch, off, on an empty memory page', () => {
    const toggle = document.querySelector('[data-testid="ask-first-toggle"]');
    return toggle && !toggle.disabled && !toggle.checked && document.querySelector('[data-testid="memory-empty"]');
  });
  await page.click('[data-testid="ask-first-toggle"]');
  await until(page, 'the switch saved on', () =>
    document.querySelector('[data-testid="ask-first-toggle"]')?.checked
    && document.querySelector('[data-testid="ask-first-status"]')?.textContent === 'Saved: the assistant asks before remembering.');
  if ((await api('/api/settings/memory')).ask_before_remembering !== true) fail('the engine does not have "ask before remembering" on');
  await shot(page, 'ask-first-on');

  // A statement: its two facts wait under the answer, and nothing is in memory.
  await chat();
  await send(page, ASK_SAID);
  const line = '.message.assistant [data-testid="memory-updated"]';
  await until(page, 'the two facts waiting under the answer', ([sel, facts]) => {
    const items = [...document.querySelectorAll(`${sel} [data-testid="memory-proposal"] .learned-text`)].map((e) => e.textContent);
    return JSON.stringify(items.sort()) === JSON.stringify([...facts].sort())
      && document.querySelector(`${sel} [data-testid="memory-proposals"] .learned-title`)?.textContent === 'Remember these?'
      && !document.querySelector(`${sel} [data-testid="memory-learned"]`);
  }, [line, [ASK_KEPT, ASK_DROPPED]]);
  await shot(page, 'memory-proposals');
  const before = await api('/api/memory');
  if (before.total !== 0) fail(`a waiting fact is in memory already: ${JSON.stringify(before.items.map((m) => m.content))}`);
  await memoryPage('both facts waiting for a yes, none in the list', (facts) => {
    const waiting = [...document.querySelectorAll('[data-testid="memory-waiting-item"] .memory-waiting-content')].map((e) => e.textContent);
    return document.querySelector('[data-testid="memory-waiting"] h3')?.textContent === 'Waiting for your yes (2)'
      && facts.every((f) => waiting.includes(f))
      && document.querySelector('[data-testid="memory-empty"]') && !document.querySelector('[data-testid="memory-row"]');
  }, [ASK_KEPT, ASK_DROPPED]);
  await shot(page, 'memory-waiting');

  // Keep one from the chat: it is learned, with Undo; Discard the other: it is gone.
  await chat();
  await page.click(`${line} button[aria-label="Keep: ${ASK_KEPT}"]`);
  await until(page, 'the kept fact learned, with Undo, the other still asked about', ([sel, kept, dropped]) => {
    const learned = [...document.querySelectorAll(`${sel} [data-testid="memory-learned"]`)];
    const waiting = [...document.querySelectorAll(`${sel} [data-testid="memory-proposal"] .learned-text`)].map((e) => e.textContent);
    return learned.length === 1 && learned[0].querySelector('.learned-text')?.textContent === kept
      && learned[0].querySelector('[data-testid="memory-learned-undo"]')
      && JSON.stringify(waiting) === JSON.stringify([dropped])
      && document.querySelector(`${sel} [data-testid="memory-proposal-done"]`)?.textContent === 'Kept: it is in memory now.';
  }, [line, ASK_KEPT, ASK_DROPPED]);
  await page.click(`${line} button[aria-label="Discard: ${ASK_DROPPED}"]`);
  await until(page, 'the discarded fact gone from the line', ([sel, dropped]) =>
    !document.querySelector(`${sel} [data-testid="memory-proposal"]`)
    && document.querySelector(`${sel} [data-testid="memory-proposal-done"]`)?.textContent === 'Discarded: it will not be remembered.'
    && !document.querySelector('.message.assistant .learned-line')?.textContent.includes(dropped), [line, ASK_DROPPED]);
  if (await page.$('[data-testid="memory-proposal-error"]')) fail('keeping or discarding showed an error');
  await shot(page, 'memory-proposals-decided');
  const stored = await api('/api/memory');
  const contents = stored.items.map((m) => `${m.content} (${m.status})`);
  if (JSON.stringify(contents) !== JSON.stringify([`${ASK_KEPT} (active)`])) fail(`after Keep and Discard the engine has ${JSON.stringify(contents)}`);
  const left = await api('/api/memory/proposals');
  if (!Array.isArray(left) || left.length !== 0) fail(`proposals still wait: ${JSON.stringify(left)}`);

  // The Memory page: the kept fact in the list, the other nowhere; then the switch off again.
  await memoryPage('the kept fact in the list, nothing waiting', ([kept, dropped]) => {
    const rows = [...document.querySelectorAll('[data-testid="memory-row"] .memory-content')].map((e) => e.textContent);
    return JSON.stringify(rows) === JSON.stringify([kept]) && !document.querySelector('[data-testid="memory-waiting"]')
      && !document.querySelector('.memory').textContent.includes(dropped);
  }, [ASK_KEPT, ASK_DROPPED]);
  await page.click('[data-testid="ask-first-toggle"]');
  await until(page, 'the switch saved off', () =>
    document.querySelector('[data-testid="ask-first-toggle"]')?.checked === false
    && document.querySelector('[data-testid="ask-first-status"]')?.textContent === 'Saved: what the assistant learns is remembered at once.');
  if ((await api('/api/settings/memory')).ask_before_remembering !== false) fail('the engine still has "ask before remembering" on');
  if (pageErrors.length) fail(`errors in the ask-first page: ${pageErrors.join('; ')}`);
  offPage(away, 'the ask-first page');
  await page.close();
  console.log(`e2e: kept "${ASK_KEPT}" and discarded "${ASK_DROPPED}"; ${stored.total} memory there now`);
}


/** The model of the seventh server: the phone's chat and its approval. */
const PHONE_MODEL = 'phone-model';
const PHONE_STEPS = [
  {
    model: PHONE_MODEL,
    text: `${'A streamed answer on a small screen wraps its words. '.repeat(6)}\n\n\`\`\`sh\necho a-long-command-line-that-scrolls-inside-its-own-block --not-the-page --with-more-flags\n\`\`\`\n`,
    chunks: 8,
    chunk_delay_ms: 40,
  },
  { model: PHONE_MODEL, tool_calls: [{ id: 'p1', name: 'shell', arguments: '{"command": "touch phone-approved.txt"}' }] },
  { model: PHONE_MODEL, text: 'I made phone-approved.txt.' },
];

/**
 * What of the page lies past the screen's sides: the page's own width, and each visible
 * control, dialog or message reaching beyond it, unless a part that scrolls sideways of its
 * own (a code block, a wide table) holds it.
 */
async function pastTheSides(page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const inSidewaysScroller = (el) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const o = getComputedStyle(a).overflowX;
        if (o === 'auto' || o === 'scroll') return true;
      }
      return false;
    };
    const problems = [];
    if (document.documentElement.scrollWidth > width + 1) problems.push(`the page is ${document.documentElement.scrollWidth}px wide`);
    for (const el of document.querySelectorAll('button, input, textarea, select, a[href], [role="dialog"], .message')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || inSidewaysScroller(el)) continue;
      if (r.left < -1 || r.right > width + 1) {
        const name = (el.getAttribute('aria-label') || el.textContent || '').trim().slice(0, 30);
        problems.push(`${el.tagName.toLowerCase()}.${el.className} "${name}" spans ${Math.round(r.left)}–${Math.round(r.right)}px`);
      }
    }
    return problems;
  });
}

async function fitsTheScreen(page, what) {
  const problems = await pastTheSides(page);
  if (problems.length) fail(`on a 390px screen, ${what} reaches past the sides:\n  ${problems.join('\n  ')}`);
}

// 22. A phone-sized screen (390×844, a current phone's CSS pixels): the chat with its
// conversations list, a streamed answer and a wide code block, an approval answered in its
// dialog (whole within the screen), the memory page with a memory added (and no
// conversations list), then the traces, automations and settings pages, each with nothing
// past the sides.
async function phoneScreen({ tmp, mockUrl }) {
  console.log('e2e: a phone-sized screen (seventh server)');
  const { work, open, page, away, pageErrors } = await serveStep({
    tmp,
    mockUrl,
    name: 'phone',
    label: 'the seventh echod serve',
    config: '[memory]\nextraction = false\nembedder = "none"\n[side]\nmodel = "none"\n[tools]\nexplain_approvals = false\n[llm.retry]\nmax_retries = 0\n',
    model: PHONE_MODEL,
  });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(open);
  await until(page, 'the composer', () => document.querySelector('.composer textarea'));
  await fitsTheScreen(page, 'the empty chat');
  if (!(await page.isVisible('.sessions .new-session'))) fail('on a phone, the chat has no conversations list');

  await send(page, 'Hello from my phone');
  await until(page, 'the answer on the phone', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes('--with-more-flags');
  });
  await fitsTheScreen(page, 'an answer with a code block');
  const composer = await page.evaluate(() => {
    const r = document.querySelector('.composer button.send')?.getBoundingClientRect();
    return r ? { top: r.top, bottom: r.bottom } : null;
  });
  if (!composer || composer.top < 0 || composer.bottom > 844) fail(`the send button is off the screen: ${JSON.stringify(composer)}`);
  await shot(page, 'phone-chat');

  await send(page, 'Make a file from my phone');
  await until(page, 'the approval dialog on the phone', () =>
    document.querySelector('[role="dialog"] .approval-detail')?.textContent.includes('touch phone-approved.txt'));
  await fitsTheScreen(page, 'the approval dialog');
  const dialog = await page.evaluate(() => {
    const d = document.querySelector('[role="dialog"]').getBoundingClientRect();
    const buttons = [...document.querySelectorAll('[role="dialog"] .buttons button')].map((b) => b.getBoundingClientRect().bottom);
    return { top: d.top, bottom: d.bottom, buttons };
  });
  if (dialog.top < 0 || dialog.bottom > 844 || dialog.buttons.length !== 4 || dialog.buttons.some((b) => b > 844)) {
    fail(`the approval dialog or its buttons are off the screen: ${JSON.stringify(dialog)}`);
  }
  await shot(page, 'phone-approval');
  await page.click('[role="dialog"] button:has-text("Allow once")');
  await until(page, 'the dialog to close', () => !document.querySelector('[role="dialog"]'));
  await until(page, 'the answer after the approved call', () => {
    const m = document.querySelectorAll('.message.assistant');
    const last = m[m.length - 1];
    return last?.dataset.status === 'completed' && last.textContent.includes('I made phone-approved.txt');
  });
  if (!existsSync(join(work, 'phone-approved.txt'))) fail('the command approved on the phone did not run');

  await page.click('.topbar button.nav-memory');
  await until(page, 'the memory page on the phone', () => document.querySelector('[data-testid="memory-add-content"]'));
  await page.fill('[data-testid="memory-add-content"]', 'The user reads the news on the train');
  await page.click('[data-testid="memory-add"]');
  await until(page, 'the new memory on the phone', () =>
    [...document.querySelectorAll('[data-testid="memory-row"]')].some((r) => r.textContent.includes('news on the train')));
  await fitsTheScreen(page, 'the memory page');
  if (await page.isVisible('.sessions')) fail('on a phone, the conversations list takes room on the memory page');
  await shot(page, 'phone-memory');

  // The other pages fit the screen too.
  for (const [nav, ready, name] of [
    ['.topbar button.nav-traces', '.traces', 'the traces page'],
    ['.topbar button.nav-automations', '.automations', 'the automations page'],
    ['.topbar button.nav-settings', '.settings .panel', 'the settings page'],
  ]) {
    await page.click(nav);
    await until(page, `${name} on the phone`, (sel) => document.querySelector(sel), ready);
    await fitsTheScreen(page, name);
  }

  if (pageErrors.length) fail(`errors in the phone page: ${pageErrors.join('; ')}`);
  offPage(away, 'the phone page');
  await page.close();
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`e2e: ${signal}, stopping`);
    stopAll();
    process.exit(1);
  });
}

let code = 0;
try {
  await main();
} catch (e) {
  code = 1;
  console.error(`e2e FAILED: ${e instanceof Error ? e.message : e}`);
} finally {
  try {
    await browser?.close();
  } catch {
    // already gone
  }
  stopAll();
}
process.exit(code);
