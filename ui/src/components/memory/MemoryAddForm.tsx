// The form to tell the assistant something directly: the sentence, an optional slot, pinned;
// added to the project the list shows, when it shows one project's memories.

import { useT } from '../../i18n';
import type { MemoryDraft } from '../../memory/memoryStore';

interface Props {
  draft: MemoryDraft;
  busy: boolean;
  onChange: (change: Partial<MemoryDraft>) => void;
  onAdd: () => void;
  /** The project (by name) it is added to; global when absent. */
  project?: string;
}

export function MemoryAddForm({ draft, busy, onChange, onAdd, project }: Props) {
  const t = useT();
  return (
    <form
      className="memory-add"
      onSubmit={(e) => {
        e.preventDefault();
        onAdd();
      }}
    >
      <label className="grow">
        <span>{t('memory.add.content')}</span>
        <input
          name="content"
          data-testid="memory-add-content"
          value={draft.content}
          placeholder={t('memory.add.placeholder')}
          onChange={(e) => onChange({ content: e.target.value })}
        />
      </label>
      <label>
        <span>{t('memory.add.slot')}</span>
        <input name="slot" value={draft.slot} placeholder="preference.drink" onChange={(e) => onChange({ slot: e.target.value })} />
      </label>
      <label className="check">
        <input type="checkbox" name="pinned" checked={draft.pinned} onChange={(e) => onChange({ pinned: e.target.checked })} />
        <span>{t('memory.add.pinned')}</span>
      </label>
      <button type="submit" className="primary" data-testid="memory-add" disabled={busy || draft.content.trim() === ''}>
        {project === undefined ? t('memory.add.submit') : t('memory.add.submitTo', { name: project })}
      </button>
    </form>
  );
}
