// EventStreamParser (core/event-stream.ts), one table row per rule of the HTML spec's parser.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventStreamParser } from '../../core/index.js';

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
