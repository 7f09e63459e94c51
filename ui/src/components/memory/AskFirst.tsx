// "Ask before remembering" on the memory page: the switch (saved at once; it shows what the
// engine saved, goes back when saving fails and says why), what it means in one line, and the
// proposals waiting for the person's yes (`WaitingProposals`). What a save or a decision did
// is read out (a live region); a kept proposal reads the memory list again (`onKept`). State
// and calls live in `AskFirstStore`.

import { useId } from 'react';
import type { MemoryProposal } from '../../generated/engine';
import { type MessageKey, useT } from '../../i18n';
import { AskFirstStore, type AskFirstState, type Decision, asking } from '../../memory/askFirst';
import type { SettingsTransport } from '../../settings/store';
import { LoadState } from '../settings/LoadState';
import { useSettingsStore } from '../settings/useSettingsStore';
import { useKeepFocus } from '../useKeepFocus';
import { WaitingProposals } from './WaitingProposals';

const DONE: Record<Decision, MessageKey> = { kept: 'memory.waiting.kept', discarded: 'memory.waiting.discarded' };
const FAILED: Record<Decision, MessageKey> = { kept: 'memory.waiting.keepFailed', discarded: 'memory.waiting.discardFailed' };

/** What the switch's last save says: on its way, or what was saved. */
function savedKey(s: AskFirstState): MessageKey | null {
  if (s.saving !== null) return 'memory.askFirst.saving';
  if (!s.saved) return null;
  return asking(s) ? 'memory.askFirst.savedOn' : 'memory.askFirst.savedOff';
}

interface Props {
  transport: SettingsTransport;
  /** Called after a proposal was kept (to read the memories again). */
  onKept: () => void;
}

export function AskFirst({ transport, onKept }: Props) {
  const t = useT();
  const help = useId();
  const [state, store] = useSettingsStore(() => new AskFirstStore(transport));
  const { settings, saveError, pending, done, decideError } = state;
  const { part, pressed } = useKeepFocus<HTMLElement>(pending, pending.length > 0);
  const saved = savedKey(state);
  const keep = async (p: MemoryProposal) => {
    pressed();
    if (await store.keep(p)) onKept();
  };

  return (
    <section className="memory-ask-first" ref={part} tabIndex={-1} data-testid="memory-ask-first">
      <div className="memory-ask-first-setting">
        <label className="check">
          <input
            type="checkbox"
            data-testid="ask-first-toggle"
            checked={asking(state)}
            disabled={settings === undefined || state.saving !== null}
            aria-describedby={help}
            onChange={(e) => void store.setAsking(e.target.checked)}
          />
          {t('memory.askFirst.label')}
        </label>
        <span className="help" id={help}>{t('memory.askFirst.help')}</span>
      </div>
      <LoadState loaded={settings !== undefined} error={state.loadError} />
      <p className="memory-ask-first-status" role="status" data-testid="ask-first-status">
        {saved && t(saved)}
        {saved && done && ' '}
        {done && t(DONE[done])}
      </p>
      {saveError && (
        <p className="turn-error" role="alert" data-testid="ask-first-error">{t('memory.askFirst.failed', { message: saveError })}</p>
      )}
      {decideError && (
        <p className="turn-error" role="alert" data-testid="memory-waiting-error">
          {decideError.code === 'not_found' ? t('memory.waiting.gone') : t(FAILED[decideError.decision], { message: decideError.message })}
        </p>
      )}
      <WaitingProposals
        proposals={state.proposals}
        error={state.proposalsError}
        pending={pending}
        onKeep={(p) => void keep(p)}
        onDiscard={(p) => {
          pressed();
          void store.discard(p);
        }}
      />
    </section>
  );
}
