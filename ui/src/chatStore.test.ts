// The chat store with a scripted transport: a turn's events reach its message, the approval
// dialog opens and closes, Stop cancels the right turn, history loads on select, a broken
// stream fails the message with a readable error, a new conversation's project goes with
// its first message only, a conversation moves to another project (or out of any), and what
// a turn proposes to remember is kept or discarded, also under an older answer opened again.

import { describe, expect, it } from 'vitest';
import { ChatStore, canEdit, isNewChat, pendingApproval, quickSessionName, regenerateTarget, sessionProject, withStoredIds } from './chatStore';
import type { EventEnvelope, MemoryProposal, SessionSummary, StoredMessage, TurnEvent } from './generated/engine';
import { memory, memoryEngine, project, proposal } from './memory/testFakes';
import { FakeEngine } from './testing/fakeEngine';
import { TransportError, type TurnOptions } from './transport';
import type { AssistantView } from './turnStore';

/** A transport whose turn is driven by the test: `emit` events, then `end` or `broken`. */
class FakeTransport extends FakeEngine {
  calls: string[] = [];
  sessions: SessionSummary[] = [];
  stored: Record<string, StoredMessage[]> = {};
  /** How many memories each session taught (what a delete that forgets or deletes them counts). */
  learned: Record<string, number> = {};
  /**
   * Like the engine: a turn in an unknown session creates it (in the project it names), and
   * one naming a project the session is not in is refused. Off unless a test turns it on.
   */
  createsSessions = false;
  private onEvent: ((e: EventEnvelope) => void) | undefined;
  private finish: (() => void) | undefined;
  private breakWith: ((e: Error) => void) | undefined;
  private seq = 0;
  /** Every turn sent, in order, for tests where one is still streaming when the next goes. */
  private readonly turns: { onEvent: (e: EventEnvelope) => void; finish: () => void }[] = [];

  constructor() {
    super();
    this.handlers = {
      list_sessions: () => this.sessions,
      history: ({ session }) => {
        const found = this.stored[session];
        if (!found) throw new TransportError('not_found', `no session ${session}`, 404);
        return found;
      },
      rename_session: ({ name, new_name: newName }) => {
        this.calls.push(`rename ${name} ${newName}`);
        const found = this.sessions.find((s) => s.name === name);
        if (!found) throw new TransportError('not_found', `no session ${name}`, 404);
        if (this.sessions.some((s) => s.name === newName)) {
          throw new TransportError('invalid_input', `the name ${newName} is taken`, 400);
        }
        const renamed = { ...found, name: newName };
        this.sessions = this.sessions.map((s) => (s.name === name ? renamed : s));
        return renamed;
      },
      delete_session: ({ name, memories }) => {
        this.calls.push(`delete ${name} ${memories}`);
        if (!this.sessions.some((s) => s.name === name)) throw new TransportError('not_found', `no session ${name}`, 404);
        this.sessions = this.sessions.filter((s) => s.name !== name);
        return { memories: memories === 'keep' ? 0 : (this.learned[name] ?? 0) };
      },
      cancel_turn: ({ turn_id: turnId }) => {
        this.calls.push(`cancel ${turnId}`);
        return null;
      },
      answer_approval: ({ request_id: requestId, answer }) => {
        this.calls.push(`answer ${requestId} ${answer}`);
        return null;
      },
    };
  }

