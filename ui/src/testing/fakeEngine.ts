// A `Transport` for tests: each test answers the operations it uses with a handler; any
// other operation rejects with `unsupported`, naming it. Turns are the test's own.

import type { OperationName } from '../generated/engine';
import {
  type DesktopBridge,
  type RequestOf,
  type ResponseOf,
  type Transport,
  TransportError,
  type TurnHandle,
} from '../transport';

/** Answers by operation name. */
export type Handlers = {
  [K in OperationName]?: (request: RequestOf<K>) => ResponseOf<K> | Promise<ResponseOf<K>>;
};

/** `Transport` over `handlers`; `sendTurn` rejects unless a subclass runs turns. */
export class FakeEngine implements Transport {
  handlers: Handlers;
  /** Every operation called, with its request, in order. */
  readonly requests: { op: OperationName; request: unknown }[] = [];
  /** The desktop bridge, for tests of the desktop app; absent like in the browser. */
  desktop?: DesktopBridge;

  constructor(handlers: Handlers = {}) {
    this.handlers = handlers;
  }

  async call<K extends OperationName>(op: K, request: RequestOf<K>): Promise<ResponseOf<K>> {
    this.requests.push({ op, request });
    const handler = this.handlers[op];
    if (!handler) throw new TransportError('unsupported', `${op} is not in this test`);
    return handler(request);
  }

  sendTurn(...[session, input]: Parameters<Transport['sendTurn']>): TurnHandle {
    return { done: Promise.reject(new TransportError('unsupported', `turns are not in this test (${session}: ${input})`)) };
  }
}
