// Where a memory was learned: the conversation (by name, what the chat opens) and the message.
// The turn it came from names its session (`trace`); when that turn's trace is gone
// (retention), the session id it records is looked up among the sessions. Null when neither
// exists any more.

import type { Memory } from '../generated/engine';
import type { SettingsTransport } from '../settings/store';
import { TransportError } from '../transport';

export interface MemorySource {
  /** The session's name. */
  session: string;
  /** The stored message it was learned from, when recorded. */
  messageId: string | null;
}

type Provenance = Pick<Memory, 'source_session_id' | 'source_turn_id' | 'source_message_id'>;

/** Whether a memory records where it was learned. */
export function hasProvenance(m: Provenance): boolean {
  return m.source_turn_id !== null || m.source_session_id !== null;
}

const notFound = (e: unknown) => e instanceof TransportError && e.code === 'not_found';

/** Finds the conversation a memory was learned in; rejects only when the engine cannot be asked. */
export async function findSource(transport: SettingsTransport, m: Provenance): Promise<MemorySource | null> {
  if (m.source_turn_id) {
    try {
      const trace = await transport.call('trace', { turn_id: m.source_turn_id });
      return { session: trace.turn.session_name, messageId: m.source_message_id };
    } catch (e) {
      if (!notFound(e)) throw e;
    }
  }
  if (m.source_session_id) {
    const session = (await transport.call('list_sessions', {})).find((s) => s.id === m.source_session_id);
    if (session) return { session: session.name, messageId: m.source_message_id };
  }
  return null;
}
