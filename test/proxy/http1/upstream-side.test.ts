// The upstream → client direction of the HTTP/1 tap (proxy/http1/upstream-side.ts):
// a response head and the body bytes that came with it leave bb in one write
// call, as the upstream sent them (issue 39: written apart, the client read
// the head alone and an SSE stream's first event a wake-up later).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startProxy } from '../../../proxy/index.js';
import { rawClient, rawUpstream, until } from '../../helpers/raw.js';
import { atFileEnd } from '../../helpers/cleanups.js';

const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
const EVENT = 'id: 0\ndata: first\n\n';
const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

describe('upstream side', () => {
  it('writes a response head and the first body bytes read with it in one write call', async () => {
    const upstream = await rawUpstream((socket) => {
      socket.once('data', () => socket.write(HEAD + chunk(EVENT)));
    });
    atFileEnd(() => upstream.close());
    const proxy = await startProxy({ target: `http://127.0.0.1:${upstream.port}` });
    atFileEnd(() => proxy.close(100));
    const client = await rawClient(proxy.port);
    // Every write bb's socket to this client makes, as the buffers of each call.
    const calls: string[][] = [];
    const proto = net.Socket.prototype as unknown as {
      _write(chunk: Buffer, enc: string, cb: () => void): void;
      _writev(chunks: Array<{ chunk: Buffer }>, cb: () => void): void;
    };
    const write = proto._write;
    const writev = proto._writev;
    const ours = (s: net.Socket) => s.remotePort === client.socket.localPort && s.localPort === proxy.port;
    proto._write = function (this: net.Socket, c, enc, cb) {
      if (ours(this)) calls.push([Buffer.from(c).toString('latin1')]);
      return write.call(this, c, enc, cb);
    };
    proto._writev = function (this: net.Socket, chunks, cb) {
      if (ours(this)) calls.push(chunks.map((c) => Buffer.from(c.chunk).toString('latin1')));
      return writev.call(this, chunks, cb);
    };
    try {
      client.send('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(client.bytes, (b) => b.includes(EVENT));
    } finally {
      proto._write = write;
      proto._writev = writev;
    }
    const first = calls.find((c) => c.join('').includes('HTTP/1.1 200'));
    assert.ok(first, `no write of the head: ${JSON.stringify(calls)}`);
    assert.equal(first.join(''), HEAD + chunk(EVENT), `the head and its first event in one call: ${JSON.stringify(calls)}`);
    // Adjacent bytes of one upstream chunk: one buffer, a plain write, not a writev of two.
    assert.equal(first.length, 1, `one buffer, not ${first.length}: ${JSON.stringify(calls)}`);
  });
});
