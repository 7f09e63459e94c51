#!/usr/bin/env node
// Benchmark of the memory page's list with a large store (docs/benchmarks.md, "Memory page list
// at 100,000 memories"), in a real Chromium against the real engine (`echod serve --ui ui/dist`).
//
// For a store of N memories (default 100,000) and, in the same run, a small baseline store
// (default 1,000) it measures:
//   - time to first rows: from the click on the Memory nav button (the app freshly reloaded on
//     the chat page) to the first animation frame in which list rows are in the viewport, with
//     their text; p50 over several reloads. Also the total the page shows ("100 of N shown").
//   - load-through to a far row: the list pages in 100 rows at a time and only knows the rows
//     it has loaded (its scroll height is the loaded rows'), so reaching row 50,000 means
//     scrolling to the end of what is loaded, frame after frame, until 500 pages have come in.
//     Time until row 50,000 (the last row for a smaller store) is on screen and filled, the
//     pages fetched and their fetch times, the animation-frame times meanwhile, JS heap after.
//   - scroll frame time over loaded rows: 800 frames, each moving 25 rows (1,450 px, so most
//     rows are new every frame), across the 20,000 rows before the far row (a small store:
//     back and forth over all of it); requestAnimationFrame deltas: p50 / p95 / max and the
//     share over 16.7 ms and 33.4 ms.
//   - jump fill: from the top of the loaded rows straight to the far row; time until the rows
//     there are on screen (p50 of 5).
//   - the HTTP page itself, outside the browser: GET /api/memory at offset 0 and at the far
//     offset (p50 of 10), to tell the server's share from the page's.
// It prints a table (both stores and their ratio) and one JSON line, and exits non-zero on any
// failure. It always stops what it started.
//
// The stores are made through `echod memory import` (the write path, no embedder configured)
// from generated, varied memories, and kept under ~/.cache/echo-desk-bench/ keyed by size and
// generator version, so reruns skip that step (--fresh makes them again). Each run copies the
// kept data directory, so the measured server never changes it.
//
//   node scripts/bench-memory-list.mjs [--count 100000] [--baseline 1000] [--reps 5]
//        [--far 50000] [--profile debug|release] [--echod PATH] [--fresh] [--verbose]
//
// echod: --echod PATH, else $CARGO_TARGET_DIR/<profile>/echod, else ~/.cache/echo-desk-target/
// <profile>/echod, else ./target/<profile>/echod. (--echod pins one binary, e.g. a hard link
// made before the runs, when builds may replace the one in the target directory meanwhile.)
// Frame thresholds: headless Chromium runs requestAnimationFrame at 60 Hz, so deltas are
// multiples of 16.7 ms plus jitter; "over 16.7 ms" counts deltas over 25 ms (at least one
// frame missed), "over 33.4 ms" deltas over 41.7 ms (at least two missed).
// Chromium: $CHROMIUM_BIN or /usr/bin/chromium (headless). No model server is needed: the
// memory page makes no model calls and `echod serve` starts without one.

import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveAddress } from '../ui/e2e/serveAddress.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'ui/dist');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const CACHE = join(homedir(), '.cache/echo-desk-bench');
/** Bump when the generated memories change, so stale kept stores are not reused. */
const GENERATOR_VERSION = 1;
const IMPORT_CHUNK = 10_000;
/** Must match ROW_HEIGHT in ui/src/components/memory/MemoryList.tsx. */
const ROW_HEIGHT = 58;
const VIEWPORT = { width: 1280, height: 800 };
const SCROLL_FRAMES = 800;
const SCROLL_ROWS_PER_FRAME = 25;
const SCROLL_SPAN = 20_000;

// ---------------------------------------------------------------------------------------------
// Arguments and binaries

function parseArgs(argv) {
  const opts = { count: 100_000, baseline: 1_000, reps: 5, far: 50_000, profile: 'debug', echod: null, fresh: false, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) fail(`${a} needs a positive whole number, got ${argv[i]}`);
      return v;
    };
    if (a === '--count') opts.count = num();
    else if (a === '--baseline') opts.baseline = num();
    else if (a === '--reps') opts.reps = num();
    else if (a === '--far') opts.far = num();
    else if (a === '--profile') opts.profile = argv[++i];
    else if (a === '--echod') opts.echod = resolve(argv[++i]);
    else if (a === '--fresh') opts.fresh = true;
    else if (a === '--verbose') opts.verbose = true;
    else if (a === '--help' || a === '-h') {
      console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n\n')[0]);
      process.exit(0);
    } else fail(`unknown argument ${a} (see --help)`);
  }
  if (opts.profile !== 'debug' && opts.profile !== 'release' && opts.profile !== 'profiling') {
    fail(`--profile must be debug, release or profiling, got ${opts.profile}`);
  }
  return opts;
}

