// The client → upstream direction of the HTTP/1 tap (proxy/http1/client-side.ts):
// a request head that goes upstream as sent leaves bb with the body bytes read
// with it, in one write call (issue 39: written apart, a POST cost bb a write
// call more than a pipe makes).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../../helpers/raw.js';
import { rawThroughProxy, recordWriteCalls } from '../../helpers/write-calls.js';

const BODY = 'a'.repeat(300);
const REQUEST = `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

describe('client side', () => {
  it('writes a request head and the body bytes read with it upstream in one write call', async () => {
    let received = '';
    const { upstream, client } = await rawThroughProxy((socket) => {
      socket.on('data', (d: Buffer) => {
        received += d.toString('latin1');
        if (received.length >= REQUEST.length) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      });
    });
    // Every write bb makes to the upstream.
    const writes = recordWriteCalls((s) => s.remotePort === upstream.port);
    try {
      client.send(REQUEST);
      await until(client.bytes, (b) => b.includes('ok'));
    } finally {
      writes.restore();
    }
    assert.equal(received, REQUEST, 'the upstream got the request as sent');
    assert.deepEqual(writes.calls, [[REQUEST]], `one write of one buffer: ${JSON.stringify(writes.calls)}`);
  });
});
