// The built-in model's store without a page: it lists the catalog, starts a download and
// reads the list every half second until the download ends (and not after, nor after
// `dispose`), shows a failed download and resumes it on retry, and makes a catalog model
// or a GGUF file the provider, answering the engine's provider view.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../transport';
import {
  LOCAL_POLL_FAILURES,
  LOCAL_POLL_MS,
  LocalModelsStore,
  USING_FILE,
  customFileInUse,
  downloading,
  formatSize,
  modelStatus,
  percent,
} from './localModelsStore';
import { MODELS_DIR, catalogModels, localModelsTransport } from './testFakes';

const QWEN = 'qwen2.5-0.5b';

async function loaded(options: Parameters<typeof localModelsTransport>[0] = {}) {
  const transport = localModelsTransport({ step: 100_000_000, ...options });
  const store = new LocalModelsStore(transport);
  await store.load();
  return { transport, store };
}

const entry = (store: LocalModelsStore, id: string) => store.getState().catalog?.models.find((m) => m.id === id);
const status = (store: LocalModelsStore, id: string) => {
  const m = entry(store, id);
  return m && modelStatus(m);
};

afterEach(() => {
  vi.useRealTimers();
});

describe('LocalModelsStore', () => {
  it('lists the recommended models with where downloads go, none installed or in use', async () => {
    const { store, transport } = await loaded();
    const { catalog, loadError } = store.getState();
    expect(loadError).toBeNull();
    expect(catalog?.dir).toBe(MODELS_DIR);
    expect(catalog?.in_use).toBeNull();
    expect(catalog?.models.map((m) => m.id)).toEqual(catalogModels.map((m) => m.id));
    expect(catalog?.models.map((m) => modelStatus(m).state)).toEqual(['available', 'available', 'available']);
    expect(downloading(catalog)).toBe(false);
    expect(transport.requests.map((r) => r.op)).toEqual(['local_models']);
  });

  it('shows a failure to list', async () => {
    const transport = localModelsTransport();
    transport.handlers.local_models = () => Promise.reject(new TransportError('network', 'cannot reach the engine: offline'));
    const store = new LocalModelsStore(transport);
    await store.load();
    expect(store.getState().catalog).toBeUndefined();
    expect(store.getState().loadError).toBe('cannot reach the engine: offline');
  });

  it('starts a download and reads its progress every half second until it is installed', async () => {
    const { store, transport } = await loaded();
    vi.useFakeTimers();
    await store.fetch(QWEN);
    expect(transport.fetched).toEqual([QWEN]);
    expect(transport.requests.find((r) => r.op === 'fetch_local_model')?.request).toEqual({ id: QWEN });
    expect(store.getState().busy).toBeNull();
    expect(status(store, QWEN)).toEqual({ state: 'downloading', done: 100_000_000, total: 398_000_000, percent: 25 });
    expect(downloading(store.getState().catalog)).toBe(true);
    const reads = transport.reads;

    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS - 1);
    expect(transport.reads).toBe(reads);
    await vi.advanceTimersByTimeAsync(1);
    expect(transport.reads).toBe(reads + 1);
    expect(status(store, QWEN)).toMatchObject({ state: 'downloading', percent: 50 });
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS);
    expect(status(store, QWEN)).toMatchObject({ state: 'downloading', percent: 75 });
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS);
    expect(status(store, QWEN)).toEqual({ state: 'installed' });
    expect(entry(store, QWEN)?.path).toBe(`${MODELS_DIR}/${QWEN}.gguf`);
    expect(downloading(store.getState().catalog)).toBe(false);

    // Nothing runs any more: no more reads.
    const done = transport.reads;
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 20);
    expect(transport.reads).toBe(done);
  });

  it('stops polling on dispose, and follows a running download again on the next load', async () => {
    const { store, transport } = await loaded({ step: 10_000_000 });
    vi.useFakeTimers();
    await store.fetch(QWEN);
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 2);
    const reads = transport.reads;
    store.dispose();
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 10);
    expect(transport.reads).toBe(reads);

    // A page opened while the engine downloads follows it.
    const again = new LocalModelsStore(transport);
    await again.load();
    expect(status(again, QWEN)).toMatchObject({ state: 'downloading' });
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 3);
    expect(transport.reads).toBe(reads + 4);
    again.dispose();
  });

  it('shows a failed download with its error and resumes it on retry', async () => {
    const { store, transport } = await loaded({ failAfter: { [QWEN]: 3 } });
    vi.useFakeTimers();
    await store.fetch(QWEN);
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 2);
    expect(status(store, QWEN)).toEqual({ state: 'failed', error: 'connection reset by peer' });
    expect(entry(store, QWEN)?.download).toMatchObject({ finished: true, done: 200_000_000 });
    // A failed download is not followed.
    const reads = transport.reads;
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 10);
    expect(transport.reads).toBe(reads);

    await store.retry(QWEN);
    expect(transport.fetched).toEqual([QWEN, QWEN]);
    // It resumes where it stopped rather than starting over.
    expect(status(store, QWEN)).toMatchObject({ state: 'downloading', done: 300_000_000, percent: 75 });
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS);
    expect(status(store, QWEN)).toEqual({ state: 'installed' });
  });

  it('shows a refused download start', async () => {
    const { store } = await loaded();
    await store.fetch('no-such-model');
    expect(store.getState()).toMatchObject({ failure: 'no model no-such-model', busy: null });
    expect(downloading(store.getState().catalog)).toBe(false);
  });

  it('gives up polling after repeated failed reads and says why', async () => {
    const { store, transport } = await loaded();
    vi.useFakeTimers();
    await store.fetch(QWEN);
    transport.handlers.local_models = () => Promise.reject(new TransportError('network', 'engine gone'));
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * (LOCAL_POLL_FAILURES - 1));
    expect(store.getState().loadError).toBeNull();
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS);
    expect(store.getState().loadError).toBe('engine gone');
    const asked = transport.requests.length;
    await vi.advanceTimersByTimeAsync(LOCAL_POLL_MS * 10);
    expect(transport.requests.length).toBe(asked);
  });

  it('makes an installed model the provider and answers the new provider view', async () => {
    const installed = catalogModels.map((m) => (m.id === QWEN ? { ...m, path: `${MODELS_DIR}/${QWEN}.gguf` } : m));
    const { store, transport } = await loaded({ models: installed });
    expect(status(store, QWEN)).toEqual({ state: 'installed' });

    const view = await store.use(QWEN);
    expect(transport.used).toEqual([QWEN]);
    expect(view?.settings).toEqual({ kind: 'local', base_url: '', model: `${MODELS_DIR}/${QWEN}.gguf`, fallback_models: [] });
    expect(store.getState()).toMatchObject({ used: 'Qwen2.5 0.5B Instruct (Q4_K_M)', failure: null, busy: null });
    // The list is read again: that model is now the one in use.
    expect(status(store, QWEN)).toEqual({ state: 'inUse' });
    expect(store.getState().catalog?.in_use).toBe(`${MODELS_DIR}/${QWEN}.gguf`);
    expect(customFileInUse(store.getState().catalog)).toBeNull();
  });

  it('refuses a model that is not downloaded with the engine’s message', async () => {
    const { store } = await loaded();
    const view = await store.use('smollm2-135m');
    expect(view).toBeNull();
    expect(store.getState().failure).toBe('model: SmolLM2 135M Instruct (Q4_1) is not downloaded yet: run `echod model fetch smollm2-135m`');
    expect(store.getState().used).toBeNull();
  });

  it('uses a typed GGUF file, empties the field, and keeps it on a refusal', async () => {
    const { store, transport } = await loaded();
    // Nothing typed: nothing sent.
    expect(await store.useFile()).toBeNull();
    expect(transport.used).toEqual([]);

    store.editFile('  /data/models/mistral-7b.Q4_K_M.gguf ');
    const pending = store.useFile();
    expect(store.getState().busy).toBe(USING_FILE);
    const view = await pending;
    expect(transport.used).toEqual(['/data/models/mistral-7b.Q4_K_M.gguf']);
    expect(view?.settings.model).toBe('/data/models/mistral-7b.Q4_K_M.gguf');
    expect(store.getState()).toMatchObject({ file: '', used: '/data/models/mistral-7b.Q4_K_M.gguf', busy: null });
    expect(customFileInUse(store.getState().catalog)).toBe('/data/models/mistral-7b.Q4_K_M.gguf');

    store.editFile('notes.txt');
    expect(store.getState().used).toBeNull();
    expect(await store.useFile()).toBeNull();
    expect(store.getState().file).toBe('notes.txt');
    expect(store.getState().failure).toBe('model: "notes.txt" is neither a GGUF file nor a catalog model');
  });

  it('gives sizes and percentages for people', () => {
    expect(formatSize(98_362_432)).toBe('98 MB');
    expect(formatSize(398_000_000)).toBe('398 MB');
    expect(formatSize(1_060_000_000)).toBe('1.1 GB');
    expect(formatSize(2_500)).toBe('3 kB');
    expect(percent({ done: 50, total: 200 })).toBe(25);
    expect(percent({ done: 199, total: 200 })).toBe(99);
    expect(percent({ done: 10, total: null })).toBeNull();
  });
});
