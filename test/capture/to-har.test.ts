// Literal facts through a real capture (journal → HAR), one shape per test.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { Duplex } from 'node:stream';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import type { Fact } from '../../proxy/events.js';
import { exchange, only, recordFacts, TEST_T0 } from './capture-harness.js';
import { tempDir } from '../helpers/tmp.js';
import { Cleanups } from '../helpers/cleanups.js';
import { record } from '../helpers/recording.js';
import type { Har } from '../../capture/har.js';
import { addRecord, emptyRecords } from '../../capture/to-har.js';
import type { BodyRecord } from '../../capture/journal.js';
import { h2Client, h2Request, h2Server } from '../helpers/h2-peers.js';

const tmp = tempDir();
let n = 0;
const rec = (facts: Fact[], opts: Parameters<typeof recordFacts>[3] = {}) =>
  recordFacts(tmp.dir, tmp.bbHome, facts, { name: `t${++n}`, redact: false, ...opts });

describe('HTTP entries', () => {
  it('records the request as the client addressed it, headers in wire order with duplicates', async () => {
    const har = await rec(exchange({
      method: 'GET', target: '/v1/items?b=2&a=x%20y&a=3', connectionId: 'c7',
      reqHeaders: ['Host', 'api.local:8080', 'X-Dup', '1', 'accept', '*/*', 'X-Dup', '2', 'Cookie', 'a=1; b=2'],
      status: 200, resHeaders: ['Content-Type', 'application/json', 'Set-Cookie', 'sid=abc; Path=/; HttpOnly', 'Content-Length', '11'],
      resBody: [Buffer.from('{"ok":true}')],
    }));
    const e = only(har);
    assert.equal(e.request.url, 'http://api.local:8080/v1/items?b=2&a=x%20y&a=3');
    assert.equal(e.request.httpVersion, 'HTTP/1.1');
    assert.deepEqual(e.request.headers.map((h) => `${h.name}=${h.value}`), ['Host=api.local:8080', 'X-Dup=1', 'accept=*/*', 'X-Dup=2', 'Cookie=a=1; b=2']);
    assert.deepEqual(e.request.queryString, [{ name: 'b', value: '2' }, { name: 'a', value: 'x y' }, { name: 'a', value: '3' }]);
    assert.deepEqual(e.request.cookies, [{ name: 'a', value: '1' }, { name: 'b', value: '2' }]);
    assert.deepEqual(e.response.cookies, [{ name: 'sid', value: 'abc', path: '/', httpOnly: true }]);
    assert.equal(e.connection, 'c7');
    assert.equal(e.response.status, 200);
    assert.equal(e.response.content.text, '{"ok":true}');
    assert.equal(e.response.content.size, 11);
    assert.equal(e.response.bodySize, 11);
    assert.equal(e.response.content.compression, 0);
    assert.equal(e.request.bodySize, 0);
    assert.equal(e.request.postData, undefined);
    assert.equal(e.startedDateTime, new Date(TEST_T0).toISOString());
    assert.deepEqual([e.timings.send, e.timings.wait, e.timings.receive], [1, 1, 2]);
    assert.equal(e.time, 4);
    assert.equal(e._bb?.seq, 1);
    assert.equal(e._bb?.seqEnd, 2);
    const bb = har.log._bb!;
    assert.equal(har.log.version, '1.2');
    assert.equal(har.log.creator.name, 'bb');
    assert.match(har.log.creator.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(
      { format: bb.format, label: bb.label, target: bb.target, listen: bb.listen, complete: bb.complete, counts: bb.counts },
      { format: 1, label: 'old', target: 'http://127.0.0.1:3001', listen: 'http://127.0.0.1:8080', complete: true, counts: { entries: 1, webSocketMessages: 0 } },
    );
    assert.ok(Date.parse(bb.endedDateTime) >= Date.parse(bb.startedDateTime));
  });

  it("keeps the request's µs in _bb.started, cut to the millisecond in startedDateTime (journal timestamps' 1/4096 ms steps)", async () => {
    const e = only(await rec(exchange({ at: 7.7109375, status: 204 })));
    assert.equal(e.startedDateTime, new Date(TEST_T0 + 7).toISOString());
    assert.ok(Math.abs(e._bb!.started! - (TEST_T0 + 7.71)) < 0.0005, String(e._bb!.started! - TEST_T0));
    // Never past the millisecond its ISO field names, so a reader may take either.
    const late = only(await rec(exchange({ at: 7.99975586, status: 204 })));
    assert.equal(late.startedDateTime, new Date(TEST_T0 + 7).toISOString());
    assert.ok(late._bb!.started! >= TEST_T0 + 7.999 && late._bb!.started! < TEST_T0 + 8, String(late._bb!.started! - TEST_T0));
  });

  it('keeps absolute-form targets as they are', async () => {
    const e = only(await rec(exchange({ target: 'http://example.test/x?y=1', reqHeaders: ['Host', 'example.test'], status: 204, statusMessage: 'No Content' })));
    assert.equal(e.request.url, 'http://example.test/x?y=1');
  });

  it('decodes gzip for content.text with size, bodySize and compression', async () => {
    const text = 'hello '.repeat(200);
    const wire = gzipSync(text);
    const e = only(await rec(exchange({
      status: 200, resHeaders: ['Content-Type', 'text/plain', 'Content-Encoding', 'gzip'],
      resBody: [wire.subarray(0, 10), wire.subarray(10)],
    })));
    assert.equal(e.response.content.text, text);
    assert.equal(e.response.content.size, text.length);
    assert.equal(e.response.bodySize, wire.length);
    assert.equal(e.response.content.compression, text.length - wire.length);
    assert.equal(e.response.content.encoding, undefined);
  });

  it('decodes br, x-gzip, both deflate flavours and stacked codings', async () => {
    const text = '{"n":' + '1'.repeat(500) + '}';
    const cases: Array<[string, Buffer]> = [
      ['br', brotliCompressSync(text)],
      ['x-gzip', gzipSync(text)],
      ['deflate', deflateSync(text)],
      ['deflate', deflateRawSync(text)],
      // Listed in the order applied: gzip first, then br.
      ['gzip, br', brotliCompressSync(gzipSync(text))],
    ];
    for (const [coding, wire] of cases) {
      const e = only(await rec(exchange({ status: 200, resHeaders: ['Content-Type', 'application/json', 'Content-Encoding', coding], resBody: [wire] })));
      assert.equal(e.response.content.text, text, coding);
      assert.equal(e.response.content.size, text.length, coding);
      assert.equal(e.response.bodySize, wire.length, coding);
    }
  });

  it('round-trips binary bodies byte for byte as base64', async () => {
    const bytes = randomBytes(4096);
    const e = only(await rec(exchange({
      method: 'POST', reqHeaders: ['Host', 'h', 'Content-Type', 'application/octet-stream'], reqBody: [bytes.subarray(0, 100), bytes.subarray(100)],
      status: 200, resHeaders: ['Content-Type', 'image/png'], resBody: [bytes],
    })));
    assert.equal(e.response.content.encoding, 'base64');
    assert.ok(Buffer.from(e.response.content.text!, 'base64').equals(bytes));
    assert.equal(e.request.postData?._encoding, 'base64');
    assert.ok(Buffer.from(e.request.postData!.text!, 'base64').equals(bytes));
    assert.equal(e.request.bodySize, bytes.length);
  });

  it('keeps text request bodies as text', async () => {
    const e = only(await rec(exchange({
      method: 'POST', reqHeaders: ['Host', 'h', 'Content-Type', 'application/json'], reqBody: [Buffer.from('{"a":'), Buffer.from('"é"}')],
      status: 201, statusMessage: 'Created', resHeaders: [],
    })));
    assert.deepEqual(e.request.postData, { mimeType: 'application/json', text: '{"a":"é"}' });
    assert.equal(e.request.bodySize, Buffer.byteLength('{"a":"é"}'));
  });

  it('records up to the cap and counts the rest in bodySize', async () => {
    const e = only(await rec(exchange({
      method: 'PUT', reqHeaders: ['Host', 'h', 'Content-Type', 'text/plain'], reqBody: [Buffer.from('0123456789abcdef')],
      status: 200, resHeaders: ['Content-Type', 'text/plain'], resBody: [Buffer.from('aaaaaa'), Buffer.from('bbbbbb'), Buffer.from('cccccc')],
    }), { bodyCap: 10 }));
    assert.equal(e.response.bodySize, 18);
    assert.equal(e.response.content.text, 'aaaaaabbbb');
    assert.equal(e.request.bodySize, 16);
    assert.equal(e.request.postData?.text, '0123456789');
    assert.deepEqual(e._bb?.truncated, { request: 10, response: 10 });
  });

  it('records 204 and 304 with empty bodies', async () => {
    for (const [status, msg] of [[204, 'No Content'], [304, 'Not Modified']] as const) {
      const e = only(await rec(exchange({ status, statusMessage: msg, resHeaders: ['ETag', '"x"'] })));
      assert.equal(e.response.status, status);
      assert.equal(e.response.statusText, msg);
      assert.equal(e.response.bodySize, 0);
      assert.equal(e.response.content.size, 0);
      assert.equal(e.response.content.text, undefined);
    }
  });

  it('keeps zstd raw as base64 and says why', async () => {
    const wire = Buffer.from('28b52ffd2000090000686920746865726521', 'hex');
    const e = only(await rec(exchange({ status: 200, resHeaders: ['Content-Type', 'text/plain', 'Content-Encoding', 'zstd'], resBody: [wire] })));
    assert.equal(e.response.content.encoding, 'base64');
    assert.ok(Buffer.from(e.response.content.text!, 'base64').equals(wire));
    assert.match(e.response.content._bbUndecoded!, /zstd/);
    assert.equal(e.response.bodySize, wire.length);
  });

  it('keeps a body that does not decode as base64 of the wire bytes', async () => {
    const wire = Buffer.from('not gzip at all');
    const e = only(await rec(exchange({ status: 200, resHeaders: ['Content-Type', 'text/plain', 'Content-Encoding', 'gzip'], resBody: [wire] })));
    assert.equal(e.response.content.encoding, 'base64');
    assert.equal(Buffer.from(e.response.content.text!, 'base64').toString(), 'not gzip at all');
    assert.match(e.response.content._bbUndecoded!, /^gzip: does not decode/);
  });

  it('parses event streams as they arrive, with the time of each chunk', async () => {
    const chunks = [': hi\n\nevent: delta\nid: 1\ndata: {"a"', ':1}\n\ndata: line1\r\ndata: line2\r\n\r', '\nid: 7\ndata: x\n\ndata: torn'];
    const facts = exchange({ status: 200, resHeaders: ['Content-Type', 'text/event-stream'], resBody: chunks.map((c) => Buffer.from(c)) });
    const e = only(await rec(facts));
    const bodyTimes = facts.filter((f) => f.type === 'response-body').map((f) => f.time / 1000);
    assert.deepEqual(e._eventSourceMessages, [
      { time: bodyTimes[1], eventName: 'delta', eventId: '1', data: '{"a":1}' },
      // A lone CR ends a line: the blank line arrived with the second chunk, its LF with the third.
      { time: bodyTimes[1], eventName: 'message', eventId: '1', data: 'line1\nline2' },
      { time: bodyTimes[2], eventName: 'message', eventId: '7', data: 'x' },
    ]);
    assert.equal(e.response.content.text, chunks.join(''));
  });

  it('keeps response trailers', async () => {
    const e = only(await rec(exchange({ status: 200, resHeaders: ['Transfer-Encoding', 'chunked'], resBody: [Buffer.from('x')], trailers: ['X-Sum', 'abc'] })));
    assert.deepEqual(e.response._trailers, [{ name: 'X-Sum', value: 'abc' }]);
  });
});

describe('failures', () => {
  it('records an upstream failure with bb\'s own 502 and _bb.error', async () => {
    const body = Buffer.from('{"error":"bb: upstream refused the connection"}');
    const e = only(await rec(exchange({
      end: {
        type: 'exchange-failed', exchangeId: 0, time: 0,
        error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:3001', phase: 'connect' },
        response: { statusCode: 502, statusMessage: 'Bad Gateway', rawHeaders: ['Content-Type', 'application/json', 'Content-Length', String(body.length)], body },
      },
    })));
    assert.deepEqual(e._bb?.error, { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:3001', phase: 'connect' });
    assert.equal(e.response.status, 502);
    assert.equal(e.response.content.text, body.toString());
    assert.equal(e._bb?.seqEnd, 2);
    // The harness's facts are 1 ms apart: head → end of request → bb's 502; no response bytes to receive.
    assert.deepEqual(e.timings, { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 1, wait: 1, receive: -1 });
  });

  it('marks a mid-stream hang-up as aborted, keeping what arrived', async () => {
    const e = only(await rec(exchange({
      status: 200, resHeaders: ['Content-Type', 'text/plain'], resBody: [Buffer.from('part')],
      end: { type: 'exchange-aborted', exchangeId: 0, time: 0, by: 'client', phase: 'response' },
    })));
    assert.equal(e._bb?.aborted, 'client');
    assert.equal(e.response.content.text, 'part');
    assert.match(e.comment!, /aborted by client/);
  });

  it('records refused packets as entries, parsed when the head parses', async () => {
    const har = await rec([
      {
        type: 'client-error', connectionId: 'c3', exchangeId: 40, time: TEST_T0,
        error: { code: 'HPE_UNEXPECTED_CONTENT_LENGTH', message: 'Content-Length and Transfer-Encoding', phase: 'parse' },
        rawPacket: Buffer.from('POST /bad HTTP/1.1\r\nHost: h:1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n'),
        response: { statusCode: 400, statusMessage: 'Bad Request', rawHeaders: ['Connection', 'close'], body: Buffer.alloc(0) },
      },
      {
        type: 'client-error', connectionId: 'c4', exchangeId: 41, time: TEST_T0 + 1,
        error: { code: 'HPE_INVALID_METHOD', message: 'Invalid method', phase: 'parse' },
        rawPacket: Buffer.from([0x16, 0x03, 0x01, 0x00]),
      },
    ]);
    const [a, b] = har.log.entries;
    assert.equal(a!.request.method, 'POST');
    assert.equal(a!.request.url, 'http://h:1/bad');
    assert.equal(a!.response.status, 400);
    assert.equal(a!._bb?.error?.code, 'HPE_UNEXPECTED_CONTENT_LENGTH');
    assert.equal(a!.connection, 'c3');
    assert.equal(b!.request.method, '-');
    assert.equal(new URL(b!.request.url).pathname, '/');
    assert.equal(b!.response.status, 0);
    assert.equal(b!._bb?.rawPacket, Buffer.from([0x16, 0x03, 0x01, 0x00]).toString('base64'));
    assert.deepEqual([a!._bb?.seq, b!._bb?.seq], [1, 2]);
  });

  it('writes exchanges still open at close, marked in flight', async () => {
    const e = only(await rec(exchange({ status: 200, resHeaders: [], resBody: [Buffer.from('so far')], end: 'none' })));
    assert.equal(e._bb?.inFlight, true);
    assert.equal(e._bb?.seqEnd, undefined);
    assert.equal(e.response.content.text, 'so far');
    assert.equal(e.timings.receive, -1);
  });
});

describe('WebSocket entries', () => {
  const sock = () => new Duplex({ read() {}, write(_c, _e, cb) { cb(); } });
  const wsFacts = (x: number, closed: boolean): Fact[] => {
    const t = TEST_T0 + 1000;
    const facts: Fact[] = [
      { type: 'exchange-started', exchangeId: x, connectionId: 'c9', time: t, scheme: 'http', method: 'GET', target: '/ws', httpVersion: '1.1',
        rawHeaders: ['Host', 'h:8080', 'Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ=='],
        upstream: 'http://127.0.0.1:3001', upgrade: true },
      { type: 'request-ended', exchangeId: x, time: t + 1, rawTrailers: [] },
      { type: 'upgrade-opened', exchangeId: x, time: t + 2, statusCode: 101, statusMessage: 'Switching Protocols', httpVersion: '1.1',
        rawHeaders: ['Upgrade', 'websocket', 'Connection', 'Upgrade', 'Sec-WebSocket-Accept', 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=',
          'Sec-WebSocket-Extensions', 'permessage-deflate; client_max_window_bits=15; server_no_context_takeover'],
        client: sock(), upstream: sock() },
      { type: 'ws-message', exchangeId: x, time: t + 3, direction: 'send', opcode: 1, data: Buffer.from('{"op":"hi"}'), frames: 2, compressed: true },
      { type: 'ws-message', exchangeId: x, time: t + 4, direction: 'receive', opcode: 2, data: Buffer.from([0, 1, 2, 255]), frames: 1, compressed: false },
      { type: 'ws-message', exchangeId: x, time: t + 5, direction: 'send', opcode: 9, data: Buffer.from('p'), frames: 1, compressed: false },
      { type: 'ws-error', exchangeId: x, time: t + 6, direction: 'receive', code: 'WS_ERR_INVALID_OPCODE', message: 'Invalid opcode 3' },
    ];
    if (closed) {
      const payload = Buffer.concat([Buffer.from([0x03, 0xe8]), Buffer.from('bye')]);
      facts.push(
        { type: 'ws-message', exchangeId: x, time: t + 7, direction: 'send', opcode: 8, data: payload, frames: 1, compressed: false, closeCode: 1000, closeReason: 'bye' },
        { type: 'upgrade-closed', exchangeId: x, time: t + 8, code: 1000, reason: 'bye', by: 'client' },
      );
    }
    return facts;
  };

  it('records the upgrade, every message in Chrome\'s shape, and the close', async () => {
    const har = await rec(wsFacts(70, true));
    const e = only(har);
    const t = (TEST_T0 + 1000) / 1000;
    assert.equal(e._resourceType, 'websocket');
    assert.equal(e.response.status, 101);
    assert.deepEqual(e._bb?.extensions, { 'permessage-deflate': { client_max_window_bits: 15, server_no_context_takeover: true } });
    assert.deepEqual(e._webSocketMessages, [
      { type: 'send', time: t + 0.003, opcode: 1, data: '{"op":"hi"}', _bb: { seq: 2, frames: 2, compressed: true } },
      { type: 'receive', time: t + 0.004, opcode: 2, data: Buffer.from([0, 1, 2, 255]).toString('base64'), _bb: { seq: 3, frames: 1, compressed: false } },
      { type: 'send', time: t + 0.005, opcode: 9, data: Buffer.from('p').toString('base64'), _bb: { seq: 4, frames: 1, compressed: false } },
      { type: 'error', time: t + 0.006, opcode: -1, data: 'Invalid opcode 3', _bb: { seq: 5, error: 'WS_ERR_INVALID_OPCODE', direction: 'receive' } },
      { type: 'send', time: t + 0.007, opcode: 8, data: Buffer.from([0x03, 0xe8, 0x62, 0x79, 0x65]).toString('base64'), _bb: { seq: 6, frames: 1, compressed: false, code: 1000, reason: 'bye' } },
    ]);
    assert.deepEqual(e._bb?.close, { code: 1000, reason: 'bye', by: 'client', time: t + 0.008 });
    assert.deepEqual([e._bb?.seq, e._bb?.seqEnd], [1, 7]);
    assert.deepEqual(har.log._bb?.counts, { entries: 1, webSocketMessages: 5 });
  });

  it('closes a connection still open at the end with by "none"', async () => {
    const e = only(await rec(wsFacts(71, false)));
    assert.deepEqual(e._bb?.close, { code: null, reason: '', by: 'none', time: null });
    assert.equal(e._webSocketMessages?.length, 4);
  });
});

describe('steps and order', () => {
  it('puts entries and WebSocket messages on the page current when they started', async () => {
    const a = exchange({ id: 100, status: 200, resHeaders: [] });
    const b = exchange({ id: 101, status: 200, resHeaders: [], at: 10 });
    const har = await rec([...a, ...b], { steps: { [a.length]: 'second' , 0: 'first' } });
    assert.deepEqual(har.log.pages?.map((p) => [p.id, p.title]), [['page_1', 'first'], ['page_2', 'second']]);
    assert.deepEqual(har.log.pages?.[0]?.pageTimings, {});
    assert.deepEqual(har.log.entries.map((e) => e.pageref), ['page_1', 'page_2']);
  });

  it('shares one counter between exchanges (start and end) in arrival order', async () => {
    const a = exchange({ id: 200, status: 200, resHeaders: [] });
    const b = exchange({ id: 201, status: 200, resHeaders: [] });
    // Interleave: a starts, b starts, b completes, a completes.
    const facts = [a[0]!, b[0]!, ...b.slice(1), ...a.slice(1)];
    const har = await rec(facts);
    assert.equal(har.log.entries.length, 2);
    const [first, second] = [har.log.entries.find((e) => e._bb?.seq === 1)!, har.log.entries.find((e) => e._bb?.seq === 2)!];
    assert.deepEqual([first._bb?.seqEnd, second._bb?.seqEnd], [4, 3]);
    // Entries are written in completion order; readers sort.
    assert.deepEqual(har.log.entries.map((e) => e._bb?.seq), [2, 1]);
  });
});

// What each HAR timing phase measures (issue 19: timings must measure the
// server, not bb or the client). A server of our own waits D ms after the
// request's last byte before its first response byte, then E ms before the
// last; the client (curl) sends its body S ms after its head. Timers fire
// late on a busy machine, so each phase is checked against what the server
// itself saw (its own clock, around its own writes): send ≥ S, wait ≈ its
// end of request → first write,
// receive ≈ first → last write. Each wrong reading (wait from the request's
// start, receive to the head) is off by S, D or E, far more than the slack.
const S = 250;
const D = 500;
const E = 600;
// The proxy sees each byte a little after the server sent it or before the
// server read it (one loopback hop, one turn of an event loop it shares with
// this test: tens of ms either way on a loaded machine, 156 ms seen once at
// load 13). Under S, D, E.
const UNDER = 200;
const OVER = 200;

function within(actual: number, expected: number, what: string): void {
  assert.ok(actual >= expected - UNDER && actual <= expected + OVER, `${what} = ${actual} ms, the server saw ${expected.toFixed(3)} ms (−${UNDER}, +${OVER})`);
}

describe('HAR timings at the proxy', () => {
  it('send is the client\'s upload, wait the server\'s time to first byte, receive its time to last byte', async () => {
    const cleanups = new Cleanups();
    try {
      const seen = { head: 0, end: 0, first: 0, last: 0 };
      const server = http.createServer((req, res) => {
        seen.head = performance.now();
        req.resume();
        req.on('end', async () => {
          seen.end = performance.now();
          await sleep(D);
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          seen.first = performance.now();
          res.write('first ');
          await sleep(E);
          seen.last = performance.now();
          res.end('last');
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      cleanups.add(() => new Promise((r) => server.close(r)));
      const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const rec = await record(cleanups, target);
      // curl in its own process (its timers are not this process's): the
      // body from stdin, chunked, its second part S ms after the first.
      const curl = spawn('curl', ['-sS', '--no-buffer', '-H', 'Content-Type: text/plain', '-H', 'Expect:', '-X', 'POST', '-T', '-', `http://127.0.0.1:${rec.port}/slow`], { stdio: ['pipe', 'pipe', 'inherit'] });
      cleanups.add(() => curl.kill());
      let body = '';
      curl.stdout.setEncoding('utf8').on('data', (c: string) => (body += c));
      curl.stdin.write('part one ');
      // The exchange starts when its head reaches the proxy: S ms from then.
      const started = Date.now();
      const deadline = started + 5000;
      while (rec.cap.stats().entries + rec.cap.stats().inFlight === 0 && Date.now() < deadline) await sleep(1);
      await sleep(S);
      curl.stdin.end('part two');
      const [code] = (await once(curl, 'exit')) as [number];
      assert.equal(code, 0);
      assert.equal(body, 'first last');
      const har = await rec.finish();
      const t = har.log.entries[0]!.timings;
      // The server's phases were really apart (D, E at least), and bb's match them.
      assert.ok(seen.first - seen.end >= D - 1 && seen.last - seen.first >= E - 1, JSON.stringify(seen));
      // The upload: at least the S ms the client took between its two parts
      // (the server cannot see when the client began: the proxy forwards the head).
      assert.ok(t.send >= S - UNDER && t.send < S + D, `send = ${t.send} ms, the client took ${S} ms or more`);
      within(t.wait, seen.first - seen.end, 'wait');
      within(t.receive, seen.last - seen.first, 'receive');
      assert.equal(har.log.entries[0]!.time, Math.round((t.send + t.wait + t.receive) * 1000) / 1000);
    } finally {
      await cleanups.run();
    }
  });
});

// Informational (1xx) heads: relayed as they came, and now recorded (`response._informational`) and compared, since a
// build that stops sending 103 Early Hints, or 100 Continue, changes what its clients see. Before, both taps let them
// pass unrecorded, so such a change was a MATCH.
describe('informational (1xx) heads', () => {
  const cleanups = new Cleanups();
  const hints = (withHints: boolean) => http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (withHints) res.writeEarlyHints({ link: '</app.css>; rel=preload; as=style' });
      res.end('page');
    });
  });
  async function recordRun(withHints: boolean): Promise<Har> {
    const server = hints(withHints);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.add(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
    const rec = await record(cleanups, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    // A GET (103 before 200), and a POST asking for 100 Continue (node:http's server sends it at once).
    await new Promise<void>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: rec.port, path: '/page' }, (res) => res.resume().on('end', resolve)).on('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: rec.port, path: '/upload', method: 'POST', headers: { expect: '100-continue', 'content-type': 'text/plain' } }, (res) => res.resume().on('end', resolve));
      req.on('continue', () => req.end('body'));
      req.on('error', reject);
    });
    return rec.finish();
  }

  it('records each 1xx head before the response, over HTTP/1.1 and h2, and bb diff finds one that went away', async () => {
    try {
      const withHints = await recordRun(true);
      const [page, upload] = withHints.log.entries;
      assert.deepEqual(page!.response._informational?.map((i) => [i.status, i.headers.find((h) => h.name.toLowerCase() === 'link')?.value]), [[103, '</app.css>; rel=preload; as=style']]);
      assert.equal(page!.response.status, 200);
      // Both, in the order they came: node:http's 100 Continue, then the server's 103.
      assert.deepEqual(upload!.response._informational?.map((i) => [i.status, i.statusText]), [[100, 'Continue'], [103, 'Early Hints']]);

      const without = await recordRun(false);
      assert.equal(without.log.entries[0]!.response._informational, undefined);
      const { diffHars } = await import('../../diff/index.js');
      const same = await diffHars({ name: 'a.har', har: withHints }, { name: 'b.har', har: await recordRun(true) });
      assert.equal(same.verdict, 'match', JSON.stringify(same.differences));
      const gone = await diffHars({ name: 'a.har', har: withHints }, { name: 'b.har', har: without });
      // The page lost its one 1xx head; the upload keeps its 100 Continue and lost the 103 after it.
      assert.deepEqual(gone.differences.filter((d) => d.class === 'real').map((d) => [d.kind, d.path]), [['removed', 'response.informational'], ['removed', 'response.informational[1]']]);

      // h2: a 103 as HEADERS before the response's.
      const server = await h2Server(cleanups, (stream) => {
        stream.additionalHeaders({ ':status': 103, link: '</h2.css>; rel=preload' });
        stream.respond({ ':status': 200, 'content-type': 'text/plain' });
        stream.end('h2 page');
      });
      const rec = await record(cleanups, server.url);
      const { session } = h2Client(`http://127.0.0.1:${rec.port}`, cleanups);
      const res = await h2Request(session, { ':path': '/h2', ':method': 'GET' });
      assert.equal(res.body.toString(), 'h2 page');
      session.close();
      const h2 = (await rec.finish()).log.entries[0]!;
      assert.deepEqual(h2.response._informational?.map((i) => [i.status, i.headers.find((h) => h.name === 'link')?.value]), [[103, '</h2.css>; rel=preload']]);
    } finally {
      await cleanups.run();
    }
  });

  it('keeps the first 16 of a flood of 1xx heads and says more came; the client gets every byte', async () => {
    try {
      // A raw server: 1,000 103s, then the response (each 1xx record would be held until the entry ends).
      const raw = net.createServer((socket) => {
        socket.once('data', () => {
          socket.write('HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n'.repeat(1000));
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\ndone');
        });
      });
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
      cleanups.add(() => new Promise<void>((r) => raw.close(() => r())));
      const rec = await record(cleanups, `http://127.0.0.1:${(raw.address() as AddressInfo).port}`);
      let hints = 0;
      const body = await new Promise<string>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port: rec.port, path: '/flood' }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve(text));
        });
        req.on('information', () => hints++);
        req.on('error', reject);
      });
      assert.deepEqual([body, hints], ['done', 1000]);
      const entry = (await rec.finish()).log.entries[0]!;
      assert.equal(entry.response._informational?.length, 16);
      assert.match(entry.comment ?? '', /more than 16 informational \(1xx\) heads came before the response; the first 16 are kept/);
    } finally {
      await cleanups.run();
    }
  });
});

describe('addRecord: a body\'s records past the cap', () => {
  it('are one record one after another (a new one: the records read stay as they are), and the body is what it was', () => {
    const ex = emptyRecords();
    const read: BodyRecord[] = [
      { r: 'rb', x: 1, ts: 1, o: 0, n: 4, w: 4 },
      { r: 'rb', x: 1, ts: 2, o: 4, n: 2, w: 5 },
      ...Array.from({ length: 1000 }, (_, i): BodyRecord => ({ r: 'rb', x: 1, ts: 3 + i, n: 0, w: 7 })),
    ];
    const before = JSON.stringify(read);
    for (const r of read) addRecord(ex, r);
    assert.deepEqual(ex.responseBody, [read[0], read[1], { r: 'rb', x: 1, ts: 3, n: 0, w: 7000 }]);
    assert.equal(JSON.stringify(read), before);
  });
});
