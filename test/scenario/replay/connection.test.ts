// An exchange's cut (scenario/replay/connection.ts armCut): after the original client's patience or --timeout,
// whichever comes first, and reported as after the bound it kept. A timer may fire a little before its delay by
// performance.now() (libuv counts from the loop's cached time): CI once reported a 500 ms --timeout as cut after
// 499 ms.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { armCut, LaneConnection } from '../../../scenario/replay/connection.js';
import { H2Connection } from '../../../scenario/replay/h2.js';
import { wireRequest, type RequestParts } from '../../../scenario/replay/request.js';
import { BIND_READ_BYTES } from '../../../diff/index.js';

const fired = (limits: Parameters<typeof armCut>[0]) =>
  new Promise<[string, number | undefined]>((resolve) => armCut(limits, (why, boundMs) => resolve([why, boundMs])));

describe('armCut', () => {
  it('cuts at --timeout, or at the client\'s patience when that comes first, and names the bound it kept', async () => {
    assert.deepEqual(await fired({ timeoutMs: 20 }), ['timeout', 20]);
    assert.deepEqual(await fired({ timeoutMs: 50, clientAbortMs: 10 }), ['client', 10]);
    assert.deepEqual(await fired({ timeoutMs: 10, clientAbortMs: 30 }), ['timeout', 10]);
  });
});

// What a replayed or mirrored answer keeps (AnswerStart): its first BIND_READ_BYTES, all that binding reads of it.
// The whole body was held before: a 1 GiB download replayed held 1 GiB, and bb shadow held each mirror's answer
// whole, times the mirrors in flight. A real server, over bb's HTTP/1.1 lane and over h2.
describe('an answer as the replay and the mirrors keep it', () => {
  const big = Buffer.alloc(3 * 1048576, 'x');
  const serve = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    const body = req.url === '/big' ? big : Buffer.from('{"id":"a1"}');
    res.writeHead(200, { 'content-type': 'application/json' });
    // In pieces, as a server streams a download.
    for (let i = 0; i < body.length; i += 65536) res.write(body.subarray(i, i + 65536));
    res.end();
  };
  const parts = (target: string): RequestParts => ({ method: 'GET', target, headers: [['Host', 'x']] });

  it('keeps the first BIND_READ_BYTES of a long body and says it is a start; a short one whole', async () => {
    const server = http.createServer(serve);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const lane = new LaneConnection('127.0.0.1', (server.address() as AddressInfo).port);
    try {
      const long = await lane.exchange(wireRequest(parts('/big'), 'x'), { timeoutMs: 10_000 });
      assert.equal(long.kind, 'response');
      if (long.kind !== 'response') return;
      assert.equal(long.body.length, BIND_READ_BYTES);
      assert.equal(long.truncated, true);
      assert.ok(long.body.equals(big.subarray(0, BIND_READ_BYTES)));
      const short = await lane.exchange(wireRequest(parts('/small'), 'x'), { timeoutMs: 10_000 });
      assert.deepEqual(short.kind === 'response' && [short.body.toString(), short.truncated], ['{"id":"a1"}', undefined]);
    } finally {
      lane.close();
      server.closeAllConnections();
      server.close();
    }
  });

  it('the same over h2', async () => {
    const server = http2.createServer(serve);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const conn = new H2Connection(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const req = (path: string) => ({ headers: [[':method', 'GET'], [':path', path], [':scheme', 'http'], [':authority', 'x']] as Array<[string, string]>, body: Buffer.alloc(0) });
    try {
      const long = await conn.exchange(req('/big'), { timeoutMs: 10_000 });
      assert.deepEqual(long.kind === 'response' && [long.body.length, long.truncated], [BIND_READ_BYTES, true]);
      const short = await conn.exchange(req('/small'), { timeoutMs: 10_000 });
      assert.deepEqual(short.kind === 'response' && [short.body.toString(), short.truncated], ['{"id":"a1"}', undefined]);
    } finally {
      conn.close();
      server.close();
    }
  });
});
