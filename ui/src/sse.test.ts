// The SSE parser against chunk boundaries anywhere, multi-line data, comments and CRLF.

import { describe, expect, it } from 'vitest';
import { SseParser } from './sse';

/** Feeds `chunks` in order and returns the data of every event dispatched. */
function check(chunks: string[], expected: string[]) {
  const parser = new SseParser();
  const got = chunks.flatMap((c) => parser.push(c)).map((m) => m.data);
  got.push(...parser.finish().map((m) => m.data));
  expect(got).toEqual(expected);
}

/** Every way to cut `text` in two gives the same events. */
function checkEverySplit(text: string, expected: string[]) {
  for (let i = 0; i <= text.length; i++) check([text.slice(0, i), text.slice(i)], expected);
  check(text.split(''), expected);
}

describe('SseParser', () => {
  it('dispatches on a blank line', () => {
    check(['data: {"a":1}\n\n'], ['{"a":1}']);
    check(['data: one\n\ndata: two\n\n'], ['one', 'two']);
  });

  it('waits for the blank line when a data line is split across chunks', () => {
    check(['data: {"type":"to', 'ken","text":"hi"}\n', '\n'], ['{"type":"token","text":"hi"}']);
    checkEverySplit('data: {"type":"token","text":"a b"}\n\ndata: x\n\n', ['{"type":"token","text":"a b"}', 'x']);
  });

  it('joins several data lines with a newline', () => {
    checkEverySplit('data: first\ndata: second\ndata:third\n\n', ['first\nsecond\nthird']);
  });

  it('ignores keep-alive comments and other fields', () => {
    checkEverySplit('data: a\n: ping\ndata: b\n\n', ['a\nb']);
    checkEverySplit(':\n\n: keep-alive\n\nid: 3\nevent: message\nretry: 10\ndata: x\n\n', ['x']);
  });

  it('keeps the id and event name', () => {
    const parser = new SseParser();
    expect(parser.push('id: 7\nevent: turn\ndata: x\n\n')).toEqual([{ event: 'turn', data: 'x', id: '7' }]);
    expect(parser.push('data: y\n\n')).toEqual([{ event: 'message', data: 'y', id: '7' }]);
  });

  it('accepts CRLF and CR line endings, even a CRLF split between chunks', () => {
    checkEverySplit('data: a\r\n\r\ndata: b\r\rdata: c\n\n', ['a', 'b', 'c']);
    checkEverySplit('data: a\r\ndata: b\r\n\r\n', ['a\nb']);
    check(['data: a\r', '\ndata: b\r', '\n\r', '\n'], ['a\nb']);
  });

  it('strips only one space after the colon', () => {
    check(['data:  two spaces\n\n'], [' two spaces']);
    check(['data\n\n'], ['']);
  });

  it('drops an event cut off by the end of the stream', () => {
    check(['data: complete\n\ndata: cut'], ['complete']);
  });
});
