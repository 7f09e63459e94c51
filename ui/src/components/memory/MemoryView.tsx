// The memory page: "what does the assistant know about me, and how do I fix or remove it".
// Two tabs: the memories (the store's counts with export and import, and the import from
// another assistant (`AssistantImport`), the "ask before remembering" switch with what waits
// for the person's yes (`AskFirst`), filters (by project too),
// add form, bulk selection, the virtual list and the open memory's detail, which can move it
// to another project) and the queue of conflicts to
// review. State and calls live in `MemoryStore`;
// the Memory button's conflict count (`ConflictBadge`) is told of every change to the queue.
// Other pages open a memory here (`memoryId`); a memory opens the conversation it was learned
// in (`onOpenChat`).

import { useCallback, useEffect, useState } from 'react';
import type { Memory } from '../../generated/engine';
import { useT } from '../../i18n';
import type { ConflictBadge } from '../../memory/conflictBadge';
import { type MemoryFilters as Filters, MemoryStore, filteredProject } from '../../memory/memoryStore';
import { findSource } from '../../memory/provenance';
import { type SettingsTransport, describe } from '../../settings/store';
import type { Download } from '../../trace/traceStore';
import { LoadState } from '../settings/LoadState';
import { AskFirst } from './AskFirst';
import { AssistantImport } from './AssistantImport';
import { ConflictQueue } from './ConflictQueue';
import { DeleteDialog } from './DeleteDialog';
import { MemoryAddForm } from './MemoryAddForm';
import { MemoryDetail, type SourceLookup } from './MemoryDetail';
import { MemoryFilters } from './MemoryFilters';
import { MemoryList } from './MemoryList';
import { MemoryStats } from './MemoryStats';
import { MemoryTransfer } from './MemoryTransfer';
import { SearchResults } from './SearchResults';
import { useMemoryStore } from './useMemoryStore';

type Tab = 'list' | 'conflicts';

interface Props {
  transport: SettingsTransport;
  /** The Memory button's count of open conflicts. */
  badge?: ConflictBadge;
  /** A memory to open (a link on another page). */
  memoryId?: string | null;
  /** Opens a conversation, at a message when given (where a memory was learned). */
  onOpenChat?: (session: string, messageId: string | null) => void;
  /** Opens a turn's trace (an answer a memory was read in). */
  onOpenTrace?: (turnId: string) => void;
  /** How an export is saved (the browser's download unless a test passes one). */
  download?: Download;
}