  sendTurn(session: string, input: string, onEvent: (e: EventEnvelope) => void, options?: TurnOptions) {
    const extra = [
      ...(options?.replaceFrom ? [`replacing ${options.replaceFrom}`] : []),
      ...(options?.quick ? ['quick'] : []),
      ...(options?.research ? ['research'] : []),
      ...(options?.temporary ? [`temporary ${options.temporary}`] : []),
      ...(options?.project ? [`project ${options.project}`] : []),
    ];
    this.calls.push([`send ${session} ${input}`, ...extra].join(' '));
    if (this.createsSessions) {
      const found = this.sessions.find((s) => s.name === session);
      if (found && options?.project !== undefined && found.project !== options.project) {
        return { done: Promise.reject(new TransportError('invalid_input', `${session} is not a conversation of project ${options.project}`, 400)) };
      }
      if (!found) {
        this.sessions = [...this.sessions, { id: `s-${this.sessions.length}`, name: session, ...(options?.project ? { project: options.project } : {}) } as SessionSummary];
      }
    }
    this.onEvent = onEvent;
    return {
      done: new Promise<void>((resolve, reject) => {
        this.finish = resolve;
        this.breakWith = reject;
        this.turns.push({ onEvent, finish: resolve });
      }),
    };
  }
  /** An event of the `n`th turn sent (from 0), whichever is the latest. */
  emitTo(n: number, event: TurnEvent) {
    this.turns[n]?.onEvent({ v: 1, turn_id: `t${n + 1}`, seq: this.seq++, ...event });
  }
  endTurn(n: number) {
    this.turns[n]?.finish();
  }
  emit(event: TurnEvent) {
    this.onEvent?.({ v: 1, turn_id: 't1', seq: this.seq++, ...event });
  }
  end() {
    this.finish?.();
  }
  broken(message: string) {
    this.breakWith?.(new TransportError('network', message));
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const started: TurnEvent = { type: 'turn_started', session_id: 's', session_name: 'web' };
const finished: TurnEvent = {
  type: 'turn_finished',
  status: 'completed',
  usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0 },
  trace_id: 't1',
};

describe('ChatStore', () => {
  it('asks for research when told to, and folds its progress into the answer', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    const sent = store.send('plan six days in kyoto', true);
    transport.emit(started);
    const progress = {
      run_id: 'r1',
      phase: 'gathering' as const,
      sub_questions: [{ question: 'hotels', state: 'reading' as const, found: 2, read: 1 }],
      sources_found: 2,
      sources_read: 1,
      notes: 1,
      elapsed_ms: 1200,
    };
    transport.emit({ type: 'research_progress', progress });
    const answer = store.getState().messages[1];
    expect(answer?.role === 'assistant' && answer.research).toEqual(progress);
    transport.emit({ type: 'final', text: 'Report [^1]' });
    transport.emit({ type: 'follow_ups', questions: ['And in autumn?'] });
    const reported = store.getState().messages[1];
    expect(reported?.role === 'assistant' && reported.followUps).toEqual(['And in autumn?']);
    transport.emit(finished);
    transport.end();
    await sent;
    const quick = store.send('a quick one');
    transport.emit(finished);
    transport.end();
    await quick;
    expect(transport.calls.filter((c) => c.startsWith('send'))).toEqual([
      expect.stringMatching(/^send chat-\S+ plan six days in kyoto research$/),
      expect.stringMatching(/^send chat-\S+ a quick one$/),
    ]);
  });

  it('takes the next message once an answer is final, and still shows that answer\'s follow-up questions', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    const first = store.send('Tell me about Kyoto');
    transport.emitTo(0, started);
    expect(store.getState().running).not.toBeNull();
    void store.send('too early');
    transport.emitTo(0, { type: 'final', text: 'Kyoto is lovely in spring.' });
    // The answer is complete: the composer is free while the side model writes questions.
    expect(store.getState().running).toBeNull();
    const second = store.send('And in autumn?');
    await tick();
    expect(transport.calls.filter((c) => c.startsWith('send')).map((c) => c.split(' ').slice(2).join(' '))).toEqual([
      'Tell me about Kyoto',
      'And in autumn?',
    ]);
    const secondKey = store.getState().running?.key;
    expect(secondKey).toBeDefined();

    // The first turn's stream ends while the second runs: its questions land under its own
    // answer, and the second turn stays the running one.
    transport.emitTo(0, { type: 'follow_ups', questions: ['Which months are quiet?'] });
    transport.emitTo(0, finished);
    transport.endTurn(0);
    await first;
    expect(store.getState().running?.key).toBe(secondKey);
    const [, answer, , next] = store.getState().messages as AssistantView[];
    expect(answer?.followUps).toEqual(['Which months are quiet?']);
    expect(answer?.status).toBe('completed');
    expect(next?.status).toBe('running');

    transport.emitTo(1, started);
    transport.emitTo(1, { type: 'final', text: 'Quieter.' });
    transport.emitTo(1, finished);
    transport.endTurn(1);
    await second;
    expect(store.getState().running).toBeNull();
    expect((store.getState().messages[3] as AssistantView).text).toBe('Quieter.');
  });

