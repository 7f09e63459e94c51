// @vitest-environment jsdom
// The provider panel in jsdom against an in-memory engine: it saves (and says so), removes
// the saved key, tests the connection, offers a running Ollama and a kind's usual address,
// and names the environment variables that win. For the built-in model it lists the
// recommended models, downloads one with a progress bar (retrying a failed download), uses
// it or a GGUF file, and takes the provider view the engine answers; the engine's line about
// the provider it chose at start comes first.

import { act } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ProviderView } from '../../generated/engine';
import { LOCAL_POLL_MS } from '../../settings/localModelsStore';
import { MODELS_DIR, catalogModels, keychainView, localModelsTransport, providerTransport } from '../../settings/testFakes';
import { FakeEngine } from '../../testing/fakeEngine';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { ProviderPanel } from './ProviderPanel';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

/** A provider engine with the built-in model's catalog; `local` keeps what it was asked. */
function withLocal(options: { view?: ProviderView; local?: Parameters<typeof localModelsTransport>[0] } = {}) {
  const provider = providerTransport({ view: options.view });
  const local = localModelsTransport({ step: 100_000_000, view: options.view, ...options.local });
  return { engine: new FakeEngine({ ...provider.handlers, ...local.handlers }), provider, local };
}

const row = (root: ParentNode, id: string) => root.querySelector(`tr[data-model="${id}"]`) as HTMLTableRowElement;
const inRow = <T extends Element>(root: ParentNode, id: string, testId: string) => byTestId<T>(row(root, id), testId);
const tick = async (ms: number) => act(async () => void (await vi.advanceTimersByTimeAsync(ms)));

