// A research run as it goes: the plan, each sub-question's state, sources found and read,
// the time so far, and Stop (which ends in a partial report). Once the report is there, it
// can be saved as Markdown.

import { useT } from '../i18n';
import type { ResearchProgress } from '../generated/engine';

interface Props {
  progress: ResearchProgress;
  /** Whether the run is still going (Stop is offered). */
  running: boolean;
  onStop?: () => void;
  /** Saves the report as a Markdown file; offered once the report is there. */
  onExport?: () => void;
}

export function ResearchCard({ progress, running, onStop, onExport }: Props) {
  const t = useT();
  const seconds = Math.round(progress.elapsed_ms / 1000);
  return (
    <section className="research-card" data-testid="research-card" data-phase={progress.phase} aria-label={t('research.heading')}>
      <header className="research-head">
        <strong>{t('research.heading')}</strong>
        <span className="research-phase" data-testid="research-phase">
          {t(`research.phase.${progress.phase}`)}
        </span>
      </header>
      {progress.sub_questions.length > 0 && (
        <ol className="research-plan">
          {progress.sub_questions.map((q, i) => (
            <li key={i} data-testid="research-sub" data-state={q.state}>
              <span className="research-question">{q.question}</span>{' '}
              <span className={`badge research-state ${q.state}`}>{t(`research.state.${q.state}`)}</span>{' '}
              <span className="research-counts">{t('research.counts', { found: q.found, read: q.read })}</span>
            </li>
          ))}
        </ol>
      )}
      <p className="research-stats" data-testid="research-stats">
        {t('research.stats', {
          found: progress.sources_found,
          read: progress.sources_read,
          notes: progress.notes,
          seconds,
        })}
      </p>
      <div className="message-actions">
        {running && onStop && (
          <button type="button" className="stop danger" data-testid="research-stop" onClick={onStop}>
            {t('research.stop')}
          </button>
        )}
        {!running && onExport && (
          <button type="button" data-testid="research-export" onClick={onExport}>
            {t('research.export')}
          </button>
        )}
      </div>
    </section>
  );
}
