// The chat domain's one store: the session list, the projects, the selected session's
// messages (and, for a new one, the project it will start in), the running turn, and what a
// finished turn taught memory (or, with "ask before remembering", proposes to remember, kept
// or discarded from the line under the answer). Components read it through
// `useSyncExternalStore` and call its actions; it talks to the engine only through a
// `Transport`.

import type {
  ApprovalAnswer,
  LearnedInTurn,
  LearnedMemories,
  MemoryProposal,
  Project,
  SessionDeleted,
  SessionSummary,
  StoredMessage,
  TemporaryChat,
  TurnLearned,
} from './generated/engine';
import { type Transport, TransportError } from './transport';
import {
  type AssistantView,
  type ChatMessage,
  failTurn,
  fromHistory,
  keyForStored,
  newTurn,
  type ProposalDecisions,
  reduceTurn,
  type UserView,
} from './turnStore';

/** Everything the chat shows. */
export interface ChatState {
  sessions: SessionSummary[];
  /** The selected session's name, or null before the first one exists. */
  selected: string | null;
  messages: ChatMessage[];
  loadingHistory: boolean;
  /** The running turn of the selected session: its assistant message's key and turn id. */
  running: { session: string; key: string; turnId: string | undefined } | null;
  /** The approval question already answered (the dialog closes while the engine resolves it). */
  answered: string | null;
  /** A failure not tied to one message (listing sessions, answering an approval, …). */
  error: string | null;
  /**
   * A stored message to bring into view and mark (where a memory was learned): the key of the
   * chat message showing it, or null when the conversation no longer has it.
   */
  highlight: { messageId: string; key: string | null } | null;
  /**
   * The selected conversation is a temporary chat (`recall`: it may read memory): the engine
   * keeps nothing of it once it is left, and it is deleted when the person leaves it.
   */
  temporary: TemporaryChat | null;
  /** The projects (for the sidebar's groups and the new conversation's project select). */
  projects: Project[];
  /**
   * The project (by name) a new conversation starts in, chosen before its first message;
   * null for none, and for a conversation picked from the list (it is in its own project).
   */
  project: string | null;
}

const SELECTED_KEY = 'echo-desk-session';

function describe(e: unknown): string {
  if (e instanceof TransportError) return e.message;
  return e instanceof Error ? e.message : String(e);
}

