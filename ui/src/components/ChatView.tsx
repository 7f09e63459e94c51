// The conversation: messages in order, kept scrolled to the newest while it grows.

import { useEffect, useRef } from 'react';
import { useT } from '../i18n';
import type { ChatMessage } from '../turnStore';
import { Message } from './Message';

export function ChatView({ messages, loading }: { messages: ChatMessage[]; loading: boolean }) {
  const t = useT();
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' }); // absent in jsdom
  }, [messages]);
  return (
    <section className="chat" aria-live="polite">
      {loading && <p className="muted">{t('chat.loading')}</p>}
      {!loading && messages.length === 0 && <p className="muted empty">{t('chat.empty')}</p>}
      {messages.map((m) => (
        <Message key={m.key} m={m} />
      ))}
      <div ref={end} />
    </section>
  );
}
