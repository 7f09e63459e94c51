// One chat message: the user's text, or an assistant answer with its reasoning, tool calls,
// degradations, error and status. The chat adds Regenerate to the last answer, "Show trace"
// to answers whose turn is known, and Edit to the user's messages (edited inline: Send or
// Cancel); quick ask shows messages without them.

import type { KeyboardEvent } from 'react';
import type { LearnedInTurn, MemoryProposal } from '../generated/engine';
import { useT } from '../i18n';
import type { AssistantView, ChatMessage, UserView } from '../turnStore';
import { browserDownload } from '../trace/traceStore';
import { LearnedLine } from './LearnedLine';
import { Markdown } from './Markdown';
import { ResearchCard } from './ResearchCard';
import { ToolCall } from './ToolCall';

interface AssistantProps {
  m: AssistantView;
  onRegenerate?: () => void;
  onShowTrace?: () => void;
  onStop?: () => void;
  onFollowUp?: (question: string) => void;
  onUndoLearned?: (item: LearnedInTurn) => void;
  onOpenMemory?: (memoryId: string) => void;
  onKeepProposal?: (proposal: MemoryProposal) => void;
  onDiscardProposal?: (proposal: MemoryProposal) => void;
}

/** Saves a research report as `research-<turn>.md`. */
function exportReport(m: AssistantView): void {
  const name = `research-${m.turnId ?? m.key}.md`;
  browserDownload(name, new Blob([`${m.text}\n`], { type: 'text/markdown' }));
}

function Assistant({
  m,
  onRegenerate,
  onShowTrace,
  onStop,
  onFollowUp,
  onUndoLearned,
  onOpenMemory,
  onKeepProposal,
  onDiscardProposal,
}: AssistantProps) {
  const t = useT();
  const waiting = m.status === 'running' && m.text === '' && m.tools.length === 0;
  return (
    <article className={`message assistant status-${m.status}`} data-status={m.status}>
      <header className="who">
        {t('chat.assistant')}
        {m.status === 'interrupted' && <span className="badge warn">{t('status.interrupted')}</span>}
        {m.status === 'failed' && <span className="badge error">{t('status.failed')}</span>}
      </header>
      {m.reasoning && (
        <details className="reasoning">
          <summary>{t('chat.reasoning')}</summary>
          <div className="reasoning-text">{m.reasoning}</div>
        </details>
      )}
      {m.research && (
        <ResearchCard
          progress={m.research}
          running={m.status === 'running'}
          onStop={onStop}
          onExport={m.text ? () => exportReport(m) : undefined}
        />
      )}
      {m.tools.map((tool) => (
        <ToolCall key={tool.callId} tool={tool} />
      ))}
      {m.degradations.map((d, i) => (
        <p key={i} className="degraded">
          {d.reason === 'model_busy' ? t('status.modelBusy') : t('status.degraded', { detail: d.detail })}
        </p>
      ))}
      {m.text && <Markdown text={m.text} />}
      {waiting && <p className="thinking">{t('chat.thinking')}</p>}
      {m.error && m.status !== 'running' && (
        <p className={m.status === 'interrupted' ? 'turn-error warn' : 'turn-error'} role="alert">
          {t('status.error', { code: m.error.code, message: m.error.message })}
        </p>
      )}
      <LearnedLine
        learned={m.learned ?? []}
        remembering={m.remembering}
        onUndo={onUndoLearned}
        onOpen={onOpenMemory}
        proposals={m.proposals}
        decisions={m.decisions}
        onKeep={onKeepProposal}
        onDiscard={onDiscardProposal}
      />
      {onFollowUp && m.followUps && m.followUps.length > 0 && (
        <div className="follow-ups" role="group" aria-label={t('chat.followUps')} data-testid="follow-ups">
          {m.followUps.map((q) => (
            <button key={q} type="button" className="follow-up" data-testid="follow-up" onClick={() => onFollowUp(q)}>
              {q}
            </button>
          ))}
        </div>
      )}
      {(onRegenerate || onShowTrace) && (
        <div className="message-actions">
          {onShowTrace && (
            <button type="button" className="link show-trace" data-testid="show-trace" title={t('chat.showTraceHelp')} onClick={onShowTrace}>
              {t('chat.showTrace')}
            </button>
          )}
          {onRegenerate && (
            <button type="button" className="regenerate" data-testid="regenerate" onClick={onRegenerate}>
              {t('chat.regenerate')}
            </button>
          )}
        </div>
      )}
    </article>
  );
}

/** A user message being edited: its draft text, changed through `onChange`. */
export interface EditState {
  draft: string;
  onChange: (text: string) => void;
  onSend: () => void;
  onCancel: () => void;
}

function User({ m, onEdit, editing }: { m: UserView; onEdit?: () => void; editing?: EditState }) {
  const t = useT();
  const key = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!editing || e.nativeEvent.isComposing) return;
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      editing.onSend();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      editing.onCancel();
    }
  };
  return (
    <article className={editing ? 'message user editing' : 'message user'}>
      <header className="who">{t('chat.you')}</header>
      {editing ? (
        <div className="edit-box">
          <textarea
            data-testid="edit-input"
            className="edit-input"
            autoFocus
            rows={3}
            value={editing.draft}
            aria-label={t('chat.editLabel')}
            onChange={(e) => editing.onChange(e.target.value)}
            onKeyDown={key}
          />
          <div className="message-actions">
            <button
              type="button"
              className="primary"
              data-testid="edit-send"
              disabled={editing.draft.trim() === ''}
              onClick={editing.onSend}
            >
              {t('chat.send')}
            </button>
            <button type="button" data-testid="edit-cancel" onClick={editing.onCancel}>
              {t('chat.cancel')}
            </button>
          </div>
        </div>
      ) : (
        <>
          <div className="user-text">{m.text}</div>
          {onEdit && (
            <div className="message-actions">
              <button type="button" className="edit-message" data-testid="edit-message" onClick={onEdit}>
                {t('chat.edit')}
              </button>
            </div>
          )}
        </>
      )}
    </article>
  );
}

interface Props {
  m: ChatMessage;
  /** Offers Regenerate (on an answer). */
  onRegenerate?: () => void;
  /** Offers "Show trace" (on an answer). */
  onShowTrace?: () => void;
  /** Offers Stop on a running research card. */
  onStop?: () => void;
  /** Offers the answer's follow-up questions; a click sends one. */
  onFollowUp?: (question: string) => void;
  /** Offers Undo on what the answer's turn taught memory. */
  onUndoLearned?: (item: LearnedInTurn) => void;
  /** Offers Open on what the answer's turn taught memory (the memory page). */
  onOpenMemory?: (memoryId: string) => void;
  /** Offers Keep on what the answer's turn proposes to remember. */
  onKeepProposal?: (proposal: MemoryProposal) => void;
  /** Offers Discard on what the answer's turn proposes to remember. */
  onDiscardProposal?: (proposal: MemoryProposal) => void;
  /** Offers Edit (on a user message). */
  onEdit?: () => void;
  /** The inline editor, while this user message is being edited. */
  editing?: EditState;
}

export function Message({ m, onEdit, editing, ...answer }: Props) {
  if (m.role === 'assistant') return <Assistant m={m} {...answer} />;
  return <User m={m} onEdit={onEdit} editing={editing} />;
}
