// @vitest-environment jsdom
// The Web search settings panel in jsdom against an in-memory engine: with no service it says
// web search and research are off; a SearXNG address is tested and saved and the panel says
// it works; Brave without a key is refused in the engine's words, with a key typed it is
// saved (the key sent once, never shown again) and the saved key can be removed; a result
// count out of range cannot be saved; ECHO_SEARCH_* in the environment lock the form.

import { act } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { searchTransport } from '../../settings/testFakes';
import { researchBlocker } from '../../settings/searchStore';
import { byTestId, cleanup, fill, flush, mount } from './testing';
import { SearchPanel } from './SearchPanel';

afterEach(cleanup);

const click = async (el: Element | null) => {
  await act(async () => (el as HTMLElement).click());
  await flush();
};

const input = (container: HTMLElement, id: string) => byTestId<HTMLInputElement>(container, id) as HTMLInputElement;
const select = (container: HTMLElement, id: string) => byTestId<HTMLSelectElement>(container, id) as HTMLSelectElement;

describe('SearchPanel', () => {
  it('tests and saves a SearXNG address, then says web search works', async () => {
    const engine = searchTransport();
    const { container, root } = mount(<SearchPanel transport={engine} />);
    await flush();
    expect(byTestId(container, 'search-state')?.getAttribute('data-available')).toBe('false');
    expect(byTestId(container, 'search-state')?.textContent).toContain('Web search and research are off');
    expect(byTestId(container, 'search-url')).toBeNull();

    act(() => fill(select(container, 'search-kind'), 'searxng'));
    act(() => fill(input(container, 'search-url'), ' http://127.0.0.1:8888/ '));
    expect(byTestId(container, 'search-api-key')).toBeNull();
    await click(byTestId(container, 'search-test'));
    expect(engine.tested).toEqual([{ kind: 'searxng', url: 'http://127.0.0.1:8888/', max_results: 8 }]);
    expect(byTestId(container, 'search-test-result')?.textContent).toBe(
      'It works: SearXNG at http://127.0.0.1:8888/ answered with 3 results in 12 ms',
    );
    await click(byTestId(container, 'search-save'));
    expect(engine.sent).toEqual([{ kind: 'searxng', url: 'http://127.0.0.1:8888/', max_results: 8 }]);
    expect(byTestId(container, 'search-saved')?.textContent).toBe('Web search saved; the next message uses it.');
    expect(byTestId(container, 'search-state')?.textContent).toBe(
      'Web search and research are on: searches go to http://127.0.0.1:8888/.',
    );
    expect(await researchBlocker(engine)).toBeNull();
    act(() => root.unmount());
  });

  it('refuses Brave without a key in the engine’s words, saves it with one and removes it', async () => {
    const engine = searchTransport();
    const { container, root } = mount(<SearchPanel transport={engine} />);
    await flush();
    act(() => fill(select(container, 'search-kind'), 'brave'));
    await click(byTestId(container, 'search-save'));
    expect(byTestId(container, 'search-error')?.textContent).toBe(
      'Not saved: invalid search settings: Brave Search needs an API key',
    );
    expect(engine.view().kind).toBe('none');

    act(() => fill(input(container, 'search-api-key'), ' bsa-typed-key '));
    await click(byTestId(container, 'search-save'));
    expect(engine.sent.at(-1)).toEqual({ kind: 'brave', max_results: 8, api_key: 'bsa-typed-key' });
    expect(input(container, 'search-api-key').value).toBe('');
    expect(byTestId(container, 'search-key-source')?.getAttribute('data-source')).toBe('keychain');
    expect(await researchBlocker(engine)).toBeNull();

    await click(byTestId(container, 'search-clear-key'));
    expect(engine.sent.at(-1)).toEqual({ kind: 'brave', max_results: 8, clear_api_key: true });
    expect(byTestId(container, 'search-saved')?.textContent).toBe('Saved key removed.');
    expect(byTestId(container, 'search-state')?.textContent).toContain('Brave Search needs an API key');
    expect(await researchBlocker(engine)).toBe('Brave Search needs an API key: save one in Settings → Web search');
    act(() => root.unmount());
  });

  it('does not save a result count out of range', async () => {
    const engine = searchTransport();
    const { container, root } = mount(<SearchPanel transport={engine} />, 'zh-CN');
    await flush();
    act(() => fill(select(container, 'search-kind'), 'searxng'));
    act(() => fill(input(container, 'search-url'), 'http://127.0.0.1:8888/'));
    act(() => fill(input(container, 'search-max-results'), '50'));
    expect(byTestId(container, 'search-max-invalid')?.textContent).toBe('请输入 1 到 20 之间的整数。');
    expect(byTestId<HTMLButtonElement>(container, 'search-save')?.disabled).toBe(true);
    await act(async () => (container.querySelector('form') as HTMLFormElement).requestSubmit());
    await flush();
    expect(engine.sent).toEqual([]);
    act(() => root.unmount());
  });

  it('is locked while the environment decides the service', async () => {
    const engine = searchTransport(['ECHO_SEARCH_KIND', 'ECHO_SEARCH_URL']);
    const { container, root } = mount(<SearchPanel transport={engine} />);
    await flush();
    expect(byTestId(container, 'search-env')?.textContent).toBe(
      'Set in the environment: ECHO_SEARCH_KIND, ECHO_SEARCH_URL. They decide the service; unset them to change it here.',
    );
    expect(select(container, 'search-kind').matches(':disabled')).toBe(true);
    expect(byTestId<HTMLButtonElement>(container, 'search-save')?.disabled).toBe(true);
    act(() => root.unmount());
  });
});
