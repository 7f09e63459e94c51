// The conversation: messages in order, virtualised (only the rows near the viewport are in
// the page, each measured as it renders, so long histories stay smooth), kept scrolled to
// the newest while it grows unless the reader has scrolled up. Regenerate and Edit and
// resend are offered when the page passes their handlers (not while a turn runs), and so is
// "Show trace" on answers whose turn is known. A highlighted message (where a memory was
// learned) is scrolled into view and marked for a few seconds. Screen readers hear the answer
// being written (a live region holding only that answer), not every row the list renders.

import { observeElementRect, useVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { LearnedInTurn, MemoryProposal } from '../generated/engine';
import { useT } from '../i18n';
import type { ChatMessage } from '../turnStore';
import { Message } from './Message';

/** How close to the end (px) still counts as "at the end" for sticking to it. */
const STICK_SLACK = 48;

/** How long a highlighted message stays marked (ms). */
export const HIGHLIGHT_MS = 5000;

/**
 * The scroll element's size; an element not laid out (jsdom, a hidden view) reports 0, which
 * would render no row at all, so the window's height stands in for it.
 */
function observeRect(instance: Virtualizer<HTMLElement, Element>, cb: (rect: { width: number; height: number }) => void) {
  return observeElementRect(instance, (rect) =>
    cb(rect.height > 0 ? rect : { width: rect.width, height: window.innerHeight }),
  );
}

interface Props {
  messages: ChatMessage[];
  loading: boolean;
  /** Runs the last question again; offered on the last answer when given. */
  onRegenerate?: () => void;
  /** Sends an edited user message in place of the one with `key`; offered when given. */
  onEdit?: (key: string, text: string) => void;
  /** Opens an answer's trace; offered on answers whose turn id is known, when given. */
  onShowTrace?: (turnId: string) => void;
  /** Stops the running turn (a research card's Stop); offered when given. */
  onStop?: () => void;
  /** Sends a follow-up question; offered under the last answer when given. */
  onFollowUp?: (question: string) => void;
  /** Undoes a memory an answer's turn taught (by the answer's key); offered when given. */
  onUndoLearned?: (key: string, item: LearnedInTurn) => void;
  /** Opens a memory in the memory page; offered when given. */
  onOpenMemory?: (memoryId: string) => void;
  /** Keeps what an answer's turn proposes to remember (by the answer's key); offered when given. */
  onKeepProposal?: (key: string, proposal: MemoryProposal) => void;
  /** Discards what an answer's turn proposes to remember (by the answer's key); offered when given. */
  onDiscardProposal?: (key: string, proposal: MemoryProposal) => void;
  /** The key of a message to bring into view and mark. */
  highlight?: string | null;
  /** Called when the mark has been shown long enough. */
  onHighlightSeen?: () => void;
  /** Which provider answers, said under an empty conversation (the built-in model's first run). */
  startNote?: string | null;
}

export function ChatView({
  messages,
  loading,
  onRegenerate,
  onEdit,
  onShowTrace,
  onStop,
  onFollowUp,
  onUndoLearned,
  onOpenMemory,
  onKeepProposal,
  onDiscardProposal,
  highlight,
  onHighlightSeen,
  startNote,
}: Props) {
  const t = useT();
  const scroller = useRef<HTMLElement>(null);
  const stick = useRef(true);
  const [editing, setEditing] = useState<{ key: string; draft: string } | null>(null);
  const virtualizer = useVirtualizer({
    count: messages.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 140,
    overscan: 8,
    paddingStart: 16,
    paddingEnd: 16,
    getItemKey: (index) => messages[index]?.key ?? index,
    observeElementRect: observeRect,
  });
  const total = virtualizer.getTotalSize();
  const first = messages[0]?.key;
  const newest = messages[messages.length - 1]?.key;

  // Another conversation (or the first load of one) starts at its end, and so does a new turn.
  useLayoutEffect(() => {
    stick.current = true;
  }, [first, newest]);
  // Follow the newest message, and rows as they are measured, while at the end.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [messages, total]);

  // A highlighted message: scroll to it (and stop following the end), then unmark it later.
  const highlightIndex = highlight ? messages.findIndex((m) => m.key === highlight) : -1;
  useLayoutEffect(() => {
    if (highlightIndex < 0) return;
    stick.current = false;
    virtualizer.scrollToIndex(highlightIndex, { align: 'center' });
  }, [highlightIndex, virtualizer]);
  const seen = useRef(onHighlightSeen);
  useLayoutEffect(() => {
    seen.current = onHighlightSeen;
  });
  useEffect(() => {
    if (!highlight) return;
    const timer = setTimeout(() => seen.current?.(), HIGHLIGHT_MS);
    return () => clearTimeout(timer);
  }, [highlight]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight <= STICK_SLACK;
  };
  const last = messages.length - 1;
  const editingKey = onEdit ? editing?.key : undefined;
  const spoken = useSpokenAnswer(messages);

  return (
    <section className="chat" ref={scroller} onScroll={onScroll}>
      <div className="sr-only" aria-live="polite" data-testid="chat-live">
        {spoken}
      </div>
      {loading && <p className="muted chat-note">{t('chat.loading')}</p>}
      {!loading && messages.length === 0 && <p className="muted empty">{t('chat.empty')}</p>}
      {!loading && messages.length === 0 && startNote && (
        <p className="muted start-note" role="status" data-testid="chat-start-note">
          {startNote}
        </p>
      )}
      <div className="chat-rows" style={{ height: total }}>
        {virtualizer.getVirtualItems().map((item) => {
          const m = messages[item.index];
          if (!m) return null;
          const draft = editingKey === m.key ? editing?.draft : undefined;
          const marked = highlight === m.key;
          const turnId = m.role === 'assistant' ? m.turnId : undefined;
          return (
            <div
              key={item.key}
              className={marked ? 'chat-row highlighted' : 'chat-row'}
              data-testid={marked ? 'message-highlighted' : undefined}
              data-key={m.key}
              data-index={item.index}
              ref={virtualizer.measureElement}
              style={{ transform: `translateY(${item.start}px)` }}
            >
              <Message
                m={m}
                onRegenerate={onRegenerate && item.index === last && m.role === 'assistant' ? onRegenerate : undefined}
                onShowTrace={onShowTrace && turnId ? () => onShowTrace(turnId) : undefined}
                onStop={m.role === 'assistant' && m.status === 'running' ? onStop : undefined}
                onFollowUp={item.index === last ? onFollowUp : undefined}
                onUndoLearned={onUndoLearned ? (l) => onUndoLearned(m.key, l) : undefined}
                onOpenMemory={onOpenMemory}
                onKeepProposal={onKeepProposal ? (p) => onKeepProposal(m.key, p) : undefined}
                onDiscardProposal={onDiscardProposal ? (p) => onDiscardProposal(m.key, p) : undefined}
                onEdit={
                  onEdit && m.role === 'user' && m.id !== undefined
                    ? () => setEditing({ key: m.key, draft: m.text })
                    : undefined
                }
                editing={
                  draft !== undefined && onEdit
                    ? {
                        draft,
                        onChange: (text) => setEditing({ key: m.key, draft: text }),
                        onSend: () => {
                          if (draft.trim() === '') return;
                          setEditing(null);
                          onEdit(m.key, draft);
                        },
                        onCancel: () => setEditing(null),
                      }
                    : undefined
                }
              />
            </div>
          );
        })}
      </div>
    </section>
  );
}

/** The text of the answer this view saw being written (a turn that ran while it was shown),
 *  up to its end; answers loaded from history are not read out again. */
function useSpokenAnswer(messages: ChatMessage[]): string {
  const [key, setKey] = useState<string | null>(null);
  let running: ChatMessage | undefined;
  for (let i = messages.length - 1; i >= 0 && !running; i--) {
    const m = messages[i];
    if (m?.role === 'assistant' && m.status === 'running') running = m;
  }
  if (running && running.key !== key) setKey(running.key);
  const answer = messages.find((m) => m.key === (running?.key ?? key));
  return answer?.role === 'assistant' ? answer.text : '';
}
