// An answer rendered as Markdown (no raw HTML) with GitHub's extensions (remark-gfm: tables,
// task lists, strikethrough, autolinks, footnotes), code blocks highlighted (highlight.js
// through rehype-highlight, languages detected when the fence names none) with a copy button,
// and wide tables scrolling inside their own box instead of widening the chat.

import { memo, useRef, useState, type ReactNode } from 'react';
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
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noreferrer noopener">
      {children}
    </a>
  ),
};

/** Memoised on the text: while one answer streams, the others are not parsed again. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const t = useT();
  const footnotes = { footnoteLabel: t('markdown.footnotes'), footnoteBackLabel: t('markdown.backToText') };
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
