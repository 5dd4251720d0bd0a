// EventStreamParser (core/event-stream.ts), one table row per rule of the HTML spec's parser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamParser, mulberry32 } from '../../core/index.js';

describe('EventStreamParser', () => {
  const table: Array<[string, string[], Array<[string, string, string]>]> = [
    ['default event name and id', ['data: a\n\n'], [['message', '', 'a']]],
    ['multi-line data joined with LF', ['data: a\ndata: b\n\n'], [['message', '', 'a\nb']]],
    ['comments and retry make no events', [': keep-alive\nretry: 10\n\n'], []],
    ['event name resets, id persists', ['id: 1\nevent: x\ndata: a\n\ndata: b\n\n'], [['x', '1', 'a'], ['message', '1', 'b']]],
    ['no space after the colon', ['data:a\n\n'], [['message', '', 'a']]],
    ['only the first space is stripped', ['data:  a\n\n'], [['message', '', ' a']]],
    ['a field without colon', ['data\n\n'], [['message', '', '']]],
    ['CR, LF and CRLF line ends', ['data: a\rdata: b\r\n\r\ndata: c\n\n'], [['message', '', 'a\nb'], ['message', '', 'c']]],
    ['a UTF-8 character split across chunks', [Buffer.from('data: é\n\n').subarray(0, 7).toString('latin1'), Buffer.from('data: é\n\n').subarray(7).toString('latin1')], [['message', '', 'é']]],
    ['a last event without its blank line is dropped', ['data: a\n\ndata: b\n'], [['message', '', 'a']]],
    ['a leading BOM is ignored', ['\ufeffdata: a\n\n'], [['message', '', 'a']]],
    ['an id with NUL is ignored', ['id: a\0b\ndata: x\n\n'], [['message', '', 'x']]],
  ];
  for (const [name, chunks, expected] of table) {
    it(name, () => {
      const p = new EventStreamParser();
      chunks.forEach((c, i) => p.push(name.includes('UTF-8') ? Buffer.from(c, 'latin1') : Buffer.from(c), 1000 * (i + 1)));
      assert.deepEqual(p.end(9000).map((e) => [e.eventName, e.eventId, e.data]), expected);
    });
  }
});

// `retry:` sets the stream's reconnection time (HTML standard, "Interpreting an event stream": only ASCII digits);
// it makes no event, so it goes with the next one, where bb diff compares it (`response.events[k].retry`).
describe('EventStreamParser: retry', () => {
  it('gives the next event the reconnection time a retry line set; other values and a trailing retry set nothing', () => {
    const events = EventStreamParser.parseText('retry: 100\n\ndata: a\n\ndata: b\n\nretry: 1e3\ndata: c\n\nretry:250\nretry: 300\nid: 9\ndata: d\n\nretry: 5\n');
    assert.deepEqual(events.map((e) => [e.data, e.retry]), [['a', 100], ['b', undefined], ['c', undefined], ['d', 300]]);
    assert.equal('retry' in events[1]!, false, 'absent, not undefined: a HAR without it is written as before');
  });
});

describe('EventStreamParser: one event at a time', () => {
  it('hands each event to `each` as it is dispatched and holds none', () => {
    const seen: string[] = [];
    const p = new EventStreamParser((e) => seen.push(`${e.eventName}:${e.data}`));
    p.push(Buffer.from('data: a\n\nevent: x\nda'), 0);
    assert.deepEqual(seen, ['message:a']);
    p.push(Buffer.from('ta: b\n\n'), 0);
    assert.deepEqual(p.end(0), []);
    assert.deepEqual(seen, ['message:a', 'x:b']);
    const texts: string[] = [];
    EventStreamParser.eachInText('data: 1\n\n: comment\ndata: 2\n\ndata: cut', (e) => texts.push(e.data));
    assert.deepEqual(texts, ['1', '2']);
  });
});

