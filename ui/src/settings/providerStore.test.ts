// The provider store without a page: it loads the settings in force and then looks for
// Ollama, switches kinds by the engine's usual addresses, adopts a detected Ollama, and
// saves, tests and removes the key through the transport; the built-in model has no
// address, key or fallbacks, takes the view a use of it answers, and the engine's line about
// the provider it chose at start is shown until put away or stale.

import { describe, expect, it } from 'vitest';
import type { ProviderKindInfo, ProviderUpdate } from '../generated/engine';
import { TransportError } from '../transport';
import {
  ProviderStore,
  isLocal,
  modelChoices,
  offersDefaultUrl,
  providerKinds,
  providerUpdate,
  settingsFrom,
  startNotice,
  usingOllama,
  usualBaseUrl,
} from './providerStore';
import { keychainView, providerTransport } from './testFakes';

const ollama = { base_url: 'http://127.0.0.1:11434/v1', models: ['llama3.2', 'qwen2.5'] };

async function loaded(options: Parameters<typeof providerTransport>[0] = {}) {
  const transport = providerTransport(options);
  const store = new ProviderStore(transport);
  await store.load();
  return { transport, store };
}

describe('ProviderStore', () => {
  it('starts the form from the settings in force, key empty, and then looks for Ollama', async () => {
    const { store } = await loaded({ ollama });
    const s = store.getState();
    expect(s.view).toEqual(keychainView);
    expect(s.form).toEqual({ kind: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o', fallbacks: 'gpt-4o-mini', apiKey: '' });
    expect(s.ollama).toEqual(ollama);
    expect(usingOllama(s)).toBe(false);
  });

  it('shows a load failure and does not look for Ollama then', async () => {
    let asked = false;
    const transport = providerTransport();
    transport.handlers.provider = () => Promise.reject(new TransportError('unauthorized', 'missing or wrong bearer token', 401));
    transport.handlers.detect_ollama = () => {
      asked = true;
      return ollama;
    };
    const store = new ProviderStore(transport);
    await store.load();
    expect(store.getState().loadError).toBe('missing or wrong bearer token');
    expect(store.getState().form).toBeNull();
    expect(asked).toBe(false);
  });

  it('replaces a usual address on a kind change, keeps a custom one and offers the usual', async () => {
    const { store } = await loaded();
    store.changeKind('anthropic');
    expect(store.getState().form?.baseUrl).toBe('https://api.anthropic.com');
    expect(offersDefaultUrl(store.getState())).toBe(false);
    store.edit({ baseUrl: 'https://proxy.example.com' });
    store.changeKind('ollama');
    expect(store.getState().form?.baseUrl).toBe('https://proxy.example.com');
    expect(offersDefaultUrl(store.getState())).toBe(true);
    store.useDefaultUrl();
    expect(store.getState().form?.baseUrl).toBe('http://127.0.0.1:11434/v1');
    expect(offersDefaultUrl(store.getState())).toBe(false);
  });

  it('takes the kinds and their usual addresses from the engine, and offers none before it answered', async () => {
    const kinds: ProviderKindInfo[] = [
      { kind: 'ollama', default_base_url: 'http://10.0.0.5:11434/v1' },
      { kind: 'openai', default_base_url: 'https://gateway.example.com/v1' },
    ];
    const transport = providerTransport({ view: { ...keychainView, settings: { ...keychainView.settings, base_url: 'https://gateway.example.com/v1' }, kinds } });
    const store = new ProviderStore(transport);
    expect(providerKinds(store.getState())).toEqual([]);
    expect(usualBaseUrl(store.getState())).toBe('');
    store.changeKind('ollama');
    expect(store.getState().form).toBeNull();

    await store.load();
    expect(providerKinds(store.getState()).map((k) => k.kind)).toEqual(['ollama', 'openai']);
    expect(usualBaseUrl(store.getState())).toBe('https://gateway.example.com/v1');
    store.changeKind('ollama');
    expect(store.getState().form).toMatchObject({ kind: 'ollama', baseUrl: 'http://10.0.0.5:11434/v1' });
    // A kind the engine does not offer is ignored.
    store.changeKind('anthropic');
    expect(store.getState().form?.kind).toBe('ollama');
  });

  it('adopts a detected Ollama with its first model, or the typed one when Ollama has it', async () => {
    const { store } = await loaded({ ollama });
    store.adoptOllama();
    expect(store.getState().form).toMatchObject({ kind: 'ollama', baseUrl: ollama.base_url, model: 'llama3.2' });
    expect(usingOllama(store.getState())).toBe(true);
    expect(modelChoices(store.getState())).toEqual(['llama3.2', 'qwen2.5']);
    store.edit({ model: 'mistral' });
    expect(modelChoices(store.getState())).toEqual(['mistral', 'llama3.2', 'qwen2.5']);
    store.edit({ model: 'qwen2.5', kind: 'openai' });
    expect(modelChoices(store.getState())).toBeNull();
    store.adoptOllama();
    expect(store.getState().form?.model).toBe('qwen2.5');
  });

  it('saves the trimmed form with the typed key, then clears the key and says so', async () => {
    const { store, transport } = await loaded();
    store.edit({ model: ' gpt-4.1 ', fallbacks: 'a, ,b ,', apiKey: 'sk-new' });
    await store.save();
    expect(transport.saved).toEqual<ProviderUpdate[]>([
      { settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4.1', fallback_models: ['a', 'b'] }, api_key: 'sk-new' },
    ]);
    expect(store.getState()).toMatchObject({ notice: 'saved', saveError: null, busy: null });
    expect(store.getState().form?.apiKey).toBe('');
    expect(store.getState().view?.settings.model).toBe('gpt-4.1');

    // An edit makes "saved" stale; a refusal is kept for the form.
    store.edit({ model: '' });
    expect(store.getState().notice).toBeNull();
    await store.save();
    expect(store.getState()).toMatchObject({ notice: null, saveError: 'model: it is empty', busy: null });
  });

  it('tests without saving, and turns a transport failure into a failed test', async () => {
    const { store, transport } = await loaded();
    await store.test();
    expect(store.getState().tested).toEqual({ ok: true, code: null, message: 'the model answered', latency_ms: 42 });
    expect(transport.tested).toEqual([{ settings: keychainView.settings }]);
    expect(transport.saved).toEqual([]);

    const brokenTransport = providerTransport();
    brokenTransport.handlers.test_provider = () => Promise.reject(new TransportError('network', 'cannot reach the engine: offline'));
    const broken = new ProviderStore(brokenTransport);
    await broken.load();
    await broken.test();
    expect(broken.getState().tested).toEqual({ ok: false, code: 'network', message: 'cannot reach the engine: offline' });
    expect(broken.getState().busy).toBeNull();
  });

  it('removes the saved key of the settings in force, whatever the form says', async () => {
    const { store, transport } = await loaded();
    store.edit({ model: 'typed-but-not-saved' });
    await store.clearKey();
    expect(transport.saved).toEqual([{ settings: keychainView.settings, clear_api_key: true }]);
    expect(store.getState().view?.key_source).toBe('none');
    expect(store.getState().notice).toBe('keyRemoved');
  });

  it('switches to the built-in model without an address or fallbacks, and back to the model in force', async () => {
    const { store } = await loaded();
    store.changeKind('local');
    const s = store.getState();
    expect(isLocal(s)).toBe(true);
    expect(s.form).toMatchObject({ kind: 'local', baseUrl: '', model: '' });
    expect(offersDefaultUrl(s)).toBe(false);
    expect(settingsFrom(s.form!)).toEqual({ kind: 'local', base_url: '', model: '', fallback_models: [] });
    store.changeKind('openai');
    expect(store.getState().form).toMatchObject({ kind: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o' });
    expect(isLocal(store.getState())).toBe(false);
  });

  it('starts the form again from the view a use of the built-in model answered', async () => {
    const notice = 'No model provider is configured and no Ollama server answers: using the built-in model x.gguf.';
    const { store } = await loaded({ view: { ...keychainView, notice } });
    store.changeKind('local');
    store.edit({ apiKey: 'typed' });
    expect(startNotice(store.getState())).toBe(notice);
    const view = { ...keychainView, notice, settings: { kind: 'local' as const, base_url: '', model: '/m/x.gguf', fallback_models: [] } };
    store.applied(view);
    expect(store.getState()).toMatchObject({ view, kindChanged: false, notice: null, saveError: null });
    expect(store.getState().form).toEqual({ kind: 'local', baseUrl: '', model: '/m/x.gguf', fallbacks: '', apiKey: '' });
    // The engine's line about its own choice is stale now.
    expect(startNotice(store.getState())).toBeNull();
    // Leaving the built-in model and coming back finds the file in force.
    store.changeKind('openai');
    expect(store.getState().form?.model).toBe('');
    store.changeKind('local');
    expect(store.getState().form?.model).toBe('/m/x.gguf');
  });

  it('shows the engine’s line about the provider it chose until put away or a save', async () => {
    const notice = 'using the built-in model SmolLM2-135M-Instruct.Q4_1.gguf';
    const none = await loaded();
    expect(startNotice(none.store.getState())).toBeNull();

    const first = await loaded({ view: { ...keychainView, notice } });
    expect(startNotice(first.store.getState())).toBe(notice);
    first.store.dismissStartNotice();
    expect(startNotice(first.store.getState())).toBeNull();

    const second = await loaded({ view: { ...keychainView, notice } });
    await second.store.save();
    expect(second.store.getState().view?.notice).toBe(notice);
    expect(startNotice(second.store.getState())).toBeNull();
  });

  it('sends a key only when one was typed, and its removal only when asked for', () => {
    const settings = keychainView.settings;
    expect(providerUpdate(settings)).toEqual({ settings });
    expect(providerUpdate(settings, '  ')).toEqual({ settings });
    expect(providerUpdate(settings, ' sk-1 ')).toEqual({ settings, api_key: 'sk-1' });
    expect(providerUpdate(settings, '', true)).toEqual({ settings, clear_api_key: true });
  });

  it('drops empty fallbacks and trims the address', () => {
    expect(settingsFrom({ kind: 'ollama', baseUrl: ' http://x/v1 ', model: 'm', fallbacks: ' , a,,b', apiKey: 'k' })).toEqual({
      kind: 'ollama',
      base_url: 'http://x/v1',
      model: 'm',
      fallback_models: ['a', 'b'],
    });
  });
});
