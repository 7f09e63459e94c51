// @vitest-environment jsdom
// Answers render as Markdown: code blocks are highlighted (named or detected language) and
// get a copy button; raw HTML in an answer is not rendered.

import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { I18nContext, translator } from '../i18n';
import { Markdown } from './Markdown';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let container: HTMLDivElement | null = null;

function render(text: string): HTMLDivElement {
  container = document.createElement('div');
  document.body.appendChild(container);
  const root = createRoot(container);
  act(() => {
    root.render(
      <I18nContext.Provider value={translator('en')}>
        <Markdown text={text} />
      </I18nContext.Provider>,
    );
  });
  return container;
}

afterEach(() => {
  container?.remove();
  container = null;
});

describe('Markdown', () => {
  it('highlights a fenced code block and offers to copy it', () => {
    const el = render('Here:\n\n```rust\nfn main() { let x = "hi"; }\n```\n');
    const code = el.querySelector('.code-block pre code');
    expect(code?.className).toContain('language-rust');
    expect(el.querySelector('.code-block .hljs-keyword')?.textContent).toBe('fn');
    expect(el.querySelector('.code-block .hljs-string')?.textContent).toBe('"hi"');
    expect(el.querySelector('.code-block button.copy')).not.toBeNull();
  });

  it('does not render raw HTML from the answer', () => {
    const el = render('<img src=x onerror="alert(1)"> text');
    expect(el.querySelector('img')).toBeNull();
  });
});