export function MemoryView({ transport, badge, memoryId, onOpenChat, onOpenTrace, download }: Props) {
  const t = useT();
  const [state, store] = useMemoryStore(() => new MemoryStore(transport, badge, download ? { download } : {}));
  const [tab, setTab] = useState<Tab>('list');
  const [source, setSource] = useState<{ id: string; lookup: SourceLookup } | null>(null);
  useEffect(() => {
    if (memoryId) {
      setTab('list');
      void store.open(memoryId);
    }
  }, [memoryId, store]);
  const showSource = async (m: Memory) => {
    if (!onOpenChat) return;
    setSource({ id: m.id, lookup: { state: 'looking' } });
    try {
      const found = await findSource(transport, m);
      if (found) {
        setSource(null);
        onOpenChat(found.session, found.messageId);
      } else {
        setSource({ id: m.id, lookup: { state: 'gone' } });
      }
    } catch (e) {
      setSource({ id: m.id, lookup: { state: 'error', message: describe(e) } });
    }
  };
  const { items, total, loading, loadError, selected, detail, detailError, openId, pending, busy, actionError, deleted, conflicts } = state;
  const onFilter = useCallback((change: Partial<Filters>) => void store.setFilters(change), [store]);
  const onLoadMore = useCallback(() => void store.loadMore(), [store]);
  const open = (id: string) => {
    setTab('list');
    void store.open(id);
  };
  const tabButton = (id: Tab, label: string) => (
    <button type="button" role="tab" aria-selected={tab === id} data-testid={`memory-tab-${id}`} onClick={() => setTab(id)}>
      {label}
    </button>
  );

  return (
    <div className="memory">
      <div className="memory-head">
        <div>
          <h2>{t('memory.heading')}</h2>
          <p className="help">{t('memory.help')}</p>
        </div>
        <div className="memory-tabs" role="tablist">
          {tabButton('list', t('memory.tab.list'))}
          {tabButton('conflicts', t('memory.tab.conflicts', { count: conflicts?.length ?? 0 }))}
        </div>
      </div>
      {actionError && !pending && (
        <div className="banner error" role="alert" data-testid="memory-error">
          <span>{t('memory.failed', { message: actionError })}</span>
          <button type="button" onClick={() => store.dismissError()}>{t('error.dismiss')}</button>
        </div>
      )}
      {deleted !== null && (
        <div className="banner notice" role="status" data-testid="memory-deleted">
          <span>{t('memory.deletedCount', { count: deleted })}</span>
          <button type="button" onClick={() => store.dismissError()}>{t('error.dismiss')}</button>
        </div>
      )}
      {tab === 'conflicts' ? (
        <ConflictQueue
          conflicts={conflicts}
          memories={state.conflictMemories}
          error={state.conflictsError}
          busy={busy}
          onResolve={(id, keep) => void store.resolve(id, keep)}
          onOpen={open}
          merge={state.merge}
          onStartMerge={(id) => store.startMerge(id)}
          onEditMerge={(change) => store.editMerge(change)}
          onSubmitMerge={() => void store.submitMerge()}
          onCancelMerge={() => store.cancelMerge()}
        />
      ) : (
        <>
          <div className="memory-overview">
            <MemoryStats stats={state.stats} error={state.statsError} />
            <MemoryTransfer
              busy={state.transferring}
              exported={state.exported}
              imported={state.imported}
              error={state.transferError}
              onExport={() => void store.exportMemories()}
              onImport={(text) => void store.importMemories(text)}
              onDismiss={() => store.dismissTransfer()}
            />
            <AssistantImport transport={transport} projects={state.projects} onImported={() => void store.refreshAfterImport()} />
          </div>
          <AskFirst transport={transport} onKept={() => void store.refreshAfterImport()} />
          <MemoryFilters
            filters={state.filters}
            projects={state.projects}
            onChange={onFilter}
            onSearch={(text) => void store.searchByMeaning(text)}
          />
          <MemoryAddForm
            draft={state.draft}
            busy={busy}
            project={filteredProject(state.filters.scope)}
            onChange={(c) => store.editDraft(c)}
            onAdd={() => void store.add()}
          />
          <div className="memory-bulk">
            <input
              type="checkbox"
              aria-label={t('memory.selectAll')}
              title={t('memory.selectAll')}
              checked={items.length > 0 && items.every((m) => selected.includes(m.id))}
              onChange={() => store.toggleAllLoaded()}
            />
            <span className="muted" data-testid="memory-count">
              {total === undefined ? '' : t('memory.count', { loaded: items.length, total })}
            </span>
            {selected.length > 0 && (
              <>
                <span>{t('memory.selected', { count: selected.length })}</span>
                <button type="button" onClick={() => store.clearSelection()}>{t('memory.clearSelection')}</button>
                <button type="button" className="danger" data-testid="memory-delete-selected" onClick={() => store.requestDelete()}>
                  {t('memory.deleteSelected')}
                </button>
              </>
            )}
            <button type="button" className="danger memory-delete-all" data-testid="memory-delete-all" onClick={() => store.requestDeleteAll()}>
              {t('memory.deleteAll')}
            </button>
          </div>
          <div className="memory-body">
            <div className="memory-list-pane">
              {state.search ? (
                <SearchResults
                  query={state.search.query}
                  results={state.search.results}
                  error={state.search.error}
                  openId={openId}
                  onOpen={(id) => void store.open(id)}
                  onEnd={() => store.endSearch()}
                />
              ) : (
                <>
                  {(loadError || total === undefined) && <LoadState loaded={total !== undefined} error={loadError} />}
                  {total === 0 && <p className="muted memory-empty" data-testid="memory-empty">{t('memory.empty')}</p>}
                  <MemoryList
                    items={items}
                    hasMore={total !== undefined && items.length < total}
                    loading={loading}
                    selected={selected}
                    openId={openId}
                    onLoadMore={onLoadMore}
                    onToggle={(id) => store.toggleSelected(id)}
                    onOpen={(id) => void store.open(id)}
                    projects={state.projects}
                  />
                </>
              )}
            </div>
            <div className="memory-detail-pane">
              {openId === null && <p className="muted">{t('memory.pickOne')}</p>}
              {openId !== null && detailError && (
                <p className="banner error" role="alert">{t('settings.loadFailed', { message: detailError })}</p>
              )}
              {openId !== null && !detail && !detailError && <p className="muted">{t('memory.detail.loading')}</p>}
              {detail && (
                <MemoryDetail
                  key={`${detail.id} ${detail.valid_until ?? ''} ${detail.scope}`}
                  detail={detail}
                  fading={state.fading}
                  fadingError={state.fadingError}
                  editing={state.editing}
                  busy={busy}
                  onStartEdit={() => store.startEdit()}
                  onEditText={(text) => store.editText(text)}
                  onSaveEdit={() => void store.saveEdit()}
                  onCancelEdit={() => store.cancelEdit()}
                  onPin={(pinned) => void store.setPinned(pinned)}
                  onForget={() => void store.forget()}
                  onRestore={() => void store.restore()}
                  onUndo={(change) => void store.undo(change)}
                  onDelete={() => store.requestDelete([detail.id])}
                  onSetExpiry={(date) => void store.setExpiry(date)}
                  projects={state.projects}
                  onMove={(project) => void store.move(project)}
                  onFollow={(id) => void store.follow(id)}
                  onClose={() => store.close()}
                  onShowSource={onOpenChat ? () => void showSource(detail) : undefined}
                  onOpenTrace={onOpenTrace}
                  source={source?.id === detail.id ? source.lookup : null}
                />
              )}
            </div>
          </div>
        </>
      )}
      {pending && (
        <DeleteDialog
          pending={pending}
          canConfirm={store.canConfirm()}
          busy={busy}
          error={actionError}
          onType={(text) => store.typeConfirmation(text)}
          onConfirm={() => void store.confirmDelete()}
          onCancel={() => store.cancelDelete()}
        />
      )}
    </div>
  );
}
