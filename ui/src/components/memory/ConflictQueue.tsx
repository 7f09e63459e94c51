// The review queue: every open conflict, the two memories side by side with the judge's
// verdict and explanation, and the ways to settle it: keep A, keep B, keep both, or edit the
// two into one (`MergeForm`).

import type { Conflict, Memory } from '../../generated/engine';
import { useT } from '../../i18n';
import type { MergeDraft } from '../../memory/memoryStore';
import { when } from './format';
import { MergeForm } from './MergeForm';

interface Props {
  conflicts: Conflict[] | undefined;
  memories: Record<string, Memory>;
  error: string | null;
  busy: boolean;
  onResolve: (conflictId: string, keep: string | null) => void;
  onOpen: (id: string) => void;
  /** "Edit into one" as typed, on one conflict at a time. */
  merge: MergeDraft | null;
  onStartMerge: (conflictId: string) => void;
  onEditMerge: (change: Partial<Pick<MergeDraft, 'keep' | 'text'>>) => void;
  onSubmitMerge: () => void;
  onCancelMerge: () => void;
}

export function ConflictQueue({ conflicts, memories, error, busy, onResolve, onOpen, merge, ...on }: Props) {
  const t = useT();
  const side = (label: string, id: string) => {
    const m = memories[id];
    return (
      <div className="conflict-side">
        <span className="conflict-label">{label}</span>
        <p>{m ? m.content : t('conflicts.unknown', { id })}</p>
        <button type="button" className="link" onClick={() => onOpen(id)}>{t('conflicts.open')}</button>
      </div>
    );
  };
  return (
    <section className="conflict-queue" aria-labelledby="conflicts-heading">
      <h2 id="conflicts-heading">{t('conflicts.heading')}</h2>
      <p className="help">{t('conflicts.help')}</p>
      {error && <p className="banner error" role="alert">{t('settings.loadFailed', { message: error })}</p>}
      {!error && conflicts === undefined && <p className="muted">{t('settings.loading')}</p>}
      {conflicts && conflicts.length === 0 && <p className="muted" data-testid="conflicts-empty">{t('conflicts.empty')}</p>}
      {conflicts?.map((c) => (
        <article key={c.id} className="conflict" data-testid="conflict" data-conflict-id={c.id}>
          <div className="conflict-head">
            <span className="badge warn">{t(`conflicts.verdict.${c.verdict}`)}</span>
            <span className="muted">{t('conflicts.found', { time: when(c.created_at) })}</span>
          </div>
          {c.explanation && <p className="conflict-explanation">{c.explanation}</p>}
          <div className="conflict-sides">
            {side('A', c.memory_a)}
            {side('B', c.memory_b)}
          </div>
          <div className="buttons">
            <button type="button" data-testid="conflict-keep-a" disabled={busy} onClick={() => onResolve(c.id, c.memory_a)}>
              {t('conflicts.keepA')}
            </button>
            <button type="button" data-testid="conflict-keep-b" disabled={busy} onClick={() => onResolve(c.id, c.memory_b)}>
              {t('conflicts.keepB')}
            </button>
            <button type="button" data-testid="conflict-keep-both" disabled={busy} onClick={() => onResolve(c.id, null)}>
              {t('conflicts.keepBoth')}
            </button>
            {merge?.conflictId !== c.id && (
              <button type="button" data-testid="conflict-merge" title={t('conflicts.mergeHelp')} disabled={busy} onClick={() => on.onStartMerge(c.id)}>
                {t('conflicts.merge')}
              </button>
            )}
          </div>
          {merge?.conflictId === c.id && (
            <MergeForm
              conflict={c}
              draft={merge}
              busy={busy}
              onEdit={on.onEditMerge}
              onSubmit={on.onSubmitMerge}
              onCancel={on.onCancelMerge}
            />
          )}
        </article>
      ))}
    </section>
  );
}