/** A session name for "new session", unique to the second. */
export function newSessionName(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `chat-${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
}

/** How a store starts its sessions and runs its turns. */
export interface ChatStoreOptions {
  /** The name of a new session started at `now` (default: `newSessionName`). */
  sessionName?: (now: Date) => string;
  /** Runs every turn as a quick-ask turn (the desktop's quick-ask window). */
  quick?: boolean;
  /** How often to ask what a finished turn taught memory, in ms (default 1000). */
  learnedPollMs?: number;
}

/** How long after its answer a turn's memory extraction is waited for. */
const LEARNED_WAIT_MS = 90_000;

/**
 * The user message regenerate would replace from: the one right before the last message,
 * when that is a finished answer and the user message's stored id is known; null otherwise
 * (and always while a turn runs).
 */
export function regenerateTarget(state: ChatState): UserView | null {
  if (state.running) return null;
  const last = state.messages[state.messages.length - 1];
  const before = state.messages[state.messages.length - 2];
  if (last?.role !== 'assistant' || before?.role !== 'user' || !before.id) return null;
  return before;
}

/** Whether a user message can be edited and sent again (its stored id is known, no turn runs). */
export function canEdit(state: ChatState, m: ChatMessage): boolean {
  return state.running === null && m.role === 'user' && m.id !== undefined;
}

/**
 * Gives the local user messages that have no stored id yet the ids of the stored ones,
 * matched from the end (the stored history is what the chat shows, minus what only lives
 * locally) and only where the texts agree.
 */
export function withStoredIds(messages: ChatMessage[], stored: StoredMessage[]): ChatMessage[] {
  const storedUsers = stored.filter((m) => m.role === 'user');
  const userIndexes = messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
  const offset = storedUsers.length - userIndexes.length;
  let changed = false;
  const out = messages.slice();
  userIndexes.forEach((index, n) => {
    const local = out[index] as UserView;
    const match = storedUsers[n + offset];
    if (local.id || !match || match.content.trim() !== local.text.trim()) return;
    out[index] = { ...local, id: match.id };
    changed = true;
  });
  return changed ? out : messages;
}

/** A temporary chat's name, unique to the second: `temporary-20261207-101500`. */
export function temporarySessionName(now: Date): string {
  return newSessionName(now).replace(/^chat-/, 'temporary-');
}

/** A quick-ask session's name, unique to the second: `Quick ask 2026-11-30 23:10:05`. */
export function quickSessionName(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `Quick ask ${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())} ${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}`;
}

/**
 * Whether the selected conversation is new: none selected yet, or one not in the list yet
 * (its first message starts it).
 */
export function isNewChat(state: ChatState): boolean {
  return !state.sessions.some((s) => s.name === state.selected);
}

/**
 * The project (by name) the selected conversation is in: the list's word for a listed one,
 * else the one it is being started in once its first message is sent; null for none.
 */
export function sessionProject(state: ChatState): string | null {
  const listed = state.sessions.find((s) => s.name === state.selected);
  if (listed) return listed.project ?? null;
  return state.messages.length > 0 ? state.project : null;
}

/** The store; one per page. */
export class ChatStore {
  private state: ChatState = {
    sessions: [],
    selected: null,
    messages: [],
    loadingHistory: false,
    running: null,
    answered: null,
    error: null,
    highlight: null,
    temporary: null,
    projects: [],
    project: null,
  };
  private readonly listeners = new Set<() => void>();
  private readonly transport: Transport;
  private readonly storage: Pick<Storage, 'getItem' | 'setItem'> | undefined;
  private readonly options: ChatStoreOptions;
  private counter = 0;
  /**
   * Turns whose answer is complete but whose stream has not ended (follow-up questions may
   * still come): their assistant message's key and session name. The next message may go
   * meanwhile; the engine lets the questions give way to it.
   */
  private readonly answeredTurns = new Map<string, string>();

  constructor(
    transport: Transport,
    storage?: Pick<Storage, 'getItem' | 'setItem'>,
    options: ChatStoreOptions = {},
  ) {
    this.transport = transport;
    this.storage = storage;
    this.options = options;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): ChatState => this.state;

  private set(change: Partial<ChatState>) {
    this.state = { ...this.state, ...change };
    for (const l of this.listeners) l();
  }

  /** Loads the sessions and opens the last selected one (or the most recent). */
  async init(): Promise<void> {
    await Promise.all([this.refreshSessions(), this.refreshProjects()]);
    const remembered = this.storage?.getItem(SELECTED_KEY) ?? null;
    const names = this.state.sessions.map((s) => s.name);
    const pick = remembered && names.includes(remembered) ? remembered : (names[0] ?? null);
    if (pick) await this.select(pick);
  }

  async refreshSessions(): Promise<void> {
    try {
      this.set({ sessions: await this.transport.call('list_sessions', {}) });
    } catch (e) {
      this.set({ error: describe(e) });
    }
  }

  /**
   * Reads the projects again. A failure leaves the list as it was (the chat works without
   * projects); a new conversation's project that is gone (removed, renamed) is dropped.
   */
  async refreshProjects(): Promise<void> {
    let projects: Project[];
    try {
      projects = await this.transport.call('list_projects', {});
    } catch {
      return;
    }
    const { project, messages } = this.state;
    const gone = project !== null && messages.length === 0 && !projects.some((p) => p.name === project);
    this.set({ projects, ...(gone ? { project: null } : {}) });
  }

  /** Opens a session and loads its history. */
  async select(name: string): Promise<void> {
    if (this.state.running) return;
    this.leaveTemporary();
    this.storage?.setItem(SELECTED_KEY, name);
    this.set({ selected: name, messages: [], loadingHistory: true, highlight: null, project: null });
    try {
      const stored = await this.transport.call('history', { session: name });
      if (this.state.selected === name) {
        this.set({ messages: fromHistory(stored) });
        void this.showWaiting(name);
      }
    } catch (e) {
      // A new session has no history until its first turn.
      if (!(e instanceof TransportError && e.code === 'not_found')) this.set({ error: describe(e) });
    } finally {
      if (this.state.selected === name) this.set({ loadingHistory: false });
    }
  }

  /**
   * Renames a session on the server, then in the list (and the selection, if it was the one).
   * Rejects with the transport's error (a bad or taken name) so the caller can show it.
   */
  async rename(name: string, newName: string): Promise<void> {
    const summary = await this.transport.call('rename_session', { name, new_name: newName });
    const sessions = this.state.sessions.map((s) => (s.name === name ? summary : s));
    if (this.state.selected === name) {
      this.storage?.setItem(SELECTED_KEY, summary.name);
      const running = this.state.running;
      for (const [key, session] of this.answeredTurns) {
        if (session === name) this.answeredTurns.set(key, summary.name);
      }
      this.set({
        sessions,
        selected: summary.name,
        running: running && running.session === name ? { ...running, session: summary.name } : running,
      });
    } else {
      this.set({ sessions });
    }
  }

  /**
   * Moves a session into a project (by name), or out of any (null), on the server, then in
   * the list: the sidebar shows it in its new group, and the chat, when it is the selected
   * one, its new project. Rejects with the transport's error (an unknown project or session)
   * so the caller can show it.
   */
  async move(name: string, project: string | null): Promise<void> {
    const summary = await this.transport.call('move_session', { name, ...(project !== null ? { project } : {}) });
    this.set({ sessions: this.state.sessions.map((s) => (s.name === name ? summary : s)) });
  }

  /**
   * Deletes a session on the server, keeping, forgetting (reversibly) or deleting (for good)
   * the memories learned in it as `memories` says, then drops it from the list; a deleted
   * selected session gives way to the first remaining one (or none). Resolves with the
   * engine's answer (how many memories were forgotten or deleted; 0 when kept). Rejects with
   * the transport's error.
   */
  async remove(name: string, memories: LearnedMemories): Promise<SessionDeleted> {
    const deleted = await this.transport.call('delete_session', { name, memories });
    const sessions = this.state.sessions.filter((s) => s.name !== name);
    this.set({ sessions });
    if (this.state.selected !== name) return deleted;
    const next = sessions[0]?.name ?? null;
    if (next) {
      await this.select(next);
    } else {
      this.set({ selected: null, messages: [], loadingHistory: false });
    }
    return deleted;
  }

  /**
   * Forgets (reversibly, as one change) every memory learned in a session; resolves with how
   * many were forgotten. Rejects with the transport's error.
   */
  async forgetMemories(name: string): Promise<number> {
    const forgotten = await this.transport.call('memory_forget_session', { session: name });
    return forgotten.length;
  }

  /**
   * Opens a session another window asked for (quick ask handing a conversation over):
   * reloads the list first, since the session may be new to it.
   */
  async open(name: string): Promise<void> {
    if (this.state.running) return;
    await this.refreshSessions();
    await this.select(name);
  }

  /**
   * Opens a session from another page (a trace's session, where a memory was learned), at one
   * of its stored messages when `messageId` is given: the chat brings it into view and marks
   * it. Reloads the list first when the session is new to it. Not while a turn runs.
   */
  async openAt(name: string, messageId: string | null = null): Promise<void> {
    if (this.state.running) return;
    if (!this.state.sessions.some((s) => s.name === name)) await this.refreshSessions();
    await this.select(name);
    if (messageId === null || this.state.selected !== name) return;
    this.set({ highlight: { messageId, key: keyForStored(this.state.messages, messageId) } });
  }

  /** The highlighted message has been seen. */
  clearHighlight(): void {
    if (this.state.highlight) this.set({ highlight: null });
  }

  /**
   * Starts an empty session, in `project` (by name) when given; the engine creates it with
   * the first message.
   */
  newSession(now: Date = new Date(), project: string | null = null): void {
    if (this.state.running) return;
    this.leaveTemporary();
    const name = (this.options.sessionName ?? newSessionName)(now);
    this.storage?.setItem(SELECTED_KEY, name);
    this.set({ selected: name, messages: [], loadingHistory: false, highlight: null, project });
  }

  /**
   * Chooses the project (by name; null for none) the new conversation starts in; only before
   * its first message, and only for a conversation not in the list yet.
   */
  setProject(project: string | null, now: Date = new Date()): void {
    if (this.state.running || this.state.messages.length > 0 || !isNewChat(this.state)) return;
    if (this.state.selected === null) this.newSession(now, project);
    else this.set({ project });
  }

  /**
   * Makes the new conversation a temporary chat (`null`: a kept one again), under a name of
   * its own; only before its first message.
   */
  setTemporary(temporary: TemporaryChat | null, now: Date = new Date()): void {
    if (this.state.running || this.state.messages.length > 0) return;
    const name = temporary ? temporarySessionName(now) : (this.options.sessionName ?? newSessionName)(now);
    if (!temporary) this.storage?.setItem(SELECTED_KEY, name);
    this.set({ selected: name, messages: [], loadingHistory: false, highlight: null, temporary });
  }

  /**
   * Leaves a temporary chat: the engine deletes it with its trace (when a message was sent;
   * a failure is not shown: the engine deletes it when it closes anyway). Not while a turn runs.
   */
  leaveTemporary(): void {
    const { temporary, selected, messages, running } = this.state;
    if (!temporary || running) return;
    this.set({ temporary: null });
    if (selected && messages.length > 0) {
      this.transport.call('delete_session', { name: selected, memories: 'keep' }).catch(() => undefined);
    }
  }

  /** Leaves the selected session: the next message starts a new one. */
  clear(): void {
    if (this.state.running) return;
    this.leaveTemporary();
    this.set({ selected: null, messages: [], loadingHistory: false, answered: null, highlight: null, project: null });
  }

  /**
   * Sends a message in the selected session (a new one if none is selected); `research`
   * asks for a cited report instead of a quick answer.
   */
  async send(input: string, research = false): Promise<void> {
    if (this.state.running || input.trim() === '') return;
    if (!this.state.selected) this.newSession(new Date(), this.state.project);
    await this.run(input, this.state.messages, undefined, research);
  }

  /**
   * Runs the last question again: its answer (and the question) are set aside by the engine
   * and dropped here at once, then the same text is sent.
   */
  async regenerate(): Promise<void> {
    const target = regenerateTarget(this.state);
    if (!target?.id) return;
    const index = this.state.messages.indexOf(target);
    await this.run(target.text, this.state.messages.slice(0, index), target.id);
  }

  /** Sends an edited user message in place of the one with `key`, dropping it and everything after. */
  async editAndResend(key: string, input: string): Promise<void> {
    if (input.trim() === '') return;
    const index = this.state.messages.findIndex((m) => m.key === key);
    const target = this.state.messages[index];
    if (!target || !canEdit(this.state, target) || target.role !== 'user' || !target.id) return;
    await this.run(input, this.state.messages.slice(0, index), target.id);
  }

  /** Runs one turn after the messages `before`, replacing from `replaceFrom` if given. */
  private async run(
    input: string,
    before: ChatMessage[],
    replaceFrom: string | undefined,
    research = false,
  ): Promise<void> {
    if (this.state.running || !this.state.selected) return;
    const session = this.state.selected;
    // The project goes with the message that creates the conversation only: one in the list
    // already is in its project (the one it was started in, or moved to from the sidebar).
    const project = isNewChat(this.state) ? this.state.project : null;
    const n = ++this.counter;
    const key = `local-${n}`;
    this.set({
      messages: [...before, { role: 'user', key: `local-user-${n}`, text: input }, newTurn(key)],
      running: { session, key, turnId: undefined },
      answered: null,
    });
    const handle = this.transport.sendTurn(
      session,
      input,
      (event) => {
        this.updateTurn(key, (m) => reduceTurn(m, event));
        const running = this.state.running;
        if (running?.key !== key) return;
        if (event.type === 'final') {
          this.answeredTurns.set(key, running.session);
          this.set({ running: null });
        } else if (!running.turnId) {
          this.set({ running: { ...running, turnId: event.turn_id } });
        }
      },
      {
        ...(replaceFrom ? { replaceFrom } : {}),
        ...(this.options.quick ? { quick: true } : {}),
        ...(research ? { research: true } : {}),
        ...(this.state.temporary ? { temporary: this.state.temporary } : {}),
        ...(project ? { project } : {}),
      },
    );
    try {
      await handle.done;
      this.updateTurn(key, (m) =>
        failTurn(m, 'protocol', 'the event stream ended before the turn finished'),
      );
    } catch (e) {
      this.updateTurn(key, (m) =>
        failTurn(m, e instanceof TransportError ? e.code : 'network', describe(e)),
      );
    }
    // The session may have been renamed while the turn ran.
    const current = this.getState().running;
    const running = current?.key === key ? current : null;
    const name = running?.session ?? this.answeredTurns.get(key) ?? session;
    this.answeredTurns.delete(key);
    if (running) this.set({ running: null });
    void this.refreshSessions();
    await this.learnStoredIds(name);
    const turn = this.assistant(key);
    // A temporary chat teaches memory nothing: there is nothing to wait for.
    if (turn?.status === 'completed' && turn.turnId && !this.state.temporary) {
      void this.watchLearned(name, key, turn.turnId);
    }
  }

  /**
   * Asks what the turn taught memory until its extraction has ended (or a deadline passes),
   * and shows it under the answer while the session stays selected.
   */
  private async watchLearned(session: string, key: string, turnId: string): Promise<void> {
    const deadline = Date.now() + LEARNED_WAIT_MS;
    for (;;) {
      let found;
      try {
        found = await this.transport.call('turn_memory', { turn_id: turnId });
      } catch {
        return; // The line is a convenience; the memory page has everything.
      }
      if (this.state.selected !== session) return;
      const { memories: learned, proposals } = found;
      const remembering = !found.settled && Date.now() <= deadline;
      this.updateTurn(key, (m) => ({
        ...m,
        remembering,
        ...(learned.length > 0 ? { learned } : {}),
        ...(proposals.length > 0 ? { proposals } : {}),
      }));
      if (!remembering) return;
      await new Promise((r) => setTimeout(r, this.options.learnedPollMs ?? 1000));
    }
  }

  /** Undoes what a turn taught (one memory made from it): it leaves the line. */
  async undoLearned(key: string, item: LearnedInTurn): Promise<void> {
    try {
      await this.transport.call('memory_undo', { id: item.memory.id, change: item.change_id });
    } catch (e) {
      this.set({ error: describe(e) });
      return;
    }
    this.updateTurn(key, (m) => ({ ...m, learned: (m.learned ?? []).filter((l) => l.change_id !== item.change_id) }));
  }

  /**
   * Keeps what a turn proposed to remember ("ask before remembering"): the engine writes it,
   * then the line reads the turn again and shows it as learned, with Undo and Open.
   */
  async keepProposal(key: string, proposal: MemoryProposal): Promise<void> {
    await this.decide(key, proposal, 'kept', () => this.transport.call('memory_keep_proposal', { id: proposal.id }));
  }

  /** Discards what a turn proposed to remember: nothing of it is written; it leaves the line. */
  async discardProposal(key: string, proposal: MemoryProposal): Promise<void> {
    await this.decide(key, proposal, 'discarded', () => this.transport.call('memory_discard_proposal', { id: proposal.id }));
  }

  /**
   * Keep or Discard: the proposal's buttons wait while `call` runs, then the line shows what
   * the engine has for the turn now (a proposal decided elsewhere is gone from it too) and
   * says what happened, or why it failed.
   */
  private async decide(
    key: string,
    proposal: MemoryProposal,
    done: 'kept' | 'discarded',
    call: () => Promise<unknown>,
  ): Promise<void> {
    const session = this.state.selected;
    const before = this.assistant(key)?.decisions;
    if (!session || before?.pending.includes(proposal.id)) return;
    const decisions = (m: AssistantView, change: Partial<ProposalDecisions>): ProposalDecisions => ({
      pending: m.decisions?.pending ?? [],
      done: null,
      error: null,
      ...change,
    });
    this.updateTurn(key, (m) => ({ ...m, decisions: decisions(m, { pending: [...(m.decisions?.pending ?? []), proposal.id] }) }));
    let error: ProposalDecisions['error'] = null;
    try {
      await call();
    } catch (e) {
      error = { decision: done, code: e instanceof TransportError ? e.code : 'network', message: describe(e) };
    }
    let found: TurnLearned | null = null;
    try {
      found = await this.transport.call('turn_memory', { turn_id: proposal.turn_id });
    } catch {
      // The line drops what went through by itself below.
    }
    if (this.state.selected !== session) return;
    this.updateTurn(key, (m) => {
      const pending = (m.decisions?.pending ?? []).filter((id) => id !== proposal.id);
      const proposals = found?.proposals ?? (error ? m.proposals : m.proposals?.filter((p) => p.id !== proposal.id));
      return {
        ...m,
        ...(found ? { learned: found.memories } : {}),
        proposals,
        decisions: decisions(m, { pending, done: error ? null : done, error }),
      };
    });
  }

  /**
   * Puts what "ask before remembering" still waits on under the older answers it came from,
   * so a conversation opened again offers Keep / Discard where its answer is read. A failure
   * leaves them on the memory page only.
   */
  private async showWaiting(session: string): Promise<void> {
    let waiting: MemoryProposal[];
    try {
      waiting = await this.transport.call('memory_proposals', {});
    } catch {
      return;
    }
    if (this.state.selected !== session || waiting.length === 0) return;
    const byTurn = new Map<string, MemoryProposal[]>();
    for (const p of waiting) byTurn.set(p.turn_id, [...(byTurn.get(p.turn_id) ?? []), p]);
    for (const m of this.state.messages) {
      if (m.role !== 'assistant' || m.turnId === undefined || m.proposals) continue;
      const found = byTurn.get(m.turnId);
      if (found) this.updateTurn(m.key, (a) => ({ ...a, proposals: found }));
    }
  }

  /**
   * Reads again what the answers shown still ask about (Keep or Discard may have been pressed
   * on the memory page meanwhile); a failure leaves a line as it was.
   */
  async refreshProposals(): Promise<void> {
    const session = this.state.selected;
    const asking = this.state.messages.filter(
      (m): m is AssistantView & { turnId: string } => m.role === 'assistant' && m.turnId !== undefined && (m.proposals?.length ?? 0) > 0,
    );
    await Promise.all(
      asking.map(async (m) => {
        let found: TurnLearned;
        try {
          found = await this.transport.call('turn_memory', { turn_id: m.turnId });
        } catch {
          return;
        }
        if (this.state.selected === session) this.updateTurn(m.key, (a) => ({ ...a, learned: found.memories, proposals: found.proposals }));
      }),
    );
  }

  private assistant(key: string): AssistantView | undefined {
    return this.state.messages.find((m): m is AssistantView => m.role === 'assistant' && m.key === key);
  }

  /** Asks the engine for the stored ids of the user messages sent from here. */
  private async learnStoredIds(session: string): Promise<void> {
    if (!this.state.messages.some((m) => m.role === 'user' && !m.id)) return;
    let stored: StoredMessage[];
    try {
      stored = await this.transport.call('history', { session });
    } catch {
      return; // Regenerate and edit stay unavailable for these messages.
    }
    if (this.state.selected !== session || this.state.running) return;
    const messages = withStoredIds(this.state.messages, stored);
    if (messages !== this.state.messages) this.set({ messages });
  }

  /** Stops the running turn. */
  async stop(): Promise<void> {
    const turnId = this.state.running?.turnId;
    if (!turnId) return;
    try {
      await this.transport.call('cancel_turn', { turn_id: turnId });
    } catch (e) {
      this.set({ error: describe(e) });
    }
  }

  /** Answers the pending approval question. */
  async answer(requestId: string, answer: ApprovalAnswer): Promise<void> {
    this.set({ answered: requestId });
    try {
      await this.transport.call('answer_approval', { request_id: requestId, answer });
    } catch (e) {
      this.set({ answered: null, error: describe(e) });
    }
  }

  dismissError(): void {
    this.set({ error: null });
  }

  private updateTurn(key: string, change: (m: AssistantView) => AssistantView) {
    const messages = this.state.messages.map((m) =>
      m.role === 'assistant' && m.key === key ? change(m) : m,
    );
    this.set({ messages });
  }
}

/** The approval question the dialog should show, if any. */
export function pendingApproval(state: ChatState) {
  if (!state.running) return null;
  const turn = state.messages.find(
    (m): m is AssistantView => m.role === 'assistant' && m.key === state.running?.key,
  );
  const approval = turn?.approval ?? null;
  return approval && approval.requestId !== state.answered ? approval : null;
}