// The parser takes a line's text a run at a time; the standard's algorithm reads a character at a time. The two
// must agree however a stream is cut into chunks (a CRLF or a UTF-8 character split between two included).
describe('EventStreamParser: against the standard read a character at a time', () => {
  function reference(text: string): Array<[string, string, string]> {
    const out: Array<[string, string, string]> = [];
    let data: string[] = [];
    let type = '';
    let id = '';
    let line = '';
    const lineEnd = (l: string): void => {
      if (l === '') {
        if (data.length > 0) out.push([type || 'message', id, data.join('\n')]);
        data = [];
        type = '';
        return;
      }
      if (l.startsWith(':')) return;
      const colon = l.indexOf(':');
      const field = colon < 0 ? l : l.slice(0, colon);
      let value = colon < 0 ? '' : l.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
    };
    if (text.startsWith('\ufeff')) text = text.slice(1);
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '\r' || ch === '\n') {
        lineEnd(line);
        line = '';
        if (ch === '\r' && text[i + 1] === '\n') i++;
      } else line += ch;
    }
    return out;
  }

  const pieces = ['data', 'data:', 'data: ', 'event:', 'id: ', 'retry: 5', ': c', ':', 'x', 'é', '€', '\0', ' ', '\r', '\n', '\r\n', '\n\n', '\r\r', 'data: a\n\n'];

  it('gives the same events for 2,000 random streams cut at random bytes', () => {
    // Seeded: the same streams every run.
    const next = mulberry32(39);
    for (let k = 0; k < 2000; k++) {
      let text = next() < 0.1 ? '\ufeff' : '';
      const n = 1 + Math.floor(next() * 40);
      for (let i = 0; i < n; i++) text += pieces[Math.floor(next() * pieces.length)]!;
      const bytes = Buffer.from(text, 'utf8');
      const p = new EventStreamParser();
      let at = 0;
      while (at < bytes.length) {
        const len = 1 + Math.floor(next() * 6);
        p.push(bytes.subarray(at, at + len), 0);
        at += len;
      }
      assert.deepEqual(p.end(0).map((e) => [e.eventName, e.eventId, e.data]), reference(text), JSON.stringify(text));
    }
  });
});

// A live feed of a peer's stream (bb shadow's binding, bb replay's count) sets maxEventChars: an event that never
// ends took bb shadow past V8's heap (800 MB of one `data:` line: the primary's clients lost with it).
describe('EventStreamParser: maxEventChars', () => {
  it('dispatches an event past the limit with no data, holds none of it, and reads the next events as before', () => {
    const seen: Array<[string, string, boolean]> = [];
    const p = new EventStreamParser((e) => seen.push([e.eventName, e.data, e.oversized === true]), 100);
    p.push(Buffer.from('event: big\nid: 7\ndata: '), 0);
    // 64 MiB of one line, a MiB at a time: read past, never held.
    const mib = Buffer.alloc(1 << 20, 'x');
    for (let i = 0; i < 64; i++) p.push(mib, 0);
    p.push(Buffer.from('\ndata: more\n\ndata: small\n\n'), 0);
    // Data lines that add up past the limit, then a comment longer than it (comments count for nothing).
    p.push(Buffer.from(`data: ${'y'.repeat(60)}\ndata: ${'z'.repeat(60)}\n\n: ${'c'.repeat(500)}\ndata: after\n\n`), 0);
    p.end(0);
    assert.deepEqual(seen, [['big', '', true], ['message', 'small', false], ['message', '', true], ['message', 'after', false]]);
  });

  it('counts whole lines: a line of exactly the limit is kept, one more character is not', () => {
    for (const [limit, data] of [[16, '0123456789'], [15, '']] as const) {
      const events = [] as string[];
      const p = new EventStreamParser((e) => events.push(e.data), limit);
      p.push(Buffer.from('data: 0123456789\n\n'), 0);
      p.end(0);
      assert.deepEqual(events, [data], `limit ${limit}`);
    }
  });
});
