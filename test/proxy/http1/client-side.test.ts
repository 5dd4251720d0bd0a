// The client → upstream direction of the HTTP/1 tap (proxy/http1/client-side.ts):
// a request head that goes upstream as sent leaves bb with the body bytes read
// with it, in one write call (issue 39: written apart, a POST cost bb a write
// call more than a pipe makes).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startProxy } from '../../../proxy/index.js';
import { rawClient, rawUpstream, until } from '../../helpers/raw.js';
import { atFileEnd } from '../../helpers/cleanups.js';

const BODY = 'a'.repeat(300);
const REQUEST = `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

describe('client side', () => {
  it('writes a request head and the body bytes read with it upstream in one write call', async () => {
    let received = '';
    const upstream = await rawUpstream((socket) => {
      socket.on('data', (d: Buffer) => {
        received += d.toString('latin1');
        if (received.length >= REQUEST.length) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      });
    });
    atFileEnd(() => upstream.close());
    const proxy = await startProxy({ target: `http://127.0.0.1:${upstream.port}` });
    atFileEnd(() => proxy.close(100));
    const client = await rawClient(proxy.port);
    // Every write bb makes to the upstream, as the buffers of each call. _writeGeneric, not _write: a write
    // to a socket still connecting (the upstream opened at accept) is made by it once connected.
    const calls: string[][] = [];
    const proto = net.Socket.prototype as unknown as {
      _writeGeneric(writev: boolean, data: Buffer | Array<{ chunk: Buffer }>, enc: string, cb: () => void): void;
    };
    const generic = proto._writeGeneric;
    proto._writeGeneric = function (this: net.Socket, writev, data, enc, cb) {
      if (this.remotePort === upstream.port && !this.connecting) {
        calls.push(writev ? (data as Array<{ chunk: Buffer }>).map((c) => Buffer.from(c.chunk).toString('latin1')) : [Buffer.from(data as Buffer).toString('latin1')]);
      }
      return generic.call(this, writev, data, enc, cb);
    };
    try {
      client.send(REQUEST);
      await until(client.bytes, (b) => b.includes('ok'));
    } finally {
      proto._writeGeneric = generic;
    }
    assert.equal(received, REQUEST, 'the upstream got the request as sent');
    assert.deepEqual(calls, [[REQUEST]], `one write of one buffer: ${JSON.stringify(calls)}`);
  });
});
