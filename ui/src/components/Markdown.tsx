// An answer rendered as Markdown (no raw HTML) with GitHub's extensions (remark-gfm: tables,
// task lists, strikethrough, autolinks, footnotes), code blocks highlighted (highlight.js
// through rehype-highlight, languages detected when the fence names none) with a copy button,
// and wide tables scrolling inside their own box instead of widening the chat. Footnote
// citations (a research report's) jump to their source within the answer: each answer's ids
// carry its own prefix, so two reports' `[^1]` never point at each other.

import { memo, useId, useRef, useState, type ComponentProps, type MouseEvent, type ReactNode } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import rehypeHighlight from 'rehype-highlight';
import remarkGfm from 'remark-gfm';
import { useT } from '../i18n';

function CodeBlock({ children }: { children?: ReactNode }) {
  const t = useT();
  const pre = useRef<HTMLPreElement>(null);
  const [copied, setCopied] = useState(false);
  const copy = () => {
    const text = pre.current?.textContent ?? '';
    void navigator.clipboard?.writeText(text).then(() => {
      setCopied(true);
      window.setTimeout(() => setCopied(false), 1500);
    });
  };
  return (
    <div className="code-block">
      <button type="button" className="copy" onClick={copy}>
        {copied ? t('code.copied') : t('code.copy')}
      </button>
      <pre ref={pre}>{children}</pre>
    </div>
  );
}

const components: Components = {
  pre: ({ children }) => <CodeBlock>{children}</CodeBlock>,
  table: ({ children }) => (
    <div className="table-scroll">
      <table>{children}</table>
    </div>
  ),
  a: (props) => {
    const { href, children, node, ...rest } = props;
    void node; // the syntax tree, not an attribute
    return href?.startsWith('#') ? (
      <InPageLink href={href} {...rest}>
        {children}
      </InPageLink>
    ) : (
      <a href={href} target="_blank" rel="noreferrer noopener">
        {children}
      </a>
    );
  },
};

/** A link to a place within the answer (a footnote and back): scrolls there, leaving the
 *  address as it is. */
function InPageLink({ href, children, ...rest }: ComponentProps<'a'> & { href: string }) {
  const go = (e: MouseEvent<HTMLAnchorElement>) => {
    e.preventDefault();
    const target = document.getElementById(decodeURIComponent(href.slice(1)));
    target?.scrollIntoView?.({ block: 'nearest' });
    if (target instanceof HTMLElement) {
      target.tabIndex = -1;
      target.focus({ preventScroll: true });
    }
  };
  return (
    <a href={href} {...rest} onClick={go}>
      {children}
    </a>
  );
}

/** Memoised on the text: while one answer streams, the others are not parsed again. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const t = useT();
  const prefix = `answer${useId().replace(/[^a-zA-Z0-9]/g, '')}-`;
  const footnotes = {
    footnoteLabel: t('markdown.footnotes'),
    footnoteBackLabel: t('markdown.backToText'),
    clobberPrefix: prefix,
  };
  return (
    <div className="markdown">
      <ReactMarkdown
        components={components}
        remarkPlugins={[remarkGfm]}
        remarkRehypeOptions={footnotes}
        rehypePlugins={[[rehypeHighlight, { detect: true }]]}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
});