  it('says it is remembering, then shows what a finished turn taught memory, and undoes one', async () => {
    const transport = new FakeTransport();
    const learned = { memory: memory(1, { content: 'The user eats fish now' }), change_id: 'c1', replaced: 'The user is vegetarian' };
    const asked: string[] = [];
    const undone: unknown[] = [];
    transport.handlers.turn_memory = ({ turn_id: turnId }) => {
      asked.push(turnId);
      return asked.length < 3 ? { settled: false, memories: [], proposals: [] } : { settled: true, memories: [learned], proposals: [] };
    };
    transport.handlers.memory_undo = (r) => {
      undone.push(r);
      return [];
    };
    const store = new ChatStore(transport, undefined, { learnedPollMs: 1 });
    const sent = store.send('I eat fish now');
    transport.emit(started);
    transport.emit({ type: 'final', text: 'Fish it is.' });
    transport.emit(finished);
    transport.end();
    await sent;
    const answer = () => store.getState().messages[1] as AssistantView;
    const wait = async (what: () => boolean) => {
      const deadline = Date.now() + 5000;
      while (!what() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    };
    // While the extraction runs, the answer says it is remembering.
    await wait(() => answer().remembering === true);
    expect(answer().remembering).toBe(true);
    await wait(() => answer().learned !== undefined);
    expect(answer().learned).toEqual([learned]);
    expect(answer().remembering).toBe(false);
    expect(asked).toEqual(['t1', 't1', 't1']);

    await store.undoLearned(answer().key, learned);
    expect(undone).toEqual([{ id: 'm-0001', change: 'c1' }]);
    expect(answer().learned).toEqual([]);
  });

  it('shows what a turn proposes to remember; Keep writes it and shows it learned, Discard drops it', async () => {
    const transport = new FakeTransport();
    const engine = memoryEngine(0);
    engine.propose(
      proposal(1, { content: 'The user is vegetarian.' }),
      proposal(2, { content: 'The user has a cat.' }),
      proposal(3, { content: 'The user plays chess.' }),
    );
    transport.handlers.turn_memory = engine.handlers.turn_memory;
    transport.handlers.memory_keep_proposal = engine.handlers.memory_keep_proposal;
    transport.handlers.memory_discard_proposal = engine.handlers.memory_discard_proposal;
    const store = new ChatStore(transport, undefined, { learnedPollMs: 1 });
    const sent = store.send('I am vegetarian, I have a cat and I play chess');
    transport.emit(started);
    transport.emit({ type: 'final', text: 'Noted.' });
    transport.emit(finished);
    transport.end();
    await sent;
    const answer = () => store.getState().messages[1] as AssistantView;
    const deadline = Date.now() + 5000;
    while (!answer().proposals && Date.now() < deadline) await tick();
    expect(answer().proposals?.map((p) => p.content)).toEqual(['The user is vegetarian.', 'The user has a cat.', 'The user plays chess.']);
    expect(answer().learned).toBeUndefined();
    const [vegetarian, cat, chess] = answer().proposals as MemoryProposal[];
    const sentOf = (op: string) => transport.requests.filter((r) => r.op === op).map((r) => r.request);

    // Keep: its buttons wait while the engine writes it; then it is learned, with Undo.
    const keeping = store.keepProposal(answer().key, vegetarian as MemoryProposal);
    expect(answer().decisions?.pending).toEqual(['mp-1']);
    await keeping;
    expect(sentOf('memory_keep_proposal')).toEqual([{ id: 'mp-1' }]);
    expect(answer().learned?.map((l) => l.memory.content)).toEqual(['The user is vegetarian.']);
    expect(answer().proposals?.map((p) => p.id)).toEqual(['mp-2', 'mp-3']);
    expect(answer().decisions).toEqual({ pending: [], done: 'kept', error: null });

    // Discard: nothing is written and it leaves the line.
    await store.discardProposal(answer().key, cat as MemoryProposal);
    expect(sentOf('memory_discard_proposal')).toEqual([{ id: 'mp-2' }]);
    expect(answer().proposals?.map((p) => p.id)).toEqual(['mp-3']);
    expect(answer().decisions?.done).toBe('discarded');
    expect(engine.memories().map((m) => m.content)).toEqual(['The user is vegetarian.']);

    // Discarded on the memory page: read again, the line asks no more.
    await engine.call('memory_discard_proposal', { id: 'mp-3' });
    await store.refreshProposals();
    expect(answer().proposals).toEqual([]);
    expect(answer().learned?.map((l) => l.memory.content)).toEqual(['The user is vegetarian.']);

    // One decided elsewhere: the engine's not_found is said, and the line is what the engine has.
    await store.keepProposal(answer().key, chess as MemoryProposal);
    expect(answer().decisions?.error).toMatchObject({ decision: 'kept', code: 'not_found' });
    expect(answer().decisions?.done).toBeNull();
    expect(answer().proposals).toEqual([]);
    expect(engine.memories().map((m) => m.content)).toEqual(['The user is vegetarian.']);
  });

  it('puts what still waits for a yes under the older answer it came from when a chat is opened again', async () => {
    const transport = new FakeTransport();
    const engine = memoryEngine(0);
    engine.propose(
      proposal(1, { content: 'The user is vegetarian.', turn_id: 't1' }),
      proposal(2, { content: 'The user has a cat.', turn_id: 't2' }),
      proposal(3, { content: 'The user rows on Sundays.', turn_id: 't-other-chat' }),
    );
    transport.handlers.memory_proposals = engine.handlers.memory_proposals;
    transport.handlers.turn_memory = engine.handlers.turn_memory;
    transport.handlers.memory_keep_proposal = engine.handlers.memory_keep_proposal;
    transport.sessions = [{ name: 'trip' }] as SessionSummary[];
    transport.stored.trip = [
      { ...storedMessage('u1', 'user', 'I am vegetarian'), turn_id: 't1' },
      { ...storedMessage('a1', 'assistant', 'Noted.'), turn_id: 't1' },
      { ...storedMessage('u2', 'user', 'I have a cat'), turn_id: 't2' },
      { ...storedMessage('a2', 'assistant', 'Nice.'), turn_id: 't2' },
      { ...storedMessage('u3', 'user', 'thanks'), turn_id: 't3' },
      { ...storedMessage('a3', 'assistant', 'You are welcome.'), turn_id: 't3' },
    ];
    const store = new ChatStore(transport);
    await store.select('trip');
    const answers = () => store.getState().messages.filter((m): m is AssistantView => m.role === 'assistant');
    const deadline = Date.now() + 5000;
    while (!answers()[0]?.proposals && Date.now() < deadline) await tick();
    expect(answers().map((a) => a.proposals?.map((p) => p.content))).toEqual([['The user is vegetarian.'], ['The user has a cat.'], undefined]);

    // Kept from the older answer: written, and shown learned there.
    const first = answers()[0] as AssistantView;
    await store.keepProposal(first.key, first.proposals?.[0] as MemoryProposal);
    expect(engine.memories().map((m) => m.content)).toEqual(['The user is vegetarian.']);
    expect(answers()[0]?.proposals).toEqual([]);
  });

  it('runs a turn with an approval question answered once', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    const sent = store.send('make a file');
    expect(store.getState().selected).toMatch(/^chat-\d{8}-\d{6}$/);
    transport.emit(started);
    expect(store.getState().running?.turnId).toBe('t1');
    transport.emit({
      type: 'approval_requested',
      request_id: 'r1',
      call_id: 'c1',
      tool: 'shell',
      risk: 'exec',
      detail: '$ touch a',
      reason: 'asks',
      suggested_pattern: null,
      timeout_secs: 60,
    });
    expect(pendingApproval(store.getState())?.detail).toBe('$ touch a');
    await store.answer('r1', 'allow_once');
    expect(transport.calls).toContain('answer r1 allow_once');
    expect(pendingApproval(store.getState())).toBeNull();
    transport.emit({
      type: 'approval_resolved',
      request_id: 'r1',
      call_id: 'c1',
      tool: 'shell',
      decision: 'allow',
      decided_by: 'user',
      reason: '',
    });
    transport.emit({ type: 'final', text: 'done' });
    transport.emit(finished);
    transport.end();
    await sent;
    const { messages, running } = store.getState();
    expect(running).toBeNull();
    expect(messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'make a file'],
      ['assistant', 'done'],
    ]);
    expect(messages[1]).toMatchObject({ status: 'completed' });
  });

  it('stops the running turn by its id', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    const sent = store.send('long story');
    await store.stop(); // no turn id yet: nothing to cancel
    transport.emit(started);
    transport.emit({ type: 'token', text: 'Once' });
    await store.stop();
    expect(transport.calls).toEqual(['send ' + store.getState().selected + ' long story', 'cancel t1']);
    transport.emit({ type: 'error', code: 'interrupted', message: 'stopped' });
    transport.emit({ ...finished, status: 'interrupted' } as TurnEvent);
    transport.end();
    await sent;
    expect(store.getState().messages[1]).toMatchObject({ text: 'Once', status: 'interrupted' });
  });

  it('fails the message when the stream breaks', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    const sent = store.send('hi');
    transport.emit(started);
    transport.broken('the event stream broke: reset');
    await sent;
    expect(store.getState().messages[1]).toMatchObject({
      status: 'failed',
      error: { code: 'network', message: 'the event stream broke: reset' },
    });
  });

  it('opens the remembered session with its history, and a new one empty', async () => {
    const transport = new FakeTransport();
    transport.sessions = [{ name: 'a' }, { name: 'b' }] as SessionSummary[];
    transport.stored.b = [
      { id: 'm1', session_id: 's', turn_id: 't', seq: 1, role: 'user', content: 'hello', reasoning: null, tool_calls: [], tool_call_id: null, name: null, status: 'complete', created_at: '' },
    ];
    const saved = new Map([['echo-desk-session', 'b']]);
    const store = new ChatStore(transport, {
      getItem: (k) => saved.get(k) ?? null,
      setItem: (k, v) => void saved.set(k, v),
    });
    await store.init();
    expect(store.getState()).toMatchObject({ selected: 'b', loadingHistory: false, error: null });
    expect(store.getState().messages).toEqual([{ role: 'user', key: 'm1', text: 'hello', id: 'm1' }]);
    store.newSession(new Date(2025, 0, 2, 3, 4, 5));
    expect(store.getState()).toMatchObject({ selected: 'chat-20250102-030405', messages: [] });
    await store.select('chat-20250102-030405'); // not on the server yet: no error
    await tick();
    expect(store.getState().error).toBeNull();
  });

  it('renames a session in the list and the selection, and keeps the list on refusal', async () => {
    const transport = new FakeTransport();
    transport.sessions = [
      { id: '1', name: 'a' },
      { id: '2', name: 'b' },
    ] as SessionSummary[];
    transport.stored.a = [];
    const saved = new Map<string, string>();
    const store = new ChatStore(transport, {
      getItem: (k) => saved.get(k) ?? null,
      setItem: (k, v) => void saved.set(k, v),
    });
    await store.init();
    expect(store.getState().selected).toBe('a');
    await store.rename('a', 'alpha');
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['alpha', 'b']);
    expect(store.getState().selected).toBe('alpha');
    expect(saved.get('echo-desk-session')).toBe('alpha');
    await store.rename('b', 'beta');
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expect(store.getState().selected).toBe('alpha');
    await expect(store.rename('beta', 'alpha')).rejects.toMatchObject({ code: 'invalid_input' });
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['alpha', 'beta']);
  });

  it('deletes a session; the selected one gives way to the first remaining, then none', async () => {
    const transport = new FakeTransport();
    transport.sessions = [
      { id: '1', name: 'a' },
      { id: '2', name: 'b' },
      { id: '3', name: 'c' },
    ] as SessionSummary[];
    transport.stored = { a: [], b: [], c: [] };
    const store = new ChatStore(transport);
    await store.init();
    await store.select('b');
    await store.remove('c', 'keep'); // not selected: the selection stays
    expect(store.getState()).toMatchObject({ selected: 'b' });
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['a', 'b']);
    await store.remove('b', 'keep');
    expect(store.getState()).toMatchObject({ selected: 'a', loadingHistory: false });
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['a']);
    await store.remove('a', 'keep');
    expect(store.getState()).toMatchObject({ selected: null, messages: [], sessions: [] });
    await expect(store.remove('zzz', 'keep')).rejects.toMatchObject({ code: 'not_found' });
    expect(transport.calls).toEqual(['delete c keep', 'delete b keep', 'delete a keep', 'delete zzz keep']);
  });

  it('deletes a session keeping, forgetting or deleting its memories, and resolves with how many went', async () => {
    const transport = new FakeTransport();
    transport.sessions = [
      { id: '1', name: 'a' },
      { id: '2', name: 'b' },
      { id: '3', name: 'c' },
    ] as SessionSummary[];
    transport.stored = { a: [], b: [], c: [] };
    transport.learned = { a: 2, b: 5, c: 7 };
    const store = new ChatStore(transport);
    await store.init();
    await store.select('a');
    expect(await store.remove('c', 'keep')).toEqual({ memories: 0 });
    expect(await store.remove('b', 'forget')).toEqual({ memories: 5 });
    // The selected one: the answer comes once the selection has moved on.
    expect(await store.remove('a', 'delete')).toEqual({ memories: 2 });
    expect(store.getState()).toMatchObject({ selected: null, sessions: [] });
    expect(transport.calls).toEqual(['delete c keep', 'delete b forget', 'delete a delete']);
  });

  it('forgets the memories learned in a session by its name, keeping the session, and counts them', async () => {
    const transport = new FakeTransport();
    transport.sessions = [{ id: '1', name: 'a' }] as SessionSummary[];
    transport.stored = { a: [] };
    transport.handlers.memory_forget_session = ({ session }) => {
      if (session !== 'a') throw new TransportError('not_found', `no session ${session}`, 404);
      return [];
    };
    const store = new ChatStore(transport);
    await store.init();
    expect(await store.forgetMemories('a')).toBe(0);
    transport.handlers.memory_forget_session = () => [memory(1), memory(2)];
    expect(await store.forgetMemories('a')).toBe(2);
    expect(transport.requests.filter((r) => r.op === 'memory_forget_session').map((r) => r.request)).toEqual([
      { session: 'a' },
      { session: 'a' },
    ]);
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['a']);
    transport.handlers.memory_forget_session = () => Promise.reject(new TransportError('not_found', 'no session zzz', 404));
    await expect(store.forgetMemories('zzz')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('regenerates the last answer: drops it and its question at once, resends with replace_from', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    store.newSession(new Date(2025, 0, 2, 3, 4, 5));
    const session = store.getState().selected as string;
    const first = store.send('tell me a joke');
    expect(regenerateTarget(store.getState())).toBeNull(); // running
    transport.emit(started);
    transport.emit({ type: 'final', text: 'a bad joke' });
    transport.emit(finished);
    // What the engine stored: the question's id is learnt after the turn.
    transport.stored[session] = [storedMessage('u1', 'user', 'tell me a joke'), storedMessage('a1', 'assistant', 'a bad joke')];
    transport.end();
    await first;
    expect(store.getState().messages[0]).toMatchObject({ role: 'user', id: 'u1' });
    expect(regenerateTarget(store.getState())?.id).toBe('u1');

    const again = store.regenerate();
    expect(store.getState().messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'tell me a joke'],
      ['assistant', ''],
    ]);
    expect(store.getState().messages[1]).toMatchObject({ status: 'running' });
    expect(transport.calls.at(-1)).toBe(`send ${session} tell me a joke replacing u1`);
    expect(regenerateTarget(store.getState())).toBeNull();
    await store.regenerate(); // no second turn while one runs
    expect(transport.calls.filter((c) => c.startsWith('send'))).toHaveLength(2);
    transport.emit(started);
    transport.emit({ type: 'final', text: 'a better joke' });
    transport.emit(finished);
    transport.end();
    await again;
    expect(store.getState().messages.map((m) => m.text)).toEqual(['tell me a joke', 'a better joke']);
  });

  it('edits a user message and resends it: that message and all after it are replaced', async () => {
    const transport = new FakeTransport();
    transport.sessions = [{ id: '1', name: 'b' }] as SessionSummary[];
    transport.stored.b = [
      storedMessage('u1', 'user', 'first question'),
      storedMessage('a1', 'assistant', 'first answer'),
      storedMessage('u2', 'user', 'second question'),
      storedMessage('a2', 'assistant', 'second answer'),
    ];
    const store = new ChatStore(transport);
    await store.init();
    const [u1, , u2] = store.getState().messages;
    expect(u1 && canEdit(store.getState(), u1)).toBe(true);
    expect(u2 && canEdit(store.getState(), u2)).toBe(true);

    const sent = store.editAndResend('u1', 'better first question');
    expect(store.getState().messages.map((m) => [m.role, m.text])).toEqual([
      ['user', 'better first question'],
      ['assistant', ''],
    ]);
    expect(transport.calls).toEqual(['send b better first question replacing u1']);
    expect(u2 && canEdit(store.getState(), u2)).toBe(false); // not while a turn runs
    transport.emit(started);
    transport.emit({ type: 'token', text: 'new answer' });
    expect(store.getState().messages[1]).toMatchObject({ text: 'new answer', status: 'running' });
    transport.emit(finished);
    transport.end();
    await sent;
    expect(store.getState().running).toBeNull();
  });

  it('does not edit a message whose stored id is unknown, nor send an empty edit', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport);
    const sent = store.send('hi'); // no stored history: its id stays unknown
    transport.emit(started);
    transport.emit(finished);
    transport.end();
    await sent;
    const key = store.getState().messages[0]?.key as string;
    expect(store.getState().messages[0]).not.toHaveProperty('id');
    expect(regenerateTarget(store.getState())).toBeNull();
    await store.editAndResend(key, 'changed');
    await store.editAndResend('m-unknown', 'changed');
    expect(transport.calls.filter((c) => c.startsWith('send'))).toHaveLength(1);
  });

  it('runs a temporary chat under a name of its own, waits for no memory, and deletes it when left', async () => {
    const transport = new FakeTransport();
    const asked: string[] = [];
    transport.handlers.turn_memory = ({ turn_id: turnId }) => {
      asked.push(turnId);
      return { settled: true, memories: [], proposals: [] };
    };
    const store = new ChatStore(transport);
    store.setTemporary('recall', new Date(2026, 11, 7, 10, 15, 0));
    expect(store.getState()).toMatchObject({ selected: 'temporary-20261207-101500', temporary: 'recall' });
    const sent = store.send('my gate code is 4411');
    transport.emit(finished);
    transport.end();
    await sent;
    await tick();
    expect(asked).toEqual([]);
    // Once a message is sent it stays what it is.
    store.setTemporary(null);
    expect(store.getState().temporary).toBe('recall');
    store.newSession();
    expect(store.getState().temporary).toBeNull();
    expect(transport.calls).toEqual([
      'send temporary-20261207-101500 my gate code is 4411 temporary recall',
      'delete temporary-20261207-101500 keep',
    ]);
    // Left before its first message, there is nothing to delete.
    store.setTemporary('sealed');
    store.clear();
    expect(store.getState().temporary).toBeNull();
    expect(transport.calls).toHaveLength(2);
  });

  it('runs quick-ask turns in a session named after the time', async () => {
    const transport = new FakeTransport();
    const store = new ChatStore(transport, undefined, { quick: true, sessionName: quickSessionName });
    store.newSession(new Date(2026, 10, 30, 23, 10, 5));
    expect(store.getState().selected).toBe('Quick ask 2026-11-30 23:10:05');
    const sent = store.send('what time is it');
    expect(transport.calls).toEqual(['send Quick ask 2026-11-30 23:10:05 what time is it quick']);
    transport.emit(finished);
    transport.end();
    await sent;
    store.clear();
    expect(store.getState()).toMatchObject({ selected: null, messages: [] });
  });
});

