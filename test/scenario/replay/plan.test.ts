// The replay plan: lanes per connection, happens-before waits, WebSocket counts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planReplay } from '../../../scenario/replay/plan.js';
import type { Har, HarEntry, HarWebSocketMessage } from '../../../capture/index.js';
import { isBbError } from '../../../core/index.js';

function entry(seq: number, seqEnd: number, connection: string, path: string, extra: Partial<HarEntry> = {}): HarEntry {
  return {
    startedDateTime: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, seq * 100)).toISOString(),
    time: 10,
    connection,
    request: { method: 'GET', url: `http://127.0.0.1:8080${path}`, httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: 0 },
    response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [], content: { size: 0, mimeType: 'text/plain' }, redirectURL: '', headersSize: -1, bodySize: 0 },
    cache: {},
    timings: { send: 0, wait: 10, receive: 0 },
    _bb: { seq, seqEnd },
    ...extra,
  };
}
const msg = (type: 'send' | 'receive', seq: number, data: string): HarWebSocketMessage => ({ type, time: 1767225600 + seq / 10, opcode: 1, data, _bb: { seq } });
const har = (entries: HarEntry[]): Har => ({ log: { version: '1.2', creator: { name: 't', version: '1' }, entries } });

describe('planReplay', () => {
  const plan = planReplay(har([
    entry(1, 2, 'c1', '/a'),
    entry(3, 6, 'c2', '/b'),
    entry(4, 5, 'c1', '/c'),
    entry(7, 8, 'c2', '/d'),
    entry(9, 20, 'c3', '/ws', { response: { ...entry(0, 0, '', '').response, status: 101 }, _resourceType: 'websocket', _webSocketMessages: [msg('receive', 10, 'hello'), msg('send', 11, 'sub'), msg('receive', 12, 'ok')] }),
    entry(13, 14, 'c1', '/e'),
    entry(15, 18, 'h2', '/f'),
    entry(16, 17, 'h2', '/g'),
  ]));
  const byPath = (p: string) => plan.exchanges.find((e) => e.entry.request.url.endsWith(p))!;

  it('keeps one lane per connection, in order, and splits requests that overlapped on one (HTTP/2)', () => {
    assert.equal(byPath('/a').lane, byPath('/c').lane);
    assert.equal(byPath('/c').lane, byPath('/e').lane);
    assert.equal(byPath('/b').lane, byPath('/d').lane);
    assert.notEqual(byPath('/a').lane, byPath('/b').lane);
    assert.notEqual(byPath('/f').lane, byPath('/g').lane);
  });

  it('waits for what had completed before in other lanes, only the last of each', () => {
    assert.deepEqual(byPath('/b').waits.after, [byPath('/a').i]);
    // /c overlapped /b in the original: it does not wait for it.
    assert.deepEqual(byPath('/c').waits.after, []);
    assert.deepEqual(byPath('/d').waits.after, [byPath('/c').i]);
    assert.ok(byPath('/e').waits.after.includes(byPath('/d').i));
  });

  it('counts what an open WebSocket had received before a request and before each client message', () => {
    const ws = byPath('/ws');
    assert.deepEqual(byPath('/e').waits.received, [{ exchange: ws.i, count: 2 }]);
    const send = ws.ws!.messages.find((m) => m.type === 'send')!;
    assert.equal(send.receivedBefore, 1);
    assert.equal(ws.ws!.received, 2);
  });

  it("orders a conversation by arrival time when a compressed message's seq came late (its inflate finished after the reply)", () => {
    const late = planReplay(har([
      entry(1, 9, 'w', '/ws', { _resourceType: 'websocket', _webSocketMessages: [
        { type: 'receive', time: 1767225600.1, opcode: 1, data: '{"next":123456}', _bb: { seq: 4, compressed: true } },
        { type: 'send', time: 1767225600.05, opcode: 1, data: 'hi', _bb: { seq: 2 } },
        { type: 'send', time: 1767225600.2, opcode: 1, data: '{"ack":123456}', _bb: { seq: 3 } },
      ] }),
    ]));
    const messages = late.exchanges[0]!.ws!.messages;
    assert.deepEqual(messages.map((m) => m.data), ['hi', '{"next":123456}', '{"ack":123456}']);
    assert.equal(messages[2]!.receivedBefore, 1);
    assert.ok(messages[2]!.pos > messages[1]!.pos);
  });

  it('keys entries by _bb.seq and times offsets from the first start', () => {
    assert.equal(byPath('/a').key, '#1');
    assert.equal(byPath('/c').offsetMs, 300);
  });

  it('skips other origins and non-HTTP URLs, saying why; refuses a capture with nothing to replay', () => {
    const p = planReplay(har([entry(1, 2, 'c', '/x'), { ...entry(3, 4, 'c', '/y'), request: { ...entry(3, 4, 'c', '/y').request, url: 'https://cdn.example/lib.js' } }, { ...entry(5, 6, 'c', '/z'), request: { ...entry(5, 6, 'c', '/z').request, url: 'data:,hi' } }]));
    assert.equal(p.exchanges.length, 1);
    assert.deepEqual(p.skipped.map((s) => s.entry), ['#3', '#5']);
    assert.match(p.skipped[0]!.reason, /another origin \(https:\/\/cdn\.example/);
    assert.throws(() => planReplay(har([])), (err) => isBbError(err) && err.code === 'BB_REPLAY_NO_ENTRIES');
  });

  it("replays the origin whose server answered the most, not a browser's own calls home that came first (bb answered them: the host did not resolve)", () => {
    const elsewhere = (seq: number, url: string): HarEntry => {
      const e = entry(seq, seq + 1, `c${seq}`, '/');
      return { ...e, request: { ...e.request, method: 'POST', url }, response: { ...e.response, status: 502 }, _bb: { seq, seqEnd: seq + 1, error: { code: 'ENOTFOUND', message: 'the upstream host name does not resolve', phase: 'request' } } };
    };
    const p = planReplay(har([
      elsewhere(1, 'https://update.googleapis.com/service/update2/json'),
      elsewhere(3, 'https://update.googleapis.com/service/update2/json'),
      elsewhere(5, 'https://accounts.google.com/ListAccounts'),
      entry(7, 8, 'app', '/'),
      entry(9, 10, 'app', '/items'),
    ]));
    assert.equal(p.origin, 'http://127.0.0.1:8080');
    assert.deepEqual(p.exchanges.map((e) => e.key), ['#7', '#9']);
    assert.deepEqual(p.skipped.map((s) => s.entry), ['#1', '#3', '#5']);
    // Ties go to the earliest, as before.
    assert.equal(planReplay(har([{ ...entry(1, 2, 'c', '/'), request: { ...entry(1, 2, 'c', '/').request, url: 'https://a.example/' } }, entry(3, 4, 'c', '/')])).origin, 'https://a.example');
  });
});
