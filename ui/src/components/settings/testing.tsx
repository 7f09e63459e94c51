// What the settings panels' jsdom tests share: mounting in a locale, filling a field the
// way a user does, letting pending loads settle, and finding by test id.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nContext, translator } from '../../i18n';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** Sets a controlled input's, textarea's or select's value the way a user would. */
export function fill(el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, value: string) {
  const proto =
    el instanceof HTMLSelectElement
      ? HTMLSelectElement.prototype
      : el instanceof HTMLTextAreaElement
        ? HTMLTextAreaElement.prototype
        : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value);
  el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
}

export async function flush() {
  await act(async () => {
    await new Promise((r) => setTimeout(r, 0));
  });
}

export function mount(ui: React.ReactNode, locale: 'en' | 'zh-CN' = 'en') {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  act(() => root.render(<I18nContext.Provider value={translator(locale)}>{ui}</I18nContext.Provider>));
  return { container, root };
}

/** Empties the page after a test. */
export function cleanup() {
  document.body.innerHTML = '';
}

export const byTestId = <T extends Element>(root: ParentNode, id: string) => root.querySelector(`[data-testid="${id}"]`) as T | null;