describe('ChatStore.openAt', () => {
  it('opens a session another page names, new to the list, and marks the message asked for', async () => {
    const transport = new FakeTransport();
    transport.sessions = [{ name: 'a' }] as SessionSummary[];
    transport.stored.a = [];
    const store = new ChatStore(transport);
    await store.init();
    transport.sessions = [{ name: 'a' }, { name: 'trip' }] as SessionSummary[];
    transport.stored.trip = [
      { ...storedMessage('u1', 'user', 'I am vegetarian'), turn_id: 't1' },
      { ...storedMessage('a1', 'assistant', 'Noted.'), turn_id: 't1' },
    ];
    await store.openAt('trip', 'u1');
    expect(store.getState().sessions.map((s) => s.name)).toEqual(['a', 'trip']);
    expect(store.getState()).toMatchObject({ selected: 'trip', highlight: { messageId: 'u1', key: 'u1' } });
    await store.openAt('trip', 'a1');
    expect(store.getState().highlight).toEqual({ messageId: 'a1', key: 'a1' });
    store.clearHighlight();
    expect(store.getState().highlight).toBeNull();

    // The message was replaced since (regenerate, edit): nothing to mark, and the view says so.
    await store.openAt('trip', 'gone');
    expect(store.getState().highlight).toEqual({ messageId: 'gone', key: null });
    // Another session, or the plain session, clears the mark.
    await store.select('a');
    expect(store.getState().highlight).toBeNull();
    await store.openAt('trip');
    expect(store.getState()).toMatchObject({ selected: 'trip', highlight: null });
  });
});