function echodBinary(profile, echod) {
  if (echod) {
    if (!existsSync(echod)) fail(`--echod ${echod} does not exist`);
    return echod;
  }
  const candidates = process.env.CARGO_TARGET_DIR
    ? [process.env.CARGO_TARGET_DIR]
    : [join(homedir(), '.cache/echo-desk-target'), join(ROOT, 'target')];
  for (const c of candidates) if (existsSync(join(c, profile, 'echod'))) return join(c, profile, 'echod');
  fail(`no ${profile} echod in ${candidates.join(' or ')}; build it with \`cargo build${profile === 'debug' ? '' : ` --profile ${profile}`} -p echod --bin echod\``);
}

// ---------------------------------------------------------------------------------------------
// Processes

const children = [];
const cleanups = [];
let verbose = false;

function fail(message) {
  throw new Error(message);
}

function log(message) {
  console.error(`bench: ${message}`);
}

function start(cmd, args, options) {
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  children.push(child);
  const stderr = [];
  child.stderr.on('data', (d) => {
    stderr.push(d.toString());
    if (verbose) process.stderr.write(`[${cmd.split('/').pop()}] ${d}`);
  });
  child.stderrText = () => stderr.join('').slice(-4000);
  return child;
}

function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done();
    }, 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.stdin?.end();
    child.kill('SIGTERM');
  });
}

function stopAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
  for (const c of cleanups.reverse()) {
    try {
      c();
    } catch {
      // best effort
    }
  }
}

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/** Waits until `pid` uses under 5% of a core for a second (e.g. echod's start-up index build). */
async function waitIdle(pid, what) {
  const started = Date.now();
  let last = cpuSeconds(pid);
  let quiet = 0;
  while (quiet < 4) {
    if (Date.now() - started > 300_000) fail(`${what} was still busy after 300 s`);
    await sleep(250);
    const now = cpuSeconds(pid);
    quiet = now - last < 0.0125 ? quiet + 1 : 0;
    last = now;
  }
  return (Date.now() - started) / 1000;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Synthetic memories

/** Small deterministic PRNG (mulberry32), so every machine gets the same stores. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const W = {
  names: ['Ana', 'Ben', 'Chen', 'Dara', 'Elif', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas', 'Kemal', 'Lena', 'Mateo', 'Nadia', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sven', 'Tomás', 'Uma', 'Viktor', 'Wen', 'Yara', 'Zoe', 'Marta', 'Paul', 'Sofia', 'Kai', 'Noor'],
  relations: ['sister', 'brother', 'manager', 'neighbour', 'dentist', 'landlord', 'colleague', 'cousin', 'old school friend', 'running partner', 'accountant', 'daughter\'s teacher'],
  cities: ['Lisbon', 'Berlin', 'Osaka', 'Montréal', 'Nairobi', 'Porto', 'Kraków', 'Valencia', 'Seoul', 'Oslo', 'Lyon', 'Cape Town', 'Hanoi', 'Edinburgh', 'Bologna', 'Tbilisi', 'Quito', 'Tallinn'],
  foods: ['green tea', 'espresso', 'oat milk', 'dark chocolate', 'sourdough', 'miso soup', 'spicy food', 'olives', 'mango', 'rye bread', 'kimchi', 'blue cheese', 'falafel', 'porridge'],
  meals: ['breakfast', 'lunch', 'late dinners', 'long train rides', 'work mornings', 'weekends'],
  projects: ['the billing migration', 'the garden shed', 'the photo archive', 'the quarterly report', 'the Spanish course', 'the kitchen renovation', 'the conference talk', 'the tax return', 'the half marathon', 'the family cookbook', 'the bike repair', 'the Rust rewrite'],
  topics: ['school choices', 'a job offer', 'the holiday budget', 'moving flats', 'a book club pick', 'the new lease', 'a broken laptop', 'weekend plans', 'the wedding list', 'a recipe swap', 'their parents\' visit', 'a podcast episode'],
  actions: ['meet again next week', 'split the cost', 'ask for a second opinion', 'wait until spring', 'write it down', 'call the bank', 'book the tickets', 'skip it this year'],
  things: ['laptop', 'bicycle', 'passport', 'car', 'phone plan', 'gym membership', 'library card', 'insurance', 'umbrella', 'headphones', 'running shoes', 'desk chair'],
  details: ['is due for renewal in March', 'is kept in the hall drawer', 'needs a new battery', 'was bought second-hand', 'is shared with the flatmate', 'has a cracked corner', 'was a birthday present', 'is under warranty until next year', 'is registered to the old address', 'still has the receipt in the email'],
  hobbies: ['bouldering', 'film photography', 'sourdough baking', 'chess', 'birdwatching', 'trail running', 'pottery', 'sea swimming', 'jazz piano', 'woodworking', 'salsa dancing', 'sketching'],
  months: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  slots: ['diet', 'home_city', 'employer', 'coffee_order', 'shoe_size', 'favourite_band', 'bedtime', 'commute', 'allergy', 'birthday', 'phone_model', 'gym_days'],
};

/** The n-th synthetic memory of a store (an export line without the fields import ignores). */
function memoryAt(n, now) {
  const r = rng(n * 2654435761 + 17);
  const pick = (list) => list[Math.floor(r() * list.length)];
  const day = 1 + Math.floor(r() * 28);
  const year = 2024 + Math.floor(r() * 4);
  const name = pick(W.names);
  let tier = 'semantic';
  let kind = 'fact';
  let subject = 'user';
  let slot = null;
  let value = null;
  let content;
  switch (n % 8) {
    case 0:
      kind = 'preference';
      content = `The user prefers ${pick(W.foods)} to ${pick(W.foods)} for ${pick(W.meals)}`;
      break;
    case 1:
      kind = 'relationship';
      subject = name.toLowerCase();
      content = `${name} is the user's ${pick(W.relations)} and lives in ${pick(W.cities)}`;
      break;
    case 2:
      kind = 'plan';
      content = `The user plans to visit ${pick(W.cities)} on ${day} ${pick(W.months)} ${year} for ${pick(W.topics).replace(/^(a|the) /, '')}`;
      break;
    case 3:
      content = `The user is working on ${pick(W.projects)} with ${name}; the next milestone is ${day} ${pick(W.months)}`;
      break;
    case 4:
      tier = 'episodic';
      kind = 'episode';
      content = `On ${day} ${pick(W.months)} ${year} the user and ${name} talked about ${pick(W.topics)} and agreed to ${pick(W.actions)}. `
        + `${name} mentioned ${pick(W.hobbies)} and a trip to ${pick(W.cities)}; the user wants to remember to ${pick(W.actions)} before ${pick(W.months)}.`;
      break;
    case 5:
      kind = 'note';
      content = `The user's ${pick(W.things)} ${pick(W.details)}`;
      break;
    case 6:
      kind = 'preference';
      content = `The user has taken up ${pick(W.hobbies)} on ${pick(['Mondays', 'Wednesday evenings', 'Saturday mornings', 'Sundays', 'lunch breaks'])} with ${name}`;
      break;
    default: {
      // A slotted fact: one subject per (slot, n) so no two memories compete for a slot.
      slot = pick(W.slots);
      subject = `${name.toLowerCase()}-${Math.floor(n / 8)}`;
      value = `${pick(W.cities)} ${day}`;
      content = `For ${name} (contact ${Math.floor(n / 8)}), ${slot.replace(/_/g, ' ')} is ${value}`;
    }
  }
  // Every text unique: a short reference like the ones people jot down.
  if (kind !== 'episode' && slot === null) content += ` (note ${n.toString(36)})`;
  const importance = Math.round((0.3 + r() * 0.7) * 100) / 100;
  const source = pick(['manual', 'user_stated', 'user_stated', 'inferred', 'consolidated']);
  return {
    id: `bench-${n}`,
    tier,
    kind,
    subject,
    slot,
    content,
    value,
    source,
    confidence: Math.round((0.5 + r() * 0.5) * 100) / 100,
    importance,
    effective_importance: importance,
    pinned: r() < 0.02,
    access_count: 0,
    last_accessed: null,
    stability: 120,
    created_at: now,
    updated_at: now,
    valid_from: now,
    valid_until: r() < 0.05 ? new Date(Date.parse(now) + (3 + Math.floor(r() * 700)) * 86_400_000).toISOString().slice(0, 10) : null,
    status: 'active',
    superseded_by: null,
    invalid_at: null,
    archived_from: null,
    version: 1,
    scope: 'global',
    source_session_id: null,
    source_turn_id: null,
    source_message_id: null,
    evidence: r() < 0.3 ? `"${content.slice(0, 40)}…"` : null,
  };
}

/** A data directory with `count` memories, made once and kept in the cache. */
function seededHome(echod, count, fresh, quiet = false) {
  const dir = join(CACHE, `memories-${count}-g${GENERATOR_VERSION}`);
  const marker = join(dir, 'seed.json');
  if (!fresh && existsSync(marker)) {
    const seed = JSON.parse(readFileSync(marker, 'utf8'));
    if (!quiet) log(`using the kept store of ${count} memories in ${dir} (made in ${seed.seconds} s; --fresh to remake)`);
    return { home: join(dir, 'home'), seed };
  }
  rmSync(dir, { recursive: true, force: true });
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  const home = join(partial, 'home');
  mkdirSync(home, { recursive: true });
  // No embedder (import would otherwise embed every memory) and no extraction.
  writeFileSync(join(home, 'config.toml'), '[memory]\nextraction = false\nembedder = "none"\n');
  const started = Date.now();
  const now = new Date().toISOString();
  let created = 0;
  log(`making a store of ${count} memories with \`echod memory import\` (${IMPORT_CHUNK} a file)`);
  for (let from = 0; from < count; from += IMPORT_CHUNK) {
    const to = Math.min(count, from + IMPORT_CHUNK);
    const header = { format: 'echo-desk-memory', version: 1, exported_at: now, count: to - from };
    const lines = [JSON.stringify(header)];
    for (let n = from; n < to; n++) lines.push(JSON.stringify(memoryAt(n, now)));
    const file = join(partial, 'chunk.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const t = Date.now();
    const r = spawnSync(echod, ['memory', 'import', file], {
      env: { ...process.env, ECHO_DESK_HOME: home },
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (r.status !== 0) fail(`echod memory import failed (exit ${r.status}):\n${r.stdout}\n${r.stderr.slice(-3000)}`);
    const m = /imported (\d+) new, (\d+) already known, (\d+) inactive skipped/.exec(r.stdout);
    if (!m) fail(`unexpected import output: ${r.stdout}`);
    if (Number(m[2]) !== 0) fail(`the generator made ${m[2]} duplicate memories in rows ${from}..${to}`);
    created += Number(m[1]);
    const rate = Math.round((to - from) / ((Date.now() - t) / 1000));
    log(`  ${to} / ${count} imported (${rate} memories/s for this file, ${Math.round((Date.now() - started) / 1000)} s so far)`);
  }
  rmSync(join(partial, 'chunk.jsonl'), { force: true });
  if (created !== count) fail(`imported ${created} memories, expected ${count}`);
  const seed = {
    count,
    generator: GENERATOR_VERSION,
    seconds: Math.round((Date.now() - started) / 1000),
    echod,
    echod_mtime: statSync(echod).mtime.toISOString(),
    made_at: new Date().toISOString(),
  };
  writeFileSync(join(partial, 'seed.json'), `${JSON.stringify(seed, null, 2)}\n`);
  renameSync(partial, dir);
  log(`store of ${count} memories made in ${seed.seconds} s (${Math.round(count / seed.seconds)} memories/s)`);
  return { home: join(dir, 'home'), seed };
}

// ---------------------------------------------------------------------------------------------
// Statistics

function quantile(values, q) {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

const round = (v, digits = 1) => (v === null || v === undefined ? null : Math.round(v * 10 ** digits) / 10 ** digits);

function frameStats(deltas) {
  const n = deltas.length;
  return {
    frames: n,
    p50_ms: round(quantile(deltas, 0.5)),
    p95_ms: round(quantile(deltas, 0.95)),
    max_ms: round(n ? Math.max(...deltas) : null),
    // 60 Hz vsync: a delta over 1.5 intervals missed a frame, over 2.5 intervals missed two.
    over_16_7: round(n ? deltas.filter((d) => d > 25).length / n : null, 3),
    over_33_4: round(n ? deltas.filter((d) => d > 41.7).length / n : null, 3),
  };
}

// ---------------------------------------------------------------------------------------------
// In the page (these functions are serialised into the browser)

/** Installs helpers on window: a frame recorder, a long-task observer and row checks. */
function installProbe(rowHeight) {
  if (window.__bench) return;
  performance.setResourceTimingBufferSize(100_000);
  const b = {
    rowHeight,
    recording: false,
    deltas: [],
    longTasks: [],
    nextFrame: () => new Promise((r) => requestAnimationFrame(r)),
    list: () => document.querySelector('[data-testid="memory-list"]'),
    /** Rows on screen with text, as indices (from their offset). */
    visibleRows() {
      const list = b.list();
      if (!list) return [];
      const box = list.getBoundingClientRect();
      const out = [];
      for (const row of list.querySelectorAll('[data-testid="memory-row"]')) {
        const r = row.getBoundingClientRect();
        if (r.bottom > box.top + 1 && r.top < box.bottom - 1 && row.querySelector('.memory-content')?.textContent) {
          out.push(Math.round((r.top - box.top + list.scrollTop) / rowHeight));
        }
      }
      return out.sort((x, y) => x - y);
    },
    startFrames() {
      b.deltas = [];
      b.longTasks = [];
      b.recording = true;
      let last = null;
      const tick = (t) => {
        if (!b.recording) return;
        if (last !== null) b.deltas.push(t - last);
        last = t;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    },
    stopFrames() {
      b.recording = false;
      return { deltas: b.deltas, longTasks: b.longTasks };
    },
  };
  try {
    new PerformanceObserver((l) => {
      if (b.recording) for (const e of l.getEntries()) b.longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
  } catch {
    // no long-task timing in this browser
  }
  window.__bench = b;
}

/** Clicks the Memory nav button; resolves at the first frame with rows on screen. */
function clickToFirstRows(timeoutMs) {
  const b = window.__bench;
  return new Promise((resolveRows, reject) => {
    const button = document.querySelector('.topbar button.nav-memory');
    if (!button) return reject(new Error('no .topbar button.nav-memory'));
    let inserted = null;
    const observer = new MutationObserver(() => {
      if (inserted === null && document.querySelector('[data-testid="memory-row"]')) inserted = performance.now();
    });
    observer.observe(document.body, { childList: true, subtree: true });
    const t0 = performance.now();
    button.click();
    const check = (frameTime) => {
      const rows = b.visibleRows();
      if (rows.length > 0) {
        observer.disconnect();
        resolveRows({ first_rows_ms: performance.now() - t0, frame_ms: frameTime - t0, inserted_ms: inserted === null ? null : inserted - t0, rows: rows.length });
        return;
      }
      if (performance.now() - t0 > timeoutMs) {
        observer.disconnect();
        reject(new Error(`no memory rows on screen ${timeoutMs} ms after the click`));
        return;
      }
      requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
}

/** Scrolls to the end of the loaded rows every frame until row `far` is on screen. */
async function loadThrough([far, timeoutMs]) {
  const b = window.__bench;
  const list = b.list();
  performance.clearResourceTimings();
  const heapBefore = performance.memory?.usedJSHeapSize ?? null;
  b.startFrames();
  const t0 = performance.now();
  let reachedAt = null;
  for (;;) {
    await b.nextFrame();
    list.scrollTop = Math.min(far * b.rowHeight, list.scrollHeight - list.clientHeight);
    const rows = b.visibleRows();
    if (rows.includes(far)) {
      reachedAt = performance.now();
      break;
    }
    if (performance.now() - t0 > timeoutMs) break;
  }
  await b.nextFrame();
  const { deltas, longTasks } = b.stopFrames();
  const pages = performance
    .getEntriesByType('resource')
    .filter((e) => /\/api\/memory\?/.test(e.name))
    .map((e) => ({ offset: Number(new URL(e.name).searchParams.get('offset')), ms: e.duration }));
  return {
    reached_ms: reachedAt === null ? null : reachedAt - t0,
    waited_ms: performance.now() - t0,
    rows_in_dom: list.querySelectorAll('[data-testid="memory-row"]').length,
    scroll_height: list.scrollHeight,
    count_text: document.querySelector('[data-testid="memory-count"]')?.textContent ?? '',
    heap_before: heapBefore,
    heap_after: performance.memory?.usedJSHeapSize ?? null,
    deltas,
    long_tasks: longTasks,
    pages,
  };
}

/** `frames` frames, each moving `step` rows, bouncing between rows `low` and `high`. */
async function scrollFrames([low, high, step, frames]) {
  const b = window.__bench;
  const list = b.list();
  let row = high;
  let dir = -1;
  list.scrollTop = row * b.rowHeight;
  await b.nextFrame();
  await b.nextFrame();
  b.startFrames();
  let blank = 0;
  for (let i = 0; i < frames; i++) {
    row += dir * step;
    if (row <= low) {
      row = low;
      dir = 1;
    } else if (row >= high) {
      row = high;
      dir = -1;
    }
    list.scrollTop = row * b.rowHeight;
    await b.nextFrame();
    if (b.visibleRows().length === 0) blank++;
  }
  await b.nextFrame();
  const { deltas, longTasks } = b.stopFrames();
  return { deltas, long_tasks: longTasks, blank_frames: blank };
}

/** From the top straight to row `far`: time until rows there are on screen. */
async function jumpFill([far, timeoutMs]) {
  const b = window.__bench;
  const list = b.list();
  list.scrollTop = 0;
  await b.nextFrame();
  await b.nextFrame();
  const t0 = performance.now();
  list.scrollTop = far * b.rowHeight;
  for (;;) {
    await b.nextFrame();
    const rows = b.visibleRows();
    if (rows.includes(far)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) return null;
  }
}

// ---------------------------------------------------------------------------------------------
// One store

async function measureStore(echodPath, label, count, opts) {
  const { home: kept, seed } = seededHome(echodPath, count, false, true);
  const tmp = mkdtempSync(join(tmpdir(), 'echo-desk-bench-list-'));
  cleanups.push(() => rmSync(tmp, { recursive: true, force: true }));
  const home = join(tmp, 'home');
  cpSync(kept, home, { recursive: true });
  rmSync(join(home, 'serve-token'), { force: true });
  const work = join(tmp, 'work');
  mkdirSync(work);

  const echod = start(echodPath, ['serve', '--ui', DIST], { cwd: work, env: { ...process.env, ECHO_DESK_HOME: home } });
  const { origin, open } = await serveAddress(echod, 'echod serve', 60_000);
  const token = readFileSync(join(home, 'serve-token'), 'utf8').trim();
  // `echod serve` builds the memory search index at start-up; measure after it is done.
  const settled = await waitIdle(echod.pid, 'echod serve');
  log(`${label}: echod serve on ${origin}, idle after ${settled.toFixed(1)} s`);

  // The HTTP page alone, from here (no browser): the server's share of a page load.
  const far = Math.min(opts.far, count);
  const api = async (offset) => {
    const times = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const r = await fetch(`${origin}/api/memory?offset=${offset}&limit=100`, { headers: { Authorization: `Bearer ${token}` } });
      const body = await r.json();
      times.push(performance.now() - t);
      if (!r.ok || body.total !== count) fail(`GET /api/memory?offset=${offset} answered ${r.status} total ${body.total}, expected ${count}`);
    }
    return round(quantile(times, 0.5));
  };
  const farOffset = Math.max(0, Math.floor((far - 1) / 100) * 100);
  const apiFirst = await api(0);
  const apiFar = await api(farOffset);

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--enable-precise-memory-info'],
  });
  cleanups.push(() => browser.close().catch(() => {}));
  try {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const until = async (what, fn, arg, timeout = 30_000) => {
      try {
        await page.waitForFunction(fn, arg, { timeout, polling: 50 });
      } catch {
        fail(`${label}: timed out waiting for ${what}${pageErrors.length ? `; page errors: ${pageErrors.join('; ')}` : ''}`);
      }
    };

    // 1. Click to first rows, on a freshly loaded app each time.
    const reps = [];
    let countText = '';
    for (let i = 0; i < opts.reps; i++) {
      if (i === 0) await page.goto(open);
      else await page.reload();
      await until('the app with its Memory button', () => !location.hash.includes('pair=') && document.querySelector('.topbar button.nav-memory'));
      await page.waitForTimeout(1_000); // let the chat page's own start-up requests finish
      await page.evaluate(installProbe, ROW_HEIGHT);
      reps.push(await page.evaluate(clickToFirstRows, 30_000));
      await until('the total under the list', () => /\d/.test(document.querySelector('[data-testid="memory-count"]')?.textContent ?? ''));
      countText = await page.textContent('[data-testid="memory-count"]');
    }
    const shownTotal = Number((/of\s+([\d,.\s]+)\s+shown/.exec(countText)?.[1] ?? '').replace(/[^\d]/g, ''));
    if (shownTotal !== count) fail(`${label}: the page shows ${JSON.stringify(countText)}, expected a total of ${count}`);

    // 2. Load through to the far row (the last row for a small store).
    const farIndex = far - 1;
    log(`${label}: scrolling through the loaded rows until row ${far} is on screen`);
    const progress = setInterval(() => {
      page.textContent('[data-testid="memory-count"]').then((t) => log(`${label}:   ${t}`), () => {});
    }, 60_000);
    const through = await page.evaluate(loadThrough, [farIndex, 1_200_000]).finally(() => clearInterval(progress));
    if (through.reached_ms === null) fail(`${label}: row ${far} was not on screen after ${Math.round(through.waited_ms / 1000)} s (${through.count_text})`);
    const fetches = through.pages.map((p) => p.ms);

    // 3. Steady scrolling over loaded rows.
    const low = Math.max(0, farIndex - SCROLL_SPAN);
    const high = Math.max(low, farIndex - Math.ceil(VIEWPORT.height / ROW_HEIGHT));
    const scrolled = await page.evaluate(scrollFrames, [low, high, SCROLL_ROWS_PER_FRAME, SCROLL_FRAMES]);

    // 4. Jump from the top to the far row, rows already loaded.
    const jumps = [];
    for (let i = 0; i < 5; i++) {
      const ms = await page.evaluate(jumpFill, [high, 10_000]);
      if (ms === null) fail(`${label}: rows at row ${high} not on screen 10 s after the jump`);
      jumps.push(ms);
    }
    if (pageErrors.length) fail(`${label}: page errors: ${pageErrors.join('; ')}`);

    return {
      label,
      memories: count,
      store_made_s: seed.seconds,
      total_shown: countText.trim(),
      first_rows_ms: { p50: round(quantile(reps.map((r) => r.first_rows_ms), 0.5)), all: reps.map((r) => round(r.first_rows_ms)) },
      first_rows_in_dom_ms_p50: round(quantile(reps.map((r) => r.inserted_ms ?? NaN), 0.5)),
      api_page_ms_p50: { offset_0: apiFirst, [`offset_${farOffset}`]: apiFar },
      load_through: {
        far_row: far,
        reached_ms: Math.round(through.reached_ms),
        pages: fetches.length,
        fetch_ms_p50: round(quantile(fetches, 0.5)),
        fetch_ms_first10_p50: round(quantile(fetches.slice(0, 10), 0.5)),
        fetch_ms_last10_p50: round(quantile(fetches.slice(-10), 0.5)),
        frames: frameStats(through.deltas),
        long_tasks: through.long_tasks.length,
        long_task_ms_max: round(through.long_tasks.length ? Math.max(...through.long_tasks) : 0),
        rows_in_dom: through.rows_in_dom,
        js_heap_mb: through.heap_after === null ? null : round(through.heap_after / 2 ** 20),
        count_text: through.count_text.trim(),
      },
      scroll: {
        rows: [low + 1, high + 1],
        rows_per_frame: SCROLL_ROWS_PER_FRAME,
        ...frameStats(scrolled.deltas),
        long_tasks: scrolled.long_tasks.length,
        blank_frames: scrolled.blank_frames,
      },
      jump_fill_ms: { p50: round(quantile(jumps, 0.5)), max: round(Math.max(...jumps)) },
    };
  } finally {
    await browser.close().catch(() => {});
    await stop(echod);
  }
}

// ---------------------------------------------------------------------------------------------
// Output

function printTable(big, small) {
  const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : '–');
  const rows = [
    ['time to first rows p50 (ms)', big.first_rows_ms.p50, small.first_rows_ms.p50],
    ['GET /api/memory offset 0 p50 (ms)', big.api_page_ms_p50.offset_0, small.api_page_ms_p50.offset_0],
    [`GET /api/memory far offset p50 (ms)`, Object.values(big.api_page_ms_p50)[1], Object.values(small.api_page_ms_p50)[1]],
    [`load through to far row (ms)`, big.load_through.reached_ms, small.load_through.reached_ms],
    ['  far row', big.load_through.far_row, small.load_through.far_row],
    ['  pages fetched', big.load_through.pages, small.load_through.pages],
    ['  page fetch p50 first 10 / last 10 (ms)', `${big.load_through.fetch_ms_first10_p50} / ${big.load_through.fetch_ms_last10_p50}`, `${small.load_through.fetch_ms_first10_p50} / ${small.load_through.fetch_ms_last10_p50}`],
    ['  frame p50 / p95 / max (ms)', `${big.load_through.frames.p50_ms} / ${big.load_through.frames.p95_ms} / ${big.load_through.frames.max_ms}`, `${small.load_through.frames.p50_ms} / ${small.load_through.frames.p95_ms} / ${small.load_through.frames.max_ms}`],
    ['  frames > 16.7 / > 33.4 ms', `${pct(big.load_through.frames.over_16_7)} / ${pct(big.load_through.frames.over_33_4)}`, `${pct(small.load_through.frames.over_16_7)} / ${pct(small.load_through.frames.over_33_4)}`],
    ['  JS heap after (MiB)', big.load_through.js_heap_mb, small.load_through.js_heap_mb],
    ['scroll frame p50 (ms)', big.scroll.p50_ms, small.scroll.p50_ms],
    ['scroll frame p95 (ms)', big.scroll.p95_ms, small.scroll.p95_ms],
    ['scroll frame max (ms)', big.scroll.max_ms, small.scroll.max_ms],
    ['scroll frames > 16.7 / > 33.4 ms', `${pct(big.scroll.over_16_7)} / ${pct(big.scroll.over_33_4)}`, `${pct(small.scroll.over_16_7)} / ${pct(small.scroll.over_33_4)}`],
    ['scroll frames with no row on screen', big.scroll.blank_frames, small.scroll.blank_frames],
    ['jump top → far row, rows on screen p50 (ms)', big.jump_fill_ms.p50, small.jump_fill_ms.p50],
  ];
  const head = ['measure', `${big.memories} memories`, `${small.memories} memories`, 'ratio'];
  const body = rows.map(([name, a, b]) => [name, String(a), String(b), typeof a === 'number' && typeof b === 'number' ? ratio(a, b) : '']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of body) console.log(line(r));
}

const pct = (v) => (v === null ? '–' : `${(v * 100).toFixed(1)}%`);

// ---------------------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  verbose = opts.verbose;
  const echod = echodBinary(opts.profile, opts.echod);
  if (!existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing; install it with \`apt-get install -y chromium\` or set CHROMIUM_BIN`);
  if (!existsSync(join(DIST, 'index.html'))) {
    log('ui/dist is missing, building it');
    const built = spawnSync('npx', ['vite', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (built.status !== 0) fail('npx vite build failed');
  }
  if (opts.baseline >= opts.count) fail(`--baseline (${opts.baseline}) must be smaller than --count (${opts.count})`);
  const started = Date.now();
  const loadBefore = loadavg();
  // Both stores first, so a long import does not sit between the two measurements.
  seededHome(echod, opts.baseline, opts.fresh);
  seededHome(echod, opts.count, opts.fresh);
  const small = await measureStore(echod, 'baseline', opts.baseline, opts);
  const big = await measureStore(echod, 'store', opts.count, opts);
  console.log('');
  printTable(big, small);
  console.log('');
  console.log(JSON.stringify({
    bench: 'memory-list',
    date: new Date().toISOString(),
    echod,
    echod_mtime: statSync(echod).mtime.toISOString(),
    echod_bytes: statSync(echod).size,
    load_average: loadBefore.map((l) => round(l, 2)),
    profile: opts.profile,
    chromium: spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).stdout.trim(),
    headless: true,
    viewport: VIEWPORT,
    cores: cpus().length,
    seconds: Math.round((Date.now() - started) / 1000),
    store: big,
    baseline: small,
  }));
}

main()
  .catch((e) => {
    console.error(`bench-memory-list: FAILED: ${e.message}`);
    process.exitCode = 1;
  })
  .finally(stopAll);
