// The upstream → client direction of the HTTP/1 tap (proxy/http1/upstream-side.ts):
// a response head and the body bytes that came with it leave bb in one write
// call, as the upstream sent them (issue 39: written apart, the client read
// the head alone and an SSE stream's first event a wake-up later).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../../helpers/raw.js';
import { rawThroughProxy, recordWriteCalls } from '../../helpers/write-calls.js';

const HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
const EVENT = 'id: 0\ndata: first\n\n';
const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

describe('upstream side', () => {
  it('writes a response head and the first body bytes read with it in one write call', async () => {
    const { proxy, client } = await rawThroughProxy((socket) => {
      socket.once('data', () => socket.write(HEAD + chunk(EVENT)));
    });
    // Every write bb's socket to this client makes.
    const writes = recordWriteCalls((s) => s.remotePort === client.socket.localPort && s.localPort === proxy.port);
    try {
      client.send('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(client.bytes, (b) => b.includes(EVENT));
    } finally {
      writes.restore();
    }
    const calls = writes.calls;
    const first = calls.find((c) => c.join('').includes('HTTP/1.1 200'));
    assert.ok(first, `no write of the head: ${JSON.stringify(calls)}`);
    assert.equal(first.join(''), HEAD + chunk(EVENT), `the head and its first event in one call: ${JSON.stringify(calls)}`);
    // Adjacent bytes of one upstream chunk: one buffer, a plain write, not a writev of two.
    assert.equal(first.length, 1, `one buffer, not ${first.length}: ${JSON.stringify(calls)}`);
  });

  it('passes a response head of 20 KB on as it came (a long Content-Security-Policy was answered with bb 502 at 16 KiB)', async () => {
    const policy = `default-src 'self' ${'https://cdn.example '.repeat(1000)}`;
    const answer = `HTTP/1.1 200 OK\r\nContent-Security-Policy: ${policy}\r\nContent-Length: 2\r\n\r\nok`;
    const { client } = await rawThroughProxy((socket) => {
      socket.once('data', () => socket.write(answer));
    });
    client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const got = await until(client.bytes, (b) => b.length >= answer.length);
    assert.equal(got.toString('latin1'), answer);
  });
});