function storedMessage(id: string, role: 'user' | 'assistant', content: string): StoredMessage {
  return { id, session_id: 's', turn_id: 't', seq: 0, role, content, reasoning: null, tool_calls: [], tool_call_id: null, name: null, status: 'complete', created_at: '' };
}

describe('withStoredIds', () => {
  it('matches local user messages with stored ones from the end, only where the text agrees', () => {
    const local = [
      { role: 'user' as const, key: 'k1', text: 'one', id: 'u1' },
      { role: 'user' as const, key: 'k2', text: 'two' },
      { role: 'user' as const, key: 'k3', text: 'three' },
    ];
    const stored = [storedMessage('u1', 'user', 'one'), storedMessage('u2', 'user', 'two'), storedMessage('u3', 'user', 'something else')];
    expect(withStoredIds(local, stored)).toEqual([
      { role: 'user', key: 'k1', text: 'one', id: 'u1' },
      { role: 'user', key: 'k2', text: 'two', id: 'u2' },
      { role: 'user', key: 'k3', text: 'three' },
    ]);
    expect(withStoredIds(local, [])).toBe(local);
  });
});

describe('ChatStore projects', () => {
  const kitchen = project(1, 'Kitchen');
  const thesis = project(2, 'Thesis');

  function withProjects() {
    const transport = new FakeTransport();
    transport.createsSessions = true;
    let projects = [kitchen, thesis];
    transport.handlers.list_projects = () => projects;
    transport.stored['tiles'] = [];
    transport.sessions = [{ id: 's-tiles', name: 'tiles', project: 'Kitchen' } as SessionSummary];
    const store = new ChatStore(transport);
    const turn = async (text: string) => {
      const sent = store.send(text);
      transport.emit(started);
      transport.emit(finished);
      transport.end();
      await sent;
      await tick();
    };
    return { transport, store, turn, removeThesis: () => (projects = [kitchen]) };
  }

  it('sends the chosen project with the first message of a new chat only', async () => {
    const { transport, store, turn } = withProjects();
    await store.init();
    expect(store.getState().projects.map((p) => p.name)).toEqual(['Kitchen', 'Thesis']);
    store.newSession(new Date(2026, 11, 7, 10, 15, 0));
    expect(isNewChat(store.getState())).toBe(true);
    store.setProject('Thesis');
    expect(store.getState().project).toBe('Thesis');
    await turn('outline chapter 3');
    // Once it has begun, it stays in its project: the choice cannot change any more.
    store.setProject('Kitchen');
    expect(store.getState().project).toBe('Thesis');
    expect(isNewChat(store.getState())).toBe(false);
    expect(sessionProject(store.getState())).toBe('Thesis');
    await turn('and chapter 4');
    expect(transport.calls).toEqual([
      'send chat-20261207-101500 outline chapter 3 project Thesis',
      'send chat-20261207-101500 and chapter 4',
    ]);
  });

  it('starts a new chat in a project preselected, and none for a conversation from the list', async () => {
    const { transport, store, turn } = withProjects();
    await store.init();
    store.newSession(new Date(2026, 11, 7, 10, 15, 0), 'Kitchen');
    expect(store.getState().project).toBe('Kitchen');
    // Shown as the conversation's project once its first message is on its way.
    expect(sessionProject(store.getState())).toBeNull();
    const sent = store.send('grout colour?');
    expect(sessionProject(store.getState())).toBe('Kitchen');
    transport.emit(started);
    transport.emit(finished);
    transport.end();
    await sent;
    await tick();

    await store.select('tiles');
    expect(store.getState().project).toBeNull();
    expect(sessionProject(store.getState())).toBe('Kitchen');
    store.setProject('Thesis');
    expect(store.getState().project).toBeNull();
    await turn('more tiles');
    expect(transport.calls).toEqual(['send chat-20261207-101500 grout colour? project Kitchen', 'send tiles more tiles']);

    store.newSession();
    expect(store.getState().project).toBeNull();
    await turn('no project here');
    expect(transport.calls.at(-1)).toMatch(/^send chat-\S+ no project here$/);
  });

  it('picks a project before any conversation is open, and drops one that was removed', async () => {
    const { store, removeThesis } = withProjects();
    await store.refreshProjects();
    expect(store.getState().selected).toBeNull();
    store.setProject('Thesis', new Date(2026, 11, 7, 10, 15, 0));
    expect(store.getState()).toMatchObject({ selected: 'chat-20261207-101500', project: 'Thesis' });
    removeThesis();
    await store.refreshProjects();
    expect(store.getState()).toMatchObject({ project: null, projects: [kitchen] });
  });

  it('moves a conversation to another project or out of any, in the list and the open chat', async () => {
    const { transport, store } = withProjects();
    transport.handlers.move_session = ({ name, project }) => {
      transport.calls.push(`move ${name} ${project}`);
      const found = transport.sessions.find((s) => s.name === name);
      if (!found) throw new TransportError('not_found', `no session ${name}`, 404);
      if (project !== undefined && ![kitchen, thesis].some((p) => p.name === project)) {
        throw new TransportError('not_found', `no project ${project}`, 404);
      }
      const moved: SessionSummary = { ...found };
      delete moved.project;
      if (project !== undefined) moved.project = project;
      transport.sessions = transport.sessions.map((s) => (s.name === name ? moved : s));
      return moved;
    };
    await store.init();
    expect(store.getState().selected).toBe('tiles');
    await store.move('tiles', 'Thesis');
    expect(store.getState().sessions.map((s) => [s.name, s.project])).toEqual([['tiles', 'Thesis']]);
    expect(sessionProject(store.getState())).toBe('Thesis');
    await store.move('tiles', null);
    expect(sessionProject(store.getState())).toBeNull();
    expect(transport.requests.filter((r) => r.op === 'move_session').map((r) => r.request)).toStrictEqual([
      { name: 'tiles', project: 'Thesis' },
      { name: 'tiles' },
    ]);
    await expect(store.move('tiles', 'Garden')).rejects.toMatchObject({ code: 'not_found' });
    expect(store.getState().sessions.map((s) => [s.name, s.project])).toEqual([['tiles', undefined]]);
    expect(transport.calls).toEqual(['move tiles Thesis', 'move tiles undefined', 'move tiles Garden']);
  });

  it('keeps the projects it had when they cannot be read', async () => {
    const { transport, store } = withProjects();
    await store.refreshProjects();
    transport.handlers.list_projects = () => Promise.reject(new TransportError('network', 'offline'));
    await store.refreshProjects();
    expect(store.getState()).toMatchObject({ projects: [kitchen, thesis], error: null });
  });
});