describe('ProviderPanel', () => {
  it('shows the settings without the key, saves the form and says so', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    const q = <T extends Element>(id: string) => byTestId<T>(container, id) as T;
    expect(q<HTMLSelectElement>('provider-kind').value).toBe('openai');
    expect(q<HTMLInputElement>('provider-base-url').value).toBe('https://api.openai.com/v1');
    expect(q<HTMLInputElement>('provider-model').value).toBe('gpt-4o');
    expect(q<HTMLInputElement>('provider-fallbacks').value).toBe('gpt-4o-mini');
    expect(q<HTMLInputElement>('provider-api-key').value).toBe('');
    expect(q<HTMLInputElement>('provider-api-key').type).toBe('password');
    expect(q('provider-key-source').textContent).toContain('Key in use: saved in Secret Service.');
    expect(q('provider-saved')).toBeNull();

    act(() => fill(q<HTMLInputElement>('provider-model'), ' gpt-4.1 '));
    act(() => fill(q<HTMLInputElement>('provider-fallbacks'), 'a, ,b ,'));
    act(() => fill(q<HTMLInputElement>('provider-api-key'), 'sk-new'));
    await act(async () => q<HTMLButtonElement>('provider-save').click());
    await flush();
    expect(transport.saved).toEqual([
      {
        settings: { kind: 'openai', base_url: 'https://api.openai.com/v1', model: 'gpt-4.1', fallback_models: ['a', 'b'] },
        api_key: 'sk-new',
      },
    ]);
    expect(q('provider-saved')?.textContent).toBe('Settings saved.');
    expect(q<HTMLInputElement>('provider-api-key').value).toBe('');
    expect(q('provider-error')).toBeNull();

    // A refusal is shown inline and "saved" goes away.
    act(() => fill(q<HTMLInputElement>('provider-model'), ''));
    expect(q('provider-saved')).toBeNull();
    await act(async () => q<HTMLButtonElement>('provider-save').click());
    await flush();
    expect(q('provider-error')?.textContent).toBe('Not saved: model: it is empty');
    expect(q('provider-saved')).toBeNull();
    act(() => root.unmount());
  });

  it('removes the saved key', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    await act(async () => byTestId<HTMLButtonElement>(container, 'provider-clear-key')?.click());
    await flush();
    expect(transport.saved).toEqual([{ settings: keychainView.settings, clear_api_key: true }]);
    expect(byTestId(container, 'provider-saved')?.textContent).toBe('Saved key removed.');
    expect(byTestId(container, 'provider-key-source')?.textContent).toContain('No key is set.');
    expect(byTestId(container, 'provider-clear-key')).toBeNull();
    act(() => root.unmount());
  });

  it('tests the connection without saving and shows the result', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    act(() => fill(byTestId<HTMLInputElement>(container, 'provider-api-key') as HTMLInputElement, 'sk-try'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'provider-test')?.click());
    await flush();
    const result = byTestId(container, 'provider-test-result');
    expect(result?.textContent).toBe('Connected: the model answered');
    expect(result?.className).toContain('ok');
    expect(transport.tested).toEqual([{ settings: keychainView.settings, api_key: 'sk-try' }]);
    expect(transport.saved).toEqual([]);
    act(() => root.unmount());

    const failing = providerTransport({ report: { ok: false, code: 'llm_auth', message: 'the key was refused', latency_ms: 80 } });
    const second = mount(<ProviderPanel transport={failing} />, 'zh-CN');
    await flush();
    await act(async () => byTestId<HTMLButtonElement>(second.container, 'provider-test')?.click());
    await flush();
    const failed = byTestId(second.container, 'provider-test-result');
    expect(failed?.textContent).toBe('连接失败（llm_auth）：the key was refused');
    expect(failed?.className).toContain('failed');
    act(() => second.root.unmount());
  });

  it('offers a running Ollama and fills the form with it and its models', async () => {
    const transport = providerTransport({ ollama: { base_url: 'http://127.0.0.1:11434/v1', models: ['llama3.2', 'qwen2.5'] } });
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    expect(byTestId(container, 'ollama-offer')?.textContent).toContain('Ollama is running on this computer with 2 models.');
    await act(async () => byTestId<HTMLButtonElement>(container, 'ollama-use')?.click());
    expect(byTestId<HTMLSelectElement>(container, 'provider-kind')?.value).toBe('ollama');
    expect(byTestId<HTMLInputElement>(container, 'provider-base-url')?.value).toBe('http://127.0.0.1:11434/v1');
    const model = byTestId<HTMLSelectElement>(container, 'provider-model') as HTMLSelectElement;
    expect(model.tagName).toBe('SELECT');
    expect([...model.options].map((o) => o.value)).toEqual(['llama3.2', 'qwen2.5']);
    expect(model.value).toBe('llama3.2');
    expect(byTestId(container, 'ollama-offer')).toBeNull();
    act(() => fill(model, 'qwen2.5'));
    await act(async () => byTestId<HTMLButtonElement>(container, 'provider-save')?.click());
    await flush();
    expect(transport.saved[0]?.settings).toEqual({
      kind: 'ollama',
      base_url: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5',
      fallback_models: ['gpt-4o-mini'],
    });
    act(() => root.unmount());
  });

  it('gives a new kind its usual address, and offers it over a custom one', async () => {
    const transport = providerTransport();
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    const kind = byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement;
    const url = () => byTestId<HTMLInputElement>(container, 'provider-base-url') as HTMLInputElement;
    act(() => fill(kind, 'anthropic'));
    expect(url().value).toBe('https://api.anthropic.com');
    expect(byTestId(container, 'provider-default-url')).toBeNull();
    act(() => fill(url(), 'https://proxy.example.com'));
    act(() => fill(kind, 'ollama'));
    expect(url().value).toBe('https://proxy.example.com');
    const offer = byTestId(container, 'provider-default-url');
    expect(offer?.textContent).toContain('http://127.0.0.1:11434/v1');
    await act(async () => offer?.querySelector('button')?.click());
    expect(url().value).toBe('http://127.0.0.1:11434/v1');
    expect(byTestId(container, 'provider-default-url')).toBeNull();
    act(() => root.unmount());
  });

  it('offers the kinds the engine reports, in its order, with their usual addresses', async () => {
    const transport = providerTransport({
      view: {
        ...keychainView,
        kinds: [
          { kind: 'ollama', default_base_url: 'http://10.0.0.5:11434/v1' },
          { kind: 'openai', default_base_url: 'https://api.openai.com/v1' },
        ],
      },
    });
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    const kind = byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement;
    expect([...kind.options].map((o) => [o.value, o.textContent])).toEqual([
      ['ollama', 'Ollama (local)'],
      ['openai', 'OpenAI-compatible'],
    ]);
    act(() => fill(kind, 'ollama'));
    const url = byTestId<HTMLInputElement>(container, 'provider-base-url') as HTMLInputElement;
    expect(url.value).toBe('http://10.0.0.5:11434/v1');
    expect(url.placeholder).toBe('http://10.0.0.5:11434/v1');
    act(() => root.unmount());
  });

  it('names the environment variables that win, and says when no keychain exists', async () => {
    const transport = providerTransport({
      view: { ...keychainView, key_source: 'environment', keychain: '', keychain_available: false, env_overrides: ['ECHO_LLM_MODEL', 'ECHO_LLM_API_KEY'] },
    });
    const { container, root } = mount(<ProviderPanel transport={transport} />);
    await flush();
    expect(byTestId(container, 'provider-env')?.textContent).toContain('ECHO_LLM_MODEL, ECHO_LLM_API_KEY');
    const source = byTestId(container, 'provider-key-source')?.textContent;
    expect(source).toContain('Key in use: from the environment.');
    expect(source).toContain('No system keychain is available');
    expect(byTestId(container, 'provider-clear-key')).toBeNull();
    act(() => root.unmount());
  });
  it('offers the built-in model: no address, key or fallbacks, and the recommended models', async () => {
    const { engine, provider } = withLocal();
    const { container, root } = mount(<ProviderPanel transport={engine} />);
    await flush();
    const kind = byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement;
    expect([...kind.options].map((o) => [o.value, o.textContent])).toContainEqual(['local', 'Built-in (local)']);
    expect(byTestId(container, 'local-models')).toBeNull();
    act(() => fill(kind, 'local'));
    await flush();
    for (const id of ['provider-base-url', 'provider-api-key', 'provider-fallbacks', 'provider-model', 'provider-save', 'provider-key-source']) {
      expect(byTestId(container, id)).toBeNull();
    }
    const section = byTestId(container, 'local-models') as HTMLElement;
    expect(section.querySelector('h3')?.textContent).toBe('Built-in model');
    expect(section.textContent).toContain(`Downloads go to ${MODELS_DIR}.`);
    const small = row(container, 'smollm2-135m');
    expect([...small.cells].map((c) => c.textContent)).toEqual([
      `SmolLM2 135M Instruct (Q4_1)${catalogModels[0]?.note}`,
      '98 MB',
      'Apache-2.0Checksum pinned',
      'Download',
    ]);
    expect(row(container, 'smollm2-1.7b').cells[1]?.textContent).toBe('1.1 GB');
    // A model whose checksum only the download host vouches for says so.
    expect(row(container, 'smollm2-1.7b').cells[2]?.textContent).toBe('Apache-2.0Checksum published by the host');
    expect(inRow(container, 'smollm2-135m', 'local-download')?.getAttribute('aria-label')).toBe('Download SmolLM2 135M Instruct (Q4_1) (98 MB)');
    expect(byTestId(container, 'local-file')?.closest('label')?.textContent).toContain('GGUF file');
    // Choosing the kind saves nothing by itself.
    expect(provider.saved).toEqual([]);
    act(() => root.unmount());
  });

  it('downloads a model with a progress bar, then uses it and takes the new provider view', async () => {
    const notice = 'No model provider is configured and no Ollama server answers: using the built-in model SmolLM2-135M-Instruct.Q4_1.gguf.';
    const { engine, local } = withLocal({ view: { ...keychainView, notice } });
    const { container, root } = mount(<ProviderPanel transport={engine} />);
    await flush();
    expect(byTestId(container, 'provider-start-notice')?.textContent).toContain(notice);
    act(() => fill(byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement, 'local'));
    await flush();
    vi.useFakeTimers();
    await act(async () => inRow<HTMLButtonElement>(container, 'qwen2.5-0.5b', 'local-download')?.click());
    await tick(0);
    expect(local.fetched).toEqual(['qwen2.5-0.5b']);
    const bar = () => row(container, 'qwen2.5-0.5b').querySelector('progress');
    expect(bar()?.value).toBe(100_000_000);
    expect(bar()?.max).toBe(398_000_000);
    expect(bar()?.getAttribute('aria-label')).toBe('Downloading Qwen2.5 0.5B Instruct (Q4_K_M)');
    expect(inRow(container, 'qwen2.5-0.5b', 'local-progress-text')?.textContent).toBe('25% of 398 MB');
    await tick(LOCAL_POLL_MS);
    expect(inRow(container, 'qwen2.5-0.5b', 'local-progress-text')?.textContent).toBe('50% of 398 MB');
    await tick(LOCAL_POLL_MS * 2);
    expect(bar()).toBeNull();
    expect(row(container, 'qwen2.5-0.5b').dataset.state).toBe('installed');
    expect(row(container, 'qwen2.5-0.5b').cells[3]?.textContent).toBe('Installed Use');
    const reads = local.reads;
    await tick(LOCAL_POLL_MS * 10);
    expect(local.reads).toBe(reads);
    vi.useRealTimers();

    await act(async () => inRow<HTMLButtonElement>(container, 'qwen2.5-0.5b', 'local-use')?.click());
    await flush();
    expect(local.used).toEqual(['qwen2.5-0.5b']);
    expect(row(container, 'qwen2.5-0.5b').cells[3]?.textContent).toBe('In use');
    expect(byTestId(container, 'local-used')?.textContent).toBe('Now using Qwen2.5 0.5B Instruct (Q4_K_M).');
    expect(byTestId<HTMLSelectElement>(container, 'provider-kind')?.value).toBe('local');
    // The engine's line about its own choice is stale once another was made.
    expect(byTestId(container, 'provider-start-notice')).toBeNull();
    // The form started again from the view answered: leaving and coming back finds the file in force.
    act(() => fill(byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement, 'openai'));
    expect(byTestId<HTMLInputElement>(container, 'provider-model')?.value).toBe('');
    expect(byTestId<HTMLInputElement>(container, 'provider-base-url')?.value).toBe('https://api.openai.com/v1');
    act(() => root.unmount());
  });

  it('shows a failed download with its error and a retry that resumes it', async () => {
    const { engine, local } = withLocal({ local: { failAfter: { 'smollm2-135m': 1 } } });
    const { container, root } = mount(<ProviderPanel transport={engine} />);
    await flush();
    act(() => fill(byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement, 'local'));
    await flush();
    await act(async () => inRow<HTMLButtonElement>(container, 'smollm2-135m', 'local-download')?.click());
    await flush();
    const error = inRow(container, 'smollm2-135m', 'local-download-error');
    expect(error?.textContent).toBe('Download failed: connection reset by peer');
    expect(error?.getAttribute('role')).toBe('alert');
    const retry = inRow<HTMLButtonElement>(container, 'smollm2-135m', 'local-retry');
    expect(retry?.textContent).toBe('Retry');
    expect(retry?.getAttribute('aria-label')).toBe('Retry downloading SmolLM2 135M Instruct (Q4_1)');
    await act(async () => retry?.click());
    await flush();
    expect(local.fetched).toEqual(['smollm2-135m', 'smollm2-135m']);
    // 135M is smaller than one step of the fake: the resumed download ends at once.
    expect(row(container, 'smollm2-135m').dataset.state).toBe('installed');
    act(() => root.unmount());
  });

  it('uses a GGUF file typed in, and shows a refusal', async () => {
    const { engine, local } = withLocal();
    const { container, root } = mount(<ProviderPanel transport={engine} />);
    await flush();
    act(() => fill(byTestId<HTMLSelectElement>(container, 'provider-kind') as HTMLSelectElement, 'local'));
    await flush();
    const field = () => byTestId<HTMLInputElement>(container, 'local-file') as HTMLInputElement;
    const button = () => byTestId<HTMLButtonElement>(container, 'local-use-file') as HTMLButtonElement;
    expect(button().disabled).toBe(true);
    act(() => fill(field(), 'notes.txt'));
    await act(async () => button().click());
    await flush();
    expect(byTestId(container, 'local-error')?.textContent).toBe('Not changed: model: "notes.txt" is neither a GGUF file nor a catalog model');
    expect(field().value).toBe('notes.txt');

    act(() => fill(field(), '/data/models/mistral-7b.Q4_K_M.gguf'));
    expect(byTestId(container, 'local-error')).toBeNull();
    await act(async () => button().click());
    await flush();
    expect(local.used).toEqual(['notes.txt', '/data/models/mistral-7b.Q4_K_M.gguf']);
    expect(field().value).toBe('');
    expect(byTestId(container, 'local-used')?.textContent).toBe('Now using /data/models/mistral-7b.Q4_K_M.gguf.');
    expect(byTestId(container, 'local-file-in-use')?.textContent).toBe('In use: the file /data/models/mistral-7b.Q4_K_M.gguf');
    act(() => root.unmount());
  });

  it('opens on the built-in model in force, and stops following downloads when it goes away', async () => {
    const path = `${MODELS_DIR}/smollm2-135m.gguf`;
    const { engine, local } = withLocal({
      view: { ...keychainView, key_source: 'none', settings: { kind: 'local', base_url: '', model: path, fallback_models: [] } },
      local: {
        step: 1_000_000,
        models: catalogModels.map((m) => (m.id === 'smollm2-135m' ? { ...m, path } : m)),
      },
    });
    const { container, root } = mount(<ProviderPanel transport={engine} />, 'zh-CN');
    await flush();
    expect(byTestId<HTMLSelectElement>(container, 'provider-kind')?.value).toBe('local');
    expect(byTestId<HTMLSelectElement>(container, 'provider-kind')?.selectedOptions[0]?.textContent).toBe('内置（本地）');
    expect(row(container, 'smollm2-135m').cells[3]?.textContent).toBe('使用中');
    vi.useFakeTimers();
    await act(async () => inRow<HTMLButtonElement>(container, 'smollm2-1.7b', 'local-download')?.click());
    await tick(LOCAL_POLL_MS * 2);
    expect(row(container, 'smollm2-1.7b').dataset.state).toBe('downloading');
    act(() => root.unmount());
    const reads = local.reads;
    await tick(LOCAL_POLL_MS * 10);
    expect(local.reads).toBe(reads);
  });

  it('puts the engine’s line about its choice away on request', async () => {
    const notice = 'No model provider is configured: using the built-in model.';
    const { engine } = withLocal({ view: { ...keychainView, notice } });
    const { container, root } = mount(<ProviderPanel transport={engine} />);
    await flush();
    const line = byTestId(container, 'provider-start-notice');
    expect(line?.getAttribute('role')).toBe('status');
    // It comes first, before the form.
    expect(line?.compareDocumentPosition(byTestId(container, 'provider-kind') as Element)).toBe(Node.DOCUMENT_POSITION_FOLLOWING);
    await act(async () => line?.querySelector('button')?.click());
    expect(byTestId(container, 'provider-start-notice')).toBeNull();
    act(() => root.unmount());
  });
});
