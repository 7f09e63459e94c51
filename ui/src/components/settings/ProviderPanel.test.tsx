// @vitest-environment jsdom
// The provider panel in jsdom against an in-memory engine: it saves (and says so), removes
// the saved key, tests the connection, offers a running Ollama and a kind's usual address,
// and names the environment variables that win.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { keychainView, providerTransport } from '../../settings/testFakes';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { ProviderPanel } from './ProviderPanel';

afterEach(cleanup);

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
});
