// A server-sent events parser fed with text chunks as they arrive from a `fetch` body, for
// servers that need headers EventSource cannot send. Follows the WHATWG event-stream rules:
// lines end in CRLF, LF or CR (possibly split across chunks), `:` starts a comment (the
// keep-alive), several `data:` lines of one event join with "\n", a blank line dispatches.

/** One dispatched event. */
export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` field seen, if any. */
  id: string | undefined;
}

/** Incremental parser: `push` each chunk, `finish` at the end of the stream. */
export class SseParser {
  private buffer = '';
  /** The previous chunk ended in CR: a LF at the start of the next one belongs to it. */
  private skipLf = false;
  private data: string[] = [];
  private event = '';
  private lastId: string | undefined = undefined;

  /** Feeds a chunk of text; returns the events it completed. */
  push(chunk: string): SseMessage[] {
    if (chunk === '') return [];
    if (this.skipLf && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.skipLf = false;
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\n|\r/.exec(this.buffer);
      if (!m) break;
      // A CR at the very end may be the first half of a CRLF.
      if (m[0] === '\r' && m.index === this.buffer.length - 1) {
        this.skipLf = true;
      }
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  /** Ends the stream: an event without its closing blank line is dropped, as the spec says. */
  finish(): SseMessage[] {
    this.buffer = '';
    this.data = [];
    this.event = '';
    return [];
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return undefined;
      }
      const message = { event: this.event || 'message', data: this.data.join('\n'), id: this.lastId };
      this.data = [];
      this.event = '';
      return message;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break; // `retry` and unknown fields do not matter here.
    }
    return undefined;
  }
}
