// The wire types of the engine (turn events, sessions, stored messages). They are generated
// from the Rust types into `generated/engine.ts` (`ECHO_UPDATE_TS=1 cargo test -p echo-agent
// --test typescript`; a Rust test fails when that file is stale) and only re-exported here.

export type {
  EventEnvelope,
  RecalledMemory,
  Role,
  SessionSummary,
  StoredMessage,
  ToolCall,
  TurnEvent,
  Usage,
} from './generated/engine';

/** Version of the event protocol (`EVENT_PROTOCOL_VERSION` in echo-core). */
export const EVENT_PROTOCOL_VERSION = 1;
