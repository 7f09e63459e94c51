// @vitest-environment jsdom
// Answers render as Markdown: code blocks are highlighted (named or detected language) and
// get a copy button; GitHub's tables, task lists, strikethrough and footnotes render as
// such, a table inside a box that scrolls; raw HTML in an answer is not rendered.

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

  it('renders a GitHub table inside a box that scrolls', () => {
    const el = render('| day | place |\n| --- | --- |\n| 1 | Fushimi Inari |\n| 2 | Arashiyama |\n');
    const table = el.querySelector('.table-scroll > table');
    expect(table).not.toBeNull();
    expect([...el.querySelectorAll('th')].map((th) => th.textContent)).toEqual(['day', 'place']);
    expect(el.querySelectorAll('tbody tr')).toHaveLength(2);
    expect(el.textContent).not.toContain('| --- |');
  });

  it('renders task lists, strikethrough and footnote citations', () => {
    const el = render('- [x] book hotel\n- [ ] buy JR pass\n\n~~rent a car~~ take trains[^1]\n\n[^1]: https://example.com/kyoto\n');
    const boxes = [...el.querySelectorAll<HTMLInputElement>('li input[type="checkbox"]')];
    expect(boxes.map((b) => b.checked)).toEqual([true, false]);
    expect(el.querySelector('del')?.textContent).toBe('rent a car');
    const cite = el.querySelector('sup a');
    expect(cite?.textContent).toBe('1');
    const notes = el.querySelector('section.footnotes');
    expect(notes?.textContent).toContain('https://example.com/kyoto');
    // The list's heading is for screen readers, in the person's language.
    expect(notes?.querySelector('h2.sr-only')?.textContent).toBe('Footnotes');
  });

  it('takes a citation to its source within the answer, and two answers never share ids', () => {
    const report = 'Rooms cost 120 EUR[^1].\n\n[^1]: “quote” — [Kyoto](https://example.com/kyoto)\n';
    const el = render(report);
    const other = render(report);
    const cite = el.querySelector<HTMLAnchorElement>('sup a');
    const href = cite?.getAttribute('href') ?? '';
    expect(href.startsWith('#')).toBe(true);
    expect(cite?.target).toBe('');
    const target = document.getElementById(href.slice(1));
    expect(el.contains(target)).toBe(true);
    expect(other.querySelector('sup a')?.getAttribute('href')).not.toBe(href);
    act(() => cite?.click());
    expect(document.activeElement).toBe(target);
    expect(location.hash).toBe('');
    // The source itself opens outside the app.
    const source = target?.querySelector<HTMLAnchorElement>('a[href^="https://"]');
    expect(source?.target).toBe('_blank');
    // And back from the source to the citation.
    const back = target?.querySelector<HTMLAnchorElement>('a[href^="#"]');
    expect(document.getElementById(back?.getAttribute('href')?.slice(1) ?? '')).toBe(cite);
    el.remove();
  });

  it('does not render raw HTML from the answer', () => {
    const el = render('<img src=x onerror="alert(1)"> text');
    expect(el.querySelector('img')).toBeNull();
  });
});
